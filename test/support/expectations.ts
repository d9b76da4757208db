/** Assertions several test files share. */
import { expect } from 'vitest';

/** An instant the server set to "now" during a request made between `before` and `after` (ms). */
export function expectNow(instant: string, before: number, after: number) {
  const at = Date.parse(instant);
  // timestamptz(3) rounds to the millisecond, possibly up.
  expect(at).toBeGreaterThanOrEqual(before - 1);
  expect(at).toBeLessThanOrEqual(after + 1);
}

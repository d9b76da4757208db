/** Assertions several test files share. */
import { expect } from 'vitest';
import type { ApiResponse } from './testApp.js';

/** An instant the server set to "now" during a request made between `before` and `after` (ms). */
export function expectNow(instant: string, before: number, after: number) {
  const at = Date.parse(instant);
  // timestamptz(3) rounds to the millisecond, possibly up.
  expect(at).toBeGreaterThanOrEqual(before - 1);
  expect(at).toBeLessThanOrEqual(after + 1);
}

/**
 * Headers every answer gets afresh, replayed or not: its own request id, the date, the caller's rate
 * limit count, the connection's, and the replay's own mark.
 */
const perAnswer = new Set(['x-request-id', 'date', 'ratelimit', 'ratelimit-policy', 'connection', 'keep-alive', 'idempotent-replayed', 'traceresponse']);

const storedHeaders = (response: ApiResponse) => Object.fromEntries([...response.headers].filter(([name]) => !perAnswer.has(name)));

/**
 * A retry answered from the stored outcome: marked as replayed, with the first answer's status and
 * body byte for byte and every one of its other headers (ETag and Content-Type among them), so a
 * client gets from the retry all the first answer would have told it.
 */
export function expectReplayOf(retry: ApiResponse, first: ApiResponse) {
  expect(retry.headers.get('idempotent-replayed'), 'the retry is marked as replayed').toBe('true');
  expect({ status: retry.status, headers: storedHeaders(retry), text: retry.text }).toEqual({ status: first.status, headers: storedHeaders(first), text: first.text });
}

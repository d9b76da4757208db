import { describe, expect, it } from 'vitest';
import type { MeetingStatus } from '../../src/db/database.js';
import { isStepForward, liveDurationMin, ratingsHidden } from '../../src/rules/meetingStatus.js';

const statuses: MeetingStatus[] = ['SCHEDULED', 'IN_PROGRESS', 'COMPLETED'];

describe('the meeting status moves one step forward only', () => {
  it('allows SCHEDULED → IN_PROGRESS and IN_PROGRESS → COMPLETED and nothing else', () => {
    const allowed = statuses.flatMap((from) => statuses.filter((to) => isStepForward(from, to)).map((to) => `${from}→${to}`));
    expect(allowed).toEqual(['SCHEDULED→IN_PROGRESS', 'IN_PROGRESS→COMPLETED']);
  });
});

describe('hidden ratings', () => {
  it('are hidden only while the meeting is in progress and not revealed', () => {
    const revealed = new Date('2026-11-16T09:00:00.000Z');
    expect(ratingsHidden('IN_PROGRESS', null)).toBe(true);
    expect(ratingsHidden('IN_PROGRESS', revealed)).toBe(false);
    expect(ratingsHidden('COMPLETED', null)).toBe(false);
    expect(ratingsHidden('SCHEDULED', null)).toBe(false);
  });
});

describe('the length of a meeting ended live', () => {
  const start = new Date('2026-11-16T08:00:00.000Z');
  const after = (ms: number) => new Date(start.getTime() + ms);

  it('is the minutes since the start, rounded to the nearest minute', () => {
    expect(liveDurationMin(start, after(88 * 60_000))).toBe(88);
    expect(liveDurationMin(start, after(88 * 60_000 + 29_999))).toBe(88);
    expect(liveDurationMin(start, after(88 * 60_000 + 30_000))).toBe(89);
  });

  it('is at least 1, also for a meeting ended within its first minute', () => {
    expect(liveDurationMin(start, after(0))).toBe(1);
    expect(liveDurationMin(start, after(20_000))).toBe(1);
  });
});

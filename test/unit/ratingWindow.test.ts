import { describe, expect, it } from 'vitest';
import { mayRateNow, ratingWindow, type RatingWindowFacts } from '../../src/rules/ratingWindow.js';

const at = (instant: string) => new Date(instant);
const started = at('2026-11-16T08:00:00.000Z');
const live: RatingWindowFacts = {
  status: 'COMPLETED',
  startedAt: started,
  createdAt: at('2026-11-09T10:00:00.000Z'),
  nextMeetingStartedAt: null,
};
const ms = (instant: Date, offset: number) => new Date(instant.getTime() + offset);

describe('the rating window of a meeting', () => {
  it('is closed while SCHEDULED, for everyone, with no closing time', () => {
    const scheduled = { ...live, status: 'SCHEDULED' as const, startedAt: null };
    expect(ratingWindow(scheduled, started)).toEqual({ open: false, closesAt: null });
    expect(mayRateNow(scheduled, started, true)).toBe(false);
    expect(mayRateNow(scheduled, started, false)).toBe(false);
  });

  it('opens at the start of a meeting in progress and closes 7 days later when no other meeting starts', () => {
    const running = { ...live, status: 'IN_PROGRESS' as const };
    const closesAt = at('2026-11-23T08:00:00.000Z');
    expect(ratingWindow(running, started)).toEqual({ open: true, closesAt });
    expect(ratingWindow(running, ms(closesAt, -1))).toEqual({ open: true, closesAt });
    expect(ratingWindow(running, closesAt)).toEqual({ open: false, closesAt });
  });

  it('closes when the team’s next meeting starts, if that is within the 7 days', () => {
    const next = at('2026-11-20T08:00:00.000Z');
    const facts = { ...live, nextMeetingStartedAt: next };
    expect(ratingWindow(facts, ms(next, -1))).toEqual({ open: true, closesAt: next });
    expect(ratingWindow(facts, next)).toEqual({ open: false, closesAt: next });
  });

  it('is capped at 7 days even when the next meeting starts later', () => {
    const facts = { ...live, nextMeetingStartedAt: at('2026-11-30T08:00:00.000Z') };
    expect(ratingWindow(facts, at('2026-11-23T07:59:59.999Z')).open).toBe(true);
    expect(ratingWindow(facts, at('2026-11-23T08:00:00.000Z'))).toEqual({ open: false, closesAt: at('2026-11-23T08:00:00.000Z') });
  });

  it('counts the 7 days of a meeting recorded after the fact from the moment it was entered', () => {
    const entered = at('2026-11-18T17:30:00.000Z');
    const recorded = { ...live, createdAt: entered };
    const closesAt = at('2026-11-25T17:30:00.000Z');
    expect(ratingWindow(recorded, ms(closesAt, -1))).toEqual({ open: true, closesAt });
    expect(ratingWindow(recorded, closesAt)).toEqual({ open: false, closesAt });
  });

  it('is already closed for a recorded meeting whose next meeting started before it was entered', () => {
    const next = at('2026-11-17T08:00:00.000Z');
    const recorded = { ...live, createdAt: at('2026-11-18T17:30:00.000Z'), nextMeetingStartedAt: next };
    expect(ratingWindow(recorded, at('2026-11-18T17:30:00.000Z'))).toEqual({ open: false, closesAt: next });
  });

  it('lets those who rate at any time rate after it closed, but nobody else', () => {
    const late = at('2026-12-01T00:00:00.000Z');
    expect(mayRateNow(live, late, false)).toBe(false);
    expect(mayRateNow(live, late, true)).toBe(true);
    expect(mayRateNow(live, started, false)).toBe(true);
  });
});

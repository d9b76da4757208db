import fc from 'fast-check';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { EVENT_MAX_BYTES, LOG_READ_BYTES, type LogEvent } from '../../src/db/queries/events.js';
import { brought, judgedBy, liveDefaults, readPauseMs, startLiveStreams, type LiveOptions } from '../../src/live/streams.js';

describe("a live stream's buffer", () => {
  it('holds many of the largest events the log keeps by default, and twice a read of the log, so no one event or read drops a reader', () => {
    expect(liveDefaults.bufferBytes).toBeGreaterThanOrEqual(16 * EVENT_MAX_BYTES);
    expect(liveDefaults.bufferBytes).toBeGreaterThanOrEqual(2 * LOG_READ_BYTES);
  });

  it('refuses to start streams whose buffer could not hold the largest event with its framing', async () => {
    const options = { db: undefined, logger: pino({ enabled: false }), metrics: undefined, now: () => new Date(), bufferBytes: EVENT_MAX_BYTES } as unknown as LiveOptions;
    await expect(startLiveStreams(options)).rejects.toThrow(/must hold the largest event/);
  });
});

describe('what a stream judges of a read', () => {
  const teamIds = ['team-a', 'team-b', 'team-c', 'team-d'];
  /** A read: events in log order (ascending positions, some in one transaction), each of a team or of none. */
  const read = fc.array(fc.record({ step: fc.nat(3), teamId: fc.constantFrom<string | null>(null, ...teamIds) }), { maxLength: 60 }).map((drawn) => {
    let txid = 90;
    return drawn.map(({ step, teamId }, index): LogEvent => {
      txid += step;
      return { txid: String(txid), position: String(index + 1), id: `event-${index}`, orgId: 'org', teamId, type: 'task.updated', event: '{}' };
    });
  });
  const named = fc.option(fc.uniqueArray(fc.constantFrom(...teamIds, 'team-without-events'), { minLength: 1, maxLength: 4 }), { nil: undefined });

  it("is every event of the read when it names no team, and otherwise its teams' and the organizations' own, in log order", () => {
    fc.assert(
      fc.property(read, named, (events, teams) => {
        const expected = teams === undefined ? events : events.filter((event) => event.teamId === null || teams.includes(event.teamId));
        expect(judgedBy(teams, brought(events))).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });
});

describe('the pause after a shared read', () => {
  it('is twenty times what handing the read out took, so a light load reads again almost at once', () => {
    expect(readPauseMs(0)).toBe(0);
    expect(readPauseMs(0.4)).toBeCloseTo(8);
    expect(readPauseMs(3)).toBe(60);
  });

  it('is at most 100 ms, however long the hand-out took: no event waits longer for its read', () => {
    expect(readPauseMs(5)).toBe(100);
    expect(readPauseMs(30)).toBe(100);
    fc.assert(fc.property(fc.double({ min: 0, max: 1e6, noNaN: true }), (handOutMs) => readPauseMs(handOutMs) <= 100 && readPauseMs(handOutMs) >= 0));
  });
});

import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { EVENT_MAX_BYTES, LOG_READ_BYTES } from '../../src/db/queries/events.js';
import { liveDefaults, startLiveStreams, type LiveOptions } from '../../src/live/streams.js';

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

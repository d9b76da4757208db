/**
 * This instance's known end of the event log: the place a read's `Log-Position` states
 * (src/http/router.ts), kept in memory so that a read pays no statement for it, and the least the
 * feeds read up to (`belowKnownHorizon`, src/db/queries/events.ts).
 *
 * The place is the log's horizon (`horizonPlace`, src/db/queries/events.ts): every event before it
 * was written by a transaction that had ended when it was read, so a read's query that starts after
 * it was taken sees every one of those changes. The router takes it before the read's handler runs,
 * so what an answer states is never newer than what it shows; it may be older (the refresh lags by
 * up to `refreshMs`, or a moment after the log grew), and a reader that starts the log there then sees
 * again an event of a change the answer already showed, never misses one.
 *
 * Refreshed in the background, one statement at a time: every `refreshMs`, and at once when the log's
 * channel tells that it grew (the webhook fan-out's notification, which also wakes the live streams).
 * The place only moves forward: a horizon read later can be lower (another database's transaction
 * no longer left out), but a place once known stays true. A failed refresh keeps the last place.
 */
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/database.js';
import type { Listen } from '../db/listen.js';
import { compareLogPositions, horizonPlace, logChannel, type LogPosition } from '../db/queries/events.js';
import { loggableError } from '../logger.js';

export const knownLogEndDefaults = {
  /** How often the known end is read again without a notification: how far a stated position may lag at most. */
  refreshMs: 250,
};

export interface KnownLogEnd {
  /** The place every change up to which a read starting now reflects. */
  at(): LogPosition;
  /** Stops refreshing. */
  close(): Promise<void>;
}

export interface KnownLogEndOptions {
  db: Kysely<Database>;
  logger: Logger;
  /** The database's notifications; without them the known end moves only every `refreshMs`. */
  subscribe?: Listen | undefined;
  refreshMs?: number;
}

/** Reads the log's end once (the first read's position), then keeps it in the background. */
export async function startKnownLogEnd(options: KnownLogEndOptions): Promise<KnownLogEnd> {
  const { db, logger } = options;
  let known = await horizonPlace(db);
  let reading: Promise<void> | undefined;
  let again = false;
  let closed = false;

  const refresh = () => {
    if (closed) return;
    if (reading) {
      again = true;
      return;
    }
    reading = (async () => {
      do {
        again = false;
        const place = await horizonPlace(db);
        if (compareLogPositions(place, known) > 0) known = place;
      } while (again && !closed);
    })()
      .catch((error: unknown) => logger.warn({ err: loggableError(error) }, 'could not read the end of the event log; positions lag until the next refresh'))
      .finally(() => (reading = undefined));
  };

  const timer = setInterval(refresh, options.refreshMs ?? knownLogEndDefaults.refreshMs);
  timer.unref();
  const stop = options.subscribe ? await options.subscribe(logChannel, refresh) : undefined;

  return {
    at: () => known,
    close: async () => {
      closed = true;
      clearInterval(timer);
      await stop?.();
      await reading;
    },
  };
}

/**
 * Events in an organization's log, written as a change writes them (src/events/outbox.ts) but
 * without the change, for the tests that read the feed; each in a transaction of its own, as each
 * change is.
 */
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/db/database.js';
import { belowHorizon, insertEvents, type LogPosition } from '../../src/db/queries/events.js';
import { eventText } from '../../src/events/outbox.js';
import { waitFor } from './processes.js';

/** An app as its log's readers: its database, and the log's end it knows, up to which its feeds always read. */
export interface AppLog {
  db: Kysely<Database>;
  knownLogEnd: { at(): LogPosition };
}

/** Where a test reads the log: an app, or only its database. */
export type LogReaders = Kysely<Database> | AppLog;

/** The database of the log's readers. */
export const databaseOf = (readers: LogReaders): Kysely<Database> => ('knownLogEnd' in readers ? readers.db : readers);

/**
 * Resolves once the feed shows every event of the log. For an app: once every event lies below the
 * log's end the app knows, which only moves forward, so every later read of its feeds shows them all.
 * For a database alone: once every event lies below the horizon of running transactions in this
 * statement; a later statement's horizon can, rarely, be lower (another database's transaction that
 * ends as it starts: `belowKnownHorizon`). A transaction of the test's own database that is still
 * running (the worker's, a test's hold) may hold either back for a while.
 */
export async function feedShowsAll(readers: LogReaders): Promise<void> {
  const db = databaseOf(readers);
  if ('knownLogEnd' in readers) {
    await waitFor('every event of the log below the log end the app knows', async () => {
      const { rows } = await sql<{ held: boolean }>`
        select exists (select 1 from webhook_events e where e.txid >= ${readers.knownLogEnd.at().txid}::xid8) as held
      `.execute(db);
      return !rows[0]!.held;
    });
    return;
  }
  await waitFor('every event of the log below the horizon of running transactions', async () => {
    const { rows } = await sql<{ held: boolean }>`
      select exists (select 1 from webhook_events e where not (${belowHorizon(sql`e.txid`)})) as held
    `.execute(db);
    return !rows[0]!.held;
  });
}

/** `count` `task.deleted` events of a team (the shortest body an event has), oldest first, once the feed shows them: their ids. */
export async function createEvents(readers: LogReaders, team: { id: string; org_id: string }, count = 1): Promise<string[]> {
  const db = databaseOf(readers);
  const ids: string[] = [];
  for (let made = 0; made < count; made += 1) {
    const id = randomUUID();
    const at = new Date();
    const event = eventText(id, 'task.deleted', at, { orgId: team.org_id, teamId: team.id, object: { id: randomUUID() } });
    await db.transaction().execute((trx) => insertEvents(trx, [{ id, orgId: team.org_id, teamId: team.id, type: 'task.deleted', event, logRevision: true }], at));
    ids.push(id);
  }
  await feedShowsAll(readers);
  return ids;
}

/**
 * Events in an organization's log, written as a change writes them (src/events/outbox.ts) but
 * without the change, for the tests that read the feed; each in a transaction of its own, as each
 * change is.
 */
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/db/database.js';
import { belowHorizon, insertEvents } from '../../src/db/queries/events.js';
import { eventText } from '../../src/events/outbox.js';
import { waitFor } from './processes.js';

/**
 * Resolves once every event of the log lies below the horizon of running transactions, so that the
 * feed shows all of them. A transaction of the test's own database that is still running (the
 * worker's, a test's hold) may hold it back for a while.
 */
export async function feedShowsAll(db: Kysely<Database>): Promise<void> {
  await waitFor('every event of the log below the horizon of running transactions', async () => {
    const { rows } = await sql<{ held: boolean }>`
      select exists (select 1 from webhook_events e where not (${belowHorizon(sql`e.txid`)})) as held
    `.execute(db);
    return !rows[0]!.held;
  });
}

/** `count` `task.deleted` events of a team (the shortest body an event has), oldest first, once the feed shows them: their ids. */
export async function createEvents(db: Kysely<Database>, team: { id: string; org_id: string }, count = 1): Promise<string[]> {
  const ids: string[] = [];
  for (let made = 0; made < count; made += 1) {
    const id = randomUUID();
    const at = new Date();
    const event = eventText(id, 'task.deleted', at, { orgId: team.org_id, teamId: team.id, object: { id: randomUUID() } });
    await db.transaction().execute((trx) => insertEvents(trx, [{ id, orgId: team.org_id, teamId: team.id, type: 'task.deleted', event, logRevision: true }], at));
    ids.push(id);
  }
  await feedShowsAll(db);
  return ids;
}

/**
 * The feed's horizon on PGlite. PGlite is one session, so a change cannot be held open in a
 * transaction while another statement reads (see eventLog.test.ts, which does that on PostgreSQL);
 * but a transaction prepared for two-phase commit (`prepare transaction`) stays running — its id
 * holds the horizon back — while the session goes on. So change A writes its event and is prepared,
 * change B writes its event and commits, and the feed (`eventPage`, the operation's own statement)
 * reads while A is still to commit. `max_prepared_transactions` is 0 by default, so this file opens
 * its own PGlite with it raised; the server never prepares a transaction.
 */
import { randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, sql } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecretBox } from '../src/auth/secrets.js';
import type { Database } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { eventPage, horizonPlace } from '../src/db/queries/events.js';
import { postgresUrl } from './support/database.js';
import { createOrganization } from './support/factories.js';

describe.skipIf(postgresUrl)('the feed on PGlite reads below the horizon: a change prepared first and committed last is neither passed nor skipped (PGlite only: on PostgreSQL eventLog.test.ts holds real transactions open)', () => {
  let pglite: PGlite;
  let db: Kysely<Database>;
  beforeAll(async () => {
    pglite = await PGlite.create({ startParams: [...PGlite.defaultStartParams, '-c', 'max_prepared_transactions=2'] });
    db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
    await migrateToLatest(db);
  });
  afterAll(() => db?.destroy());

  const eventJson = (id: string) => JSON.stringify({ id, type: 'task.created' });

  /** The ids of the organization's feed, its first page, as the operation answers it (with the log's end known just before). */
  async function feed(orgId: string): Promise<string[]> {
    const page = await eventPage(db, orgId, {}, { limit: 100 }, createSecretBox(randomBytes(32)).tokens('feed cursor'), await horizonPlace(db));
    return page!.events.map((event) => (JSON.parse(event) as { id: string }).id);
  }

  /** Every committed event of the organization in log order, without the horizon: the control. */
  async function unguarded(orgId: string): Promise<string[]> {
    const { rows } = await sql<{ id: string }>`select id from webhook_events where org_id = ${orgId} order by txid, position`.execute(db);
    return rows.map((row) => row.id);
  }

  /** A writes its event and is prepared, still to commit; B, later, writes its event and commits. */
  async function overlappingChanges() {
    const org = await createOrganization(db);
    const [a, b] = [`evt_a_${org.id}`, `evt_b_${org.id}`];
    const gid = `change_a_${org.id}`;
    await pglite.query(`begin`);
    await pglite.query(`insert into webhook_events (id, org_id, type, event) values ($1, $2, 'task.created', $3)`, [a, org.id, eventJson(a)]);
    await pglite.query(`prepare transaction '${gid}'`);
    await pglite.query(`insert into webhook_events (id, org_id, type, event) values ($1, $2, 'task.created', $3)`, [b, org.id, eventJson(b)]);
    return { org, a, b, commitA: () => pglite.query(`commit prepared '${gid}'`) };
  }

  it('while A is still to commit, the feed does not pass B; once A commits, it gives A then B', async () => {
    const { org, a, b, commitA } = await overlappingChanges();

    const whileOpen = await feed(org.id);
    await commitA();
    const after = await feed(org.id);

    expect(whileOpen).toEqual([]);
    expect(after).toEqual([a, b]);
  });

  it('the control: without the horizon a reader passes B while A is still to commit, and A, committed last, lands behind it', async () => {
    const { org, a, b, commitA } = await overlappingChanges();

    const whileOpen = await unguarded(org.id);
    await commitA();
    const after = await unguarded(org.id);

    expect(whileOpen).toEqual([b]);
    expect(after).toEqual([a, b]);
  });
});

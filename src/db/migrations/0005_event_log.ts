/**
 * 0005_event_log: every change writes its events, whether or not anyone subscribes; the worker fans
 * them out to subscriptions afterwards. An organization reads its log as a feed.
 *
 * Frozen in time: imports nothing from the application, only `kysely`.
 *
 * - `webhook_events.txid` is the writing transaction's id (`xid8`, never wraps) and `position` a
 *   sequence number. The log is ordered by (`txid`, `position`), and a reader sees only events whose
 *   `txid` lies below the oldest transaction still running (`pg_snapshot_xmin`): a transaction that
 *   commits later always has a larger `txid` than anything already shown, so no event ever lands
 *   behind a reader's position (a plain sequence is handed out in start order, not commit order).
 * - `team_id` is the event's team (`data.teamId`), for the feed's filter; no foreign key, so an
 *   event outlives the team it speaks of (a `team.deleted` event among them).
 * - `webhook_subscriptions.created_snapshot`: the snapshot of the transaction that created the
 *   subscription. It receives exactly the events that were not yet committed then.
 * - `webhook_fanout` is one row: how far the worker has written deliveries, in log order. It starts
 *   after every event already written (those got their deliveries when they were written).
 * - One delivery per event and subscription (unique), so two workers fanning out the same events
 *   never write a delivery twice.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table webhook_events
    add column team_id text,
    add column txid xid8 not null default pg_current_xact_id(),
    add column position bigint generated always as identity`.execute(db);
  await db.schema.createIndex('webhook_events_txid_position_idx').on('webhook_events').columns(['txid', 'position']).execute();
  await db.schema.createIndex('webhook_events_org_id_txid_position_idx').on('webhook_events').columns(['org_id', 'txid', 'position']).execute();
  await db.schema.dropIndex('webhook_events_org_id_idx').execute();

  await sql`alter table webhook_subscriptions add column created_snapshot pg_snapshot not null default pg_current_snapshot()`.execute(db);

  await db.schema
    .createTable('webhook_fanout')
    .addColumn('id', 'integer', (col) => col.primaryKey().check(sql`id = 1`))
    .addColumn('last_txid', sql`xid8`, (col) => col.notNull())
    .addColumn('last_position', 'bigint', (col) => col.notNull())
    .execute();
  await sql`insert into webhook_fanout (id, last_txid, last_position)
    select 1, pg_current_xact_id(), coalesce((select max(position) from webhook_events), 0)`.execute(db);

  await db.schema
    .createIndex('webhook_deliveries_event_id_subscription_id_key')
    .on('webhook_deliveries')
    .columns(['event_id', 'subscription_id'])
    .unique()
    .execute();
  await db.schema.dropIndex('webhook_deliveries_event_id_idx').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('webhook_deliveries_event_id_idx').on('webhook_deliveries').column('event_id').execute();
  await db.schema.dropIndex('webhook_deliveries_event_id_subscription_id_key').execute();
  await db.schema.dropTable('webhook_fanout').execute();
  await sql`alter table webhook_subscriptions drop column created_snapshot`.execute(db);
  await db.schema.createIndex('webhook_events_org_id_idx').on('webhook_events').column('org_id').execute();
  await db.schema.dropIndex('webhook_events_org_id_txid_position_idx').execute();
  await db.schema.dropIndex('webhook_events_txid_position_idx').execute();
  await sql`alter table webhook_events drop column position, drop column txid, drop column team_id`.execute(db);
}

/**
 * 0013_event_log_purges: how far each organization's log was cut, so that a log position
 * (src/events/positions.ts) is judged by what the log no longer keeps after it. A position is a place,
 * not an event: it may lie where no event of its organization is, or before the first event of an empty
 * log, so "the log still keeps it" cannot be asked of it as of an event id. Instead: a feed or a stream
 * may start at a position exactly when no event of the organization after it was ever deleted.
 *
 * - One row per organization: the last place (`txid`, `position`) of an event of it that was deleted.
 *   Events are deleted by the retention's purge, oldest first (src/webhooks/worker.ts).
 * - Written by a statement-level `after delete` trigger on the log with the deleted rows as its
 *   transition table: every deletion records it, whatever statement deletes, and a batch of the purge
 *   pays one upsert per organization it touched, in its own statement, not one per event.
 * - Pings (`webhook.ping`) are no change and never in a feed: deleting them cuts nothing.
 * - An organization that is being deleted (its events go with it) records nothing.
 *
 * Frozen in time: imports nothing from the application, only `kysely`.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table event_log_purges (
      org_id text primary key references organizations (id) on delete cascade,
      txid xid8 not null,
      position bigint not null
    )`.execute(db);
  await sql`
    create function record_event_log_purge() returns trigger language plpgsql as $$
    begin
      insert into event_log_purges (org_id, txid, position)
      select distinct on (g.org_id) g.org_id, g.txid, g.position from gone g
      where g.type <> 'webhook.ping' and exists (select 1 from organizations o where o.id = g.org_id)
      order by g.org_id, g.txid desc, g.position desc
      on conflict (org_id) do update set txid = excluded.txid, position = excluded.position
      where (excluded.txid, excluded.position) > (event_log_purges.txid, event_log_purges.position);
      return null;
    end $$`.execute(db);
  await sql`
    create trigger webhook_events_purged after delete on webhook_events
    referencing old table as gone for each statement execute function record_event_log_purge()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger webhook_events_purged on webhook_events`.execute(db);
  await sql`drop function record_event_log_purge()`.execute(db);
  await sql`drop table event_log_purges`.execute(db);
}

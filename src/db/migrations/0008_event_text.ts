/**
 * 0008_event_text: the log keeps each event as the feed answers it, `{"id","type","timestamp","data"}`,
 * so that a page of the feed is its rows' text as stored: PostgreSQL's `substr` walks a UTF-8 text
 * character by character, and cutting the stored delivery body open to put the id in front cost a
 * page of 100 events more of PostgreSQL's time than the rest of its statement. A delivery's body is
 * the event without its leading `id` member, which the worker cuts off as it sends; the id travels as
 * `webhook-id`, and the signed bytes are the same as before.
 *
 * Frozen in time: imports nothing from the application, only `kysely`.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table webhook_events rename column body to event`.execute(db);
  await sql`update webhook_events set event = '{"id":' || to_json(id)::text || ',' || substr(event, 2)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  // `{"id":` (6 characters), the id as JSON, then `,`: the body starts right after them.
  await sql`update webhook_events set event = '{' || substr(event, length(to_json(id)::text) + 8)`.execute(db);
  await sql`alter table webhook_events rename column event to body`.execute(db);
}

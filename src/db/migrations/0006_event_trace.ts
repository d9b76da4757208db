/**
 * 0006_event_trace: an event keeps the W3C `traceparent` of the request whose change wrote it, so
 * that its webhook deliveries continue that trace. Null for events written outside a request (a
 * ping's, the command line's) and for those written before this migration.
 *
 * Frozen in time: imports nothing from the application, only `kysely`.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhook_events').addColumn('traceparent', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhook_events').dropColumn('traceparent').execute();
}

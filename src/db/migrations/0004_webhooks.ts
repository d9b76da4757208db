/**
 * 0004_webhooks: outgoing webhooks — an organization's subscriptions, the events of its changes (a
 * transactional outbox: written in the change's own transaction), one delivery per event and
 * subscription, and every attempt of a delivery.
 *
 * Frozen in time: imports nothing from the application, only `kysely`.
 *
 * - `webhook_subscriptions.secret` holds the `whsec_…` signing secret sealed with SECRETS_KEY, like the
 *   AI provider keys; `previous_secret` the one before a rotation, until `previous_secret_expires_at`.
 * - `failing_since` is the first failed attempt since the last success: five days of it disable the
 *   subscription (`disabled_reason`).
 * - `webhook_events.body` is the exact JSON text sent and signed, so every retry sends the same bytes.
 * - A delivery is due when `state = 'PENDING'` and `next_attempt_at` has passed; a worker claims it by
 *   setting `lease_until` and `lease_token` (a process killed mid-delivery loses it when the lease
 *   runs out). The partial index holds only what may be claimed.
 * - Events, deliveries and attempts age out after 30 days (indexes on `created_at` for the purge).
 */
import { sql, type Kysely } from 'kysely';

const newId = sql`gen_random_uuid()::text`;
const now = sql`now()`;

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhook_subscriptions')
    .addColumn('id', 'text', (col) => col.primaryKey().defaultTo(newId))
    .addColumn('org_id', 'text', (col) => col.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('url', 'text', (col) => col.notNull())
    .addColumn('events', sql`text[]`, (col) => col.notNull())
    .addColumn('description', 'text')
    .addColumn('is_active', 'boolean', (col) => col.notNull().defaultTo(true))
    .addColumn('disabled_reason', 'text')
    .addColumn('secret', 'text', (col) => col.notNull())
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_expires_at', 'timestamptz(3)')
    .addColumn('failing_since', 'timestamptz(3)')
    .addColumn('created_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .addColumn('updated_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .execute();
  await db.schema
    .createIndex('webhook_subscriptions_org_id_created_at_id_idx')
    .on('webhook_subscriptions')
    .columns(['org_id', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('webhook_events')
    .addColumn('id', 'text', (col) => col.primaryKey().defaultTo(newId))
    .addColumn('org_id', 'text', (col) => col.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('type', 'text', (col) => col.notNull())
    .addColumn('body', 'text', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex('webhook_events_org_id_idx').on('webhook_events').column('org_id').execute();
  await db.schema.createIndex('webhook_events_created_at_idx').on('webhook_events').column('created_at').execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (col) => col.primaryKey().defaultTo(newId))
    .addColumn('event_id', 'text', (col) => col.notNull().references('webhook_events.id').onDelete('cascade'))
    .addColumn('subscription_id', 'text', (col) =>
      col.notNull().references('webhook_subscriptions.id').onDelete('cascade'),
    )
    .addColumn('state', 'text', (col) => col.notNull().defaultTo('PENDING'))
    .addColumn('attempt_count', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'timestamptz(3)')
    .addColumn('lease_until', 'timestamptz(3)')
    .addColumn('lease_token', 'text')
    .addColumn('created_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .addCheckConstraint('webhook_deliveries_state_check', sql`state in ('PENDING', 'DELIVERED', 'FAILED')`)
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_next_attempt_at_idx')
    .on('webhook_deliveries')
    .column('next_attempt_at')
    .where(sql.ref('state'), '=', 'PENDING')
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_subscription_id_created_at_id_idx')
    .on('webhook_deliveries')
    .columns(['subscription_id', 'created_at desc', 'id desc'])
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_subscription_id_state_created_at_id_idx')
    .on('webhook_deliveries')
    .columns(['subscription_id', 'state', 'created_at desc', 'id desc'])
    .execute();
  await db.schema.createIndex('webhook_deliveries_event_id_idx').on('webhook_deliveries').column('event_id').execute();
  await db.schema
    .createIndex('webhook_deliveries_created_at_idx')
    .on('webhook_deliveries')
    .column('created_at')
    .execute();

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', 'text', (col) => col.primaryKey().defaultTo(newId))
    .addColumn('delivery_id', 'text', (col) =>
      col.notNull().references('webhook_deliveries.id').onDelete('cascade'),
    )
    .addColumn('attempted_at', 'timestamptz(3)', (col) => col.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('latency_ms', 'integer', (col) => col.notNull())
    .addColumn('error', 'text')
    .addColumn('response_body', 'text')
    .execute();
  await db.schema
    .createIndex('webhook_attempts_delivery_id_attempted_at_id_idx')
    .on('webhook_attempts')
    .columns(['delivery_id', 'attempted_at', 'id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_attempts').execute();
  await db.schema.dropTable('webhook_deliveries').execute();
  await db.schema.dropTable('webhook_events').execute();
  await db.schema.dropTable('webhook_subscriptions').execute();
}

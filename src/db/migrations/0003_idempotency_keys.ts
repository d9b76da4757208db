/**
 * 0003_idempotency_keys: the outcomes of changing requests sent with an `Idempotency-Key`, so that a
 * retry gets the first answer again instead of making the change twice.
 *
 * Frozen in time: imports nothing from the application, only `kysely`.
 *
 * - One row per (user, operation, key): the key is scoped to the caller and the operation.
 * - `fingerprint` is a hash of the method, path and body of the first request: a retry must match it.
 * - `status`, `body` (the exact text answered, null for 204) and `headers` are replayed as they were.
 * - `created_at` ages the row out after 24 hours (index for the purge).
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('user_id', 'text', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('operation_id', 'text', (col) => col.notNull())
    .addColumn('key', 'text', (col) => col.notNull())
    .addColumn('fingerprint', 'text', (col) => col.notNull())
    .addColumn('status', 'integer', (col) => col.notNull())
    .addColumn('body', 'text')
    .addColumn('headers', 'jsonb', (col) => col.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('created_at', 'timestamptz(3)', (col) => col.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pkey', ['user_id', 'operation_id', 'key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_created_at_idx').on('idempotency_keys').column('created_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('idempotency_keys').execute();
}

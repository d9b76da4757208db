/** Queries of the stored outcomes of requests sent with an `Idempotency-Key`. */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, IdempotencyKeyRow } from '../database.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface OutcomeKey {
  userId: string;
  operationId: string;
  key: string;
}

/**
 * Takes the key's lock for the rest of the transaction, without waiting: false while another
 * request with the same key holds it. A hash collision only makes an unrelated key wait its turn.
 */
export async function tryLockKey(trx: Transaction<Database>, { userId, operationId, key }: OutcomeKey): Promise<boolean> {
  const { rows } = await sql<{ locked: boolean }>`
    select pg_try_advisory_xact_lock(hashtextextended(${`${userId}\n${operationId}\n${key}`}, 0)) as locked
  `.execute(trx);
  return rows[0]!.locked;
}

export async function findOutcome(db: Db, { userId, operationId, key }: OutcomeKey): Promise<IdempotencyKeyRow | undefined> {
  return db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('user_id', '=', userId)
    .where('operation_id', '=', operationId)
    .where('key', '=', key)
    .executeTakeFirst();
}

/** Stores an outcome, replacing one that has aged out under the same key. */
export async function saveOutcome(
  trx: Transaction<Database>,
  outcome: OutcomeKey & { fingerprint: string; status: number; body: string | null; headers: Record<string, string>; createdAt: Date },
): Promise<void> {
  const values = {
    fingerprint: outcome.fingerprint,
    status: outcome.status,
    body: outcome.body,
    headers: JSON.stringify(outcome.headers),
    created_at: outcome.createdAt,
  };
  await trx
    .insertInto('idempotency_keys')
    .values({ user_id: outcome.userId, operation_id: outcome.operationId, key: outcome.key, ...values })
    .onConflict((conflict) => conflict.columns(['user_id', 'operation_id', 'key']).doUpdateSet(values))
    .execute();
}

/** Deletes the outcomes stored before `before`; returns how many. */
export async function purgeOutcomes(db: Db, before: Date): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('created_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}

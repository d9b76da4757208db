/** Transactions that nest: a change joins the transaction it is already part of. */
import type { Kysely, Transaction } from 'kysely';
import type { Database } from './database.js';

/**
 * Runs `work` in a transaction: a new one, or the one `db` already is — a request sent with an
 * `Idempotency-Key` runs its change inside the transaction that stores its outcome.
 */
export function inTransaction<T>(db: Kysely<Database>, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  return db.isTransaction ? work(db as Transaction<Database>) : db.transaction().execute(work);
}

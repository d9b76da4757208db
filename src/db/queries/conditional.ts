/** The lock that orders conditional changes of one resource. */
import { sql, type Transaction } from 'kysely';
import type { Database } from '../database.js';

/**
 * Waits for, then holds until the transaction ends, the lock of one resource (`name` names it), so
 * that of two changes sent with the same If-Match tag the second sees the first one's result.
 */
export async function lockResource(trx: Transaction<Database>, name: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${name}, 0))`.execute(trx);
}

/** Queries of accounts that several areas share. */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../database.js';

type Db = Kysely<Database> | Transaction<Database>;

/** E-mail addresses are unique in any letter case; `lower(email)` is what the unique index holds. */
export function findUserByEmail(db: Db, email: string) {
  return db.selectFrom('users').selectAll().where(sql<boolean>`lower(email) = lower(${email})`).executeTakeFirst();
}

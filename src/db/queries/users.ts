/** Queries about accounts. */
import type { Kysely } from 'kysely';
import type { Database } from '../database.js';

export function findUser(db: Kysely<Database>, userId: string) {
  return db.selectFrom('users').select(['id', 'email', 'name', 'timezone', 'system_role']).where('id', '=', userId).executeTakeFirstOrThrow();
}

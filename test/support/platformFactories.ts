/** Factories for the platform tests: operators and rows placed at a chosen point in time. */
import type { Kysely } from 'kysely';
import type { Scope } from '../../src/auth/scopes.js';
import type { Database } from '../../src/db/database.js';
import { createCaller } from './factories.js';

/** A platform operator (SUPERADMIN) with a key of the given scopes, `platform` by default. */
export function createOperator(db: Kysely<Database>, scopes: Scope[] = ['platform']) {
  return createCaller(db, { systemRole: 'SUPERADMIN', scopes });
}

/** Moves a row's creation time, so that list orders can be checked without waiting. */
export async function setCreatedAt(db: Kysely<Database>, table: 'users' | 'organizations' | 'api_keys' | 'ai_providers', id: string, createdAt: Date) {
  await db.updateTable(table).set({ created_at: createdAt }).where('id', '=', id).execute();
}

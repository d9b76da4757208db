/** Queries of platform administration: names and counts only, never organization content. */
import type { Kysely } from 'kysely';
import type { Database } from '../database.js';
import { paginate } from '../pagination.js';
import type { PlatformUserRow } from '../../records/platform.js';

/** All accounts, oldest first, with how many organizations they belong to and how many keys still work. */
export function listUsers(db: Kysely<Database>, page: { limit: number; cursor?: string | undefined }, now: Date) {
  const query = db
    .selectFrom('users')
    .select((eb) => [
      'users.id',
      'users.email',
      'users.name',
      'users.system_role',
      'users.created_at',
      eb
        .selectFrom('organization_members')
        .whereRef('organization_members.user_id', '=', 'users.id')
        .select((count) => count.fn.countAll<string>().as('n'))
        .as('org_count'),
      eb
        .selectFrom('api_keys')
        .whereRef('api_keys.user_id', '=', 'users.id')
        .where('api_keys.revoked_at', 'is', null)
        .where('api_keys.expires_at', '>', now)
        .select((count) => count.fn.countAll<string>().as('n'))
        .as('active_api_keys'),
    ]);
  return paginate(query, {
    ...page,
    order: [
      { column: 'users.created_at', direction: 'asc', type: 'instant', value: (row) => row.created_at },
      { column: 'users.id', direction: 'asc', type: 'string', value: (row) => row.id },
    ],
  }) as Promise<{ rows: PlatformUserRow[]; nextCursor: string | null }>;
}

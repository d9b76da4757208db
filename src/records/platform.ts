/** Rows → the contract's platform records. */
import type { Schemas } from '../api/operations.js';
import type { UserRow } from '../db/database.js';

export type PlatformUserRow = Pick<UserRow, 'id' | 'email' | 'name' | 'system_role' | 'created_at'> & {
  org_count: number | string | bigint;
  active_api_keys: number | string | bigint;
};

export const toPlatformUser = (row: PlatformUserRow): Schemas['PlatformUser'] => ({
  id: row.id,
  email: row.email,
  name: row.name,
  systemRole: row.system_role,
  orgCount: Number(row.org_count),
  activeApiKeys: Number(row.active_api_keys),
  createdAt: row.created_at.toISOString(),
});

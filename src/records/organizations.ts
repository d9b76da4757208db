/** Rows → the contract's organization records. */
import type { Schemas } from '../api/operations.js';
import type { OrganizationMemberRow, OrganizationRole, OrganizationRow, UserRow } from '../db/database.js';
import { declareRecord } from '../db/json.js';

export const toOrganization = (row: OrganizationRow, role: OrganizationRole): Schemas['Organization'] => ({
  id: row.id,
  revision: Number(row.revision),
  name: row.name,
  status: row.status,
  role,
  timezone: row.timezone,
  defaultLocale: row.default_locale,
});

export type OrganizationMemberDetails = Pick<OrganizationMemberRow, 'user_id' | 'revision' | 'role' | 'joined_at'> &
  Pick<UserRow, 'email' | 'name'>;

/** `toOrganizationMember` for single reads and changes, `organizationMemberJson` for the list (src/db/json.ts). */
export const { toRecord: toOrganizationMember, shape: organizationMemberJson } = declareRecord<
  OrganizationMemberDetails,
  Schemas['OrganizationMember']
>({
  userId: ['id', 'user_id'],
  revision: ['integer', 'revision'],
  email: ['text', 'email'],
  name: ['text', 'name'],
  role: ['enum', 'role'],
  joinedAt: ['instant', 'joined_at'],
});

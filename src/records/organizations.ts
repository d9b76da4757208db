/** Rows → the contract's organization records. */
import type { Schemas } from '../api/operations.js';
import type { OrganizationMemberRow, OrganizationRole, OrganizationRow, UserRow } from '../db/database.js';
import type { JsonShape } from '../db/json.js';

export const toOrganization = (row: OrganizationRow, role: OrganizationRole): Schemas['Organization'] => ({
  id: row.id,
  name: row.name,
  status: row.status,
  role,
  timezone: row.timezone,
  defaultLocale: row.default_locale,
});

export type OrganizationMemberDetails = Pick<OrganizationMemberRow, 'user_id' | 'role' | 'joined_at'> &
  Pick<UserRow, 'email' | 'name'>;

export const toOrganizationMember = (row: OrganizationMemberDetails): Schemas['OrganizationMember'] => ({
  userId: row.user_id,
  email: row.email,
  name: row.name,
  role: row.role,
  joinedAt: row.joined_at.toISOString(),
});

/** `toOrganizationMember` written by PostgreSQL, for the list (src/db/json.ts). */
export const organizationMemberJson: JsonShape<OrganizationMemberDetails, Schemas['OrganizationMember']> = {
  userId: ['id', 'user_id'],
  email: ['text', 'email'],
  name: ['text', 'name'],
  role: ['enum', 'role'],
  joinedAt: ['instant', 'joined_at'],
};

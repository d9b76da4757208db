/** Rows → the contract's organization records. */
import type { Schemas } from '../api/operations.js';
import type { OrganizationMemberRow, OrganizationRole, OrganizationRow, UserRow } from '../db/database.js';
import { declareRecord } from '../db/json.js';

const organization = declareRecord<OrganizationRow & { role: OrganizationRole }, Schemas['Organization']>({
  id: ['id', 'id'],
  revision: ['integer', 'revision'],
  name: ['text', 'name'],
  status: ['enum', 'status'],
  role: ['enum', 'role'],
  timezone: ['text', 'timezone'],
  defaultLocale: ['enum', 'default_locale'],
});

/** The organization as `role` sees it: its settings, and their role in it. */
export const toOrganization = (row: OrganizationRow, role: OrganizationRole): Schemas['Organization'] => organization.toRecord({ ...row, role });
/** The organization as PostgreSQL writes it (src/db/json.ts), `role` a column of the row it is written from. */
export const organizationJson = organization.shape;

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

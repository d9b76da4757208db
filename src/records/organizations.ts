/** Rows → the contract's Organization records. */
import type { Schemas } from '../api/operations.js';
import type { OrganizationRole, OrganizationRow } from '../db/database.js';

export type OrganizationWithRole = Pick<OrganizationRow, 'id' | 'name' | 'status' | 'timezone' | 'default_locale'> & {
  role: OrganizationRole;
};

export const toOrganization = (row: OrganizationWithRole): Schemas['Organization'] => ({
  id: row.id,
  name: row.name,
  status: row.status,
  role: row.role,
  timezone: row.timezone,
  defaultLocale: row.default_locale,
});

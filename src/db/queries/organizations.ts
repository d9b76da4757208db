/** Queries about organizations as their members see them. */
import type { Kysely } from 'kysely';
import type { Database } from '../database.js';
import type { OrganizationWithRole } from '../../records/organizations.js';

const withRole = (db: Kysely<Database>, userId: string) =>
  db
    .selectFrom('organization_members')
    .innerJoin('organizations', 'organizations.id', 'organization_members.org_id')
    .select([
      'organizations.id',
      'organizations.name',
      'organizations.status',
      'organizations.timezone',
      'organizations.default_locale',
      'organization_members.role',
    ])
    .where('organization_members.user_id', '=', userId);

/** The organizations a person belongs to, with their role, by name. */
export function listMemberOrganizations(db: Kysely<Database>, userId: string): Promise<OrganizationWithRole[]> {
  return withRole(db, userId).orderBy('organizations.name').orderBy('organizations.id').execute();
}

/** One organization with the person's role, or undefined when they are not a member. */
export function findMemberOrganization(db: Kysely<Database>, userId: string, orgId: string): Promise<OrganizationWithRole | undefined> {
  return withRole(db, userId).where('organizations.id', '=', orgId).executeTakeFirst();
}

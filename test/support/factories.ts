/** Small factories that insert only the rows a test needs, straight into the database. */
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { generateKey } from '../../src/auth/apiKeys.js';
import type { Scope } from '../../src/auth/scopes.js';
import type { Database, OrganizationRole, TeamRole } from '../../src/db/database.js';

const unique = () => randomBytes(4).toString('hex');
const day = 24 * 60 * 60 * 1000;

export async function createUser(
  db: Kysely<Database>,
  options: { name?: string; email?: string; timezone?: string | null; systemRole?: 'USER' | 'SUPERADMIN' } = {},
) {
  const name = options.name ?? `Person ${unique()}`;
  return db
    .insertInto('users')
    .values({
      email: options.email ?? `person.${unique()}@example.com`,
      name,
      timezone: options.timezone ?? null,
      system_role: options.systemRole ?? 'USER',
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A key for the user; returns the full key, as the web application shows it once. */
export async function createKey(
  db: Kysely<Database>,
  userId: string,
  options: { scopes?: Scope[]; expiresAt?: Date; revoked?: boolean; name?: string } = {},
) {
  const { key, prefix, hash } = generateKey();
  const row = await db
    .insertInto('api_keys')
    .values({
      user_id: userId,
      name: options.name ?? 'Test key',
      prefix,
      key_hash: hash,
      scopes: options.scopes ?? ['write'],
      expires_at: options.expiresAt ?? new Date(Date.now() + 30 * day),
      revoked_at: options.revoked ? new Date() : null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { key, row };
}

/** A person with a key in one step. */
export async function createCaller(
  db: Kysely<Database>,
  options: Parameters<typeof createUser>[1] & { scopes?: Scope[] } = {},
) {
  const user = await createUser(db, options);
  const { key, row } = await createKey(db, user.id, { scopes: options.scopes ?? ['write'] });
  return { user, key, keyRow: row };
}

export async function createOrganization(
  db: Kysely<Database>,
  options: { name?: string; status?: 'ACTIVE' | 'SUSPENDED'; timezone?: string } = {},
) {
  const name = options.name ?? `Organization ${unique()}`;
  return db
    .insertInto('organizations')
    .values({
      name,
      slug: `${name.toLowerCase().replace(/\W+/g, '-')}-${unique()}`,
      status: options.status ?? 'ACTIVE',
      timezone: options.timezone ?? 'Europe/Bratislava',
      default_locale: 'en',
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function addOrganizationMember(db: Kysely<Database>, orgId: string, userId: string, role: OrganizationRole) {
  await db.insertInto('organization_members').values({ org_id: orgId, user_id: userId, role }).execute();
}

export async function createTeam(db: Kysely<Database>, orgId: string, options: { name?: string; isLeadership?: boolean } = {}) {
  const name = options.name ?? `Team ${unique()}`;
  return db
    .insertInto('teams')
    .values({ org_id: orgId, name, slug: `${name.toLowerCase().replace(/\W+/g, '-')}-${unique()}`, is_leadership: options.isLeadership ?? false })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function addTeamMember(db: Kysely<Database>, teamId: string, userId: string, role: TeamRole) {
  await db.insertInto('team_members').values({ team_id: teamId, user_id: userId, role }).execute();
}

/**
 * An organization with one team, and `person(orgRole, teamRole?)`, which adds a caller with that
 * organization role and, when given, that role in the team.
 */
export async function createTeamWorld(db: Kysely<Database>, options: { suspended?: boolean; isLeadership?: boolean } = {}) {
  const org = await createOrganization(db, { status: options.suspended ? 'SUSPENDED' : 'ACTIVE' });
  const team = await createTeam(db, org.id, { isLeadership: options.isLeadership });
  const person = async (orgRole: OrganizationRole, teamRole?: TeamRole) => {
    const caller = await createCaller(db);
    await addOrganizationMember(db, org.id, caller.user.id, orgRole);
    if (teamRole) await addTeamMember(db, team.id, caller.user.id, teamRole);
    return caller;
  };
  return { org, team, person };
}

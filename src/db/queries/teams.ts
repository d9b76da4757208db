/** Queries of teams and team members. */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, TeamRole, TeamUpdate } from '../database.js';
import type { JsonShape } from '../json.js';
import { preparedJsonPages } from '../pagination.js';
import { callerTeamRole } from './access.js';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * The teams of an organization the caller can see, by name: all of them for organization Owners,
 * Admins and Implementers (`allTeams`), else only the caller's own.
 */
export function listVisibleTeams(db: Db, orgId: string, userId: string, allTeams: boolean) {
  let query = db
    .selectFrom('teams')
    .selectAll('teams')
    .select(callerTeamRole('teams.id', userId))
    .where('teams.org_id', '=', orgId);
  if (!allTeams) {
    query = query.where(({ exists, selectFrom }) =>
      exists(
        selectFrom('team_members')
          .select('team_members.user_id')
          .whereRef('team_members.team_id', '=', 'teams.id')
          .where('team_members.user_id', '=', userId),
      ),
    );
  }
  return query.orderBy('teams.name').orderBy('teams.id').execute();
}

export async function takenSlugs(db: Db, orgId: string, base: string): Promise<string[]> {
  const rows = await db
    .selectFrom('teams')
    .select('slug')
    .where('org_id', '=', orgId)
    .where((eb) => eb.or([eb('slug', '=', base), eb('slug', 'like', `${base}-%`)]))
    .execute();
  return rows.map((row) => row.slug);
}

export function insertTeam(db: Db, team: { orgId: string; name: string; slug: string }) {
  return db
    .insertInto('teams')
    .values({ org_id: team.orgId, name: team.name, slug: team.slug })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function lockTeam(trx: Transaction<Database>, teamId: string) {
  return trx.selectFrom('teams').selectAll().where('id', '=', teamId).forUpdate().executeTakeFirstOrThrow();
}

export function updateTeam(db: Db, teamId: string, change: TeamUpdate) {
  return db.updateTable('teams').set(change).where('id', '=', teamId).returningAll().executeTakeFirstOrThrow();
}

/** Deletes the team; every table of team data references it `on delete cascade`. */
export async function deleteTeam(db: Db, teamId: string) {
  await db.deleteFrom('teams').where('id', '=', teamId).execute();
}

const memberColumns = ['team_members.user_id', 'team_members.revision', 'team_members.role', 'team_members.joined_at', 'users.email', 'users.name'] as const;

const teamMemberRows = (db: Db, { teamId }: { teamId: string }) =>
  db
    .selectFrom('team_members')
    .innerJoin('users', 'users.id', 'team_members.user_id')
    .select(memberColumns)
    .where('team_members.team_id', '=', teamId);

type TeamMemberPageRow = Awaited<ReturnType<ReturnType<typeof teamMemberRows>['executeTakeFirstOrThrow']>>;

/** Team members in the order they joined the team, written as JSON by `shape` (given by the handler). */
export function teamMemberPages<R>(shape: JsonShape<TeamMemberPageRow, R>) {
  const pages = preparedJsonPages(
    teamMemberRows,
    [
      { column: 'team_members.joined_at', direction: 'asc', type: 'instant' },
      { column: 'team_members.user_id', direction: 'asc', type: 'string' },
    ],
    shape,
  );
  return (db: Db, teamId: string, page: { limit: number; cursor?: string | undefined }) => pages(db, { teamId }, page);
}

export function findTeamMember(db: Db, teamId: string, userId: string) {
  return db
    .selectFrom('team_members')
    .innerJoin('users', 'users.id', 'team_members.user_id')
    .select(memberColumns)
    .where('team_members.team_id', '=', teamId)
    .where('team_members.user_id', '=', userId)
    .executeTakeFirst();
}

/** Adds the person unless already in the team; undefined when they were. */
export function insertTeamMember(db: Db, teamId: string, userId: string, role: TeamRole) {
  return db
    .insertInto('team_members')
    .values({ team_id: teamId, user_id: userId, role })
    .onConflict((conflict) => conflict.columns(['team_id', 'user_id']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** Sets the member's team role; answers the membership's revision after the change. */
export async function setTeamMemberRole(db: Db, teamId: string, userId: string, role: TeamRole): Promise<string> {
  const row = await db.updateTable('team_members').set({ role }).where('team_id', '=', teamId).where('user_id', '=', userId).returning('revision').executeTakeFirstOrThrow();
  return row.revision;
}

export function deleteTeamMember(db: Db, teamId: string, userId: string) {
  return db.deleteFrom('team_members').where('team_id', '=', teamId).where('user_id', '=', userId).execute();
}

/**
 * Whether the person has a row in the team (organization roles do not count). Inside a change the row
 * is locked against deletion (`for key share`) until the change commits.
 */
export async function isTeamMember(db: Db, teamId: string, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('team_members')
    .select('user_id')
    .where('team_id', '=', teamId)
    .where('user_id', '=', userId)
    .forKeyShare()
    .executeTakeFirst();
  return row !== undefined;
}

/** Whether the person is a member of the organization. */
export async function isOrganizationMember(db: Db, orgId: string, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('organization_members')
    .select('user_id')
    .where('org_id', '=', orgId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row !== undefined;
}

/** The team's members by their e-mail address in lower case (addresses are unique in any case), for an import's owners. */
export async function memberEmails(db: Db, teamId: string): Promise<Map<string, string>> {
  const rows = await db
    .selectFrom('team_members')
    .innerJoin('users', 'users.id', 'team_members.user_id')
    .select(['users.id', sql<string>`lower(users.email)`.as('email')])
    .where('team_members.team_id', '=', teamId)
    .execute();
  return new Map(rows.map((row) => [row.email, row.id]));
}

/**
 * The pieces of a query that tell the authorization module (src/auth/permissions.ts) who the caller is
 * in a team: added to the query that loads the team or item itself, so that checking access costs no
 * extra round trip.
 */
import { sql, type Kysely } from 'kysely';
import type { Caller } from '../../auth/authenticate.js';
import { membershipIn, organizationAccess, teamAccess, type Target, type TeamFacts } from '../../auth/permissions.js';
import type { Database, TeamRole } from '../database.js';

/**
 * `caller_team_role`: the caller's role in the team whose id is in `teamIdColumn`, or null. A
 * correlated subquery on the team_members primary key.
 */
export function callerTeamRole(teamIdColumn: string, userId: string) {
  return sql<TeamRole | null>`(select tm.role from team_members tm where tm.team_id = ${sql.ref(teamIdColumn)} and tm.user_id = ${userId})`.as(
    'caller_team_role',
  );
}

/** The facts of a row that carries `team_id`, `org_id` and `caller_team_role`. */
export const teamFacts = (row: { team_id: string; org_id: string; caller_team_role: TeamRole | null }): TeamFacts => ({
  teamId: row.team_id,
  orgId: row.org_id,
  callerTeamRole: row.caller_team_role,
});

export async function organizationExists(db: Kysely<Database>, orgId: string): Promise<boolean> {
  const row = await db.selectFrom('organizations').select('id').where('id', '=', orgId).executeTakeFirst();
  return row !== undefined;
}

/** The caller's access to an organization; the organization is looked up only when the caller is not a member. */
export async function loadOrganizationAccess(db: Kysely<Database>, caller: Caller, orgId: string, target: Target) {
  const exists = membershipIn(caller, orgId) !== undefined || (await organizationExists(db, orgId));
  return organizationAccess(caller, orgId, target, exists);
}

/** A team with the caller's role in it, in one query. */
export function findTeam(db: Kysely<Database>, teamId: string, userId: string) {
  return db
    .selectFrom('teams')
    .selectAll('teams')
    .select(callerTeamRole('teams.id', userId))
    .where('teams.id', '=', teamId)
    .executeTakeFirst();
}

/** The team and the caller's access to it (refused as `target` asks). */
export async function loadTeamAccess(db: Kysely<Database>, caller: Caller, teamId: string, target: Target) {
  const team = await findTeam(db, teamId, caller.userId);
  const access = teamAccess(caller, team && teamFacts({ ...team, team_id: team.id }), target);
  return { team: team!, access };
}

/**
 * The pieces of a query that tell the authorization module (src/auth/permissions.ts, through
 * src/auth/access.ts) who the caller is in a team: added to the query that loads the team or item
 * itself, so that checking access costs no extra round trip.
 */
import { sql, type Kysely } from 'kysely';
import type { Database, TeamRole } from '../database.js';
import { prepared } from '../prepared.js';

/**
 * `caller_team_role`: the caller's role in the team whose id is in `teamIdColumn`, or null. A
 * correlated subquery on the team_members primary key.
 */
export function callerTeamRole(teamIdColumn: string, userId: string) {
  return sql<TeamRole | null>`(select tm.role from team_members tm where tm.team_id = ${sql.ref(teamIdColumn)} and tm.user_id = ${userId})`.as(
    'caller_team_role',
  );
}

export async function organizationExists(db: Kysely<Database>, orgId: string): Promise<boolean> {
  const row = await db.selectFrom('organizations').select('id').where('id', '=', orgId).executeTakeFirst();
  return row !== undefined;
}

const teamById = prepared((db, { teamId, userId }: { teamId: string; userId: string }) =>
  db.selectFrom('teams').selectAll('teams').select(callerTeamRole('teams.id', userId)).where('teams.id', '=', teamId),
);

/** A team with the caller's role in it, in one query. */
export async function findTeam(db: Kysely<Database>, teamId: string, userId: string) {
  return (await teamById(db, { teamId, userId }))[0];
}

/**
 * `team_org_id` and `caller_team_role` of one team, as columns any query under that team can carry:
 * a list reads its rows and the caller's access in one statement. Both subqueries are uncorrelated,
 * so PostgreSQL runs them once per statement, not once per row.
 */
export function teamFactsOf(teamId: string, userId: string) {
  return [
    sql<string | null>`(select t.org_id from teams t where t.id = ${teamId})`.as('team_org_id'),
    sql<TeamRole | null>`(select tm.role from team_members tm where tm.team_id = ${teamId} and tm.user_id = ${userId})`.as('caller_team_role'),
  ] as const;
}

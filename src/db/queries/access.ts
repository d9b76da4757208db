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
 * The caller's standing in a team: what the authorization module (src/auth/permissions.ts) decides
 * the caller's access to the team or one of its items from. Read with the team or item itself, or
 * brought along by a list's statement (`standingColumns`), so that it costs no statement of its own.
 */
export interface TeamStanding {
  teamId: string;
  orgId: string;
  /** The caller's role in the team's `team_members`, or null when the caller is not in the team. */
  callerTeamRole: TeamRole | null;
}

/** The standing read with a team's item: its row carries `team_id`, `org_id` and `caller_team_role` (`callerTeamRole`). */
export const standingOf = (row: { team_id: string; org_id: string; caller_team_role: TeamRole | null }): TeamStanding => ({
  teamId: row.team_id,
  orgId: row.org_id,
  callerTeamRole: row.caller_team_role,
});

/** The standing read with the team itself (`findTeam`). */
export const standingInTeam = (team: { id: string; org_id: string; caller_team_role: TeamRole | null }): TeamStanding =>
  standingOf({ ...team, team_id: team.id });

/** The names of the columns `standingColumns` adds to a statement. */
export const standingColumnNames = ['team_org_id', 'caller_team_role'] as const;

/**
 * The caller's standing in team `teamId` as columns any statement under that team can bring along:
 * a list reads its rows and the caller's access in one statement. Both subqueries are uncorrelated,
 * so PostgreSQL runs them once per statement, not once per row.
 */
export function standingColumns(teamId: string, userId: string) {
  return [
    sql<string | null>`(select t.org_id from teams t where t.id = ${teamId})`.as('team_org_id'),
    sql<TeamRole | null>`(select tm.role from team_members tm where tm.team_id = ${teamId} and tm.user_id = ${userId})`.as('caller_team_role'),
  ] as const;
}

/**
 * A page with the standing its statement brought along (`standingColumns`, read from its first row)
 * in place of the raw columns; no standing when the page is empty (the team, if any, is then read alone).
 */
export function withStanding<P extends { facts: { team_org_id: string | null; caller_team_role: TeamRole | null } | undefined }>(
  teamId: string,
  { facts, ...page }: P,
): Omit<P, 'facts'> & { standing: TeamStanding | undefined } {
  return { ...page, standing: facts?.team_org_id ? { teamId, orgId: facts.team_org_id, callerTeamRole: facts.caller_team_role } : undefined };
}

/**
 * The caller's standing in every team they are a member of, in each of `teamIds` (a team that does
 * not exist is absent) and in every team of `orgIds`, in one statement: what an event stream decides
 * its reader's access from when it opens and when a notification says it changed (src/live/streams.ts).
 */
export async function standingsOf(db: Kysely<Database>, userId: string, teamIds: readonly string[], orgIds: readonly string[]): Promise<TeamStanding[]> {
  const { rows } = await sql<{ team_id: string; org_id: string; caller_team_role: TeamRole | null }>`
    select t.id as team_id, t.org_id, tm.role as caller_team_role from teams t
    left join team_members tm on tm.team_id = t.id and tm.user_id = ${userId}
    where tm.user_id is not null or t.id = any(${[...teamIds]}::text[]) or t.org_id = any(${[...orgIds]}::text[])
  `.execute(db);
  return rows.map(standingOf);
}

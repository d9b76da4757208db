/**
 * Loading what the authorization module decides on: the organization or team a request names, read
 * together with the caller's role in it (src/db/queries/access.ts), then judged by
 * src/auth/permissions.ts — one query, and the decision in one place.
 */
import type { Kysely } from 'kysely';
import type { Database, TeamRole } from '../db/database.js';
import { findTeam, organizationExists } from '../db/queries/access.js';
import type { Caller } from './authenticate.js';
import { membershipIn, organizationAccess, teamAccess, type Target, type TeamFacts } from './permissions.js';

/** The facts of a row that carries `team_id`, `org_id` and `caller_team_role`. */
export const teamFacts = (row: { team_id: string; org_id: string; caller_team_role: TeamRole | null }): TeamFacts => ({
  teamId: row.team_id,
  orgId: row.org_id,
  callerTeamRole: row.caller_team_role,
});

/** The caller's access to an organization; the organization is looked up only when the caller is not a member. */
export async function loadOrganizationAccess(db: Kysely<Database>, caller: Caller, orgId: string, target: Target) {
  const exists = membershipIn(caller, orgId) !== undefined || (await organizationExists(db, orgId));
  return organizationAccess(caller, orgId, target, exists);
}

/**
 * The caller's access to the team of a list whose rows carry `teamFactsOf` (one statement for the
 * rows and the access): decided from the facts of the page's first row; only an empty page asks for
 * the team alone. The page is returned to the caller only when access is granted.
 */
export async function listAccess(
  db: Kysely<Database>,
  caller: Caller,
  teamId: string,
  first: { team_org_id: string | null; caller_team_role: TeamRole | null } | undefined,
) {
  if (first?.team_org_id) {
    return teamAccess(caller, { teamId, orgId: first.team_org_id, callerTeamRole: first.caller_team_role }, 'collection');
  }
  return (await loadTeamAccess(db, caller, teamId, 'collection')).access;
}

/** The team and the caller's access to it (refused as `target` asks). */
export async function loadTeamAccess(db: Kysely<Database>, caller: Caller, teamId: string, target: Target) {
  const team = await findTeam(db, teamId, caller.userId);
  const access = teamAccess(caller, team && teamFacts({ ...team, team_id: team.id }), target);
  return { team: team!, access };
}

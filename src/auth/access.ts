/**
 * Loading what the authorization module decides on: the organization or team a request names, read
 * together with the caller's standing in it (src/db/queries/access.ts), then judged by
 * src/auth/permissions.ts — one query at most, and the decision in one place.
 */
import type { Kysely } from 'kysely';
import type { ChangeGuard } from '../db/changes.js';
import type { Database } from '../db/database.js';
import { findTeam, organizationExists, standingInTeam, type TeamStanding } from '../db/queries/access.js';
import type { Caller } from './caller.js';
import { membershipIn, organizationAccess, teamAccess, teamChangeGrants, type TeamAccess, type TeamAction, type Target } from './permissions.js';

/** The caller's access to an organization; the organization is looked up only when the caller is not a member. */
export async function loadOrganizationAccess(db: Kysely<Database>, caller: Caller, orgId: string, target: Target) {
  const exists = membershipIn(caller, orgId) !== undefined || (await organizationExists(db, orgId));
  return organizationAccess(caller, orgId, target, exists);
}

type LoadedTeam = NonNullable<Awaited<ReturnType<typeof findTeam>>>;

/**
 * The caller's access to a team (refused as `target` asks), with the team when it was read. A list
 * passes the standing its own statement brought along (`standingColumns`): access is then decided
 * without a statement, and only an empty page, which brought none, reads the team.
 */
export async function loadTeamAccess(db: Kysely<Database>, caller: Caller, teamId: string, target: Target): Promise<{ team: LoadedTeam; access: TeamAccess }>;
export async function loadTeamAccess(
  db: Kysely<Database>,
  caller: Caller,
  teamId: string,
  target: Target,
  brought: TeamStanding | undefined,
): Promise<{ team?: LoadedTeam; access: TeamAccess }>;
export async function loadTeamAccess(db: Kysely<Database>, caller: Caller, teamId: string, target: Target, brought?: TeamStanding) {
  if (brought) return { access: teamAccess(caller, brought, target) };
  const team = await findTeam(db, teamId, caller.userId);
  const access = teamAccess(caller, team && standingInTeam(team), target);
  return { team: team!, access };
}

/** The guard of a change made in one statement: the caller, with the grants `permissions.ts` gives them for `action`. */
export const changeGuard = (caller: Caller, action: TeamAction): ChangeGuard => ({ userId: caller.userId, grants: teamChangeGrants(caller, action) });

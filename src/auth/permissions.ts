/**
 * Authorization: what a caller may see and change. Every handler asks here, and nowhere else is a
 * role compared. The decisions are pure functions of the caller's memberships as read on this request
 * (by authentication, and by the one query that loads the team or item), so a change of roles takes
 * effect on the very next request.
 *
 * Order of checks inside a handler, after the pipeline's authentication, scope and format checks:
 * 1. visibility — the organization, team or item must be visible to the caller: refused as 403 for a
 *    collection (a list, or a creation, under an organization or team) and as 404 for a single item,
 *    exactly like an id that does not exist; administration is visible only to the organization's
 *    Owners and Admins (403 to everyone else), and only then is the member it names looked up (404);
 * 2. suspension — in a SUSPENDED organization every change gets 409 orgSuspended, whoever asks;
 * 3. permission — the caller's role must allow the change: 403 forbidden;
 * 4. rules of the operation — 422 invalid (checked by the handler after this module agreed).
 */
import type { GoalLevel, OrganizationRole, TeamRole } from '../db/database.js';
import { Forbidden, NotFound, OrgSuspended } from '../errors.js';
import type { TeamStanding } from '../db/queries/access.js';
import type { Caller } from './authenticate.js';

/**
 * How a refusal of visibility is answered: 403 for a collection under a team or organization, 404 for an
 * item. `administration` (the organization's settings, members and teams, and the teams' members) is
 * allowed only to the organization's Owners and Admins, else 403 — also for an organization or team
 * the caller cannot see, so that only an unknown id gives 404. It is decided before anything the
 * operation names (a member, a person) is looked up, so that a refused caller learns nothing of it.
 */
export type Target = 'collection' | 'item' | 'administration';

export interface OrganizationAccess {
  orgId: string;
  role: OrganizationRole;
  suspended: boolean;
}

export interface TeamAccess {
  orgId: string;
  teamId: string;
  orgRole: OrganizationRole;
  /** The role the caller acts with in the team (organization roles included). */
  role: TeamRole;
  /** The caller's own row in the team, if any: organization Owners, Admins and Implementers may see a team without one. */
  membership: TeamRole | null;
  suspended: boolean;
}


const refuse = (target: Target): Error => (target === 'item' ? new NotFound() : new Forbidden());

/** Organization settings, members and teams are administered by organization Owners and Admins only. */
export const administersOrganization = (role: OrganizationRole): boolean => role === 'OWNER' || role === 'ADMIN';

/** Roles of organization members who act as team Admins in every team of their organization. */
const actsAsTeamAdmin: ReadonlySet<OrganizationRole> = new Set(['OWNER', 'ADMIN', 'IMPLEMENTER']);

const teamRank: Record<TeamRole, number> = { VIEWER: 0, MEMBER: 1, ADMIN: 2, OWNER: 3 };

/**
 * The role the caller acts with in a team: organization Owners, Admins and Implementers act as team
 * Admins (as Owner when they own the team); a plain organization Member has their team role, or no
 * access when not in the team. Outside the organization there is no access, whatever rows remain.
 */
export function effectiveTeamRole(orgRole: OrganizationRole | undefined, teamRole: TeamRole | null): TeamRole | null {
  if (orgRole === undefined) return null;
  if (actsAsTeamAdmin.has(orgRole)) return teamRole === 'OWNER' ? 'OWNER' : 'ADMIN';
  return teamRole;
}

export function membershipIn(caller: Caller, orgId: string) {
  return caller.organizations.find((organization) => organization.id === orgId);
}

/**
 * The caller's access to an organization they are a member of. For a non-member the answer depends on
 * `exists` (asked only then): 404 for an organization that does not exist, else 403 for a collection
 * and 404 for an item.
 */
export function organizationAccess(caller: Caller, orgId: string, target: Target, exists: boolean): OrganizationAccess {
  const membership = membershipIn(caller, orgId);
  if (!membership) throw exists ? refuse(target) : new NotFound();
  if (target === 'administration' && !administersOrganization(membership.role)) throw new Forbidden();
  return { orgId, role: membership.role, suspended: membership.status === 'SUSPENDED' };
}

/**
 * The caller's access to a webhook subscription by id, whose organization is `orgId` (undefined: no
 * such subscription): hidden (404) from anyone outside its organization, refused (403) to members who
 * are not its Owners or Admins.
 */
export function webhookAccess(caller: Caller, orgId: string | undefined): OrganizationAccess {
  if (orgId === undefined) throw new NotFound();
  const access = organizationAccess(caller, orgId, 'item', true);
  if (!administersOrganization(access.role)) throw new Forbidden();
  return access;
}

/**
 * The caller's access to one event of the log by id, whose organization is `orgId` (undefined: no
 * such event in the feed). The feed's audience is that of webhook subscriptions, the organization's
 * Owners and Admins; to anyone else an event is hidden (404), its organization's other members
 * included, as an id of the log tells them nothing they may read.
 */
export function eventAccess(caller: Caller, orgId: string | undefined): OrganizationAccess {
  const membership = orgId === undefined ? undefined : membershipIn(caller, orgId);
  if (!membership || !administersOrganization(membership.role)) throw new NotFound();
  return { orgId: membership.id, role: membership.role, suspended: membership.status === 'SUSPENDED' };
}

/** The caller's access to a team; `standing` undefined means the team (or item) does not exist. */
export function teamAccess(caller: Caller, standing: TeamStanding | undefined, target: Target): TeamAccess {
  if (!standing) throw new NotFound();
  const membership = membershipIn(caller, standing.orgId);
  const role = effectiveTeamRole(membership?.role, standing.callerTeamRole);
  if (!membership || !role) throw refuse(target);
  if (target === 'administration' && !administersOrganization(membership.role)) throw new Forbidden();
  return {
    orgId: standing.orgId,
    teamId: standing.teamId,
    orgRole: membership.role,
    role,
    membership: standing.callerTeamRole,
    suspended: membership.status === 'SUSPENDED',
  };
}

/** Whether the caller may see the team at all (used to filter lists of teams). */
export function seesTeam(orgRole: OrganizationRole, callerTeamRole: TeamRole | null): boolean {
  return effectiveTeamRole(orgRole, callerTeamRole) !== null;
}

/** Every change in a suspended organization is refused (409), whoever asks. */
export function requireActive(access: { suspended: boolean }): void {
  if (access.suspended) throw new OrgSuspended();
}

/** A change the caller wants to make: refused in a suspended organization (409), then by role (403). */
export function requireChange(access: { suspended: boolean }, allowed: boolean): void {
  requireActive(access);
  if (!allowed) throw new Forbidden();
}

// ---------------------------------------------------------------------------------------------------
// Organization administration

const ownerOnlyRoles: ReadonlySet<OrganizationRole> = new Set(['OWNER', 'ADMIN']);

/**
 * Whether the caller may give a member `granted` (null: remove them) when they now hold `current`
 * (null: not a member yet). Only an Owner grants OWNER or ADMIN and changes or removes an Owner or Admin.
 */
export function mayAssignOrganizationRole(
  callerRole: OrganizationRole,
  current: OrganizationRole | null,
  granted: OrganizationRole | null,
): boolean {
  if (!administersOrganization(callerRole)) return false;
  if (callerRole === 'OWNER') return true;
  return !(current && ownerOnlyRoles.has(current)) && !(granted && ownerOnlyRoles.has(granted));
}

// ---------------------------------------------------------------------------------------------------
// Changes inside a team (the reference's "Permissions of writes"): the role in the item's team decides.

export type TeamAction =
  | 'writeTask'
  | 'writeIssue'
  | 'enterMetricValue'
  | 'addMeetingContent'
  | 'writePeopleReview'
  | 'addDocument'
  | 'manageGoals'
  | 'manageMetrics'
  | 'manageMeetings'
  | 'rateOthers'
  | 'editVision'
  | 'editOrgChart'
  | 'delete';

const leastRoleFor: Record<TeamAction, TeamRole> = {
  writeTask: 'MEMBER',
  writeIssue: 'MEMBER',
  enterMetricValue: 'MEMBER',
  addMeetingContent: 'MEMBER',
  writePeopleReview: 'MEMBER',
  addDocument: 'MEMBER',
  manageGoals: 'ADMIN',
  manageMetrics: 'ADMIN',
  manageMeetings: 'ADMIN',
  rateOthers: 'ADMIN',
  editVision: 'ADMIN',
  editOrgChart: 'ADMIN',
  delete: 'ADMIN',
};

/** Every action of the table above. */
export const teamActions = Object.keys(leastRoleFor) as TeamAction[];

export const atLeast = (role: TeamRole, least: TeamRole): boolean => teamRank[role] >= teamRank[least];

/** Whether the caller's role in the team allows the action. A Viewer changes nothing. */
export const teamAllows = (access: TeamAccess, action: TeamAction): boolean => atLeast(access.role, leastRoleFor[action]);

/** A team role the caller may hold in a team of an organization (null: not in the team's members). */
export interface TeamGrant {
  orgId: string;
  teamRole: TeamRole | null;
}

const teamRoles: readonly (TeamRole | null)[] = [null, 'VIEWER', 'MEMBER', 'ADMIN', 'OWNER'];

/**
 * The same decision as `teamAccess` + `requireChange(access, teamAllows(access, action))`, computed
 * from the caller alone, in advance, for a change made in one statement: every (organization, team
 * role) in which the caller would be allowed `action` — organizations they belong to that are not
 * suspended, with each role in the team that, with their organization role, allows it. The statement
 * applies it to the item's organization and the caller's role read with the item, and changes nothing
 * when no grant matches; the handler then asks `teamAccess` and `requireChange` which refusal it is.
 */
export function teamChangeGrants(caller: Caller, action: TeamAction): TeamGrant[] {
  const grants: TeamGrant[] = [];
  for (const membership of caller.organizations) {
    if (membership.status === 'SUSPENDED') continue;
    for (const teamRole of teamRoles) {
      const role = effectiveTeamRole(membership.role, teamRole);
      if (role && atLeast(role, leastRoleFor[action])) grants.push({ orgId: membership.id, teamRole });
    }
  }
  return grants;
}

// ---------------------------------------------------------------------------------------------------
// People reviews: team Admins and Owners (organization Owners, Admins and Implementers included) see
// every review of the team; other members see the reviews they wrote and those about themselves.

export const seesEveryPeopleReview = (access: TeamAccess): boolean => atLeast(access.role, 'ADMIN');

// ---------------------------------------------------------------------------------------------------
// Goals: company goals are visible to every member of their organization.

export interface GoalAccess {
  suspended: boolean;
  /**
   * The caller's access to the goal's team; null for an organization member who reads a company goal
   * without seeing its team: the goal is visible to them, but they may change nothing of it.
   */
  team: TeamAccess | null;
}

/** Company goals are visible to every member of their organization; other goals only with team access (404 otherwise). */
export function goalAccess(caller: Caller, standing: TeamStanding | undefined, level: GoalLevel | undefined): GoalAccess {
  if (standing && level === 'COMPANY') {
    const membership = membershipIn(caller, standing.orgId);
    if (membership && !seesTeam(membership.role, standing.callerTeamRole)) {
      return { suspended: membership.status === 'SUSPENDED', team: null };
    }
  }
  const team = teamAccess(caller, standing, 'item');
  return { suspended: team.suspended, team };
}

/** Creating goals and changing anything but their status is for team Admins and Owners. */
export const mayManageGoal = (access: GoalAccess): boolean => access.team !== null && teamAllows(access.team, 'manageGoals');

export const mayDeleteGoal = (access: GoalAccess): boolean => access.team !== null && teamAllows(access.team, 'delete');

/**
 * A goal's status and its milestones may be changed by the goal's owner (Member or above in the team)
 * and by team Admins.
 */
export function mayReportOnGoal(access: GoalAccess, callerId: string, goalOwnerId: string): boolean {
  const team = access.team;
  return team !== null && (teamAllows(team, 'manageGoals') || (callerId === goalOwnerId && atLeast(team.role, 'MEMBER')));
}

// ---------------------------------------------------------------------------------------------------
// Meetings: who rates, and who acknowledges cascading messages.

/**
 * Rating a meeting oneself is for people in the meeting's team who act in it as Member or above.
 * Implementers never rate themselves; organization Owners and Admins rate only in teams they are
 * members of, where they act as team Admins whatever their row says; Viewers change nothing.
 */
export function mayRateSelf(access: TeamAccess): boolean {
  return access.orgRole !== 'IMPLEMENTER' && access.membership !== null && atLeast(access.role, 'MEMBER');
}

/**
 * Team Admins and Owners (organization Owners and Admins included) rate at any time except while the
 * meeting is SCHEDULED; team Members only within the rating window.
 */
export const ratesAnyTime = (access: TeamAccess): boolean => atLeast(access.role, 'ADMIN');

/**
 * A cascading message addresses its whole organization: any member of it may acknowledge it, whatever
 * their teams. Messages of an organization the caller is not a member of refuse the whole request (403).
 */
export function messagesAccess(caller: Caller, orgIds: readonly string[]): { suspended: boolean } {
  const memberships = orgIds.map((orgId) => membershipIn(caller, orgId));
  if (memberships.some((membership) => membership === undefined)) throw new Forbidden();
  return { suspended: memberships.some((membership) => membership?.status === 'SUSPENDED') };
}

// ---------------------------------------------------------------------------------------------------
// Live streams: what the reader of an event stream receives (GET /events/stream).

/**
 * What an event stream decides each event's audience from, in memory: decided when the stream opens
 * and again when a notification says the caller's keys, account or memberships changed, never per
 * event. `teams` are the teams the stream follows that the reader may still read (all of the
 * reader's teams and organizations when it names none: undefined).
 */
export interface ReaderAccess {
  caller: Caller;
  /** The caller's organizations with their role there. */
  organizations: ReadonlyMap<string, OrganizationRole>;
  /** The caller's own role in each team they are a member of (and in each team the stream names). */
  teamRoles: ReadonlyMap<string, TeamRole | null>;
  teams: ReadonlySet<string> | undefined;
}

/** The caller's access for a stream, from their standings in the teams they are in and those the stream names. */
function readerAccess(caller: Caller, standings: readonly TeamStanding[], teams: ReadonlySet<string> | undefined): ReaderAccess {
  return {
    caller,
    organizations: new Map(caller.organizations.map((membership) => [membership.id, membership.role])),
    teamRoles: new Map(standings.map((standing) => [standing.teamId, standing.callerTeamRole])),
    teams,
  };
}

/**
 * A stream's access as it opens: each team it names must be readable as for the team's other lists
 * (403, or 404 for an unknown team); a caller in no organization may read nothing and gets 403.
 */
export function openingReaderAccess(caller: Caller, standings: readonly TeamStanding[], teamIds: readonly string[] | undefined): ReaderAccess {
  if (teamIds) {
    for (const teamId of teamIds) teamAccess(caller, standings.find((standing) => standing.teamId === teamId), 'collection');
  } else if (caller.organizations.length === 0) {
    throw new Forbidden();
  }
  return readerAccess(caller, standings, teamIds && new Set(teamIds));
}

/**
 * A stream's access after a change of the caller: the named teams still readable, or undefined when
 * nothing is left to read (the stream then ends).
 */
export function currentReaderAccess(caller: Caller, standings: readonly TeamStanding[], teamIds: readonly string[] | undefined): ReaderAccess | undefined {
  const readable = (teamId: string) => {
    const standing = standings.find((candidate) => candidate.teamId === teamId);
    return standing !== undefined && effectiveTeamRole(membershipIn(caller, standing.orgId)?.role, standing.callerTeamRole) !== null;
  };
  const teams = teamIds && new Set(teamIds.filter(readable));
  if (teams ? teams.size === 0 : caller.organizations.length === 0) return undefined;
  return readerAccess(caller, standings, teams);
}

/** Event types whose subject only the organization's Owners and Admins read in every case. */
const administratorsOnly = (type: string) => type.startsWith('organization_member.') || type.startsWith('people_review.');

/**
 * The event as this reader may see it, or undefined when they may not read it. Until the view of an
 * event per reader decides each field (issue 38, item 1), an event is shown whole or not at all:
 * events of a team to those who may read the team, events of the organization itself to its members,
 * people reviews and organization members only to the organization's Owners and Admins.
 */
export function eventView(reader: ReaderAccess, event: { orgId: string; teamId: string | null; type: string; event: string }): string | undefined {
  const orgRole = reader.organizations.get(event.orgId);
  if (orgRole === undefined) return undefined;
  if (reader.teams && (event.teamId === null || !reader.teams.has(event.teamId))) return undefined;
  if (administratorsOnly(event.type) && !administersOrganization(orgRole)) return undefined;
  if (event.teamId !== null && effectiveTeamRole(orgRole, reader.teamRoles.get(event.teamId) ?? null) === null) return undefined;
  return event.event;
}

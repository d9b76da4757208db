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
import type { Schemas } from '../api/operations.js';
import type { GoalLevel, OrganizationRole, TeamRole } from '../db/database.js';
import { Forbidden, NotFound, OrgSuspended } from '../errors.js';
import type { TeamStanding } from '../db/queries/access.js';
import type { Caller } from './caller.js';

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
 * An organization's export (everything it holds, its people included) is for its Owners alone: after
 * the administration check (Owners and Admins, 403 to other members and to outsiders), an Admin gets
 * 403 too.
 */
export function requireOwner(access: OrganizationAccess): void {
  if (access.role !== 'OWNER') throw new Forbidden();
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
// Reading the event log: who may read which event. Decided per reader and team once (`eventReader`),
// then judged per event in memory, so that a feed or a stream never asks the database per event.

/**
 * A reader of the event log: their organizations with their role in each, and their access to the
 * teams whose events they may read, decided by `teamAccess` from their standing. A team missing from
 * `teams` is one they may not read — a deleted team included, unless the access was decided while it
 * existed.
 */
export interface EventReader {
  userId: string;
  organizations: ReadonlyMap<string, OrganizationRole>;
  teams: ReadonlyMap<string, TeamAccess>;
}

/** The teams among `standings` the caller may read, each with the access `teamAccess` decides. */
export function readableTeams(caller: Caller, standings: Iterable<TeamStanding>): TeamAccess[] {
  const readable: TeamAccess[] = [];
  for (const standing of standings) {
    const membership = membershipIn(caller, standing.orgId);
    if (membership && seesTeam(membership.role, standing.callerTeamRole)) readable.push(teamAccess(caller, standing, 'collection'));
  }
  return readable;
}

/** The reader `caller` is, with the access to teams already decided (`teamAccess`, `readableTeams`). */
export function eventReader(caller: Caller, teams: Iterable<TeamAccess>): EventReader {
  return {
    userId: caller.userId,
    organizations: new Map(caller.organizations.map((membership) => [membership.id, membership.role])),
    teams: new Map([...teams].map((access) => [access.teamId, access])),
  };
}

/** What the decision reads of an event: its type, where it happened and what it carries. */
export interface ReadableEvent {
  type: string;
  data: { orgId: string; teamId: string | null; object: unknown };
}

type EventType = Schemas['EventType'];
type EventRule = (reader: EventReader, event: ReadableEvent, role: OrganizationRole) => boolean;

const fieldOf = (event: ReadableEvent, field: string): unknown => (event.data.object as Record<string, unknown>)[field];

/** The reader's access to the event's team, when they may read it. */
const teamOfEvent = (reader: EventReader, event: ReadableEvent): TeamAccess | undefined => {
  const access = event.data.teamId === null ? undefined : reader.teams.get(event.data.teamId);
  return access?.orgId === event.data.orgId ? access : undefined;
};

/** Everyone who may read the event's team (its lists and items). */
const teamReaders: EventRule = (reader, event) => teamOfEvent(reader, event) !== undefined;
/** Every member of the organization (`GET /orgs/{orgId}`). */
const organizationMembers: EventRule = () => true;
/** Those who administer the organization, who alone list its members. */
const organizationAdministrators: EventRule = (_reader, _event, role) => administersOrganization(role);
/**
 * A membership: those who list the members, and the member themselves, who reads their own role
 * (`GET /orgs/{orgId}`) and needs to know when it changes what they may see (a local copy loads again).
 */
const membershipReaders: EventRule = (reader, event, role) => organizationAdministrators(reader, event, role) || fieldOf(event, 'userId') === reader.userId;
/** A company goal is read by every member of its organization (`goalAccess`); any other by the team's readers. */
const goalReaders: EventRule = (reader, event, role) => (fieldOf(event, 'level') === 'COMPANY' ? organizationMembers(reader, event, role) : teamReaders(reader, event, role));
/** As the list of people reviews: every review to those who see them all, else those the reader wrote or that are about them. */
const peopleReviewReaders: EventRule = (reader, event) => {
  const access = teamOfEvent(reader, event);
  if (!access) return false;
  return seesEveryPeopleReview(access) || fieldOf(event, 'userId') === reader.userId || fieldOf(event, 'evaluatorId') === reader.userId;
};
/** A removal from a team: its readers, and the person removed, who may read the team no longer but is told so. */
const removalReaders: EventRule = (reader, event, role) => teamReaders(reader, event, role) || fieldOf(event, 'userId') === reader.userId;
/** Whether a person read a message is their own state, shown to no one else: the person, while they may read the message's team. */
const acknowledgerOnly: EventRule = (reader, event, role) => teamReaders(reader, event, role) && fieldOf(event, 'userId') === reader.userId;

/**
 * Who may read each type of event besides the organization's Owners and Admins (who read them all).
 * Typed by the contract's `EventType`, so a new type of event fails `tsc` here until it is decided.
 * Deletions and removals carry an id, read by those who may read the team it was in; a milestone
 * names its goal but not the goal's level, so a company goal's milestones reach the readers of the
 * goal's team only; a rating names who rated, never the value (which may still be hidden).
 */
const eventReaders: Record<EventType, EventRule> = {
  'organization.updated': organizationMembers,
  'organization_member.added': membershipReaders,
  'organization_member.updated': membershipReaders,
  'organization_member.removed': membershipReaders,
  'team.created': teamReaders,
  'team.updated': teamReaders,
  'team.deleted': teamReaders,
  'team_member.added': teamReaders,
  'team_member.updated': teamReaders,
  'team_member.removed': removalReaders,
  'task.created': teamReaders,
  'task.updated': teamReaders,
  'task.deleted': teamReaders,
  'issue.created': teamReaders,
  'issue.updated': teamReaders,
  'issue.deleted': teamReaders,
  'goal.created': goalReaders,
  'goal.updated': goalReaders,
  'goal.deleted': teamReaders,
  'milestone.created': teamReaders,
  'milestone.updated': teamReaders,
  'milestone.deleted': teamReaders,
  'metric.created': teamReaders,
  'metric.updated': teamReaders,
  'metric.deleted': teamReaders,
  'metric_value.set': teamReaders,
  'csv_import.completed': teamReaders,
  'meeting.created': teamReaders,
  'meeting.updated': teamReaders,
  'meeting.status_changed': teamReaders,
  'meeting.ratings_revealed': teamReaders,
  'meeting_rating.set': teamReaders,
  'meeting_rating.deleted': teamReaders,
  'segue.created': teamReaders,
  'headline.created': teamReaders,
  'cascading_message.created': teamReaders,
  'cascading_message.deleted': teamReaders,
  'cascading_message.acknowledged': acknowledgerOnly,
  'vision.created': teamReaders,
  'vision.updated': teamReaders,
  'seat.created': teamReaders,
  'seat.updated': teamReaders,
  'seat.deleted': teamReaders,
  'people_review.set': peopleReviewReaders,
  'document.created': teamReaders,
  'document.deleted': teamReaders,
  // The export is its Owners' (and, as every event, the feed's: Owners and Admins); it carries no record of the organization.
  'export.completed': organizationAdministrators,
};

/**
 * Whether the reader may read the event, judged now, in memory. The organization's Owners and Admins
 * read every event of its log, as the feed and webhook subscriptions give it to them (`eventAccess`);
 * anyone else as `eventReaders` decides for its type, and no type it does not know.
 */
export function mayReadEvent(reader: EventReader, event: ReadableEvent): boolean {
  const role = reader.organizations.get(event.data.orgId);
  if (role === undefined) return false;
  if (administersOrganization(role)) return true;
  return Object.hasOwn(eventReaders, event.type) && eventReaders[event.type as EventType](reader, event, role);
}

// ---------------------------------------------------------------------------------------------------
// Live streams: the access an event stream keeps for its reader (GET /events/stream).

/**
 * What an event stream judges each event by, in memory (`eventView`, src/events/views.ts): the
 * reader, decided when the stream opens and again when a notification says the caller's keys,
 * account or memberships changed, never per event. `teams` are the teams the stream follows that the
 * reader may still read (undefined when it names none: all they may read).
 */
export interface StreamAccess {
  caller: Caller;
  reader: EventReader;
  teams: ReadonlySet<string> | undefined;
}

/**
 * The organizations in which the caller reads every team without being a member: the standings a
 * stream's reader needs are those of the caller's own teams and of every team of these.
 */
export function organizationsWithEveryTeam(caller: Caller): string[] {
  return caller.organizations.filter((membership) => actsAsTeamAdmin.has(membership.role)).map((membership) => membership.id);
}

/**
 * Whether a stream must decide its access anew before it judges this event of the log: a team
 * created in an organization where its reader reads every team without being a member (an
 * Implementer), on a stream that follows every team, and unknown to the access decided so far.
 * Judged in log order, the decision comes before the team's first event, whichever instance created
 * it; a new team's members are told by their membership's notification instead.
 */
export function learnsOfNewTeam(access: StreamAccess, event: { type: string; orgId: string; teamId: string | null }): boolean {
  if (access.teams !== undefined || event.type !== 'team.created' || event.teamId === null || access.reader.teams.has(event.teamId)) return false;
  const role = access.reader.organizations.get(event.orgId);
  return role !== undefined && actsAsTeamAdmin.has(role) && !administersOrganization(role);
}

/**
 * A stream's access as it opens: each team it names must be readable as for the team's other lists
 * (403, or 404 for an unknown team); a caller in no organization may read nothing and gets 403.
 */
export function openingStreamAccess(caller: Caller, standings: readonly TeamStanding[], teamIds: readonly string[] | undefined): StreamAccess {
  if (teamIds) {
    for (const teamId of teamIds) teamAccess(caller, standings.find((standing) => standing.teamId === teamId), 'collection');
  } else if (caller.organizations.length === 0) {
    throw new Forbidden();
  }
  return { caller, reader: eventReader(caller, readableTeams(caller, standings)), teams: teamIds && new Set(teamIds) };
}

/**
 * A stream's access after a change of the caller: the named teams still readable, or undefined when
 * nothing is left to read (the stream then ends).
 */
export function currentStreamAccess(caller: Caller, standings: readonly TeamStanding[], teamIds: readonly string[] | undefined): StreamAccess | undefined {
  const reader = eventReader(caller, readableTeams(caller, standings));
  const teams = teamIds && new Set(teamIds.filter((teamId) => reader.teams.has(teamId)));
  if (teams ? teams.size === 0 : caller.organizations.length === 0) return undefined;
  return { caller, reader, teams };
}

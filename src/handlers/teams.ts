/** Handlers of the teams area: teams of an organization, their settings and members. */
import { locationOf } from '../api/location.js';
import { requireActive, seesTeam } from '../auth/permissions.js';
import { loadOrganizationAccess, loadTeamAccess } from '../auth/access.js';
import { lockOrganization } from '../db/queries/organizations.js';
import * as teams from '../db/queries/teams.js';
import { pageLimit } from '../db/pagination.js';
import { NotFound, RuleViolation } from '../errors.js';
import { teamMemberJson, toTeam, toTeamMember } from '../records/teams.js';
import { pageText } from '../api/jsonText.js';
import { adjustMeetingSettings } from '../rules/meetingSettings.js';
import { nextFreeSlug, slugify } from '../rules/slug.js';
import type { AreaHandlers, Handler } from './types.js';
import { inTransaction } from '../db/transaction.js';
import { StreamBody } from '../api/streamBody.js';
import type { Schemas } from '../api/operations.js';
import { buildSnapshot, SNAPSHOT_CONCURRENCY, Turns } from './snapshot.js';

export const listOrganizationTeams: Handler<'listOrganizationTeams'> = async ({ params }, { db, caller }) => {
  const access = await loadOrganizationAccess(db, caller, params.orgId, 'collection');
  const rows = await teams.listVisibleTeams(db, params.orgId, caller.userId, seesTeam(access.role, null));
  return { status: 200, body: { data: rows.map(toTeam), nextCursor: null }, logOf: access.orgId };
};

/** The organization is locked while the slug is chosen, so two teams of the same name get different slugs. */
export const createTeam: Handler<'createTeam'> = async ({ params, body }, { db, caller }) => {
  const access = await loadOrganizationAccess(db, caller, params.orgId, 'administration');
  requireActive(access);
  const team = await inTransaction(db, async (trx) => {
    await lockOrganization(trx, params.orgId);
    const base = slugify(body.name, 'team');
    const slug = nextFreeSlug(base, await teams.takenSlugs(trx, params.orgId, base));
    return teams.insertTeam(trx, { orgId: params.orgId, name: body.name, slug });
  });
  return { status: 201, body: toTeam(team), headers: { Location: locationOf('/teams/{teamId}', { teamId: team.id }) } };
};

export const getTeam: Handler<'getTeam'> = async ({ params }, { db, caller }) => {
  const { team, access } = await loadTeamAccess(db, caller, params.teamId, 'item');
  return { status: 200, body: toTeam(team), logOf: access.orgId };
};

export const updateTeam: Handler<'updateTeam'> = async ({ params, body }, { db, caller }) => {
  const { access } = await loadTeamAccess(db, caller, params.teamId, 'administration');
  requireActive(access);
  const team = await inTransaction(db, async (trx) => {
    const stored = await teams.lockTeam(trx, params.teamId);
    const settings = adjustMeetingSettings(
      { durationMin: stored.meeting_duration_min, warningMin: stored.meeting_warning_min },
      { durationMin: body.meetingDurationMin, warningMin: body.meetingWarningMin },
    );
    return teams.updateTeam(trx, params.teamId, {
      name: body.name,
      is_leadership: body.isLeadership,
      meeting_duration_min: settings.durationMin,
      meeting_warning_min: settings.warningMin,
    });
  });
  return { status: 200, body: toTeam(team) };
};

export const deleteTeam: Handler<'deleteTeam'> = async ({ params }, { db, caller }) => {
  const { access } = await loadTeamAccess(db, caller, params.teamId, 'administration');
  requireActive(access);
  await teams.deleteTeam(db, params.teamId);
  return { status: 204, body: undefined };
};

const teamMemberPages = teams.teamMemberPages(teamMemberJson);

export const listTeamMembers: Handler<'listTeamMembers'> = async ({ params, query }, { db, caller }) => {
  const { access } = await loadTeamAccess(db, caller, params.teamId, 'collection');
  const page = await teamMemberPages(db, params.teamId, { limit: pageLimit(query.limit), cursor: query.cursor });
  return { status: 200, body: pageText(page), logOf: access.orgId };
};

export const addTeamMember: Handler<'addTeamMember'> = async ({ params, body }, { db, caller }) => {
  const { access } = await loadTeamAccess(db, caller, params.teamId, 'administration');
  requireActive(access);
  const member = await inTransaction(db, async (trx) => {
    if (!(await teams.isOrganizationMember(trx, access.orgId, body.userId))) {
      throw new RuleViolation('Only members of the team\'s organization can be added to the team.');
    }
    if (!(await teams.insertTeamMember(trx, params.teamId, body.userId, body.role ?? 'MEMBER'))) {
      throw new RuleViolation('This person is already in the team.');
    }
    return teams.findTeamMember(trx, params.teamId, body.userId);
  });
  return { status: 201, body: toTeamMember(member!) };
};

export const updateTeamMember: Handler<'updateTeamMember'> = async ({ params, body }, { db, caller }) => {
  const { access } = await loadTeamAccess(db, caller, params.teamId, 'administration');
  const member = await teams.findTeamMember(db, params.teamId, params.userId);
  if (!member) throw new NotFound();
  requireActive(access);
  const revision = await teams.setTeamMemberRole(db, params.teamId, params.userId, body.role);
  return { status: 200, body: toTeamMember({ ...member, revision, role: body.role }) };
};

export const removeTeamMember: Handler<'removeTeamMember'> = async ({ params }, { db, caller }) => {
  const { access } = await loadTeamAccess(db, caller, params.teamId, 'administration');
  const member = await teams.findTeamMember(db, params.teamId, params.userId);
  if (!member) throw new NotFound();
  requireActive(access);
  await teams.deleteTeamMember(db, params.teamId, params.userId);
  return { status: 204, body: undefined };
};

const snapshotTurns = new Turns(SNAPSHOT_CONCURRENCY);

/** Built whole before it is sent (src/handlers/snapshot.ts): a refusal is still answered as any other. */
export const getTeamSnapshot: Handler<'getTeamSnapshot'> = async ({ params }, { db, caller, now, secrets }) => ({
  status: 200,
  body: new StreamBody<Schemas['TeamSnapshot']>(async (req, res) =>
    (await buildSnapshot(db, snapshotTurns, { caller, teamId: params.teamId, now, secrets })).send(req, res),
  ),
});

export const teamsHandlers: AreaHandlers<'Teams'> = {
  listOrganizationTeams,
  createTeam,
  getTeam,
  updateTeam,
  deleteTeam,
  listTeamMembers,
  addTeamMember,
  updateTeamMember,
  removeTeamMember,
  getTeamSnapshot,
};

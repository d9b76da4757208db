/** Handlers of the issues area: the issues of a team, from OPEN through SOLVING to SOLVED. */
import type { Kysely } from 'kysely';
import type { Caller } from '../auth/caller.js';
import { requireChange, teamAccess, teamAllows } from '../auth/permissions.js';
import type { Database } from '../db/database.js';
import { changeGuard, loadTeamAccess } from '../auth/access.js';
import { standingOf } from '../db/queries/access.js';
import { deleteTeamItemWithEvent } from '../db/changes.js';
import * as issues from '../db/queries/issues.js';
import { pageLimit } from '../db/pagination.js';
import { NotFound } from '../errors.js';
import { issueJson, toIssue } from '../records/issues.js';
import { idOf, JsonText, pageText } from '../api/jsonText.js';
import { locationOf } from '../api/location.js';
import type { Schemas } from '../api/operations.js';
import { clearable, requireMeetingOfTeam } from './shared.js';
import { writingItsEvent, type AreaHandlers, type Handler } from './types.js';
import { changedOrRefused } from '../events/outbox.js';
import { inTransaction } from '../db/transaction.js';

/** The issue and the caller's access to it; an invisible issue is answered like a missing one (404). */
async function loadIssue(db: Kysely<Database>, caller: Caller, issueId: string) {
  const issue = await issues.findIssue(db, issueId, caller.userId);
  const access = teamAccess(caller, issue && standingOf(issue), 'item');
  return { issue: issue!, access };
}

const teamIssuePages = issues.teamIssuePages(issueJson);

export const listTeamIssues: Handler<'listTeamIssues'> = async ({ params, query }, { db, caller }) => {
  const page = await teamIssuePages(db, params.teamId, caller.userId, { status: query.status, priority: query.priority }, { limit: pageLimit(query.limit), cursor: query.cursor });
  const { access } = await loadTeamAccess(db, caller, params.teamId, 'collection', page.standing);
  return { status: 200, body: pageText(page), logOf: access.orgId };
};

/** A new issue's refusals, as the change would decide them: team access (403 when invisible), the role, the rules. */
async function checkCreate(db: Kysely<Database>, caller: Caller, teamId: string, meetingId: string | null) {
  const { access } = await loadTeamAccess(db, caller, teamId, 'collection');
  requireChange(access, teamAllows(access, 'writeIssue'));
  await requireMeetingOfTeam(db, teamId, meetingId);
}

export const createIssue: Handler<'createIssue'> = writingItsEvent(async ({ params, body }, { db, caller, event }) => {
  const issue = {
    teamId: params.teamId,
    title: body.title,
    description: clearable(body.description ?? null),
    priority: body.priority ?? 'MEDIUM',
    meetingId: body.meetingId ?? null,
    createdById: caller.userId,
  };
  if (event) {
    const changed = issues.insertIssueWithEvent(db, issueJson, issue, changeGuard(caller, 'writeIssue'), event);
    const created = new JsonText<Schemas['Issue']>(await changedOrRefused(changed, () => checkCreate(db, caller, params.teamId, issue.meetingId)));
    return { status: 201, body: created, headers: { Location: locationOf('/issues/{id}', { id: idOf(created) }) } };
  }
  return inTransaction(db, async (trx) => {
    await checkCreate(trx, caller, params.teamId, issue.meetingId);
    const created = toIssue(await issues.insertIssue(trx, issue));
    return { status: 201, body: created, headers: { Location: locationOf('/issues/{id}', { id: created.id }) } };
  });
});

export const getIssue: Handler<'getIssue'> = async ({ params }, { db, caller }) => {
  const { issue, access } = await loadIssue(db, caller, params.id);
  return { status: 200, body: toIssue(issue), logOf: access.orgId };
};

/** The refusals of a change or a deletion, as it would decide them: the issue's visibility (404), then the role. */
async function checkChange(db: Kysely<Database>, caller: Caller, issueId: string, action: 'writeIssue' | 'delete') {
  const { access } = await loadIssue(db, caller, issueId);
  requireChange(access, teamAllows(access, action));
}

export const updateIssue: Handler<'updateIssue'> = writingItsEvent(async ({ params, body }, { db, caller, event }) => {
  const change = { title: body.title, description: clearable(body.description), priority: body.priority, status: body.status };
  if (event) {
    const changed = issues.updateIssueWithEvent(db, issueJson, params.id, change, changeGuard(caller, 'writeIssue'), event);
    return { status: 200, body: new JsonText(await changedOrRefused(changed, () => checkChange(db, caller, params.id, 'writeIssue'))) };
  }
  await checkChange(db, caller, params.id, 'writeIssue');
  const updated = await issues.updateIssue(db, params.id, change);
  if (!updated) throw new NotFound();
  return { status: 200, body: toIssue(updated) };
});

export const deleteIssue: Handler<'deleteIssue'> = writingItsEvent(async ({ params }, { db, caller, event }) => {
  if (event) {
    await changedOrRefused(deleteTeamItemWithEvent(db, 'issues', params.id, changeGuard(caller, 'delete'), event), () =>
      checkChange(db, caller, params.id, 'delete'),
    );
    return { status: 204, body: undefined };
  }
  await checkChange(db, caller, params.id, 'delete');
  await issues.deleteIssue(db, params.id);
  return { status: 204, body: undefined };
});

export const issuesHandlers: AreaHandlers<'Issues'> = {
  listTeamIssues,
  createIssue,
  getIssue,
  updateIssue,
  deleteIssue,
};

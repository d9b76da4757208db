/** Handlers of the issues area: the issues of a team, from OPEN through SOLVING to SOLVED. */
import type { Kysely } from 'kysely';
import type { Caller } from '../auth/authenticate.js';
import { requireChange, teamAccess, teamAllows } from '../auth/permissions.js';
import type { Database } from '../db/database.js';
import { listAccess, loadTeamAccess, teamFacts } from '../auth/access.js';
import * as issues from '../db/queries/issues.js';
import { pageLimit } from '../db/pagination.js';
import { NotFound } from '../errors.js';
import { issueJson, toIssue } from '../records/issues.js';
import { pageText } from '../api/jsonText.js';
import { clearable, requireMeetingOfTeam } from './shared.js';
import type { AreaHandlers, Handler } from './types.js';
import { inTransaction } from '../db/transaction.js';

/** The issue and the caller's access to it; an invisible issue is answered like a missing one (404). */
async function loadIssue(db: Kysely<Database>, caller: Caller, issueId: string) {
  const issue = await issues.findIssue(db, issueId, caller.userId);
  const access = teamAccess(caller, issue && teamFacts(issue), 'item');
  return { issue: issue!, access };
}

const teamIssuePages = issues.teamIssuePages(issueJson);

export const listTeamIssues: Handler<'listTeamIssues'> = async ({ params, query }, { db, caller }) => {
  const page = await teamIssuePages(db, params.teamId, caller.userId, { status: query.status, priority: query.priority }, { limit: pageLimit(query.limit), cursor: query.cursor });
  await listAccess(db, caller, params.teamId, page.facts);
  return { status: 200, body: pageText(page) };
};

export const createIssue: Handler<'createIssue'> = async ({ params, body }, { db, caller }) => {
  const { access } = await loadTeamAccess(db, caller, params.teamId, 'collection');
  requireChange(access, teamAllows(access, 'writeIssue'));
  const issue = await inTransaction(db, async (trx) => {
    const meetingId = body.meetingId ?? null;
    await requireMeetingOfTeam(trx, params.teamId, meetingId);
    return issues.insertIssue(trx, {
      teamId: params.teamId,
      title: body.title,
      description: clearable(body.description ?? null),
      priority: body.priority ?? 'MEDIUM',
      meetingId,
      createdById: caller.userId,
    });
  });
  return { status: 201, body: toIssue(issue) };
};

export const getIssue: Handler<'getIssue'> = async ({ params }, { db, caller }) => {
  const { issue } = await loadIssue(db, caller, params.id);
  return { status: 200, body: toIssue(issue) };
};

export const updateIssue: Handler<'updateIssue'> = async ({ params, body }, { db, caller }) => {
  const { access } = await loadIssue(db, caller, params.id);
  requireChange(access, teamAllows(access, 'writeIssue'));
  const updated = await issues.updateIssue(db, params.id, {
    title: body.title,
    description: clearable(body.description),
    priority: body.priority,
    status: body.status,
  });
  if (!updated) throw new NotFound();
  return { status: 200, body: toIssue(updated) };
};

export const deleteIssue: Handler<'deleteIssue'> = async ({ params }, { db, caller }) => {
  const { access } = await loadIssue(db, caller, params.id);
  requireChange(access, teamAllows(access, 'delete'));
  await issues.deleteIssue(db, params.id);
  return { status: 204, body: undefined };
};

export const issuesHandlers: AreaHandlers<'Issues'> = {
  listTeamIssues,
  createIssue,
  getIssue,
  updateIssue,
  deleteIssue,
};

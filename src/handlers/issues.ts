/** Handlers of the issues area: the issues of a team, from OPEN through SOLVING to SOLVED. */
import type { Kysely } from 'kysely';
import type { Caller } from '../auth/caller.js';
import { requireChange, teamAccess, teamAllows } from '../auth/permissions.js';
import type { Database } from '../db/database.js';
import { changeGuard, loadTeamAccess } from '../auth/access.js';
import { standingOf } from '../db/queries/access.js';
import { deleteTeamItemWithEvent } from '../db/changes.js';
import * as issues from '../db/queries/issues.js';
import { EXPORT_BATCH_ROWS, pageLimit, type CreationKey } from '../db/pagination.js';
import { attachment, csvBody, keysetBatches } from '../api/csvBody.js';
import { NotFound, RuleViolation } from '../errors.js';
import { issueCsvColumns, issueCsvRow, issueJson, toIssue } from '../records/issues.js';
import { idOf, JsonText, pageText } from '../api/jsonText.js';
import { locationOf } from '../api/location.js';
import type { Schemas } from '../api/operations.js';
import { badRows, clearable, requireMeetingOfTeam, sheetOf } from './shared.js';
import { issueCsvImport, judgeIssueRows } from '../rules/csvImport.js';
import { memberEmails } from '../db/queries/teams.js';
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

const createIssueWithEvent = issues.issueCreation(issueJson);

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
    const changed = createIssueWithEvent(db, issue, changeGuard(caller, 'writeIssue'), event);
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

const changeIssueWithEvent = issues.issueChange(issueJson);

export const updateIssue: Handler<'updateIssue'> = writingItsEvent(async ({ params, body }, { db, caller, event }) => {
  const change = { title: body.title, description: clearable(body.description), priority: body.priority, status: body.status };
  if (event) {
    const changed = changeIssueWithEvent(db, params.id, change, changeGuard(caller, 'writeIssue'), event);
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

/** The whole list as CSV, read in batches as the connection takes them; the first batch brings the caller's standing. */
export const exportTeamIssues: Handler<'exportTeamIssues'> = async ({ params }, { db, caller , logger }) => {
  const first = await issues.issueExportBatch(db, params.teamId, caller.userId, undefined);
  await loadTeamAccess(db, caller, params.teamId, 'collection', first.standing);
  const read = async (after: CreationKey) => (await issues.issueExportBatch(db, params.teamId, caller.userId, after)).rows;
  const keyOf = (row: { id: string; created_at_text: string }) => ({ at: row.created_at_text, id: row.id });
  return { status: 200, headers: attachment('issues.csv'), body: csvBody(issueCsvColumns, keysetBatches(first.rows, EXPORT_BATCH_ROWS, read, keyOf, (batch) => batch.map(issueCsvRow)), logger) };
};

/**
 * The file is read and every row judged before anything is written (a dry run stops there); the
 * issues are then written in one statement, all or nothing. Its one summary event is the catalog's.
 */
export const importTeamIssues: Handler<'importTeamIssues'> = async ({ params, query, body }, { db, caller }) => {
  const sheet = sheetOf(body, issueCsvImport);
  const { access } = await loadTeamAccess(db, caller, params.teamId, 'collection');
  requireChange(access, teamAllows(access, 'writeIssue'));
  const judged = judgeIssueRows(sheet, await memberEmails(db, params.teamId), caller.userId);
  if ('problems' in judged) throw badRows(judged.problems);
  const dryRun = query.dryRun === true;
  const written = dryRun ? judged.issues.length : await inTransaction(db, async (trx) => {
    const count = await issues.insertImportedIssues(trx, params.teamId, caller.userId, judged.issues);
    if (count !== judged.issues.length) throw new RuleViolation('Someone named in the file left the team during the import; nothing was written. Send the file again.');
    return count;
  });
  return { status: 200, body: { teamId: params.teamId, kind: 'issues', dryRun, rows: sheet.records.length, written } };
};

export const issuesHandlers: AreaHandlers<'Issues'> = {
  listTeamIssues,
  createIssue,
  getIssue,
  updateIssue,
  deleteIssue,
  exportTeamIssues,
  importTeamIssues,
};

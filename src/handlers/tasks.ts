/** Handlers of the tasks area: the to-dos of a team. */
import type { Kysely } from 'kysely';
import type { Caller } from '../auth/caller.js';
import { requireChange, teamAccess, teamAllows } from '../auth/permissions.js';
import type { Database } from '../db/database.js';
import { changeGuard, loadTeamAccess } from '../auth/access.js';
import { standingOf } from '../db/queries/access.js';
import { deleteTeamItemWithEvent } from '../db/changes.js';
import * as tasks from '../db/queries/tasks.js';
import { EXPORT_BATCH_ROWS, pageLimit, type CreationKey } from '../db/pagination.js';
import { attachment, csvBody, keysetBatches } from '../api/csvBody.js';
import { NotFound, RuleViolation } from '../errors.js';
import { taskCsvColumns, taskCsvRow, taskJson, toTask } from '../records/tasks.js';
import { idOf, JsonText, pageText } from '../api/jsonText.js';
import { locationOf } from '../api/location.js';
import type { Schemas } from '../api/operations.js';
import { badRows, requireMeetingOfTeam, requireTeamMember, sheetOf } from './shared.js';
import { judgeTaskRows, taskCsvImport } from '../rules/csvImport.js';
import { memberEmails } from '../db/queries/teams.js';
import { writingItsEvent, type AreaHandlers, type Handler } from './types.js';
import { changedOrRefused } from '../events/outbox.js';
import { inTransaction } from '../db/transaction.js';

/** The task and the caller's access to it; an invisible task is answered like a missing one (404). */
async function loadTask(db: Kysely<Database>, caller: Caller, taskId: string) {
  const task = await tasks.findTask(db, taskId, caller.userId);
  const access = teamAccess(caller, task && standingOf(task), 'item');
  return { task: task!, access };
}

const teamTaskPages = tasks.teamTaskPages(taskJson);

export const listTeamTasks: Handler<'listTeamTasks'> = async ({ params, query }, { db, caller }) => {
  const page = await teamTaskPages(db, params.teamId, caller.userId, { completed: query.completed, ownerId: query.ownerId }, { limit: pageLimit(query.limit), cursor: query.cursor });
  const { access } = await loadTeamAccess(db, caller, params.teamId, 'collection', page.standing);
  return { status: 200, body: pageText(page), logOf: access.orgId };
};

/** A new task's refusals, as the change would decide them: team access (403 when invisible), the role, the rules. */
async function checkCreate(db: Kysely<Database>, caller: Caller, teamId: string, body: { ownerId: string; meetingId?: string | null | undefined }) {
  const { access } = await loadTeamAccess(db, caller, teamId, 'collection');
  requireChange(access, teamAllows(access, 'writeTask'));
  await requireTeamMember(db, teamId, body.ownerId, 'task');
  await requireMeetingOfTeam(db, teamId, body.meetingId ?? null);
}

const createTaskWithEvent = tasks.taskCreation(taskJson);

export const createTask: Handler<'createTask'> = writingItsEvent(async ({ params, body }, { db, caller, event }) => {
  const task = { teamId: params.teamId, title: body.title, ownerId: body.ownerId, dueDate: body.dueDate, meetingId: body.meetingId ?? null };
  if (event) {
    const changed = createTaskWithEvent(db, task, changeGuard(caller, 'writeTask'), event);
    const created = new JsonText<Schemas['Task']>(await changedOrRefused(changed, () => checkCreate(db, caller, params.teamId, body)));
    return { status: 201, body: created, headers: { Location: locationOf('/tasks/{id}', { id: idOf(created) }) } };
  }
  return inTransaction(db, async (trx) => {
    await checkCreate(trx, caller, params.teamId, body);
    const created = toTask(await tasks.insertTask(trx, task));
    return { status: 201, body: created, headers: { Location: locationOf('/tasks/{id}', { id: created.id }) } };
  });
});

const taskText = tasks.taskTexts(taskJson);

export const getTask: Handler<'getTask'> = async ({ params }, { db, caller }) => {
  const task = await taskText(db, params.id, caller.userId);
  const access = teamAccess(caller, task && standingOf(task), 'item');
  return { status: 200, body: new JsonText<Schemas['Task']>(task!.record), logOf: access.orgId };
};

/**
 * A change's refusals, as the change would decide them: the task's visibility (404), the role, and a
 * new owner who is not a team member. Only a new owner is checked: other fields stay editable after
 * the current owner has left the team.
 */
async function checkUpdate(db: Kysely<Database>, caller: Caller, taskId: string, body: { ownerId?: string | undefined }) {
  const { task, access } = await loadTask(db, caller, taskId);
  requireChange(access, teamAllows(access, 'writeTask'));
  if (body.ownerId !== undefined) await requireTeamMember(db, task.team_id, body.ownerId, 'task');
}

const changeTaskWithEvent = tasks.taskChange(taskJson);

export const updateTask: Handler<'updateTask'> = writingItsEvent(async ({ params, body }, { db, caller, event }) => {
  if (event) {
    const changed = changeTaskWithEvent(db, params.id, body, changeGuard(caller, 'writeTask'), event);
    return { status: 200, body: new JsonText(await changedOrRefused(changed, () => checkUpdate(db, caller, params.id, body))) };
  }
  return inTransaction(db, async (trx) => {
    await checkUpdate(trx, caller, params.id, body);
    const updated = await tasks.updateTask(trx, params.id, body);
    if (!updated) throw new NotFound();
    return { status: 200, body: toTask(updated) };
  });
});

async function checkDelete(db: Kysely<Database>, caller: Caller, taskId: string) {
  const { access } = await loadTask(db, caller, taskId);
  requireChange(access, teamAllows(access, 'delete'));
}

export const deleteTask: Handler<'deleteTask'> = writingItsEvent(async ({ params }, { db, caller, event }) => {
  if (event) {
    await changedOrRefused(deleteTeamItemWithEvent(db, 'tasks', params.id, changeGuard(caller, 'delete'), event), () =>
      checkDelete(db, caller, params.id),
    );
    return { status: 204, body: undefined };
  }
  await checkDelete(db, caller, params.id);
  await tasks.deleteTask(db, params.id);
  return { status: 204, body: undefined };
});

/** The whole list as CSV, read in batches as the connection takes them; the first batch brings the caller's standing. */
export const exportTeamTasks: Handler<'exportTeamTasks'> = async ({ params }, { db, caller , logger }) => {
  const first = await tasks.taskExportBatch(db, params.teamId, caller.userId, undefined);
  await loadTeamAccess(db, caller, params.teamId, 'collection', first.standing);
  const read = async (after: CreationKey) => (await tasks.taskExportBatch(db, params.teamId, caller.userId, after)).rows;
  const keyOf = (row: { id: string; created_at_text: string }) => ({ at: row.created_at_text, id: row.id });
  return { status: 200, headers: attachment('tasks.csv'), body: csvBody(taskCsvColumns, keysetBatches(first.rows, EXPORT_BATCH_ROWS, read, keyOf, (batch) => batch.map(taskCsvRow)), logger) };
};

/**
 * The file is read and every row judged before anything is written (a dry run stops there); the
 * tasks are then written in one statement, all or nothing. Its one summary event is the catalog's.
 */
export const importTeamTasks: Handler<'importTeamTasks'> = async ({ params, query, body }, { db, caller }) => {
  const sheet = sheetOf(body, taskCsvImport);
  const { access } = await loadTeamAccess(db, caller, params.teamId, 'collection');
  requireChange(access, teamAllows(access, 'writeTask'));
  const judged = judgeTaskRows(sheet, await memberEmails(db, params.teamId));
  if ('issues' in judged) throw badRows(judged.issues);
  const dryRun = query.dryRun === true;
  const written = dryRun ? judged.tasks.length : await inTransaction(db, async (trx) => {
    const count = await tasks.insertImportedTasks(trx, params.teamId, judged.tasks);
    if (count !== judged.tasks.length) throw new RuleViolation('An owner left the team during the import; nothing was written. Send the file again.');
    return count;
  });
  return { status: 200, body: { teamId: params.teamId, kind: 'tasks', dryRun, rows: sheet.records.length, written } };
};

export const tasksHandlers: AreaHandlers<'Tasks'> = {
  listTeamTasks,
  createTask,
  getTask,
  updateTask,
  deleteTask,
  exportTeamTasks,
  importTeamTasks,
};

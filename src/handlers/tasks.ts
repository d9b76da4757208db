/** Handlers of the tasks area: the to-dos of a team. */
import type { Kysely } from 'kysely';
import type { Caller } from '../auth/authenticate.js';
import { requireChange, teamAccess, teamAllows } from '../auth/permissions.js';
import type { Database } from '../db/database.js';
import { listAccess, loadTeamAccess, teamFacts } from '../auth/access.js';
import * as tasks from '../db/queries/tasks.js';
import { pageLimit } from '../db/pagination.js';
import { NotFound } from '../errors.js';
import { taskJson, toTask } from '../records/tasks.js';
import { pageText } from '../api/jsonText.js';
import { requireMeetingOfTeam, requireTeamMember } from './shared.js';
import type { AreaHandlers, Handler } from './types.js';
import { inTransaction } from '../db/transaction.js';

/** The task and the caller's access to it; an invisible task is answered like a missing one (404). */
async function loadTask(db: Kysely<Database>, caller: Caller, taskId: string) {
  const task = await tasks.findTask(db, taskId, caller.userId);
  const access = teamAccess(caller, task && teamFacts(task), 'item');
  return { task: task!, access };
}

const teamTaskPages = tasks.teamTaskPages(taskJson);

export const listTeamTasks: Handler<'listTeamTasks'> = async ({ params, query }, { db, caller }) => {
  const page = await teamTaskPages(db, params.teamId, caller.userId, { completed: query.completed, ownerId: query.ownerId }, { limit: pageLimit(query.limit), cursor: query.cursor });
  await listAccess(db, caller, params.teamId, page.facts);
  return { status: 200, body: pageText(page) };
};

export const createTask: Handler<'createTask'> = async ({ params, body }, { db, caller }) => {
  const { access } = await loadTeamAccess(db, caller, params.teamId, 'collection');
  requireChange(access, teamAllows(access, 'writeTask'));
  const task = await inTransaction(db, async (trx) => {
    await requireTeamMember(trx, params.teamId, body.ownerId, 'task');
    const meetingId = body.meetingId ?? null;
    await requireMeetingOfTeam(trx, params.teamId, meetingId);
    return tasks.insertTask(trx, { teamId: params.teamId, title: body.title, ownerId: body.ownerId, dueDate: body.dueDate, meetingId });
  });
  return { status: 201, body: toTask(task) };
};

export const getTask: Handler<'getTask'> = async ({ params }, { db, caller }) => {
  const { task } = await loadTask(db, caller, params.id);
  return { status: 200, body: toTask(task) };
};

/** Only a new owner is checked: other fields stay editable after the current owner has left the team. */
export const updateTask: Handler<'updateTask'> = async ({ params, body }, { db, caller }) => {
  const { task, access } = await loadTask(db, caller, params.id);
  requireChange(access, teamAllows(access, 'writeTask'));
  const updated = await inTransaction(db, async (trx) => {
    if (body.ownerId !== undefined) await requireTeamMember(trx, task.team_id, body.ownerId, 'task');
    return tasks.updateTask(trx, params.id, body);
  });
  if (!updated) throw new NotFound();
  return { status: 200, body: toTask(updated) };
};

export const deleteTask: Handler<'deleteTask'> = async ({ params }, { db, caller }) => {
  const { access } = await loadTask(db, caller, params.id);
  requireChange(access, teamAllows(access, 'delete'));
  await tasks.deleteTask(db, params.id);
  return { status: 204, body: undefined };
};

export const tasksHandlers: AreaHandlers<'Tasks'> = {
  listTeamTasks,
  createTask,
  getTask,
  updateTask,
  deleteTask,
};

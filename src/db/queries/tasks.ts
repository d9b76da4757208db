/** Queries of tasks (to-dos). */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, TaskRow } from '../database.js';
import type { JsonShape } from '../json.js';
import { preparedJsonPages } from '../pagination.js';
import { prepared } from '../prepared.js';
import { callerTeamRole, teamFactsOf } from './access.js';

type Db = Kysely<Database> | Transaction<Database>;

const taskById = prepared((db, { taskId, userId }: { taskId: string; userId: string }) =>
  db
    .selectFrom('tasks')
    .innerJoin('teams', 'teams.id', 'tasks.team_id')
    .selectAll('tasks')
    .select(['teams.org_id', callerTeamRole('tasks.team_id', userId)])
    .where('tasks.id', '=', taskId),
);

/** A task with its team's organization and the caller's role in the team, in one query. */
export async function findTask(db: Db, taskId: string, userId: string) {
  return (await taskById(db, { taskId, userId }))[0];
}

export interface TaskFilters {
  completed?: boolean | undefined;
  ownerId?: string | undefined;
}

type TaskPageArgs = { teamId: string; userId: string; completed: boolean | undefined; ownerId: string | undefined };

const taskPageRows = (db: Db, { teamId, userId, completed, ownerId }: TaskPageArgs) => {
  let query = db.selectFrom('tasks').selectAll('tasks').select(teamFactsOf(teamId, userId)).where('tasks.team_id', '=', teamId);
  if (completed !== undefined) query = query.where('tasks.completed', '=', completed);
  if (ownerId !== undefined) query = query.where('tasks.owner_id', '=', ownerId);
  return query;
};

/**
 * The team's tasks, oldest first, written as JSON by `shape` (the mapper's form for PostgreSQL, given
 * by the handler), with the team's facts for the access check (`teamFactsOf`).
 */
export function teamTaskPages<R>(shape: JsonShape<TaskRow, R>) {
  const pages = preparedJsonPages(
    taskPageRows,
    [
      { column: 'tasks.created_at', direction: 'asc', type: 'instant' },
      { column: 'tasks.id', direction: 'asc', type: 'string' },
    ],
    shape,
    ['team_org_id', 'caller_team_role'],
  );
  return (db: Db, teamId: string, userId: string, filters: TaskFilters, page: { limit: number; cursor?: string | undefined }) =>
    pages(db, { teamId, userId, completed: filters.completed, ownerId: filters.ownerId }, page);
}

export function insertTask(
  db: Db,
  task: { teamId: string; title: string; ownerId: string; dueDate: string; meetingId: string | null },
) {
  return db
    .insertInto('tasks')
    .values({ team_id: task.teamId, title: task.title, owner_id: task.ownerId, due_date: task.dueDate, meeting_id: task.meetingId })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface TaskChange {
  title?: string | undefined;
  ownerId?: string | undefined;
  dueDate?: string | undefined;
  completed?: boolean | undefined;
}

/**
 * Applies the change in one statement; undefined when the task no longer exists. Completing a task
 * that is already completed keeps its first `completed_at` (set exactly while `completed` is true).
 */
export function updateTask(db: Db, taskId: string, change: TaskChange) {
  const completion =
    change.completed === undefined
      ? {}
      : { completed: change.completed, completed_at: change.completed ? sql<Date>`coalesce(completed_at, now())` : null };
  return db
    .updateTable('tasks')
    .set({ title: change.title, owner_id: change.ownerId, due_date: change.dueDate, ...completion })
    .where('id', '=', taskId)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteTask(db: Db, taskId: string) {
  await db.deleteFrom('tasks').where('id', '=', taskId).execute();
}

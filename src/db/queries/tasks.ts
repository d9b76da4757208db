/** Queries of tasks (to-dos). */
import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { Database, TaskRow } from '../database.js';
import { jsonRecord, type JsonShape } from '../json.js';
import { preparedJsonPages } from '../pagination.js';
import { prepared } from '../prepared.js';
import { callerTeamRole, changeGranted, teamFactsOf, type ChangeGuard } from './access.js';
import { changeWithEvent, type EventStamp } from './webhooks.js';

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

// ---------------------------------------------------------------------------------------------------
// Changes in one statement with their event (`changeWithEvent`): the guard holds the caller's grants
// and the rules, and the task's JSON is written by `shape` (given by the handler) for the event and the answer.

/** `shape`'s JSON of the changed task `x`, with the event's organization and team. */
const changedTask = <R>(shape: JsonShape<TaskRow, R>, orgId: RawBuilder<unknown>) =>
  [sql<string>`x.team_id`.as('team_id'), orgId.as('org_id'), jsonRecord(shape, 'x').as('object')] as const;

/** The user is a member of the task's team, their row locked until the change commits (they cannot leave meanwhile). */
const isMemberOfTeam = (teamId: RawBuilder<unknown>, userId: string) =>
  sql<boolean>`exists (select 1 from team_members o where o.team_id = ${teamId} and o.user_id = ${userId} for key share)`;

/** A new task, when the caller's grants and the rules allow it: the owner is a team member, a meeting is the team's. */
export function insertTaskWithEvent<R>(
  db: Db,
  shape: JsonShape<TaskRow, R>,
  task: { teamId: string; title: string; ownerId: string; dueDate: string; meetingId: string | null },
  guard: ChangeGuard,
  event: EventStamp,
) {
  const meeting = sql`${task.meetingId}::text`;
  return changeWithEvent(
    db,
    sql`insert into tasks as x (team_id, title, owner_id, due_date, meeting_id)
      select t.id, ${task.title}, ${task.ownerId}, ${task.dueDate}, ${meeting}
      from teams t left join team_members tm on tm.team_id = t.id and tm.user_id = ${guard.userId}
      where t.id = ${task.teamId} and ${changeGranted(guard.grants, 't.org_id', 'tm.role')}
        and ${isMemberOfTeam(sql`t.id`, task.ownerId)}
        and (${meeting} is null or exists (select 1 from meetings m where m.id = ${meeting} and m.team_id = t.id for key share))
      returning ${sql.join(changedTask(shape, sql`(select t.org_id from teams t where t.id = x.team_id)`))}`,
    event,
  );
}

/** `updateTask` when the caller's grants and the rules allow it: a new owner is a team member. */
export function updateTaskWithEvent<R>(db: Db, shape: JsonShape<TaskRow, R>, taskId: string, change: TaskChange, guard: ChangeGuard, event: EventStamp) {
  const completion =
    change.completed === undefined
      ? {}
      : { completed: change.completed, completed_at: change.completed ? sql<Date>`coalesce(x.completed_at, now())` : null };
  const query = db
    .updateTable('tasks as x')
    .set({ title: change.title, owner_id: change.ownerId, due_date: change.dueDate, ...completion })
    .from('teams as t')
    .leftJoin('team_members as tm', (join) => join.onRef('tm.team_id', '=', 't.id').on('tm.user_id', '=', guard.userId))
    .whereRef('t.id', '=', 'x.team_id')
    .where('x.id', '=', taskId)
    .where(changeGranted(guard.grants, 't.org_id', 'tm.role'))
    .$if(change.ownerId !== undefined, (query) => query.where(isMemberOfTeam(sql`x.team_id`, change.ownerId!)))
    .returning(changedTask(shape, sql`t.org_id`));
  return changeWithEvent(db, query, event);
}

/** Deletes the task when the caller's grants allow it; the event's object is its id. */
export function deleteTaskWithEvent(db: Db, taskId: string, guard: ChangeGuard, event: EventStamp) {
  return changeWithEvent(
    db,
    sql`delete from tasks x using teams t left join team_members tm on tm.team_id = t.id and tm.user_id = ${guard.userId}
      where x.id = ${taskId} and t.id = x.team_id and ${changeGranted(guard.grants, 't.org_id', 'tm.role')}
      returning x.team_id, t.org_id, '{"id":' || to_json(x.id)::text || '}' as object`,
    event,
  );
}

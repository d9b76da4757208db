/** Queries of tasks (to-dos). */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, TaskRow } from '../database.js';
import { jsonRecord, type JsonShape } from '../json.js';
import { afterCreation, EXPORT_BATCH_ROWS, preparedJsonPages, type CreationKey } from '../pagination.js';
import { prepared } from '../prepared.js';
import { changedItem, changeGranted, guardValues, isMemberOfTeam, isNoneOrMeetingOfTeam, teamOfChange, type ChangeGuard, type GuardValues } from '../changes.js';
import { callerTeamRole, standingColumnNames, standingColumns, withStanding } from './access.js';
import { changeWithEvent, type EventStamp } from './events.js';

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

/**
 * `findTask` for a read: the task as the contract's JSON, written by PostgreSQL with `shape` (the
 * mapper's form, given by the handler), and the caller's standing. Four text columns instead of the
 * row's eleven cost the server less than decoding, mapping and serialising the row; the team's
 * organization is a subquery rather than a join, which PGlite, planning every statement anew,
 * runs in less time (docs/performance.md, "The item read").
 */
export function taskTexts<R>(shape: JsonShape<TaskRow, R>) {
  const run = prepared((db, { taskId, userId }: { taskId: string; userId: string }) =>
    db
      .selectFrom('tasks')
      .select([
        jsonRecord(shape, 'tasks').as('record'),
        'tasks.team_id',
        sql<string>`(select t.org_id from teams t where t.id = tasks.team_id)`.as('org_id'),
        callerTeamRole('tasks.team_id', userId),
      ])
      .where('tasks.id', '=', taskId),
  );
  return async (db: Db, taskId: string, userId: string) => (await run(db, { taskId, userId }))[0];
}

export interface TaskFilters {
  completed?: boolean | undefined;
  ownerId?: string | undefined;
  /** Only tasks completed at or after this instant (the team snapshot's recent ones); no list offers it. */
  completedSince?: Date | undefined;
}

type TaskPageArgs = { teamId: string; userId: string; completed: boolean | undefined; ownerId: string | undefined; completedSince: Date | undefined };

const taskPageRows = (db: Db, { teamId, userId, completed, ownerId, completedSince }: TaskPageArgs) => {
  let query = db.selectFrom('tasks').selectAll('tasks').select(standingColumns(teamId, userId)).where('tasks.team_id', '=', teamId);
  if (completed !== undefined) query = query.where('tasks.completed', '=', completed);
  if (ownerId !== undefined) query = query.where('tasks.owner_id', '=', ownerId);
  if (completedSince !== undefined) query = query.where('tasks.completed_at', '>=', completedSince);
  return query;
};

/**
 * The team's tasks, oldest first, written as JSON by `shape` (the mapper's form for PostgreSQL, given
 * by the handler), with the caller's standing in the team for the access check (`standingColumns`).
 */
export function teamTaskPages<R>(shape: JsonShape<TaskRow, R>) {
  const pages = preparedJsonPages(
    taskPageRows,
    [
      { column: 'tasks.created_at', direction: 'asc', type: 'instant' },
      { column: 'tasks.id', direction: 'asc', type: 'string' },
    ],
    shape,
    standingColumnNames,
  );
  return async (db: Db, teamId: string, userId: string, filters: TaskFilters, page: { limit: number; cursor?: string | undefined }) =>
    withStanding(teamId, await pages(db, { teamId, userId, completed: filters.completed, ownerId: filters.ownerId, completedSince: filters.completedSince }, page));
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

type NewTask = { teamId: string; title: string; ownerId: string; dueDate: string; meetingId: string | null };

/** A new task, when the guard and the rules allow it: the owner is a team member, a meeting is the team's. */
export function taskCreation<R>(shape: JsonShape<TaskRow, R>) {
  const run = changeWithEvent(
    (_db, task: NewTask & GuardValues) =>
      sql`insert into tasks as x (team_id, title, owner_id, due_date, meeting_id)
        select t.id, ${task.title}, ${task.ownerId}, ${task.dueDate}, ${task.meetingId}::text from ${teamOfChange(task)}
        where t.id = ${task.teamId} and ${changeGranted(task)}
          and ${isMemberOfTeam(sql`t.id`, task.ownerId)} and ${isNoneOrMeetingOfTeam(task.meetingId, sql`t.id`)}
        returning ${sql.join(changedItem(shape, sql`(select t.org_id from teams t where t.id = x.team_id)`))}`,
  );
  return (db: Db, task: NewTask, guard: ChangeGuard, event: EventStamp) =>
    run(db, { teamId: task.teamId, title: task.title, ownerId: task.ownerId, dueDate: task.dueDate, meetingId: task.meetingId, ...guardValues(guard) }, event);
}

/** A change's fields as a statement's values: every one present, undefined where the change leaves it alone. */
type TaskChangeValues = { taskId: string; title: string | undefined; ownerId: string | undefined; dueDate: string | undefined; completed: boolean | undefined };

/** `updateTask` when the guard and the rules allow it: a new owner is a team member. */
export function taskChange<R>(shape: JsonShape<TaskRow, R>) {
  const run = changeWithEvent((db, change: TaskChangeValues & GuardValues) =>
    db
      .updateTable('tasks as x')
      .set({
        title: change.title,
        owner_id: change.ownerId,
        due_date: change.dueDate,
        completed: change.completed,
        // Completing keeps the first completion's instant; the value decides it in the statement, so that
        // one statement serves both.
        ...(change.completed === undefined ? {} : { completed_at: sql<Date | null>`case when ${change.completed}::boolean then coalesce(x.completed_at, now()) end` }),
      })
      .from('teams as t')
      .leftJoin('team_members as tm', (join) => join.onRef('tm.team_id', '=', 't.id').on('tm.user_id', '=', change.userId))
      .whereRef('t.id', '=', 'x.team_id')
      .where('x.id', '=', change.taskId)
      .where(changeGranted(change))
      .$if(change.ownerId !== undefined, (query) => query.where(isMemberOfTeam(sql`x.team_id`, change.ownerId!)))
      .returning(changedItem(shape, sql`t.org_id`)),
  );
  return (db: Db, taskId: string, change: TaskChange, guard: ChangeGuard, event: EventStamp) =>
    run(db, { taskId, title: change.title, ownerId: change.ownerId, dueDate: change.dueDate, completed: change.completed, ...guardValues(guard) }, event);
}

/**
 * A batch of the team's tasks for its CSV export, in the list's order (oldest first) after `after`,
 * each with its owner's e-mail and the caller's standing in the team (`standingColumns`).
 */
export async function taskExportBatch(db: Db, teamId: string, userId: string, after: CreationKey | undefined) {
  const rows = await db
    .selectFrom('tasks')
    .innerJoin('users', 'users.id', 'tasks.owner_id')
    .select(['tasks.id', 'tasks.title', 'users.email as owner_email', 'tasks.due_date', 'tasks.completed', 'tasks.completed_at', 'tasks.created_at'])
    .select(sql<string>`tasks.created_at::text`.as('created_at_text'))
    .select(standingColumns(teamId, userId))
    .where('tasks.team_id', '=', teamId)
    .where(afterCreation('tasks', after))
    .orderBy('tasks.created_at')
    .orderBy('tasks.id')
    .limit(EXPORT_BATCH_ROWS)
    .execute();
  return withStanding(teamId, { rows, facts: rows[0] });
}

/** A row of a CSV import, as src/rules/csvImport.ts judged it. */
export interface ImportedTaskRow {
  title: string;
  ownerId: string;
  dueDate: string;
  completed: boolean;
  completedAt: Date | null;
  createdAt: Date | null;
}

/**
 * The tasks of a CSV import, in one statement whatever their number, each owned by a member of the
 * team (checked again here: an owner who left meanwhile gives no row, and the caller compares the
 * count). A task without `createdAt` is stamped just before the import's instant, a millisecond per
 * row still to come, so the list keeps the file's order; a completed one without `completedAt` is
 * completed at the import's instant.
 */
export async function insertImportedTasks(db: Db, teamId: string, imported: readonly ImportedTaskRow[]): Promise<number> {
  const { rows } = await sql<{ id: string }>`
    insert into tasks (team_id, title, owner_id, due_date, completed, completed_at, created_at)
    select ${teamId}, sent.title, sent.owner_id, sent.due_date::date, sent.completed,
      case when sent.completed then coalesce(sent.completed_at, now()) end,
      coalesce(sent.created_at, now() - (${imported.length}::int - sent.n) * interval '1 millisecond')
    from unnest(
      ${imported.map((task) => task.title)}::text[],
      ${imported.map((task) => task.ownerId)}::text[],
      ${imported.map((task) => task.dueDate)}::text[],
      ${imported.map((task) => task.completed)}::boolean[],
      ${imported.map((task) => task.completedAt)}::timestamptz[],
      ${imported.map((task) => task.createdAt)}::timestamptz[]
    ) with ordinality as sent(title, owner_id, due_date, completed, completed_at, created_at, n)
    join team_members tm on tm.team_id = ${teamId} and tm.user_id = sent.owner_id
    returning id
  `.execute(db);
  return rows.length;
}

/** Queries of goals (Rocks) and their milestones. */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, Day, GoalLevel, GoalRow, GoalStatus, MilestoneRow } from '../database.js';
import { jsonRecord, type JsonShape } from '../json.js';
import { afterCreation, EXPORT_BATCH_ROWS, preparedJsonPages, type CreationKey } from '../pagination.js';
import { prepared } from '../prepared.js';
import { callerTeamRole, standingColumnNames, standingColumns, withStanding } from './access.js';

type Db = Kysely<Database> | Transaction<Database>;
type Page = { limit: number; cursor?: string | undefined };

/** A milestone as the goal queries return it, inside the goal's row. */
export interface MilestoneJson {
  id: string;
  revision: number | string;
  goal_id: string;
  title: string;
  due_date: Day | null;
  completed: boolean;
}

/**
 * `milestones`: all milestones of the goal whose id is in `goalIdColumn`, in the order they were added,
 * as a JSON array built in the same statement (a goal is never returned without its milestones, and
 * a page of goals costs one query). Days come out of JSON as `YYYY-MM-DD` text.
 */
function milestonesOf(goalIdColumn: string) {
  return sql<MilestoneJson[]>`(
    select coalesce(
      json_agg(
        json_build_object('id', m.id, 'revision', m.revision, 'goal_id', m.goal_id, 'title', m.title, 'due_date', m.due_date, 'completed', m.completed)
        order by m.created_at, m.id
      ),
      '[]'::json
    )
    from milestones m
    where m.goal_id = ${sql.ref(goalIdColumn)}
  )`.as('milestones');
}

/** A row of the goal lists: the goal and its milestones already written as a JSON array. */
export type GoalPageRow = GoalRow & { milestones: string };

/**
 * `milestones`: the goal's milestones in the order they were added, as a JSON array of records
 * written by `shape`. Made here rather than in the page's record because it aggregates other rows.
 */
function milestonesText<M>(shape: JsonShape<MilestoneRow, M>) {
  return sql<string>`(
    select '[' || coalesce(string_agg(${jsonRecord(shape, 'm')}, ',' order by m.created_at, m.id), '') || ']'
    from milestones m
    where m.goal_id = goals.id
  )`.as('milestones');
}

const byCreation = [
  { column: 'goals.created_at', direction: 'asc', type: 'instant' },
  { column: 'goals.id', direction: 'asc', type: 'string' },
] as const;

function selectGoals(db: Db) {
  return db.selectFrom('goals').selectAll('goals').select(milestonesOf('goals.id'));
}

export interface TeamGoalFilters {
  quarter?: string | undefined;
  status?: GoalStatus | undefined;
  level?: GoalLevel | undefined;
}

type TeamGoalPageArgs = { teamId: string; userId: string; quarter: string | undefined; status: GoalStatus | undefined; level: GoalLevel | undefined };

/**
 * The team's goals with their milestones, oldest first, written as JSON by `shape` and
 * `milestoneShape` (given by the handler), with the caller's standing in the team for the access check (`standingColumns`).
 */
export function teamGoalPages<R, M>(shape: JsonShape<GoalPageRow, R>, milestoneShape: JsonShape<MilestoneRow, M>) {
  const milestones = milestonesText(milestoneShape);
  const pages = preparedJsonPages(
    (db: Db, { teamId, userId, quarter, status, level }: TeamGoalPageArgs) => {
      let query = db.selectFrom('goals').selectAll('goals').select(milestones).select(standingColumns(teamId, userId)).where('goals.team_id', '=', teamId);
      if (quarter !== undefined) query = query.where('goals.quarter', '=', quarter);
      if (status !== undefined) query = query.where('goals.status', '=', status);
      if (level !== undefined) query = query.where('goals.level', '=', level);
      return query;
    },
    [...byCreation],
    shape,
    standingColumnNames,
  );
  return async (db: Db, teamId: string, userId: string, filters: TeamGoalFilters, page: Page) =>
    withStanding(teamId, await pages(db, { teamId, userId, quarter: filters.quarter, status: filters.status, level: filters.level }, page));
}

type CompanyGoalPageArgs = { orgId: string; quarter: string | undefined; status: GoalStatus | undefined };

/**
 * The organization's company goals with their milestones, oldest first, written as JSON by `shape` and
 * `milestoneShape`. `level = 'COMPANY'` is a literal, not a parameter, so that even a generic plan can
 * use the partial indexes `goals_company_org_id_*`.
 */
export function companyGoalPages<R, M>(shape: JsonShape<GoalPageRow, R>, milestoneShape: JsonShape<MilestoneRow, M>) {
  const milestones = milestonesText(milestoneShape);
  const pages = preparedJsonPages(
    (db: Db, { orgId, quarter, status }: CompanyGoalPageArgs) => {
      let query = db.selectFrom('goals').selectAll('goals').select(milestones).where('goals.org_id', '=', orgId).where('goals.level', '=', sql.lit('COMPANY'));
      if (quarter !== undefined) query = query.where('goals.quarter', '=', quarter);
      if (status !== undefined) query = query.where('goals.status', '=', status);
      return query;
    },
    [...byCreation],
    shape,
  );
  return (db: Db, orgId: string, filters: Omit<TeamGoalFilters, 'level'>, page: Page) =>
    pages(db, { orgId, quarter: filters.quarter, status: filters.status }, page);
}

const goalById = prepared((db, { goalId, userId }: { goalId: string; userId: string }) =>
  selectGoals(db).select(callerTeamRole('goals.team_id', userId)).where('goals.id', '=', goalId),
);

/** A goal with its milestones and the caller's role in its team, in one query. */
export async function findGoal(db: Db, goalId: string, userId: string) {
  return (await goalById(db, { goalId, userId }))[0];
}

/** What decides access to a goal (its team, organization, level and owner), without its milestones. */
export function findGoalFacts(db: Db, goalId: string, userId: string) {
  return db
    .selectFrom('goals')
    .select(['goals.id', 'goals.team_id', 'goals.org_id', 'goals.level', 'goals.owner_id', callerTeamRole('goals.team_id', userId)])
    .where('goals.id', '=', goalId)
    .executeTakeFirst();
}

/**
 * The goal to change, locked until the end of the transaction (so that the owner who may report on it
 * cannot change meanwhile), with the caller's role in its team and whether the team is a leadership team.
 */
export function lockGoal(trx: Transaction<Database>, goalId: string, userId: string) {
  return trx
    .selectFrom('goals')
    .innerJoin('teams', 'teams.id', 'goals.team_id')
    .selectAll('goals')
    .select(['teams.is_leadership', callerTeamRole('goals.team_id', userId)])
    .where('goals.id', '=', goalId)
    .forUpdate('goals')
    .executeTakeFirst();
}

/**
 * Whether the person has a row in the team (organization roles do not count). Inside a transaction
 * the row is locked against deletion, so the person cannot leave the team before the change is written.
 */
export function insertGoal(
  db: Db,
  goal: { teamId: string; orgId: string; title: string; description: string | null; ownerId: string; quarter: string; level: GoalLevel },
) {
  return db
    .insertInto('goals')
    .values({
      team_id: goal.teamId,
      org_id: goal.orgId,
      title: goal.title,
      description: goal.description,
      owner_id: goal.ownerId,
      quarter: goal.quarter,
      level: goal.level,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface GoalChange {
  title?: string | undefined;
  description?: string | null | undefined;
  ownerId?: string | undefined;
  quarter?: string | undefined;
  level?: GoalLevel | undefined;
  status?: GoalStatus | undefined;
}

/** Applies the change in one statement and returns the goal with its (unchanged) milestones. */
export function updateGoal(db: Db, goalId: string, change: GoalChange) {
  return db
    .updateTable('goals')
    .set({
      title: change.title,
      description: change.description,
      owner_id: change.ownerId,
      quarter: change.quarter,
      level: change.level,
      status: change.status,
    })
    .where('id', '=', goalId)
    .returningAll()
    .returning(milestonesOf('goals.id'))
    .executeTakeFirstOrThrow();
}

/** Deletes the goal; its milestones go with it (`on delete cascade`). */
export async function deleteGoal(db: Db, goalId: string) {
  await db.deleteFrom('goals').where('id', '=', goalId).execute();
}

/** A milestone with what decides access to it: its goal's team, organization, level and owner, in one query. */
export function findMilestone(db: Db, milestoneId: string, userId: string) {
  return db
    .selectFrom('milestones')
    .innerJoin('goals', 'goals.id', 'milestones.goal_id')
    .select(['milestones.id', 'goals.team_id', 'goals.org_id', 'goals.level', 'goals.owner_id', callerTeamRole('goals.team_id', userId)])
    .where('milestones.id', '=', milestoneId)
    .executeTakeFirst();
}

/**
 * Adds the milestone to the goal, if the goal still exists: one `insert … select`, so a goal deleted
 * since it was read gives undefined instead of a foreign-key error.
 */
export function insertMilestone(db: Db, goalId: string, milestone: { title: string; dueDate: Day | null }) {
  return db
    .insertInto('milestones')
    .columns(['goal_id', 'title', 'due_date'])
    .expression((eb) =>
      eb
        .selectFrom('goals')
        .select([
          'goals.id',
          sql<string>`${milestone.title}::text`.as('title'),
          sql<Day | null>`${milestone.dueDate}::date`.as('due_date'),
        ])
        .where('goals.id', '=', goalId),
    )
    .returningAll()
    .executeTakeFirst();
}

export interface MilestoneChange {
  title?: string | undefined;
  dueDate?: Day | null | undefined;
  completed?: boolean | undefined;
}

/** Applies the change in one statement; undefined when the milestone no longer exists. */
export function updateMilestone(db: Db, milestoneId: string, change: MilestoneChange) {
  return db
    .updateTable('milestones')
    .set({ title: change.title, due_date: change.dueDate, completed: change.completed })
    .where('id', '=', milestoneId)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteMilestone(db: Db, milestoneId: string) {
  await db.deleteFrom('milestones').where('id', '=', milestoneId).execute();
}

/**
 * A batch of the team's goals for its CSV export, in the list's order (oldest first) after `after`,
 * each with its owner's e-mail, its milestones, and the caller's standing in the team (`standingColumns`).
 */
export async function goalExportBatch(db: Db, teamId: string, userId: string, after: CreationKey | undefined) {
  const rows = await db
    .selectFrom('goals')
    .innerJoin('users', 'users.id', 'goals.owner_id')
    .select(['goals.id', 'goals.title', 'goals.description', 'users.email as owner_email', 'goals.quarter', 'goals.level', 'goals.status', 'goals.created_at'])
    .select(milestonesOf('goals.id'))
    .select(sql<string>`goals.created_at::text`.as('created_at_text'))
    .select(standingColumns(teamId, userId))
    .where('goals.team_id', '=', teamId)
    .where(afterCreation('goals', after))
    .orderBy('goals.created_at')
    .orderBy('goals.id')
    .limit(EXPORT_BATCH_ROWS)
    .execute();
  return withStanding(teamId, { rows, facts: rows[0] });
}

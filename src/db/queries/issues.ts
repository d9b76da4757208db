/** Queries of issues. */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, IssuePriority, IssueRow, IssueStatus } from '../database.js';
import type { JsonShape } from '../json.js';
import { afterCreation, EXPORT_BATCH_ROWS, preparedJsonPages, type CreationKey } from '../pagination.js';
import { prepared } from '../prepared.js';
import { changedItem, changeGranted, guardValues, isNoneOrMeetingOfTeam, teamOfChange, type ChangeGuard, type GuardValues } from '../changes.js';
import { callerTeamRole, standingColumnNames, standingColumns, withStanding } from './access.js';
import { changeWithEvent, type EventStamp } from './events.js';

type Db = Kysely<Database> | Transaction<Database>;

const issueById = prepared((db, { issueId, userId }: { issueId: string; userId: string }) =>
  db
    .selectFrom('issues')
    .innerJoin('teams', 'teams.id', 'issues.team_id')
    .selectAll('issues')
    .select(['teams.org_id', callerTeamRole('issues.team_id', userId)])
    .where('issues.id', '=', issueId),
);

/** An issue with its team's organization and the caller's role in the team, in one query. */
export async function findIssue(db: Db, issueId: string, userId: string) {
  return (await issueById(db, { issueId, userId }))[0];
}

export interface IssueFilters {
  status?: IssueStatus | undefined;
  priority?: IssuePriority | undefined;
}

type IssuePageArgs = { teamId: string; userId: string; status: IssueStatus | undefined; priority: IssuePriority | undefined };

const issuePageRows = (db: Db, { teamId, userId, status, priority }: IssuePageArgs) => {
  let query = db.selectFrom('issues').selectAll('issues').select(standingColumns(teamId, userId)).where('issues.team_id', '=', teamId);
  if (status !== undefined) query = query.where('issues.status', '=', status);
  if (priority !== undefined) query = query.where('issues.priority', '=', priority);
  return query;
};

/**
 * The team's issues, oldest first, written as JSON by `shape` (given by the handler), with the team's
 * standing for the access check (`standingColumns`).
 */
export function teamIssuePages<R>(shape: JsonShape<IssueRow, R>) {
  const pages = preparedJsonPages(
    issuePageRows,
    [
      { column: 'issues.created_at', direction: 'asc', type: 'instant' },
      { column: 'issues.id', direction: 'asc', type: 'string' },
    ],
    shape,
    standingColumnNames,
  );
  return async (db: Db, teamId: string, userId: string, filters: IssueFilters, page: { limit: number; cursor?: string | undefined }) =>
    withStanding(teamId, await pages(db, { teamId, userId, status: filters.status, priority: filters.priority }, page));
}

export function insertIssue(
  db: Db,
  issue: {
    teamId: string;
    title: string;
    description: string | null;
    priority: IssuePriority;
    meetingId: string | null;
    createdById: string;
  },
) {
  return db
    .insertInto('issues')
    .values({
      team_id: issue.teamId,
      title: issue.title,
      description: issue.description,
      priority: issue.priority,
      meeting_id: issue.meetingId,
      created_by_id: issue.createdById,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface IssueChange {
  title?: string | undefined;
  /** null clears the description. */
  description?: string | null | undefined;
  priority?: IssuePriority | undefined;
  status?: IssueStatus | undefined;
}

/**
 * Applies the change in one statement; undefined when the issue no longer exists. Setting SOLVED on
 * an issue already SOLVED keeps its first `resolved_at` (set exactly while the status is SOLVED).
 */
export function updateIssue(db: Db, issueId: string, change: IssueChange) {
  const resolution =
    change.status === undefined
      ? {}
      : { status: change.status, resolved_at: change.status === 'SOLVED' ? sql<Date>`coalesce(resolved_at, now())` : null };
  return db
    .updateTable('issues')
    .set({ title: change.title, description: change.description, priority: change.priority, ...resolution })
    .where('id', '=', issueId)
    .returningAll()
    .executeTakeFirst();
}

// ---------------------------------------------------------------------------------------------------
// Changes in one statement with their event (`changeWithEvent`): the guard holds the caller's grants
// and the rules, and the issue's JSON is written by `shape` (given by the handler) for the event and the answer.

type NewIssue = { teamId: string; title: string; description: string | null; priority: IssuePriority; meetingId: string | null; createdById: string };

/** A new issue, when the guard and the rules allow it: a meeting is the team's. */
export function issueCreation<R>(shape: JsonShape<IssueRow, R>) {
  const run = changeWithEvent(
    (_db, issue: NewIssue & GuardValues) =>
      sql`insert into issues as x (team_id, title, description, priority, meeting_id, created_by_id)
        select t.id, ${issue.title}, ${issue.description}::text, ${issue.priority}, ${issue.meetingId}::text, ${issue.createdById} from ${teamOfChange(issue)}
        where t.id = ${issue.teamId} and ${changeGranted(issue)} and ${isNoneOrMeetingOfTeam(issue.meetingId, sql`t.id`)}
        returning ${sql.join(changedItem(shape, sql`(select t.org_id from teams t where t.id = x.team_id)`))}`,
  );
  return (db: Db, issue: NewIssue, guard: ChangeGuard, event: EventStamp) =>
    run(
      db,
      {
        teamId: issue.teamId,
        title: issue.title,
        description: issue.description,
        priority: issue.priority,
        meetingId: issue.meetingId,
        createdById: issue.createdById,
        ...guardValues(guard),
      },
      event,
    );
}

/** A change's fields as a statement's values: every one present, undefined where the change leaves it alone. */
type IssueChangeValues = {
  issueId: string;
  title: string | undefined;
  description: string | null | undefined;
  priority: IssuePriority | undefined;
  status: IssueStatus | undefined;
};

/** `updateIssue` when the guard allows it. */
export function issueChange<R>(shape: JsonShape<IssueRow, R>) {
  const run = changeWithEvent((db, change: IssueChangeValues & GuardValues) =>
    db
      .updateTable('issues as x')
      .set({
        title: change.title,
        description: change.description,
        priority: change.priority,
        status: change.status,
        // Solving keeps the first solution's instant; the value decides it in the statement, so that one statement serves every status.
        ...(change.status === undefined ? {} : { resolved_at: sql<Date | null>`case when ${change.status}::text = 'SOLVED' then coalesce(x.resolved_at, now()) end` }),
      })
      .from('teams as t')
      .leftJoin('team_members as tm', (join) => join.onRef('tm.team_id', '=', 't.id').on('tm.user_id', '=', change.userId))
      .whereRef('t.id', '=', 'x.team_id')
      .where('x.id', '=', change.issueId)
      .where(changeGranted(change))
      .returning(changedItem(shape, sql`t.org_id`)),
  );
  return (db: Db, issueId: string, change: IssueChange, guard: ChangeGuard, event: EventStamp) =>
    run(db, { issueId, title: change.title, description: change.description, priority: change.priority, status: change.status, ...guardValues(guard) }, event);
}

export async function deleteIssue(db: Db, issueId: string) {
  await db.deleteFrom('issues').where('id', '=', issueId).execute();
}

/**
 * A batch of the team's issues for its CSV export, in the list's order (oldest first) after `after`,
 * each with the e-mail of who raised it and the caller's standing in the team (`standingColumns`).
 */
export async function issueExportBatch(db: Db, teamId: string, userId: string, after: CreationKey | undefined) {
  const rows = await db
    .selectFrom('issues')
    .innerJoin('users', 'users.id', 'issues.created_by_id')
    .select(['issues.id', 'issues.title', 'issues.description', 'issues.priority', 'issues.status', 'users.email as created_by_email', 'issues.resolved_at', 'issues.created_at'])
    .select(sql<string>`issues.created_at::text`.as('created_at_text'))
    .select(standingColumns(teamId, userId))
    .where('issues.team_id', '=', teamId)
    .where(afterCreation('issues', after))
    .orderBy('issues.created_at')
    .orderBy('issues.id')
    .limit(EXPORT_BATCH_ROWS)
    .execute();
  return withStanding(teamId, { rows, facts: rows[0] });
}

/** A row of a CSV import, as src/rules/csvImport.ts judged it. */
export interface ImportedIssueRow {
  title: string;
  description: string | null;
  priority: IssuePriority;
  status: IssueStatus;
  createdById: string;
  resolvedAt: Date | null;
  createdAt: Date | null;
}

/**
 * The issues of a CSV import, in one statement whatever their number, each raised by the caller (who
 * may raise issues without being a member, as an organization's Owner) or by a member of the team
 * (checked again here, as for tasks). Stamped as `insertImportedTasks` stamps tasks; a SOLVED
 * one without `resolvedAt` is resolved at the import's instant.
 */
export async function insertImportedIssues(db: Db, teamId: string, callerId: string, imported: readonly ImportedIssueRow[]): Promise<number> {
  const { rows } = await sql<{ id: string }>`
    insert into issues (team_id, title, description, priority, status, created_by_id, resolved_at, created_at)
    select ${teamId}, sent.title, sent.description, sent.priority, sent.status, sent.created_by_id,
      case when sent.status = 'SOLVED' then coalesce(sent.resolved_at, now()) end,
      coalesce(sent.created_at, now() - (${imported.length}::int - sent.n) * interval '1 millisecond')
    from unnest(
      ${imported.map((issue) => issue.title)}::text[],
      ${imported.map((issue) => issue.description)}::text[],
      ${imported.map((issue) => issue.priority)}::text[],
      ${imported.map((issue) => issue.status)}::text[],
      ${imported.map((issue) => issue.createdById)}::text[],
      ${imported.map((issue) => issue.resolvedAt)}::timestamptz[],
      ${imported.map((issue) => issue.createdAt)}::timestamptz[]
    ) with ordinality as sent(title, description, priority, status, created_by_id, resolved_at, created_at, n)
    where sent.created_by_id = ${callerId}
      or exists (select 1 from team_members tm where tm.team_id = ${teamId} and tm.user_id = sent.created_by_id)
    returning id
  `.execute(db);
  return rows.length;
}

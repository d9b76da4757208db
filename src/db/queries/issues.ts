/** Queries of issues. */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, IssuePriority, IssueRow, IssueStatus } from '../database.js';
import type { JsonShape } from '../json.js';
import { preparedJsonPages } from '../pagination.js';
import { prepared } from '../prepared.js';
import { callerTeamRole, teamFactsOf } from './access.js';

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
  let query = db.selectFrom('issues').selectAll('issues').select(teamFactsOf(teamId, userId)).where('issues.team_id', '=', teamId);
  if (status !== undefined) query = query.where('issues.status', '=', status);
  if (priority !== undefined) query = query.where('issues.priority', '=', priority);
  return query;
};

/**
 * The team's issues, oldest first, written as JSON by `shape` (given by the handler), with the team's
 * facts for the access check (`teamFactsOf`).
 */
export function teamIssuePages<R>(shape: JsonShape<IssueRow, R>) {
  const pages = preparedJsonPages(
    issuePageRows,
    [
      { column: 'issues.created_at', direction: 'asc', type: 'instant' },
      { column: 'issues.id', direction: 'asc', type: 'string' },
    ],
    shape,
    ['team_org_id', 'caller_team_role'],
  );
  return (db: Db, teamId: string, userId: string, filters: IssueFilters, page: { limit: number; cursor?: string | undefined }) =>
    pages(db, { teamId, userId, status: filters.status, priority: filters.priority }, page);
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

export async function deleteIssue(db: Db, issueId: string) {
  await db.deleteFrom('issues').where('id', '=', issueId).execute();
}

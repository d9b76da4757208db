/** Factories for the execution area (tasks, issues, goals, milestones): rows inserted straight into the database. */
import type { Kysely } from 'kysely';
import type { Database, GoalLevel, GoalStatus, IssuePriority, IssueStatus, MeetingStatus, TeamRow } from '../../src/db/database.js';
import { addOrganizationMember, createCaller, createOrganization, createTeamWorld } from './factories.js';

// ---------------------------------------------------------------------------------------------------
// Tasks and issues

export async function createMeeting(
  db: Kysely<Database>,
  teamId: string,
  createdById: string,
  options: { date?: string; status?: MeetingStatus } = {},
) {
  return db
    .insertInto('meetings')
    .values({ team_id: teamId, created_by_id: createdById, date: options.date ?? '2026-11-16', status: options.status ?? 'SCHEDULED' })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface TaskOptions {
  title?: string;
  dueDate?: string;
  completedAt?: Date | null;
  meetingId?: string | null;
  createdAt?: Date;
}

const taskValues = (teamId: string, ownerId: string, options: TaskOptions) => ({
  team_id: teamId,
  owner_id: ownerId,
  title: options.title ?? 'Send the revised freight quote',
  due_date: options.dueDate ?? '2026-11-27',
  completed: Boolean(options.completedAt),
  completed_at: options.completedAt ?? null,
  meeting_id: options.meetingId ?? null,
  ...(options.createdAt ? { created_at: options.createdAt } : {}),
});

export function createTask(db: Kysely<Database>, teamId: string, ownerId: string, options: TaskOptions = {}) {
  return db.insertInto('tasks').values(taskValues(teamId, ownerId, options)).returningAll().executeTakeFirstOrThrow();
}

/** Many tasks in one insert; `options(i)` shapes the i-th. */
export function createTasks(db: Kysely<Database>, teamId: string, ownerId: string, count: number, options: (index: number) => TaskOptions = () => ({})) {
  const rows = Array.from({ length: count }, (_, index) => taskValues(teamId, ownerId, options(index)));
  return db.insertInto('tasks').values(rows).returningAll().execute();
}

export interface IssueOptions {
  title?: string;
  description?: string | null;
  priority?: IssuePriority;
  status?: IssueStatus;
  /** By default the status decides: a fixed instant when SOLVED, else null. */
  resolvedAt?: Date | null;
  meetingId?: string | null;
  createdAt?: Date;
}

const issueValues = (teamId: string, createdById: string, options: IssueOptions) => {
  const status = options.status ?? 'OPEN';
  return {
    team_id: teamId,
    created_by_id: createdById,
    title: options.title ?? 'Deliveries on the Košice route arrive a day late',
    description: options.description ?? null,
    priority: options.priority ?? 'MEDIUM',
    status,
    resolved_at: options.resolvedAt !== undefined ? options.resolvedAt : status === 'SOLVED' ? new Date('2026-11-16T08:55:40.118Z') : null,
    meeting_id: options.meetingId ?? null,
    ...(options.createdAt ? { created_at: options.createdAt } : {}),
  };
};

export function createIssue(db: Kysely<Database>, teamId: string, createdById: string, options: IssueOptions = {}) {
  return db.insertInto('issues').values(issueValues(teamId, createdById, options)).returningAll().executeTakeFirstOrThrow();
}

/** Many issues in one insert; `options(i)` shapes the i-th. */
export function createIssues(db: Kysely<Database>, teamId: string, createdById: string, count: number, options: (index: number) => IssueOptions = () => ({})) {
  const rows = Array.from({ length: count }, (_, index) => issueValues(teamId, createdById, options(index)));
  return db.insertInto('issues').values(rows).returningAll().execute();
}

// ---------------------------------------------------------------------------------------------------
// Goals and milestones


export interface GoalOptions {
  title?: string;
  description?: string | null;
  quarter?: string;
  level?: GoalLevel;
  status?: GoalStatus;
  createdAt?: Date;
}

const goalValues = (team: Pick<TeamRow, 'id' | 'org_id'>, ownerId: string, options: GoalOptions) => ({
  team_id: team.id,
  org_id: team.org_id,
  owner_id: ownerId,
  title: options.title ?? 'Sign 5 new enterprise customers',
  description: options.description ?? null,
  quarter: options.quarter ?? '2026-Q4',
  level: options.level ?? 'DEPARTMENT',
  status: options.status ?? 'ON_TRACK',
  ...(options.createdAt ? { created_at: options.createdAt } : {}),
});

export function createGoal(db: Kysely<Database>, team: Pick<TeamRow, 'id' | 'org_id'>, ownerId: string, options: GoalOptions = {}) {
  return db.insertInto('goals').values(goalValues(team, ownerId, options)).returningAll().executeTakeFirstOrThrow();
}

/** Many goals in one insert; `options(i)` shapes the i-th. */
export function createGoals(
  db: Kysely<Database>,
  team: Pick<TeamRow, 'id' | 'org_id'>,
  ownerId: string,
  count: number,
  options: (index: number) => GoalOptions = () => ({}),
) {
  const rows = Array.from({ length: count }, (_, index) => goalValues(team, ownerId, options(index)));
  return db.insertInto('goals').values(rows).returningAll().execute();
}

export interface MilestoneOptions {
  title?: string;
  dueDate?: string | null;
  completed?: boolean;
  createdAt?: Date;
}

export function createMilestone(db: Kysely<Database>, goalId: string, options: MilestoneOptions = {}) {
  return db
    .insertInto('milestones')
    .values({
      goal_id: goalId,
      title: options.title ?? 'Shortlist 20 target accounts',
      due_date: options.dueDate === undefined ? '2026-10-16' : options.dueDate,
      completed: options.completed ?? false,
      ...(options.createdAt ? { created_at: options.createdAt } : {}),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * The people of the goal and milestone tests: an organization with one team and a caller of each
 * kind: team Admin, the goals' owner (team Member), another team Member, a team Viewer (all
 * organization Members), an organization Implementer, an organization Member in no team, and the
 * Owner of another organization.
 */
export async function createGoalCast(db: Kysely<Database>, options: { isLeadership?: boolean; suspended?: boolean } = {}) {
  const { org, team, person } = await createTeamWorld(db, options);
  const inTeam = (role: 'ADMIN' | 'MEMBER' | 'VIEWER') => person('MEMBER', role);
  const admin = await inTeam('ADMIN');
  const owner = await inTeam('MEMBER');
  const member = await inTeam('MEMBER');
  const viewer = await inTeam('VIEWER');
  const implementer = await person('IMPLEMENTER');
  const orgMember = await person('MEMBER');
  const outsider = await createCaller(db);
  await addOrganizationMember(db, (await createOrganization(db)).id, outsider.user.id, 'OWNER');
  return { org, team, admin, owner, member, viewer, implementer, orgMember, outsider };
}

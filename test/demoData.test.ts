/**
 * The demo organization of `seed-demo` (src/cli/demo.ts) keeps the product's own rules
 * (../shared/spec/api-reference.md), and a newcomer's first list calls find content.
 *
 * The demo counts its dates back from "now", so it is seeded at several fixed instants chosen to be
 * awkward — never at the wall clock's: nothing here depends on the day or hour the test runs. Each
 * seeding starts from an empty database (one per file, emptied); everything is read back through the API (every answer checked
 * against the contract) with a key for each demo person, and from the tables where the API does not
 * show a column (creation instants, when ratings were given, acknowledgements).
 */
import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecretBox } from '../src/auth/secrets.js';
import { DEMO_TIME_ZONE, seedDemo, type DemoOrganization } from '../src/cli/demo.js';
import type { Database } from '../src/db/database.js';
import { judgeValue } from '../src/rules/metricValues.js';
import { slugify } from '../src/rules/slug.js';
import { currentWeekMonday, dayInTimeZone, isMonday, isQuarter, minutesBetween } from '../src/time.js';
import { createTestDatabase, databaseLabel, emptyDatabase, type TestDatabase } from './support/database.js';
import { createKey } from './support/factories.js';
import { walkPages } from './support/pages.js';
import { startTestApp, type TestApp } from './support/testApp.js';

const INSTANTS = [
  { label: 'a Thursday afternoon', now: '2026-11-26T14:37:12.345Z' },
  { label: 'just after midnight on a Monday, still Sunday in UTC', now: '2027-01-03T23:05:00.000Z' },
  { label: 'the first minute of a year and quarter', now: '2026-12-31T23:00:30.000Z' },
  { label: 'the last minute of a quarter in summer time', now: '2027-03-31T21:59:59.999Z' },
  { label: 'the night the clocks go forward', now: '2027-03-28T01:30:00.000Z' },
  { label: 'a Monday during the morning meeting slot', now: '2026-11-30T08:20:00.000Z' },
  // Before any day the test runs on: a stored instant taken from the database clock would lie after it.
  { label: 'a Monday morning long ago', now: '2025-06-02T06:59:00.000Z' },
];

// ---------------------------------------------------------------------------------------------------
// What is read

type Json = any;

interface TeamView {
  team: Json;
  members: Json[];
  tasks: Json[];
  issues: Json[];
  goals: Json[];
  metrics: Json[];
  /** GET /teams/{teamId}/scorecard: the metrics with their values in the default weeks. */
  scorecard: Json;
  /** Every value of each metric, by metric id (GET /metrics/{id}/values, all pages). */
  values: Map<string, Json[]>;
  /** GET /meetings/{id} of every meeting in the list. */
  meetings: Json[];
  vision: Json | null;
  seats: Json[];
  reviews: Json[];
  documents: Json[];
}

interface World {
  now: Date;
  demo: DemoOrganization;
  keys: Map<string, string>;
  organization: Json;
  orgMembers: Json[];
  teams: TeamView[];
  companyGoals: Json[];
  platformUsers: Json[];
  /** The tables as seeded, before any request. */
  rows: Record<string, Json[]>;
  /** Earliest and latest value of every instant column of every table, as seeded. */
  instants: { table: string; column: string; earliest: Date | null; latest: Date | null }[];
}

const TABLES = [
  'users',
  'organizations',
  'organization_members',
  'teams',
  'team_members',
  'meetings',
  'meeting_ratings',
  'segues',
  'headlines',
  'cascading_messages',
  'message_acknowledgements',
  'tasks',
  'issues',
  'goals',
  'milestones',
  'metrics',
  'metric_values',
  'visions',
  'seats',
  'people_reviews',
  'documents',
] as const;

async function snapshot(db: Kysely<Database>) {
  const rows: Record<string, Json[]> = {};
  for (const table of TABLES) rows[table] = await db.selectFrom(table).selectAll().execute();
  const columns = await sql<{ table_name: string; column_name: string }>`
    select table_name, column_name from information_schema.columns
    where table_schema = current_schema() and data_type = 'timestamp with time zone'
    order by table_name, column_name
  `.execute(db);
  const instants: World['instants'] = [];
  for (const { table_name: table, column_name: column } of columns.rows) {
    const { rows: [range] } = await sql<{ earliest: Date | null; latest: Date | null }>`
      select min(${sql.ref(column)}) as earliest, max(${sql.ref(column)}) as latest from ${sql.table(table)}
    `.execute(db);
    instants.push({ table, column, earliest: range!.earliest, latest: range!.latest });
  }
  return { rows, instants };
}

async function get(app: TestApp, path: string, key: string): Promise<Json> {
  const response = await app.request('GET', path, { key });
  expect(response.status, `GET ${path}`).toBe(200);
  return response.body;
}

const all = async (app: TestApp, path: string, key: string) => (await walkPages(app, path, key, { limit: 200 })).items;

async function readTeam(app: TestApp, team: Json, key: string): Promise<TeamView> {
  const base = `/v1/teams/${team.id}`;
  const metrics = (await get(app, `${base}/metrics`, key)).data;
  const values = new Map<string, Json[]>();
  for (const metric of metrics) values.set(metric.id, await all(app, `/v1/metrics/${metric.id}/values`, key));
  const meetings = [];
  for (const meeting of await all(app, `${base}/meetings`, key)) {
    meetings.push(await get(app, `/v1/meetings/${meeting.id}`, key));
    if (meeting.status === 'COMPLETED') await get(app, `/v1/meetings/${meeting.id}/recap`, key);
  }
  const vision = await app.request('GET', `${base}/vision`, { key });
  expect([200, 404]).toContain(vision.status);
  return {
    team: await get(app, base, key),
    members: await all(app, `${base}/members`, key),
    tasks: await all(app, `${base}/tasks`, key),
    issues: await all(app, `${base}/issues`, key),
    goals: await all(app, `${base}/goals`, key),
    metrics,
    scorecard: await get(app, `${base}/scorecard`, key),
    values,
    meetings,
    vision: vision.status === 200 ? vision.body : null,
    seats: (await get(app, `${base}/org-chart`, key)).data,
    reviews: await all(app, `${base}/people-reviews`, key),
    documents: await all(app, `${base}/documents`, key),
  };
}

// ---------------------------------------------------------------------------------------------------
// Rules shared by the checks

const at = (instant: string | Date) => new Date(instant).getTime();
/** Characters as the contract counts them (code points). */
const length = (text: string) => [...text].length;

/** The role a person acts with in a team: organization Owners, Admins and Implementers act as team Admins. */
function actsAs(world: World, teamId: string, userId: string): 'ADMIN' | 'MEMBER' | 'VIEWER' | null {
  const orgRole = world.orgMembers.find((member) => member.userId === userId)?.role;
  if (orgRole === 'OWNER' || orgRole === 'ADMIN' || orgRole === 'IMPLEMENTER') return 'ADMIN';
  const teamRole = teamOf(world, teamId).members.find((member) => member.userId === userId)?.role;
  if (teamRole === 'OWNER' || teamRole === 'ADMIN') return 'ADMIN';
  return teamRole ?? null;
}
const mayWrite = (world: World, teamId: string, userId: string) => ['ADMIN', 'MEMBER'].includes(actsAs(world, teamId, userId) ?? '');
const mayManage = (world: World, teamId: string, userId: string) => actsAs(world, teamId, userId) === 'ADMIN';
const isTeamMember = (world: World, teamId: string, userId: string) => teamOf(world, teamId).members.some((member) => member.userId === userId);

function teamOf(world: World, teamId: string): TeamView {
  const view = world.teams.find((candidate) => candidate.team.id === teamId);
  if (view === undefined) throw new Error(`No team ${teamId} was read`);
  return view;
}

const rowsOf = (world: World, table: (typeof TABLES)[number]) => world.rows[table]!;
const rowById = (world: World, table: (typeof TABLES)[number], id: string) => {
  const row = rowsOf(world, table).find((candidate) => candidate.id === id);
  if (row === undefined) throw new Error(`No ${table} row ${id}`);
  return row;
};

function quarterOfDay(day: string): string {
  return `${day.slice(0, 4)}-Q${Math.floor((Number(day.slice(5, 7)) - 1) / 3) + 1}`;
}

/** When a meeting ran: from its start to its end, or to now while it runs. */
function meetingSpan(world: World, meetingId: string): { start: number; end: number } {
  const row = rowById(world, 'meetings', meetingId);
  expect(row.started_at, `meeting ${meetingId} has started`).not.toBeNull();
  return { start: at(row.started_at), end: row.ended_at === null ? at(world.now) : at(row.ended_at) };
}

// ---------------------------------------------------------------------------------------------------

// One database for every seeding, emptied before each: a new one cost more than the seeding itself.
let database: TestDatabase | undefined;
afterAll(() => database?.close());

describe.each(INSTANTS)(`the demo organization (${databaseLabel}) seeded at $label ($now)`, ({ now: nowText }) => {
  const now = new Date(nowText);
  const today = dayInTimeZone(now, DEMO_TIME_ZONE);
  let app: TestApp;
  let world: World;

  beforeAll(async () => {
    if (database) await emptyDatabase(database.db);
    else database = await createTestDatabase();
    const demo = await database.db.transaction().execute((trx) => seedDemo(trx, now, createSecretBox(randomBytes(32))));
    const { rows, instants } = await snapshot(database.db);
    // The demo keys of seed-demo expire a year after the seeding's "now"; these act for the same people
    // with the same scopes and are valid whenever the test runs, at the app's clock (which judges
    // expiry) as at the real time.
    const keys = new Map<string, string>();
    for (const person of demo.people) {
      const scopes = person.superadmin ? (['platform'] as const) : (['write'] as const);
      keys.set(person.role, (await createKey(database.db, person.userId, { scopes: [...scopes], expiresAt: new Date(Math.max(Date.now(), now.getTime()) + 86_400_000) })).key);
    }
    app = await startTestApp({ database, now: () => now });
    const key = keys.get('ORG_OWNER')!;
    const orgs = (await get(app, '/v1/orgs', key)).data;
    expect(orgs).toHaveLength(1);
    const orgId = orgs[0].id;
    const teams = [];
    for (const team of (await get(app, `/v1/orgs/${orgId}/teams`, key)).data) teams.push(await readTeam(app, team, key));
    world = {
      now,
      demo,
      keys,
      organization: await get(app, `/v1/orgs/${orgId}`, key),
      orgMembers: await all(app, `/v1/orgs/${orgId}/members`, key),
      teams,
      companyGoals: await all(app, `/v1/orgs/${orgId}/goals`, key),
      platformUsers: await all(app, '/v1/platform/users', keys.get('SUPERADMIN')!),
      rows,
      instants,
    };
  }, 180_000);

  afterAll(() => app?.close());

  it('GET /orgs/{orgId}/teams lists the Leadership Team first, the team seed-demo names to start from', async () => {
    const teams = await get(app, `/v1/orgs/${world.organization.id}/teams`, world.keys.get('ORG_OWNER')!);
    expect(teams.data[0]).toMatchObject({ id: world.demo.firstTeam.id, name: world.demo.firstTeam.name, isLeadership: true });
    expect(world.demo.organizationId).toBe(world.organization.id);
  });

  it('the first team every demo person lists has to-dos, issues, goals with milestones, a Scorecard with values and rated meetings', async () => {
    const roles = world.demo.people.filter((person) => !person.superadmin).map((person) => person.role);
    expect(roles).toHaveLength(7);
    for (const role of roles) {
      const key = world.keys.get(role)!;
      const [org] = (await get(app, '/v1/orgs', key)).data;
      const [first] = (await get(app, `/v1/orgs/${org.id}/teams`, key)).data;
      const base = `/v1/teams/${first.id}`;
      const scorecard = await get(app, `${base}/scorecard`, key);
      const meetings = await all(app, `${base}/meetings`, key);
      const goals = await all(app, `${base}/goals`, key);
      expect((await all(app, `${base}/tasks`, key)).length, `${role}: to-dos`).toBeGreaterThan(0);
      expect((await all(app, `${base}/issues`, key)).length, `${role}: issues`).toBeGreaterThan(0);
      expect(goals.some((goal: Json) => goal.milestones.length > 0), `${role}: goals with milestones`).toBe(true);
      expect(scorecard.metrics.length, `${role}: metrics`).toBeGreaterThan(0);
      expect(scorecard.metrics.every((metric: Json) => metric.values.length > 0), `${role}: values in the Scorecard's weeks`).toBe(true);
      expect(meetings.some((meeting: Json) => meeting.rating.ratedCount > 0), `${role}: rated meetings`).toBe(true);
    }
  });

  it('the Leadership Team has content in every area, meetings in every status and the company goals', () => {
    const leadership = teamOf(world, world.demo.firstTeam.id);
    const meetingIds = new Set(leadership.meetings.map((meeting) => meeting.id));
    const inMeetings = (table: 'segues' | 'headlines' | 'cascading_messages' | 'meeting_ratings') =>
      rowsOf(world, table).filter((row) => meetingIds.has(row.meeting_id));
    expect(new Set(leadership.meetings.map((meeting) => meeting.status))).toEqual(new Set(['SCHEDULED', 'IN_PROGRESS', 'COMPLETED']));
    for (const status of ['IN_PROGRESS', 'COMPLETED']) {
      const rated = leadership.meetings.filter((meeting) => meeting.status === status && inMeetings('meeting_ratings').some((row) => row.meeting_id === meeting.id));
      expect(rated.length, `${status} meetings with ratings`).toBeGreaterThan(0);
    }
    expect(new Set(leadership.tasks.map((task) => task.completed))).toEqual(new Set([true, false]));
    expect(new Set(leadership.issues.map((issue) => issue.status))).toEqual(new Set(['OPEN', 'SOLVING', 'SOLVED']));
    expect(leadership.goals.filter((goal) => goal.level === 'COMPANY' && goal.milestones.length > 0).length).toBeGreaterThan(0);
    expect(world.companyGoals.length).toBeGreaterThan(0);
    expect([...leadership.values.values()].every((values) => values.length > 0)).toBe(true);
    expect(leadership.metrics.length).toBeGreaterThan(0);
    expect(leadership.scorecard.metrics.every((metric: Json) => metric.values.length > 0)).toBe(true);
    expect(leadership.vision).not.toBeNull();
    expect(leadership.seats.length).toBeGreaterThan(0);
    expect(leadership.reviews.length).toBeGreaterThan(0);
    expect(leadership.documents.length).toBeGreaterThan(0);
    for (const table of ['segues', 'headlines', 'cascading_messages'] as const) expect(inMeetings(table).length, table).toBeGreaterThan(0);
  });

  it('the API shows every seeded record', () => {
    const count = (pick: (view: TeamView) => number) => world.teams.reduce((sum, view) => sum + pick(view), 0);
    const details = world.teams.flatMap((view) => view.meetings);
    expect(world.teams.map((view) => view.team.id).sort()).toEqual(rowsOf(world, 'teams').map((row) => row.id).sort());
    expect(world.orgMembers).toHaveLength(rowsOf(world, 'organization_members').filter((row) => row.org_id === world.organization.id).length);
    expect(count((view) => view.members.length)).toBe(rowsOf(world, 'team_members').length);
    expect(count((view) => view.tasks.length)).toBe(rowsOf(world, 'tasks').length);
    expect(count((view) => view.issues.length)).toBe(rowsOf(world, 'issues').length);
    expect(count((view) => view.goals.length)).toBe(rowsOf(world, 'goals').length);
    expect(count((view) => view.goals.reduce((sum: number, goal: Json) => sum + goal.milestones.length, 0))).toBe(rowsOf(world, 'milestones').length);
    expect(count((view) => view.metrics.length)).toBe(rowsOf(world, 'metrics').length);
    expect(count((view) => [...view.values.values()].reduce((sum, values) => sum + values.length, 0))).toBe(rowsOf(world, 'metric_values').length);
    expect(details).toHaveLength(rowsOf(world, 'meetings').length);
    expect(details.reduce((sum, meeting) => sum + meeting.segues.length, 0)).toBe(rowsOf(world, 'segues').length);
    expect(details.reduce((sum, meeting) => sum + meeting.headlines.length, 0)).toBe(rowsOf(world, 'headlines').length);
    expect(details.reduce((sum, meeting) => sum + meeting.messages.length, 0)).toBe(rowsOf(world, 'cascading_messages').length);
    expect(count((view) => (view.vision === null ? 0 : 1))).toBe(rowsOf(world, 'visions').length);
    expect(count((view) => view.seats.length)).toBe(rowsOf(world, 'seats').length);
    expect(count((view) => view.reviews.length)).toBe(rowsOf(world, 'people_reviews').length);
    expect(count((view) => view.documents.length)).toBe(rowsOf(world, 'documents').length);
    expect(world.platformUsers).toHaveLength(rowsOf(world, 'users').length);
  });

  it('every stored instant lies between the first account\'s creation and now, and nothing changed before it was created', () => {
    const origin = Math.min(...rowsOf(world, 'users').map((row) => at(row.created_at)));
    // A key's expiry lies ahead by nature (the demo's one key is the Owner's old one, for a docs sample to revoke), as
    // does the purge of the demo's export.
    const ahead = (range: { table: string; column: string }) => range.column === 'expires_at' && (range.table === 'api_keys' || range.table === 'org_exports');
    const seeded = world.instants.filter((range) => range.latest !== null && !ahead(range));
    expect(seeded.map((range) => range.table)).toEqual(expect.arrayContaining([...TABLES]));
    for (const range of seeded) {
      expect(at(range.latest!), `${range.table}.${range.column} not after now`).toBeLessThanOrEqual(at(world.now));
      expect(at(range.earliest!), `${range.table}.${range.column} not before the first account`).toBeGreaterThanOrEqual(origin);
    }
    for (const table of ['meeting_ratings', 'metric_values', 'visions', 'people_reviews'] as const) {
      for (const row of rowsOf(world, table)) expect(at(row.updated_at), table).toBeGreaterThanOrEqual(at(row.created_at));
    }
  });

  it('members joined after their account, organization and team existed, and every team member belongs to the organization', () => {
    const created = (table: 'users' | 'organizations' | 'teams', id: string) => at(rowById(world, table, id).created_at);
    for (const member of rowsOf(world, 'organization_members')) {
      expect(at(member.joined_at)).toBeGreaterThanOrEqual(Math.max(created('users', member.user_id), created('organizations', member.org_id)));
    }
    for (const member of rowsOf(world, 'team_members')) {
      const orgMember = rowsOf(world, 'organization_members').find((row) => row.user_id === member.user_id);
      expect(orgMember, `team member ${member.user_id} is in the organization`).toBeDefined();
      expect(at(member.joined_at)).toBeGreaterThanOrEqual(Math.max(at(orgMember.joined_at), created('teams', member.team_id)));
    }
    for (const team of rowsOf(world, 'teams')) expect(at(team.created_at)).toBeGreaterThanOrEqual(created('organizations', team.org_id));
  });

  it('slugs are unique and made from the names as the API makes them', () => {
    // Northwind, and the platform's other organization that a docs sample suspends.
    expect(rowsOf(world, 'organizations').map((row) => row.slug).sort()).toEqual(['northwind-logistics', 'tatra-outfitters']);
    for (const row of rowsOf(world, 'organizations')) expect(row.slug).toBe(slugify(row.name, 'organization'));
    const slugs = world.teams.map((view) => view.team.slug);
    expect(new Set(slugs).size).toBe(slugs.length);
    for (const view of world.teams) expect(view.team.slug).toBe(slugify(view.team.name, 'team'));
  });

  it('to-dos: completedAt exactly when completed and after creation, owners in the team, meetings of the same team that ran when the to-do was entered', () => {
    for (const view of world.teams) {
      const meetingIds = new Set(view.meetings.map((meeting) => meeting.id));
      for (const task of view.tasks) {
        expect(task.completedAt !== null, task.title).toBe(task.completed);
        if (task.completed) expect(at(task.completedAt), task.title).toBeGreaterThanOrEqual(at(task.createdAt));
        expect(isTeamMember(world, view.team.id, task.ownerId), task.title).toBe(true);
        expect(task.dueDate >= dayInTimeZone(new Date(task.createdAt), DEMO_TIME_ZONE), `${task.title}: due after it was entered`).toBe(true);
        if (task.meetingId !== null) {
          expect(meetingIds.has(task.meetingId), task.title).toBe(true);
          const span = meetingSpan(world, task.meetingId);
          expect(at(task.createdAt), task.title).toBeGreaterThanOrEqual(span.start);
          expect(at(task.createdAt), task.title).toBeLessThanOrEqual(span.end);
        }
      }
    }
  });

  it('issues: resolvedAt only on SOLVED issues and after creation, authors who may write in the team, meetings of the same team that ran when the issue was raised', () => {
    for (const view of world.teams) {
      const meetingIds = new Set(view.meetings.map((meeting) => meeting.id));
      for (const issue of view.issues) {
        expect(issue.resolvedAt !== null, issue.title).toBe(issue.status === 'SOLVED');
        if (issue.resolvedAt !== null) {
          expect(at(issue.resolvedAt), issue.title).toBeGreaterThanOrEqual(at(issue.createdAt));
          expect(at(issue.resolvedAt), issue.title).toBeLessThanOrEqual(at(world.now));
        }
        expect(mayWrite(world, view.team.id, issue.createdById), issue.title).toBe(true);
        if (issue.meetingId !== null) {
          expect(meetingIds.has(issue.meetingId), issue.title).toBe(true);
          const span = meetingSpan(world, issue.meetingId);
          expect(at(issue.createdAt), issue.title).toBeGreaterThanOrEqual(span.start);
          expect(at(issue.createdAt), issue.title).toBeLessThanOrEqual(span.end);
        }
      }
    }
  });

  it('goals: owners in the team, valid quarters, company goals only in leadership teams and all of them listed for the organization, milestones due in their quarter', () => {
    const leadershipTeams = new Set(world.teams.filter((view) => view.team.isLeadership).map((view) => view.team.id));
    const companyGoals = world.teams.flatMap((view) => view.goals.filter((goal) => goal.level === 'COMPANY'));
    expect(world.companyGoals.map((goal) => goal.id).sort()).toEqual(companyGoals.map((goal) => goal.id).sort());
    for (const view of world.teams) {
      for (const goal of view.goals) {
        expect(isTeamMember(world, view.team.id, goal.ownerId), goal.title).toBe(true);
        expect(isQuarter(goal.quarter), goal.title).toBe(true);
        if (goal.level === 'COMPANY') expect(leadershipTeams.has(view.team.id), goal.title).toBe(true);
        expect(rowById(world, 'goals', goal.id).org_id).toBe(world.organization.id);
        if (goal.status === 'DONE') expect(goal.milestones.every((milestone: Json) => milestone.completed), goal.title).toBe(true);
        for (const milestone of goal.milestones) {
          if (milestone.dueDate !== null) expect(quarterOfDay(milestone.dueDate), milestone.title).toBe(goal.quarter);
          expect(at(rowById(world, 'milestones', milestone.id).created_at)).toBeGreaterThanOrEqual(at(goal.createdAt));
        }
      }
    }
  });

  it('metrics: owners in the team, values for begun weeks on Mondays, entered by people who may write there, after the metric and the week began, judged as the API judges them', () => {
    const currentWeek = currentWeekMonday(world.now, DEMO_TIME_ZONE);
    for (const view of world.teams) {
      expect(view.metrics.map((metric) => metric.position)).toEqual(view.metrics.map((_, index) => index + 1));
      for (const metric of view.metrics) {
        expect(isTeamMember(world, view.team.id, metric.ownerId), metric.title).toBe(true);
        const metricCreated = at(rowById(world, 'metrics', metric.id).created_at);
        for (const value of view.values.get(metric.id)!) {
          const label = `${metric.title} ${value.week}`;
          expect(isMonday(value.week), label).toBe(true);
          expect(value.week <= currentWeek, label).toBe(true);
          expect(mayWrite(world, view.team.id, value.enteredById), label).toBe(true);
          const row = rowsOf(world, 'metric_values').find((candidate) => candidate.metric_id === metric.id && candidate.week === value.week);
          expect(at(row.created_at), label).toBeGreaterThanOrEqual(metricCreated);
          expect(dayInTimeZone(row.created_at, DEMO_TIME_ZONE) >= value.week, label).toBe(true);
          const judged = judgeValue(value.value, metric.goal);
          if (judged !== null) expect(value.onTrack, label).toBe(judged);
        }
      }
    }
  });

  it('meetings: SCHEDULED in the future without times, IN_PROGRESS started by now without an end, COMPLETED ended durationMin after the start, on the start\'s day, created by a team Admin', () => {
    for (const view of world.teams) {
      for (const meeting of view.meetings) {
        const row = rowById(world, 'meetings', meeting.id);
        const label = `${view.team.name} ${meeting.status} ${meeting.date}`;
        expect(mayManage(world, view.team.id, meeting.createdById), label).toBe(true);
        if (meeting.status === 'SCHEDULED') {
          expect([meeting.startedAt, meeting.endedAt, meeting.durationMin], label).toEqual([null, null, null]);
          expect(meeting.date >= today, label).toBe(true);
          continue;
        }
        const creatorZone = rowById(world, 'users', meeting.createdById).timezone ?? world.organization.timezone;
        expect(meeting.date, label).toBe(dayInTimeZone(new Date(meeting.startedAt), creatorZone));
        expect(at(meeting.startedAt), label).toBeLessThanOrEqual(at(world.now));
        if (meeting.status === 'IN_PROGRESS') {
          expect([meeting.endedAt, meeting.durationMin], label).toEqual([null, null]);
        } else {
          expect(at(meeting.endedAt), label).toBeLessThanOrEqual(at(world.now));
          expect(meeting.durationMin, label).toBe(minutesBetween(new Date(meeting.startedAt), new Date(meeting.endedAt)));
          expect(meeting.durationMin, label).toBeGreaterThanOrEqual(1);
          expect(meeting.durationMin, label).toBeLessThanOrEqual(600);
        }
        if (row.ratings_revealed_at !== null) {
          expect(at(row.ratings_revealed_at), label).toBeGreaterThanOrEqual(at(meeting.startedAt));
          expect(at(row.ratings_revealed_at), label).toBeLessThanOrEqual(meetingSpan(world, meeting.id).end);
        }
      }
    }
  });

  it('ratings: only on started meetings, by members of the meeting\'s team who rate, 1-10 or absent with 0, given inside the self-rating window', () => {
    const ratings = rowsOf(world, 'meeting_ratings');
    expect(ratings.length).toBeGreaterThan(0);
    for (const rating of ratings) {
      const meeting = rowById(world, 'meetings', rating.meeting_id);
      const detail = teamOf(world, meeting.team_id).meetings.find((candidate) => candidate.id === meeting.id);
      const label = `${meeting.date} rating of ${rating.user_id}`;
      expect(meeting.status, label).not.toBe('SCHEDULED');
      expect(['ADMIN', 'MEMBER', 'OWNER']).toContain(teamOf(world, meeting.team_id).members.find((member) => member.userId === rating.user_id)?.role);
      if (rating.absent) expect(rating.rating, label).toBe(0);
      else expect(rating.rating >= 1 && rating.rating <= 10 && Number.isInteger(rating.rating), label).toBe(true);
      const opensAt = Math.max(at(meeting.started_at), at(meeting.created_at));
      for (const given of [rating.created_at, rating.updated_at]) {
        expect(at(given), label).toBeGreaterThanOrEqual(opensAt);
        expect(at(given), label).toBeLessThan(at(detail.ratingWindow.closesAt));
      }
    }
    for (const meeting of world.teams.flatMap((view) => view.meetings)) {
      if (meeting.status === 'COMPLETED') {
        const given = ratings.filter((rating) => rating.meeting_id === meeting.id);
        expect(meeting.rating).toMatchObject({ ratedCount: given.filter((rating) => !rating.absent).length, absentCount: given.filter((rating) => rating.absent).length });
      }
    }
  });

  it('segues, headlines and cascading messages: by people who may write in the team, entered while their meeting ran; messages read by organization members after they were sent', () => {
    for (const view of world.teams) {
      for (const meeting of view.meetings) {
        for (const entry of [...meeting.segues, ...meeting.headlines, ...meeting.messages]) {
          const label = `${view.team.name} ${meeting.date}: ${entry.content}`;
          expect(mayWrite(world, view.team.id, entry.userId), label).toBe(true);
          const span = meetingSpan(world, meeting.id);
          expect(at(entry.createdAt), label).toBeGreaterThanOrEqual(span.start);
          expect(at(entry.createdAt), label).toBeLessThanOrEqual(span.end);
        }
      }
    }
    for (const message of rowsOf(world, 'cascading_messages')) {
      expect(message.org_id).toBe(rowById(world, 'teams', rowById(world, 'meetings', message.meeting_id).team_id).org_id);
    }
    for (const read of rowsOf(world, 'message_acknowledgements')) {
      expect(world.orgMembers.some((member) => member.userId === read.user_id)).toBe(true);
      expect(at(read.acknowledged_at)).toBeGreaterThanOrEqual(at(rowById(world, 'cascading_messages', read.message_id).created_at));
    }
  });

  it('accountability chart, people reviews and documents: people of the team, parents in the same team, valid quarters, links added by people who may write there', () => {
    for (const view of world.teams) {
      const seatIds = new Set(view.seats.map((seat) => seat.id));
      for (const seat of view.seats) {
        if (seat.userId !== null) expect(isTeamMember(world, view.team.id, seat.userId), seat.title).toBe(true);
        if (seat.parentId !== null) expect(seatIds.has(seat.parentId), seat.title).toBe(true);
      }
      for (const review of view.reviews) {
        expect(isTeamMember(world, view.team.id, review.userId)).toBe(true);
        expect(isTeamMember(world, view.team.id, review.evaluatorId)).toBe(true);
        expect(mayWrite(world, view.team.id, review.evaluatorId)).toBe(true);
        expect(isQuarter(review.quarter)).toBe(true);
        expect(Object.keys(review.gwc).sort()).toEqual(['capacityToDoIt', 'getsIt', 'wantsIt']);
        expect(Object.keys(review.coreValuesScores).length).toBeLessThanOrEqual(50);
      }
      for (const document of view.documents) {
        expect(document.type).toBe('LINK');
        expect(document.url).toMatch(/^https?:\/\/[^\s/]+/);
        expect(mayWrite(world, view.team.id, document.createdById), document.name).toBe(true);
      }
    }
  });

  it('every text is trimmed and within the reference\'s limits', () => {
    const texts: [string, string | null, number, number][] = [[`organization name`, world.organization.name, 1, 200]];
    for (const user of world.platformUsers) texts.push(['member name', user.name, 1, 200]);
    for (const view of world.teams) {
      texts.push(['team name', view.team.name, 1, 100]);
      for (const task of view.tasks) texts.push(['task title', task.title, 1, 500]);
      for (const issue of view.issues) texts.push(['issue title', issue.title, 1, 500], ['issue description', issue.description, 0, 5000]);
      for (const goal of view.goals) {
        texts.push(['goal title', goal.title, 1, 300], ['goal description', goal.description, 0, 5000]);
        for (const milestone of goal.milestones) texts.push(['milestone title', milestone.title, 1, 300]);
      }
      for (const metric of view.metrics) {
        texts.push(['metric title', metric.title, 1, 200], ['metric goal', metric.goal, 1, 200]);
        texts.push(['metric unit', metric.unit, 0, 20], ['metric description', metric.description, 0, 5000]);
        for (const value of view.values.get(metric.id)!) texts.push(['metric value', value.value, 1, 50]);
      }
      for (const meeting of view.meetings) {
        texts.push(['meeting notes', meeting.notes, 0, 20000]);
        for (const entry of [...meeting.segues, ...meeting.headlines, ...meeting.messages]) texts.push(['meeting entry', entry.content, 1, 1000]);
      }
      for (const seat of view.seats) texts.push(['seat title', seat.title, 1, 200], ['seat responsibilities', seat.responsibilities, 0, 5000]);
      for (const review of view.reviews) {
        texts.push(['review notes', review.notes, 0, 5000]);
        for (const name of Object.keys(review.coreValuesScores)) texts.push(['core value name', name, 1, 200]);
      }
      for (const document of view.documents) texts.push(['document name', document.name, 1, 200], ['document url', document.url, 1, 2000]);
    }
    for (const [what, text, min, max] of texts) {
      if (text === null) continue;
      expect(text, what).toBe(text.trim());
      expect(length(text), `${what}: ${text}`).toBeGreaterThanOrEqual(min);
      expect(length(text), `${what}: ${text}`).toBeLessThanOrEqual(max);
    }
  });

  it('the vision has every field in its shape and within its limits', () => {
    const visions = world.teams.flatMap((view) => (view.vision === null ? [] : [view.vision]));
    expect(visions.length).toBeGreaterThan(0);
    const list = (value: Json) => {
      expect(Array.isArray(value) && value.length <= 100).toBe(true);
      for (const item of value) expect(typeof item === 'string' && item === item.trim() && length(item) >= 1 && length(item) <= 1000).toBe(true);
    };
    for (const vision of visions) {
      for (const field of ['coreValues', 'quarterlyRocks', 'issuesList']) list(vision[field]);
      for (const field of ['coreFocus', 'marketingStrategy']) {
        const entries = Object.entries(vision[field]);
        expect(entries.length).toBeLessThanOrEqual(30);
        for (const [name, value] of entries) {
          expect(length(name) >= 1 && length(name) <= 100).toBe(true);
          if (typeof value === 'string') expect(length(value)).toBeLessThanOrEqual(5000);
          else list(value);
        }
      }
      for (const field of ['tenYearTarget', 'threeYearPicture', 'oneYearPlan']) expect(typeof vision[field]).toBe('string');
      const row = rowsOf(world, 'visions').find((candidate) => candidate.id === vision.id);
      for (const column of ['core_values', 'core_focus', 'ten_year_target', 'marketing_strategy', 'three_year_picture', 'one_year_plan', 'quarterly_rocks', 'issues_list']) {
        expect(length(row[column])).toBeLessThanOrEqual(20_000);
      }
    }
  });
});

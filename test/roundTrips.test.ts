/**
 * The round-trip budget: how many statements each operation sends to the database, counted with a
 * query hook on the app's database connection — a count, never a time, so a regression (a query per
 * item, a lost join) fails CI whatever the machine. Every operation is called once, by the matrix
 * row's first allowed caller, on the matrix's world, with the caller already kept in memory (a
 * `GET /me` just before, not counted): the budget is that of a known caller, and a caller read anew
 * costs one statement more (the last test). Recording a key's use (`last_used_at`, written in the
 * background at most once a minute per key) is not part of a request's budget.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationId } from '../src/api/operations.js';
import type { PublicOperationId } from '../src/handlers/types.js';
import { databaseLabel, createTestDatabase, type TestDatabase } from './support/database.js';
import { operations } from './support/contract.js';
import { startTestApp, type TestApp } from './support/testApp.js';
import { allowedCaller, callerNames, createWorld, type World } from './permissions/world.js';
import { matrixRows } from './permissions/rows.js';
import { createPeopleReview, createWebhook } from './support/areaFactories.js';
import { createKey } from './support/factories.js';

/**
 * Statements per operation, for a caller kept in memory: authentication sends none (`GET /me` and
 * the caller's own organizations answer from it); a single item or a page of a list, read with the
 * caller's access to it, one (lists whose visible rows depend on the caller's role, such as people
 * reviews, read the access first); a change runs its statements in at most one transaction
 * (`begin` and `commit` count as statements), and writes its events in it: one statement, and one
 * more before a deletion to find where the deleted row lived. A change whose handler writes its own
 * event (tasks, issues) is one statement: its access check, its rules, the
 * change and its event together, without `begin` or `commit`.
 */
type Budget = Record<Exclude<OperationId, PublicOperationId>, number>;

// prettier-ignore
const budget: Budget = {
  getMe: 0,
  listOrganizations: 0,
  getOrganization: 0,
  updateOrganization: 4,
  listOrganizationMembers: 1,
  addOrganizationMember: 7,
  updateOrganizationMember: 6,
  removeOrganizationMember: 7,
  listOrganizationTeams: 1,
  createTeam: 6,
  getTeam: 1,
  updateTeam: 6,
  deleteTeam: 6,
  listTeamMembers: 2,
  // One read-only transaction (its start and commit): the team with the caller's role, the log's end, one
  // statement per part (goals, issues and tasks two each), each part below SNAPSHOT_BATCH records here.
  getTeamSnapshot: 17,
  addTeamMember: 7,
  updateTeamMember: 6,
  removeTeamMember: 6,
  listPlatformOrganizations: 1,
  createPlatformOrganization: 7,
  updatePlatformOrganization: 4,
  listPlatformUsers: 1,
  listPlatformUserApiKeys: 2,
  revokePlatformApiKey: 1,
  getPlatformAiConfig: 2,
  putPlatformAiProvider: 1,
  updatePlatformAiProvider: 1,
  deletePlatformAiProvider: 5,
  putPlatformAiPrompt: 4,
  deletePlatformAiPrompt: 1,
  listTeamTasks: 1,
  createTask: 1,
  getTask: 1,
  updateTask: 1,
  deleteTask: 1,
  listTeamIssues: 1,
  createIssue: 1,
  getIssue: 1,
  updateIssue: 1,
  deleteIssue: 1,
  listTeamGoals: 1,
  listOrganizationGoals: 1,
  createGoal: 6,
  getGoal: 1,
  updateGoal: 5,
  deleteGoal: 6,
  // A milestone changes its goal: the goal's read for its goal.updated (its events written in one statement);
  // a deleted milestone's goal is looked up with the milestone, in the same statement.
  createMilestone: 6,
  updateMilestone: 6,
  deleteMilestone: 7,
  listTeamMetrics: 1,
  getTeamScorecard: 1,
  createMetric: 7,
  updateMetric: 7,
  deleteMetric: 8,
  listMetricValues: 2,
  putMetricValue: 5,
  putScorecardWeek: 6,
  listTeamMeetings: 1,
  // The meeting's own read, in the create's transaction, for the ETag a GET answers (MeetingDetail, not Meeting).
  createMeeting: 6,
  getMeeting: 1,
  updateMeeting: 6,
  getMeetingRecap: 1,
  // A rating, segue, headline or message changes its meeting: the meeting's read for its meeting.updated.
  rateMeetingAsMe: 6,
  setMeetingRating: 7,
  revealMeetingRatings: 6,
  createSegue: 6,
  createHeadline: 6,
  createCascadingMessage: 6,
  deleteCascadingMessage: 7,
  acknowledgeCascadingMessages: 6,
  listTeamDocuments: 1,
  createDocument: 5,
  deleteDocument: 6,
  listTeamPeopleReviews: 2,
  putPeopleReview: 6,
  listTeamSeats: 2,
  createSeat: 7,
  updateSeat: 5,
  deleteSeat: 6,
  getTeamVision: 2,
  createTeamVision: 6,
  updateTeamVision: 5,
  listWebhooks: 1,
  // The subscription's own read, in the create's transaction, for the ETag a GET answers (without the secret).
  createWebhook: 7,
  getWebhook: 1,
  updateWebhook: 2,
  deleteWebhook: 2,
  pingWebhook: 3,
  rotateWebhookSecret: 2,
  listWebhookDeliveries: 2,
  redeliverWebhookDelivery: 3,
  listOrganizationEvents: 1,
  getEvent: 1,
  listTeamEvents: 2,
  // The caller's teams, the log's end; the stream then reads with every other stream of the process.
  streamEvents: 2,
  startOrgExport: 1,
  getOrgExport: 1,
  // The export, its files; then its chunks a few at a time (one read for a small archive).
  downloadOrgExport: 3,
  exportTeamTasks: 1,
  exportTeamIssues: 1,
  exportTeamGoals: 1,
  exportTeamScorecard: 2,
  importTeamTasks: 7,
  importTeamIssues: 7,
  importTeamScorecard: 6,
};

let statements: string[] | undefined;
let database: TestDatabase;
let app: TestApp;
let world: World;
beforeAll(async () => {
  database = await createTestDatabase({ onQuery: (sql) => statements?.push(sql) });
  // Nothing that belongs to the process, not to a request, may land in a counted window: the live streams'
  // shared read, the refresh of the log's end that reads state (Log-Position), and the caller cache's fallback
  // to reading every caller when its listening connection seems silent (on two busy cores a heartbeat can
  // come later than 2 s).
  app = await startTestApp({ database, live: { pollMs: 60_000 }, logPositions: { refreshMs: 60_000 }, callerCache: { silenceMs: 60_000 } });
  world = await createWorld(app.db);
  // The world has something in every list (an empty page costs one more statement, src/auth/access.ts).
  await createPeopleReview(app.db, world.team.id, world.users.teamMember.id, world.users.teamAdmin.id);
});
afterAll(async () => {
  await app.close();
  await database.close();
});

/**
 * Has the app keep the key's caller in memory, as after any earlier request of that key: until a request of
 * it reads nothing. A notification of the row's preparation (a membership, a key) may reach the caller cache
 * only after the first request and forget the caller again; on two busy cores that took longer than one request.
 */
async function warm(key: string) {
  for (let attempt = 0; ; attempt += 1) {
    statements = [];
    expect((await app.request('GET', '/v1/me', { key })).status).toBe(200);
    const read = statements.filter((sql) => !isKeyUse(sql)).length;
    statements = undefined;
    if (read === 0 || attempt === 20) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const isKeyUse = (sql: string) => /^update "api_keys" set "last_used_at"/.test(sql);
const methodOf = (operationId: OperationId) => operations.find((op) => op.operationId === operationId)!.method.toUpperCase();

describe(`the round-trip budget of every operation (${databaseLabel})`, () => {
  // Each operation's main row: its variants (such as a target that is absent) are refusals.
  const mainRows = matrixRows.filter((row) => row.variant === undefined);
  it.each(mainRows.map((row) => [row.operationId, row] as const))('%s', async (operationId, row) => {
    const caller = allowedCaller(row);
    const allowed = callerNames.indexOf(caller);
    const target = row.prepare ? await row.prepare(world) : undefined;
    const { path, body } = row.request(world, target);

    await warm(world.keys[caller]!);
    statements = [];
    const response = await app.request(methodOf(operationId), path, { key: world.keys[caller], body });
    const counted = statements.filter((sql) => !isKeyUse(sql));
    statements = undefined;

    expect(response.status, JSON.stringify(response.body)).toBe(row.expect[allowed]);
    const transactions = counted.filter((sql) => /^begin/i.test(sql)).length;
    // A read runs without a transaction, but the snapshot: it reads everything in one, read-only.
    expect(transactions, counted.join('\n')).toBeLessThanOrEqual(methodOf(operationId) === 'GET' && operationId !== 'getTeamSnapshot' ? 0 : 1);
    expect(counted.length, counted.join('\n')).toBe(budget[operationId as keyof typeof budget]);
  });
});

describe(`the round trips a webhook subscription adds to a change: none (${databaseLabel})`, () => {
  // Measured on a world of its own, so that its subscription changes nothing for the budget above.
  let subscribed: World;
  beforeAll(async () => {
    subscribed = await createWorld(app.db);
    await createWebhook(app.db, subscribed.org.id, { events: ['*'] });
  });

  const cases: OperationId[] = ['createTask', 'updateTask', 'deleteTask', 'updateIssue', 'createCascadingMessage'];
  it.each(cases)('%s writes its event and nothing else: no delivery, no subscription lookup, no notification', async (operationId) => {
    const row = matrixRows.find((candidate) => candidate.operationId === operationId && candidate.variant === undefined)!;
    const allowed = callerNames.indexOf(allowedCaller(row));
    const target = row.prepare ? await row.prepare(subscribed) : undefined;
    const { path, body } = row.request(subscribed, target);

    await warm(subscribed.keys[callerNames[allowed]!]!);
    statements = [];
    const response = await app.request(methodOf(operationId), path, { key: subscribed.keys[callerNames[allowed]!], body });
    const counted = statements.filter((sql) => !isKeyUse(sql));
    statements = undefined;

    expect(response.status, JSON.stringify(response.body)).toBe(row.expect[allowed]);
    expect(counted.filter((sql) => /insert into webhook_events/.test(sql)), counted.join('\n')).toHaveLength(1);
    expect(counted.filter((sql) => /webhook_deliveries|webhook_subscriptions|pg_notify/.test(sql)), counted.join('\n')).toEqual([]);
    expect(counted.length, counted.join('\n')).toBe(budget[operationId as keyof typeof budget]);
  });
});

describe(`a caller read anew costs one statement: the key's lookup (${databaseLabel})`, () => {
  it('GET /me sends one statement for a key whose caller is not kept yet, and none once it is', async () => {
    const { key } = await createKey(app.db, world.users.orgOwner.id);

    statements = [];
    expect((await app.request('GET', '/v1/me', { key })).status).toBe(200);
    const first = statements.filter((sql) => !isKeyUse(sql));
    statements = [];
    expect((await app.request('GET', '/v1/me', { key })).status).toBe(200);
    const second = statements.filter((sql) => !isKeyUse(sql));
    statements = undefined;

    expect(first, first.join('\n')).toHaveLength(1);
    expect(first[0]).toMatch(/from "api_keys"/);
    expect(second, second.join('\n')).toEqual([]);
  });
});

/**
 * The round-trip budget: how many statements each operation sends to the database, counted with a
 * query hook on the app's database connection — a count, never a time, so a regression (a query per
 * item, a lost join) fails CI whatever the machine. Every operation is called once, by the matrix
 * row's first allowed caller, on the matrix's world. Recording a key's use (`last_used_at`, written
 * in the background at most once a minute per key) is not part of a request's budget.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationId } from '../src/api/operations.js';
import { databaseLabel, createTestDatabase, type TestDatabase } from './support/database.js';
import { operations } from './support/contract.js';
import { startTestApp, type TestApp } from './support/testApp.js';
import { callerNames, createWorld, type World } from './permissions/world.js';
import { matrixRows } from './permissions/rows.js';
import { createPeopleReview, createWebhook } from './support/areaFactories.js';

/**
 * Statements per operation: authentication is one; a single item or a page of a list, read with the
 * caller's access to it, one more (lists whose visible rows depend on the caller's role, such as
 * people reviews, read the access first); a change runs its statements in at most one transaction
 * (`begin` and `commit` count as statements), and writes its events in it: one statement, and one
 * more before a deletion to find where the deleted row lived. A change whose handler writes its own
 * event (tasks, issues) is one statement after authentication: its access check, its rules, the
 * change and its event together, without `begin` or `commit`.
 */
// prettier-ignore
const budget: Record<Exclude<OperationId, 'getOpenApiDocument' | 'getApiDocs'>, number> = {
  getMe: 1,
  listOrganizations: 1,
  getOrganization: 1,
  updateOrganization: 5,
  listOrganizationMembers: 2,
  addOrganizationMember: 8,
  updateOrganizationMember: 7,
  removeOrganizationMember: 8,
  listOrganizationTeams: 2,
  createTeam: 7,
  getTeam: 2,
  updateTeam: 7,
  deleteTeam: 7,
  listTeamMembers: 3,
  addTeamMember: 8,
  updateTeamMember: 7,
  removeTeamMember: 7,
  listPlatformOrganizations: 2,
  createPlatformOrganization: 8,
  updatePlatformOrganization: 5,
  listPlatformUsers: 2,
  listPlatformUserApiKeys: 3,
  revokePlatformApiKey: 2,
  getPlatformAiConfig: 3,
  putPlatformAiProvider: 2,
  updatePlatformAiProvider: 2,
  deletePlatformAiProvider: 6,
  putPlatformAiPrompt: 5,
  deletePlatformAiPrompt: 2,
  listTeamTasks: 2,
  createTask: 2,
  getTask: 2,
  updateTask: 2,
  deleteTask: 2,
  listTeamIssues: 2,
  createIssue: 2,
  getIssue: 2,
  updateIssue: 2,
  deleteIssue: 2,
  listTeamGoals: 2,
  listOrganizationGoals: 2,
  createGoal: 7,
  getGoal: 2,
  updateGoal: 6,
  deleteGoal: 7,
  createMilestone: 6,
  updateMilestone: 6,
  deleteMilestone: 7,
  listTeamMetrics: 2,
  getTeamScorecard: 2,
  createMetric: 8,
  updateMetric: 8,
  deleteMetric: 9,
  listMetricValues: 3,
  putMetricValue: 6,
  listTeamMeetings: 2,
  createMeeting: 6,
  getMeeting: 2,
  updateMeeting: 7,
  getMeetingRecap: 2,
  rateMeetingAsMe: 6,
  setMeetingRating: 7,
  revealMeetingRatings: 7,
  createSegue: 6,
  createHeadline: 6,
  createCascadingMessage: 6,
  deleteCascadingMessage: 7,
  acknowledgeCascadingMessages: 7,
  listTeamDocuments: 2,
  createDocument: 6,
  deleteDocument: 7,
  listTeamPeopleReviews: 3,
  putPeopleReview: 7,
  listTeamSeats: 3,
  createSeat: 8,
  updateSeat: 6,
  deleteSeat: 7,
  getTeamVision: 3,
  createTeamVision: 7,
  updateTeamVision: 6,
  listWebhooks: 2,
  createWebhook: 7,
  getWebhook: 2,
  updateWebhook: 3,
  deleteWebhook: 3,
  pingWebhook: 4,
  rotateWebhookSecret: 3,
  listWebhookDeliveries: 3,
  redeliverWebhookDelivery: 4,
  listOrganizationEvents: 2,
  getEvent: 2,
};

let statements: string[] | undefined;
let database: TestDatabase;
let app: TestApp;
let world: World;
beforeAll(async () => {
  database = await createTestDatabase({ onQuery: (sql) => statements?.push(sql) });
  app = await startTestApp({ database });
  world = await createWorld(app.db);
  // The world has something in every list (an empty page costs one more statement, src/auth/access.ts).
  await createPeopleReview(app.db, world.team.id, world.users.teamMember.id, world.users.teamAdmin.id);
});
afterAll(async () => {
  await app.close();
  await database.close();
});

const isKeyUse = (sql: string) => /^update "api_keys" set "last_used_at"/.test(sql);
const methodOf = (operationId: OperationId) => operations.find((op) => op.operationId === operationId)!.method.toUpperCase();

describe(`the round-trip budget of every operation (${databaseLabel})`, () => {
  // Each operation's main row: its variants (such as a target that is absent) are refusals.
  const mainRows = matrixRows.filter((row) => row.variant === undefined);
  it.each(mainRows.map((row) => [row.operationId, row] as const))('%s', async (operationId, row) => {
    const allowed = row.expect.findIndex((expected) => typeof expected === 'number' && expected < 300);
    const caller = callerNames[allowed]!;
    const target = row.prepare ? await row.prepare(world) : undefined;
    const { path, body } = row.request(world, target);

    statements = [];
    const response = await app.request(methodOf(operationId), path, { key: world.keys[caller], body });
    const counted = statements.filter((sql) => !isKeyUse(sql));
    statements = undefined;

    expect(response.status, JSON.stringify(response.body)).toBe(row.expect[allowed]);
    const transactions = counted.filter((sql) => /^begin/i.test(sql)).length;
    expect(transactions, counted.join('\n')).toBeLessThanOrEqual(methodOf(operationId) === 'GET' ? 0 : 1);
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
    const allowed = row.expect.findIndex((expected) => typeof expected === 'number' && expected < 300);
    const target = row.prepare ? await row.prepare(subscribed) : undefined;
    const { path, body } = row.request(subscribed, target);

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

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
 * (`begin` and `commit` count as statements).
 */
// prettier-ignore
const budget: Record<Exclude<OperationId, 'getOpenApiDocument' | 'getApiDocs'>, number> = {
  getMe: 1,
  listOrganizations: 1,
  getOrganization: 1,
  updateOrganization: 2,
  listOrganizationMembers: 2,
  addOrganizationMember: 7,
  updateOrganizationMember: 6,
  removeOrganizationMember: 7,
  listOrganizationTeams: 2,
  createTeam: 6,
  getTeam: 2,
  updateTeam: 6,
  deleteTeam: 3,
  listTeamMembers: 3,
  addTeamMember: 7,
  updateTeamMember: 4,
  removeTeamMember: 4,
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
  createTask: 6,
  getTask: 2,
  updateTask: 5,
  deleteTask: 3,
  listTeamIssues: 2,
  createIssue: 5,
  getIssue: 2,
  updateIssue: 3,
  deleteIssue: 3,
  listTeamGoals: 2,
  listOrganizationGoals: 2,
  createGoal: 6,
  getGoal: 2,
  updateGoal: 5,
  deleteGoal: 3,
  createMilestone: 3,
  updateMilestone: 3,
  deleteMilestone: 3,
  listTeamMetrics: 2,
  getTeamScorecard: 2,
  createMetric: 7,
  updateMetric: 7,
  deleteMetric: 7,
  listMetricValues: 3,
  putMetricValue: 3,
  listTeamMeetings: 2,
  createMeeting: 3,
  getMeeting: 2,
  updateMeeting: 6,
  getMeetingRecap: 2,
  rateMeetingAsMe: 5,
  setMeetingRating: 6,
  revealMeetingRatings: 6,
  createSegue: 3,
  createHeadline: 3,
  createCascadingMessage: 3,
  deleteCascadingMessage: 3,
  acknowledgeCascadingMessages: 5,
  listTeamDocuments: 2,
  createDocument: 3,
  deleteDocument: 3,
  listTeamPeopleReviews: 3,
  putPeopleReview: 6,
  listTeamSeats: 3,
  createSeat: 7,
  updateSeat: 5,
  deleteSeat: 3,
  getTeamVision: 3,
  createTeamVision: 3,
  updateTeamVision: 3,
  listWebhooks: 2,
  createWebhook: 6,
  getWebhook: 2,
  updateWebhook: 3,
  deleteWebhook: 3,
  pingWebhook: 4,
  rotateWebhookSecret: 3,
  listWebhookDeliveries: 3,
  redeliverWebhookDelivery: 4,
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

describe(`the round trips a webhook subscription adds to a change (${databaseLabel})`, () => {
  // Measured on a world of its own, so that its subscription changes nothing for the budget above.
  let subscribed: World;
  beforeAll(async () => {
    subscribed = await createWorld(app.db);
    await createWebhook(app.db, subscribed.org.id, { events: ['*'] });
  });

  /**
   * A change with events pays one statement that writes them (finding the resource's organization and
   * team as it does), a deletion one more to find them while the row exists, and begin and commit when
   * the change had no transaction of its own.
   */
  const eventCost = (operationId: OperationId, budgeted: number, hadTransaction: boolean) =>
    budgeted + 1 + (methodOf(operationId) === 'DELETE' ? 1 : 0) + (hadTransaction ? 0 : 2);
  const cases: [OperationId, boolean][] = [['createTask', true], ['updateTask', true], ['deleteTask', false], ['updateIssue', false], ['createCascadingMessage', false]];
  it.each(cases)('%s', async (operationId, hadTransaction) => {
    const row = matrixRows.find((candidate) => candidate.operationId === operationId && candidate.variant === undefined)!;
    const allowed = row.expect.findIndex((expected) => typeof expected === 'number' && expected < 300);
    const target = row.prepare ? await row.prepare(subscribed) : undefined;
    const { path, body } = row.request(subscribed, target);

    statements = [];
    const response = await app.request(methodOf(operationId), path, { key: subscribed.keys[callerNames[allowed]!], body });
    const counted = statements.filter((sql) => !isKeyUse(sql));
    statements = undefined;

    expect(response.status, JSON.stringify(response.body)).toBe(row.expect[allowed]);
    expect(counted.filter((sql) => /^begin/i.test(sql)), counted.join('\n')).toHaveLength(1);
    expect(counted.filter((sql) => /insert into webhook_events/.test(sql)), counted.join('\n')).toHaveLength(1);
    expect(counted.length, counted.join('\n')).toBe(eventCost(operationId, budget[operationId as keyof typeof budget], hadTransaction));
  });
});

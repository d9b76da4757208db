/**
 * The request pipeline's errors, as the reference's "Errors" section and the contract's "Order of
 * checks", "Errors" and "Requests" describe them: each error class with its exact body, the
 * X-Request-Id header on every response, and which check answers first.
 *
 * Requests here are refused before any handler looks at their ids, so most ids need not exist.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseLabel } from './support/database.js';
import { addOrganizationMember, addTeamMember, createCaller, createOrganization, createTeam } from './support/factories.js';
import { operations } from './support/contract.js';
import { createTask } from './support/executionFactories.js';
import { acknowledgementsOf, createMeetingIn, createMessage } from './support/meetingFactories.js';
import { createOperator } from './support/platformFactories.js';
import { assertMatchesContract, send, startTestApp, type ApiResponse, type RequestOptions, type TestApp } from './support/testApp.js';

let app: TestApp;
let writeKey: string;
let readKey: string;

beforeAll(async () => {
  app = await startTestApp();
  writeKey = (await createCaller(app.db, { scopes: ['write'] })).key;
  readKey = (await createCaller(app.db, { scopes: ['read'] })).key;
});
afterAll(() => app.close());

/** Ids in paths: validation answers before any handler looks them up, so they need not exist. */
const teamId = '00000000-0000-4000-8000-00000000a001';
const taskId = '00000000-0000-4000-8000-00000000a002';
const meetingId = '00000000-0000-4000-8000-00000000a003';
const userId = '00000000-0000-4000-8000-00000000a004';
const orgId = '00000000-0000-4000-8000-00000000a005';

const tasksPath = `/v1/teams/${teamId}/tasks`;
const taskPath = `/v1/tasks/${taskId}`;
const meetingsPath = `/v1/teams/${teamId}/meetings`;
const ratingPath = `/v1/meetings/${meetingId}/ratings/${userId}`;
const visionPath = `/v1/teams/${teamId}/vision`;
const orgMembersPath = `/v1/orgs/${orgId}/members`;

const validTask = { title: 'Send the quarterly report', ownerId: userId, dueDate: '2026-03-31' };

/** A send that also checks the response against the contract, for raw requests `app.request` cannot make. */
async function sendChecked(method: string, path: string, options: RequestOptions): Promise<ApiResponse> {
  const response = await send(app.url, method, path, options);
  assertMatchesContract(method, path, response);
  return response;
}

const issue = (fields: Record<string, unknown>) => ({ message: expect.any(String), ...fields });

/** A format error: 422 `invalid` listing exactly these issues (messages are English text and may change). */
function expectFormatError(response: ApiResponse, issues: Record<string, unknown>[]) {
  expect(response.status).toBe(422);
  expect(response.body).toEqual({ error: { code: 'invalid', message: expect.any(String), issues: issues.map(issue), issueCount: issues.length } });
}

/** A format error listing at least these issues, in any order. */
function expectFormatErrorWith(response: ApiResponse, issues: Record<string, unknown>[]) {
  expect(response.status).toBe(422);
  expect(response.body).toEqual({
    error: { code: 'invalid', message: expect.any(String), issues: expect.arrayContaining(issues.map(issue)), issueCount: expect.any(Number) },
  });
}

/** A rule violation: 422 `invalid` with a message and without `issues`. */
function expectRuleViolation(response: ApiResponse) {
  expect(response.status).toBe(422);
  expect(response.body).toEqual({ error: { code: 'invalid', message: expect.any(String) } });
  expect(response.body.error.message.length).toBeGreaterThan(0);
}

function expectError(response: ApiResponse, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.body).toEqual({ error: { code, message: expect.any(String) } });
}

describe(`format errors: 422 invalid with issues (${databaseLabel})`, () => {
  it('a missing required field is an invalid_type issue at its path in the body', async () => {
    const { title: _title, ...withoutTitle } = validTask;
    const response = await app.request('POST', tasksPath, { key: writeKey, body: withoutTitle });
    expectFormatError(response, [{ origin: 'body', code: 'invalid_type', path: ['title'] }]);
  });

  it('a value of the wrong JSON type is an invalid_type issue', async () => {
    const response = await app.request('POST', tasksPath, { key: writeKey, body: { ...validTask, title: 42 } });
    expectFormatError(response, [{ origin: 'body', code: 'invalid_type', path: ['title'] }]);
  });

  it('an unknown enum value is an invalid_value issue that lists the allowed values', async () => {
    const response = await app.request('POST', orgMembersPath, { key: writeKey, body: { email: 'eva@example.com', role: 'KING' } });
    expectFormatError(response, [
      { origin: 'body', code: 'invalid_value', path: ['role'], values: ['OWNER', 'ADMIN', 'MEMBER', 'IMPLEMENTER'] },
    ]);
  });

  it('a day that does not exist (2026-02-30) is an invalid_format issue with format day', async () => {
    const response = await app.request('POST', tasksPath, { key: writeKey, body: { ...validTask, dueDate: '2026-02-30' } });
    expectFormatError(response, [{ origin: 'body', code: 'invalid_format', path: ['dueDate'], format: 'day' }]);
  });

  it('an instant where a day is expected is an invalid_format issue with format day', async () => {
    const response = await app.request('POST', tasksPath, {
      key: writeKey,
      body: { ...validTask, dueDate: '2026-03-31T00:00:00Z' },
    });
    expectFormatError(response, [{ origin: 'body', code: 'invalid_format', path: ['dueDate'], format: 'day' }]);
  });

  it('a malformed quarter is an invalid_format issue with format quarter', async () => {
    const response = await app.request('GET', `/v1/teams/${teamId}/goals?quarter=2026-Q5`, { key: writeKey });
    expectFormatError(response, [{ origin: 'query', code: 'invalid_format', path: ['quarter'], format: 'quarter' }]);
  });

  it('an empty PATCH body {} is a too_small issue for the body as a whole (minProperties)', async () => {
    const response = await app.request('PATCH', taskPath, { key: writeKey, body: {} });
    expectFormatError(response, [{ origin: 'body', code: 'too_small', path: [], minimum: 1, inclusive: true }]);
  });

  it('a PATCH body with only unknown fields counts as empty', async () => {
    const response = await app.request('PATCH', taskPath, { key: writeKey, body: { colour: 'red', priority: 'HIGH' } });
    expectFormatError(response, [{ origin: 'body', code: 'too_small', path: [], minimum: 1, inclusive: true }]);
  });

  it('several problems at once are all listed', async () => {
    const response = await app.request('POST', tasksPath, { key: writeKey, body: { title: 7, dueDate: 'tomorrow' } });
    expect(response.body.error.issues).toHaveLength(3);
    expectFormatErrorWith(response, [
      { origin: 'body', code: 'invalid_type', path: ['title'] },
      { origin: 'body', code: 'invalid_type', path: ['ownerId'] },
      { origin: 'body', code: 'invalid_format', path: ['dueDate'], format: 'day' },
    ]);
  });

  it('30,000 wrong items of a list are 30,000 issues and one too many items, of which the first 20 are listed, within two seconds of CPU time', async () => {
    const body = `{"ids":[${Array<string>(30_000).fill('1').join(',')}]}`;
    // CPU time, not elapsed time: a busy machine makes the answer wait without costing it more.
    const started = process.cpuUsage();
    const response = await send(app.url, 'POST', '/v1/messages/acknowledge', { key: writeKey, rawBody: body, headers: { 'content-type': 'application/json' } });
    const spent = process.cpuUsage(started);
    const took = (spent.user + spent.system) / 1000;
    assertMatchesContract('POST', '/v1/messages/acknowledge', response);
    expect(response.status).toBe(422);
    expect(response.body.error.issueCount).toBe(30_001);
    expect(response.body.error.issues).toHaveLength(20);
    expect(took).toBeLessThan(2_000);
  });

  it('7,000 wrong types in the query of the feed are answered in at most 4 KB, whatever key asks', async () => {
    const types = Array.from({ length: 7_000 }, (_, index) => 'abcdefghij'[index % 10]).join(',');
    const response = await sendChecked('GET', `/v1/orgs/${orgId}/events?types=${types}`, { key: readKey });
    expect(response.status).toBe(422);
    expect(response.body.error.issueCount).toBe(7_001);
    expect(Buffer.byteLength(response.text)).toBeLessThanOrEqual(4096);
  });

  it('wrong items of one list name the allowed values once, with the first of their issues', async () => {
    const response = await sendChecked('GET', `/v1/orgs/${orgId}/events?types=a,b,c`, { key: readKey });
    const issues = response.body.error.issues as { path: string[]; values?: unknown[] }[];
    expect(issues.map((found) => found.path)).toEqual([['types', '0'], ['types', '1'], ['types', '2']]);
    expect(issues[0]!.values).toContain('task.created');
    expect(issues.slice(1).filter((found) => 'values' in found)).toEqual([]);
  });

  it('limit=0 is a too_small issue of the query with minimum 1, inclusive', async () => {
    const response = await app.request('GET', `${tasksPath}?limit=0`, { key: writeKey });
    expectFormatError(response, [{ origin: 'query', code: 'too_small', path: ['limit'], minimum: 1, inclusive: true }]);
  });

  it('limit=201 is a too_big issue of the query with maximum 200, inclusive', async () => {
    const response = await app.request('GET', `${tasksPath}?limit=201`, { key: writeKey });
    expectFormatError(response, [{ origin: 'query', code: 'too_big', path: ['limit'], maximum: 200, inclusive: true }]);
  });

  it('an integer parameter takes only plain decimal digits: 1e1, 010, 10.0, 0x10, +10, -0 and padded digits are invalid_type issues', async () => {
    for (const limit of ['1e1', '010', '10.0', '0x10', '+10', '-0', '%2010', '10%20', '1_0', '１０']) {
      const response = await app.request('GET', `${tasksPath}?limit=${limit}`, { key: writeKey });
      expectFormatError(response, [{ origin: 'query', code: 'invalid_type', path: ['limit'] }]);
    }
  });

  it('a non-plain integer is reported with the request\'s other format errors', async () => {
    const response = await app.request('GET', `${tasksPath}?limit=1e1&completed=maybe`, { key: writeKey });
    expectFormatErrorWith(response, [
      { origin: 'query', code: 'invalid_type', path: ['limit'] },
      { origin: 'query', code: 'invalid_type', path: ['completed'] },
    ]);
  });

  it('limit=abc is an invalid_type issue of the query', async () => {
    const response = await app.request('GET', `${tasksPath}?limit=abc`, { key: writeKey });
    expectFormatError(response, [{ origin: 'query', code: 'invalid_type', path: ['limit'] }]);
  });

  it('completed=maybe is an invalid_type issue of the query', async () => {
    const response = await app.request('GET', `${tasksPath}?completed=maybe`, { key: writeKey });
    expectFormatError(response, [{ origin: 'query', code: 'invalid_type', path: ['completed'] }]);
  });

  it('a query parameter the operation does not declare is refused, so a misspelt filter never returns an unfiltered list', async () => {
    const response = await app.request('GET', `${tasksPath}?complete=true`, { key: writeKey });
    expectFormatError(response, [{ origin: 'query', code: 'unrecognized_keys', path: [], keys: ['complete'] }]);
  });

  it('an unknown field in a strict body is an unrecognized_keys issue naming it', async () => {
    const response = await app.request('POST', orgMembersPath, {
      key: writeKey,
      body: { email: 'eva@example.com', role: 'MEMBER', colour: 'red' },
    });
    expectFormatError(response, [{ origin: 'body', code: 'unrecognized_keys', path: [], keys: ['colour'] }]);
  });

  it('a strict oneOf body matching none of its shapes is an invalid_union issue', async () => {
    const response = await app.request('POST', meetingsPath, { key: writeKey, body: { date: '2026-03-02', durationMin: 60 } });
    expectFormatErrorWith(response, [
      { origin: 'body', code: 'invalid_union', path: [] },
      { origin: 'body', code: 'unrecognized_keys', path: [], keys: ['durationMin'] },
    ]);
  });

  it('a rating body of the wrong type matches no shape of PUT /meetings/{id}/ratings/{userId}', async () => {
    const response = await app.request('PUT', ratingPath, { key: writeKey, body: { rating: 'high' } });
    expectFormatErrorWith(response, [
      { origin: 'body', code: 'invalid_union', path: [] },
      { origin: 'body', code: 'invalid_type', path: ['rating'] },
    ]);
  });

  it('an unknown value of the vision `field`, which picks the shape, is an invalid_value issue listing every allowed field', async () => {
    const response = await app.request('PATCH', visionPath, { key: writeKey, body: { field: 'mission', value: ['Move goods'] } });
    expect(response.status).toBe(422);
    const fieldIssue = response.body.error.issues.find((found: { path: string[] }) => found.path.join('.') === 'field');
    expect(fieldIssue).toMatchObject({ origin: 'body', code: 'invalid_value' });
    expect([...fieldIssue.values].sort()).toEqual(
      ['coreValues', 'quarterlyRocks', 'issuesList', 'coreFocus', 'marketingStrategy', 'tenYearTarget', 'threeYearPicture', 'oneYearPlan'].sort(),
    );
  });

  it('a vision `field` selects its shape: a wrong value for coreFocus lists what coreFocus expects, not the other fields', async () => {
    const response = await app.request('PATCH', visionPath, { key: writeKey, body: { field: 'coreFocus', value: { k: 5 } } });
    expect(response.status).toBe(422);
    const issues = response.body.error.issues as { path: string[]; code: string }[];
    expect(issues.length).toBeGreaterThan(0);
    expect(issues.every((found) => found.path.join('.') === 'value.k')).toBe(true);
    expect(issues).toContainEqual(expect.objectContaining({ origin: 'body', code: 'invalid_type', path: ['value', 'k'] }));
  });

  it('a vision list field sent a text is an invalid_type issue of `value` alone', async () => {
    const response = await app.request('PATCH', visionPath, { key: writeKey, body: { field: 'coreValues', value: 'Honesty' } });
    expectFormatError(response, [{ origin: 'body', code: 'invalid_type', path: ['value'] }]);
  });

  it('a vision text field sent a list is an invalid_type issue of `value` alone', async () => {
    const response = await app.request('PATCH', visionPath, { key: writeKey, body: { field: 'tenYearTarget', value: ['a'] } });
    expectFormatError(response, [{ origin: 'body', code: 'invalid_type', path: ['value'] }]);
  });

  it('`absent: true` selects the absence shape of a rating body: a rating beside it is an unknown field', async () => {
    const response = await app.request('PUT', ratingPath, { key: writeKey, body: { absent: true, rating: 5 } });
    expectFormatError(response, [{ origin: 'body', code: 'unrecognized_keys', path: [], keys: ['rating'] }]);
  });

  it('`absent: false` selects the rating shape: without a rating, the rating is missing', async () => {
    const response = await app.request('PUT', ratingPath, { key: writeKey, body: { absent: false } });
    expectFormatError(response, [{ origin: 'body', code: 'invalid_type', path: ['rating'] }]);
  });

  it('a body that is not valid JSON is an invalid_json issue', async () => {
    const response = await app.request('POST', tasksPath, {
      key: writeKey,
      rawBody: '{"title": "Send the report",',
      headers: { 'content-type': 'application/json' },
    });
    expectFormatError(response, [{ origin: 'body', code: 'invalid_json', path: [] }]);
  });

  it('a missing body on an operation that needs one is an invalid_type issue for the body as a whole', async () => {
    const response = await app.request('POST', tasksPath, { key: writeKey });
    expectFormatError(response, [{ origin: 'body', code: 'invalid_type', path: [] }]);
  });
});

describe(`text holding the character NUL (U+0000) (${databaseLabel})`, () => {
  /** A team Admin of a real team, so that the request would reach the database. */
  async function teamAdmin() {
    const org = await createOrganization(app.db);
    const team = await createTeam(app.db, org.id);
    const admin = await createCaller(app.db);
    await addOrganizationMember(app.db, org.id, admin.user.id, 'MEMBER');
    await addTeamMember(app.db, team.id, admin.user.id, 'ADMIN');
    return { team, admin };
  }
  const tasksOf = (id: string) => app.db.selectFrom('tasks').select('id').where('team_id', '=', id).execute();

  it('in a body field is an invalid_character issue and stores nothing', async () => {
    const { team, admin } = await teamAdmin();
    const body = { title: 'Send the\u0000report', ownerId: admin.user.id, dueDate: '2026-03-31' };
    const response = await app.request('POST', `/v1/teams/${team.id}/tasks`, { key: admin.key, body });
    expectFormatError(response, [{ origin: 'body', code: 'invalid_character', path: ['title'] }]);
    expect(await tasksOf(team.id)).toEqual([]);
  });

  it('in a key of a body object or an item of a body list is an invalid_character issue', async () => {
    const { team, admin } = await teamAdmin();
    const vision = await app.request('PATCH', `/v1/teams/${team.id}/vision`, {
      key: admin.key,
      body: { field: 'coreFocus', value: { 'pur\u0000pose': 'Move goods' } },
    });
    expectFormatError(vision, [{ origin: 'body', code: 'invalid_character', path: ['value', 'pur\u0000pose'] }]);
    const acknowledged = await app.request('POST', '/v1/messages/acknowledge', { key: admin.key, body: { ids: ['\u0000'] } });
    expectFormatError(acknowledged, [{ origin: 'body', code: 'invalid_character', path: ['ids', '0'] }]);
  });

  it('in a path id is an invalid_character issue', async () => {
    const { admin } = await teamAdmin();
    const response = await app.request('GET', '/v1/teams/%00', { key: admin.key });
    expectFormatError(response, [{ origin: 'path', code: 'invalid_character', path: ['teamId'] }]);
  });

  it('in a query value is an invalid_character issue', async () => {
    const { team, admin } = await teamAdmin();
    const response = await app.request('GET', `/v1/teams/${team.id}/tasks?ownerId=a%00b`, { key: admin.key });
    expectFormatError(response, [{ origin: 'query', code: 'invalid_character', path: ['ownerId'] }]);
  });
});

describe(`bodies nested deeper than 32 levels (${databaseLabel})`, () => {
  /** Arrays nested `depth` deep around a string, as JSON text (4 KB for 2,000 levels). */
  const nestedArrays = (depth: number) => `${'['.repeat(depth)}"x"${']'.repeat(depth)}`;
  /** Objects nested `depth` deep, as JSON text (60 KB for 10,000 levels). */
  const nestedObjects = (depth: number) => `${'{"a":'.repeat(depth)}"x"${'}'.repeat(depth)}`;
  /** The path to the 33rd level: `prefix`, then `step` for every level below it. */
  const pathPastLimit = (prefix: string[], step: string) => [...prefix, ...Array<string>(32 - prefix.length).fill(step)];

  /** A team Admin of a real team with a task and a running meeting with a cascading message. */
  async function teamWithItems() {
    const org = await createOrganization(app.db);
    const team = await createTeam(app.db, org.id);
    const admin = await createCaller(app.db);
    await addOrganizationMember(app.db, org.id, admin.user.id, 'MEMBER');
    await addTeamMember(app.db, team.id, admin.user.id, 'ADMIN');
    const task = await createTask(app.db, team.id, admin.user.id);
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id, { status: 'IN_PROGRESS' });
    const message = await createMessage(app.db, { id: meeting.id, orgId: org.id }, admin.user.id);
    return { team, admin, task, meeting, message };
  }
  const sendJson = (method: string, path: string, key: string, text: string) =>
    sendChecked(method, path, { key, rawBody: text, headers: { 'content-type': 'application/json' } });
  const tooDeep = (response: ApiResponse, path: string[]) => expectFormatError(response, [{ origin: 'body', code: 'too_deep', path }]);
  const row = (table: 'tasks' | 'meetings', id: string) => app.db.selectFrom(table).selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  it('arrays nested 2,000 deep as the whole body are one too_deep issue at the 33rd level, and create nothing', async () => {
    const { team, admin } = await teamWithItems();
    const response = await sendJson('POST', `/v1/teams/${team.id}/tasks`, admin.key, nestedArrays(2_000));
    tooDeep(response, pathPastLimit([], '0'));
    expect(await app.db.selectFrom('tasks').select('id').where('team_id', '=', team.id).execute()).toHaveLength(1);
  });

  it('arrays nested 2,000 deep as the title of PATCH /tasks/{id} are too_deep, and the task is unchanged', async () => {
    const { admin, task } = await teamWithItems();
    const before = await row('tasks', task.id);
    const response = await sendJson('PATCH', `/v1/tasks/${task.id}`, admin.key, `{"completed":true,"title":${nestedArrays(2_000)}}`);
    tooDeep(response, pathPastLimit(['title'], '0'));
    expect(await row('tasks', task.id)).toEqual(before);
  });

  it('arrays nested 2,000 deep as the ids of POST /messages/acknowledge are too_deep, and nothing is acknowledged', async () => {
    const { admin, message } = await teamWithItems();
    const response = await sendJson('POST', '/v1/messages/acknowledge', admin.key, `{"ids":["${message.id}",${nestedArrays(2_000)}]}`);
    tooDeep(response, pathPastLimit(['ids', '1'], '0'));
    expect(await acknowledgementsOf(app.db, admin.user.id)).toEqual([]);
  });

  it('arrays nested 2,000 deep in a meeting body are too_deep, and the meeting is unchanged', async () => {
    const { admin, meeting } = await teamWithItems();
    const before = await row('meetings', meeting.id);
    const response = await sendJson('PATCH', `/v1/meetings/${meeting.id}`, admin.key, `{"status":"COMPLETED","notes":${nestedArrays(2_000)}}`);
    tooDeep(response, pathPastLimit(['notes'], '0'));
    expect(await row('meetings', meeting.id)).toEqual(before);
  });

  it('arrays nested 2,000 deep in the owner of POST /platform/orgs are too_deep, and no organization is created', async () => {
    const operator = await createOperator(app.db);
    const name = `Deep Outfitters ${Date.now()}`;
    const body = `{"name":"${name}","timezone":"Europe/Prague","defaultLocale":"sk","owner":{"email":"owner@deep.example","password":${nestedArrays(2_000)}}}`;
    const response = await sendJson('POST', '/v1/platform/orgs', operator.key, body);
    tooDeep(response, pathPastLimit(['owner', 'password'], '0'));
    expect(await app.db.selectFrom('organizations').select('id').where('name', '=', name).execute()).toEqual([]);
  });

  it('objects nested 10,000 deep are too_deep at the 33rd level, and the task is unchanged', async () => {
    const { admin, task } = await teamWithItems();
    const before = await row('tasks', task.id);
    const response = await sendJson('PATCH', `/v1/tasks/${task.id}`, admin.key, nestedObjects(10_000));
    tooDeep(response, pathPastLimit([], 'a'));
    expect(await row('tasks', task.id)).toEqual(before);
  });

  it('the first place past the limit is named, in the order of the body', async () => {
    const { admin, task } = await teamWithItems();
    const response = await sendJson('PATCH', `/v1/tasks/${task.id}`, admin.key, `{"title":[1,${nestedObjects(40)}],"description":${nestedArrays(40)}}`);
    tooDeep(response, pathPastLimit(['title', '1'], 'a'));
  });

  it('a body exactly 32 levels deep goes through the usual validation', async () => {
    const { admin, task } = await teamWithItems();
    const atLimit = await sendJson('PATCH', `/v1/tasks/${task.id}`, admin.key, `{"title":${nestedArrays(31)}}`);
    expectFormatError(atLimit, [{ origin: 'body', code: 'invalid_type', path: ['title'] }]);
    const pastLimit = await sendJson('PATCH', `/v1/tasks/${task.id}`, admin.key, `{"title":${nestedArrays(32)}}`);
    tooDeep(pastLimit, pathPastLimit(['title'], '0'));
  });
});

describe(`rule violations: 422 invalid without issues (${databaseLabel})`, () => {
  it('a task title over 500 characters', async () => {
    const response = await app.request('POST', tasksPath, { key: writeKey, body: { ...validTask, title: 'x'.repeat(501) } });
    expectRuleViolation(response);
  });

  it('a title of only spaces, empty after trimming', async () => {
    const response = await app.request('POST', tasksPath, { key: writeKey, body: { ...validTask, title: '    ' } });
    expectRuleViolation(response);
  });

  it('a PATCH title of only spaces, empty after trimming', async () => {
    const response = await app.request('PATCH', taskPath, { key: writeKey, body: { title: ' \t ' } });
    expectRuleViolation(response);
  });

  it('a rating of 11', async () => {
    const response = await app.request('PUT', ratingPath, { key: writeKey, body: { rating: 11 } });
    expectRuleViolation(response);
  });

  it('a rating of 7.5, not an integer', async () => {
    const response = await app.request('PUT', ratingPath, { key: writeKey, body: { rating: 7.5 } });
    expectRuleViolation(response);
  });

  it('durationMin 700 when recording a past meeting (1-600)', async () => {
    const response = await app.request('POST', meetingsPath, {
      key: writeKey,
      body: { startedAt: '2026-01-05T09:00:00Z', durationMin: 700 },
    });
    expectRuleViolation(response);
  });

  it('a vision list item over 1000 characters', async () => {
    const response = await app.request('PATCH', visionPath, {
      key: writeKey,
      body: { field: 'coreValues', value: ['Customers first', 'y'.repeat(1001)] },
    });
    expectRuleViolation(response);
  });
});

describe(`text is trimmed before its limits are checked (${databaseLabel})`, () => {
  it('a title of 500 characters with surrounding spaces is not a length violation: it is stored trimmed', async () => {
    const { user, key } = await createCaller(app.db);
    const org = await createOrganization(app.db);
    const team = await createTeam(app.db, org.id);
    await addOrganizationMember(app.db, org.id, user.id, 'MEMBER');
    await addTeamMember(app.db, team.id, user.id, 'MEMBER');

    const response = await app.request('POST', `/v1/teams/${team.id}/tasks`, {
      key,
      body: { title: `   ${'t'.repeat(500)}   `, ownerId: user.id, dueDate: '2026-11-30' },
    });

    expect(response.status).toBe(201);
    expect(response.body.title).toBe('t'.repeat(500));
  });
});

describe(`the other error classes (${databaseLabel})`, () => {
  const authenticated = operations.filter((op) => !['getOpenApiDocument', 'getApiDocs', 'getChangelog'].includes(op.operationId));

  it.each(authenticated.map((op) => [op.method.toUpperCase(), op.path] as const))(
    '%s %s without a key gets 401 unauthenticated',
    async (method, template) => {
      const path = `/v1${template.replace(/\{\w+\}/g, '00000000-0000-4000-8000-00000000b001')}`;
      const response = await app.request(method, path);
      expectError(response, 401, 'unauthenticated');
    },
  );

  it('an unknown path gets 404 notFound', async () => {
    const response = await app.request('GET', '/v1/nothing-here', { key: writeKey });
    expectError(response, 404, 'notFound');
  });

  it('a path whose percent-encoding cannot be decoded gets 404 notFound, like any unknown path', async () => {
    const requests = [
      ['GET', '/v1/teams/%FF'],
      ['GET', '/v1/tasks/%E0%A4%A'],
      ['PUT', `/v1/metrics/${taskId}/values/%u0000`],
      ['PUT', '/v1/platform/ai/providers/%'],
    ] as const;
    for (const [method, path] of requests) {
      const response = await app.request(method, path, { key: writeKey, body: method === 'PUT' ? { value: '1' } : undefined });
      expectError(response, 404, 'notFound');
    }
  });

  it('an unknown path outside /v1 gets 404 notFound', async () => {
    const response = await app.request('GET', '/v2/me', { key: writeKey });
    expectError(response, 404, 'notFound');
  });

  it('a known path with another method gets 405 methodNotAllowed with an Allow header', async () => {
    const response = await app.request('DELETE', '/v1/me', { key: writeKey });
    expectError(response, 405, 'methodNotAllowed');
    expect(response.headers.get('allow')).toBe('GET');
  });

  it('the Allow header of a 405 lists every method of the path', async () => {
    const response = await app.request('PUT', tasksPath, { key: writeKey });
    expectError(response, 405, 'methodNotAllowed');
    expect(response.headers.get('allow')?.split(/,\s*/).sort()).toEqual(['GET', 'POST']);
  });

  it('the public documents\' paths too answer another method with 405 methodNotAllowed', async () => {
    const response = await app.request('POST', '/v1/openapi.json', { key: writeKey });
    expectError(response, 405, 'methodNotAllowed');
    expect(response.headers.get('allow')).toBe('GET');
  });

  it('a JSON body over 64 KB gets 413 payloadTooLarge', async () => {
    const response = await app.request('POST', tasksPath, { key: writeKey, body: { ...validTask, title: 'x'.repeat(70_000) } });
    expectError(response, 413, 'payloadTooLarge');
  });

  describe('the limit to the byte: 64 KB is 65,536 bytes', () => {
    /** A member of a real team and the JSON text of a valid task, padded with trailing blanks to exactly `bytes` bytes. */
    async function paddedTask(bytes: number) {
      const { user, key } = await createCaller(app.db);
      const org = await createOrganization(app.db);
      const team = await createTeam(app.db, org.id);
      await addOrganizationMember(app.db, org.id, user.id, 'MEMBER');
      await addTeamMember(app.db, team.id, user.id, 'MEMBER');
      const text = JSON.stringify({ ...validTask, ownerId: user.id });
      const rawBody = text + ' '.repeat(bytes - Buffer.byteLength(text));
      expect(Buffer.byteLength(rawBody)).toBe(bytes);
      const tasks = () => app.db.selectFrom('tasks').select('title').where('team_id', '=', team.id).execute();
      return { key, path: `/v1/teams/${team.id}/tasks`, rawBody, tasks };
    }

    it('a valid JSON body of exactly 65,536 bytes is read and answered as any other: the task is created', async () => {
      const { key, path, rawBody, tasks } = await paddedTask(65_536);
      const response = await sendChecked('POST', path, { key, rawBody, headers: { 'content-type': 'application/json' } });
      expect(response.status).toBe(201);
      expect(await tasks()).toEqual([{ title: validTask.title }]);
    });

    it('a valid JSON body of 65,537 bytes gets 413 payloadTooLarge and creates nothing', async () => {
      const { key, path, rawBody, tasks } = await paddedTask(65_537);
      const response = await sendChecked('POST', path, { key, rawBody, headers: { 'content-type': 'application/json' } });
      expectError(response, 413, 'payloadTooLarge');
      expect(await tasks()).toEqual([]);
    });
  });

  it('a text/plain body on an operation that takes a body gets 415 unsupportedMediaType', async () => {
    const response = await app.request('POST', tasksPath, {
      key: writeKey,
      rawBody: 'title=Send the report',
      headers: { 'content-type': 'text/plain' },
    });
    expectError(response, 415, 'unsupportedMediaType');
  });
});

describe(`500 internal (${databaseLabel})`, () => {
  let failing: TestApp;
  let failingKey: string;

  beforeAll(async () => {
    failing = await startTestApp({
      handlers: {
        getMe: async () => {
          throw new Error('boom');
        },
        // An unexpected error that happens to carry an HTTP-like status, as errors of client libraries do.
        listOrganizations: async () => {
          throw Object.assign(new Error('upstream said 404'), { status: 404, statusCode: 404 });
        },
      },
    });
    failingKey = (await createCaller(failing.db)).key;
  });
  afterAll(() => failing.close());

  it('an unexpected error gets 500 internal with only a code and a message, no details', async () => {
    const response = await failing.request('GET', '/v1/me', { key: failingKey });
    expect(response.status).toBe(500);
    expect(response.body).toEqual({ error: { code: 'internal', message: expect.any(String) } });
    expect(response.text).not.toMatch(/boom/i);
  });

  it('an unexpected error carrying a 4xx status is still 500 internal, not a client error', async () => {
    const response = await failing.request('GET', '/v1/orgs', { key: failingKey });
    expect(response.status).toBe(500);
    expect(response.body).toEqual({ error: { code: 'internal', message: expect.any(String) } });
    expect(response.text).not.toContain('upstream');
  });

  it('a 500 response carries X-Request-Id too', async () => {
    const response = await failing.request('GET', '/v1/me', { key: failingKey });
    expect(response.status).toBe(500);
    expect(response.headers.get('x-request-id')).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
  });
});

describe(`X-Request-Id (${databaseLabel})`, () => {
  const kinds: [string, () => Promise<ApiResponse>, number][] = [
    ['200', () => app.request('GET', '/v1/me', { key: writeKey }), 200],
    ['401', () => app.request('GET', '/v1/me'), 401],
    ['403', () => app.request('POST', tasksPath, { key: readKey, body: validTask }), 403],
    ['404', () => app.request('GET', '/v1/nothing-here', { key: writeKey }), 404],
    ['405', () => app.request('DELETE', '/v1/me', { key: writeKey }), 405],
    ['413', () => app.request('POST', tasksPath, { key: writeKey, body: { ...validTask, title: 'x'.repeat(70_000) } }), 413],
    [
      '415',
      () => app.request('POST', tasksPath, { key: writeKey, rawBody: 'title', headers: { 'content-type': 'text/plain' } }),
      415,
    ],
    ['422', () => app.request('PATCH', taskPath, { key: writeKey, body: {} }), 422],
    ['the docs page', () => app.request('GET', '/v1/docs'), 200],
    ['the OpenAPI document', () => app.request('GET', '/v1/openapi.json'), 200],
    ['/healthz', () => send(app.url, 'GET', '/healthz'), 200],
  ];

  it.each(kinds)('a %s response carries X-Request-Id', async (_kind, request, status) => {
    const response = await request();
    expect(response.status).toBe(status);
    expect(response.headers.get('x-request-id')).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
  });

  it('each response gets its own generated X-Request-Id', async () => {
    const first = await app.request('GET', '/v1/me', { key: writeKey });
    const second = await app.request('GET', '/v1/me', { key: writeKey });
    expect(first.headers.get('x-request-id')).not.toBe(second.headers.get('x-request-id'));
  });

  it.each(['client-42.retry_1', 'a'.repeat(128), '3f1c9a52-7d0e-4b8a-9c61-5e2f0a4d8b17'])(
    'a well-formed incoming X-Request-Id (%s) is echoed',
    async (incoming) => {
      const response = await app.request('GET', '/v1/me', { key: writeKey, headers: { 'x-request-id': incoming } });
      expect(response.status).toBe(200);
      expect(response.headers.get('x-request-id')).toBe(incoming);
    },
  );

  it('a well-formed incoming X-Request-Id is echoed on errors too', async () => {
    const response = await app.request('GET', '/v1/me', { headers: { 'x-request-id': 'trace.401' } });
    expect(response.status).toBe(401);
    expect(response.headers.get('x-request-id')).toBe('trace.401');
  });

  it.each([
    ['300 characters', 'r'.repeat(300)],
    ['129 characters', 'r'.repeat(129)],
    ['spaces', 'my request id'],
    ['a slash', 'abc/def'],
  ])('a malformed incoming X-Request-Id (%s) is replaced by a generated one', async (_why, incoming) => {
    const response = await app.request('GET', '/v1/me', { key: writeKey, headers: { 'x-request-id': incoming } });
    expect(response.status).toBe(200);
    const answered = response.headers.get('x-request-id');
    expect(answered).not.toBe(incoming);
    expect(answered).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
  });
});

describe(`order of checks (${databaseLabel})`, () => {
  it('without a key, an invalid body gets 401, not 422', async () => {
    const response = await app.request('POST', tasksPath, { body: { title: 7 } });
    expectError(response, 401, 'unauthenticated');
  });

  it('without a key, a body that is not valid JSON gets 401, not 422', async () => {
    const response = await sendChecked('POST', tasksPath, { rawBody: '{"title": ', headers: { 'content-type': 'application/json' } });
    expectError(response, 401, 'unauthenticated');
  });

  it('without a key, a body over 64 KB gets 401, not 413', async () => {
    const response = await sendChecked('POST', tasksPath, { body: { ...validTask, title: 'x'.repeat(70_000) } });
    expectError(response, 401, 'unauthenticated');
  });

  it('without a key, a text/plain body gets 401, not 415', async () => {
    const response = await app.request('POST', tasksPath, { rawBody: 'title', headers: { 'content-type': 'text/plain' } });
    expectError(response, 401, 'unauthenticated');
  });

  it('without a key, an unknown path gets 401, not 404', async () => {
    const response = await app.request('GET', '/v1/nothing-here');
    expectError(response, 401, 'unauthenticated');
  });

  it('without a key, a known path with another method gets 401, not 405', async () => {
    const response = await app.request('DELETE', '/v1/me');
    expectError(response, 401, 'unauthenticated');
  });

  it('an unknown path gets 404 even when its body is not valid JSON', async () => {
    const response = await sendChecked('POST', '/v1/nothing-here', {
      key: writeKey,
      rawBody: '{"title": ',
      headers: { 'content-type': 'application/json' },
    });
    expectError(response, 404, 'notFound');
  });

  it('a read-only key sending an invalid body to a write operation gets 403 insufficientScope, not 422', async () => {
    const response = await app.request('POST', tasksPath, { key: readKey, body: { title: 7 } });
    expectError(response, 403, 'insufficientScope');
  });

  it('a read-only key sending a body that is not valid JSON to a write operation gets 403 insufficientScope, not 422', async () => {
    const response = await sendChecked('POST', tasksPath, {
      key: readKey,
      rawBody: '{"title": ',
      headers: { 'content-type': 'application/json' },
    });
    expectError(response, 403, 'insufficientScope');
  });

  it('a read-only key sending a text/plain body to a write operation gets 415, media type before scope', async () => {
    const response = await app.request('POST', tasksPath, { key: readKey, rawBody: 'title', headers: { 'content-type': 'text/plain' } });
    expectError(response, 415, 'unsupportedMediaType');
  });

  it('a read-only key sending a body over 64 KB to a write operation gets 413, body size before scope', async () => {
    const response = await app.request('POST', tasksPath, { key: readKey, body: { ...validTask, title: 'x'.repeat(70_000) } });
    expectError(response, 413, 'payloadTooLarge');
  });
});

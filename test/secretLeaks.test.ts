/**
 * No log line and no error body ever holds a secret or a piece of SQL: API keys (and their hashes),
 * the passwords of new platform organization Owners (and their hashes), AI provider keys, SQL text,
 * database error text and table names. A varied set of requests — successes, bad input of every
 * kind, unusable keys, secrets in the wrong places, and 500s forced through failing database
 * statements — is sent with a logger writing every level to a captured stream.
 */
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../src/auth/apiKeys.js';
import { databaseLabel } from './support/database.js';
import { createKey, createTeamWorld } from './support/factories.js';
import { createOperator } from './support/platformFactories.js';
import { startTestApp, type ApiResponse, type RequestOptions, type TestApp } from './support/testApp.js';

const lines: string[] = [];
const sink = new Writable({
  write(chunk, _encoding, done) {
    lines.push(...String(chunk).split('\n').filter(Boolean));
    done();
  },
});
const logger = pino({ level: 'trace' }, sink);

let app: TestApp;
let failing: TestApp;
const responses: { label: string; response: ApiResponse }[] = [];

/** Every secret the requests carry, and what the server derives from them. */
const secrets = {
  password: `Tr0ub4dor&3-${randomBytes(6).toString('hex')}`,
  shortPassword: `Q!${randomBytes(3).toString('hex').slice(0, 5)}`,
  longPassword: `L0ng-${randomBytes(110).toString('hex')}`.slice(0, 201),
  providerKey: `sk-leaktest-${randomBytes(16).toString('hex')}`,
  shortProviderKey: `sk-${randomBytes(2).toString('hex')}`,
  otherProviderKey: `sk-ant-leaktest-${randomBytes(16).toString('hex')}`,
} as Record<string, string>;

let operatorKey: string;
let ownerKey: string;
let memberKey: string;
let expiredKey: string;
let revokedKey: string;
let teamId: string;
let memberId: string;

async function call(label: string, method: string, path: string, options: RequestOptions = {}, target: TestApp = app) {
  const response = await target.request(method, path, options);
  responses.push({ label, response });
  return response;
}

beforeAll(async () => {
  app = await startTestApp({ logger });
  const db = app.db;
  failing = await startTestApp({
    database: app.database,
    logger,
    // Each statement runs on the database the router hands the handler (a change's transaction where it
    // has one, which on the embedded database every other query would wait for).
    handlers: {
      // A statement that is not SQL: the driver's error quotes it ("syntax error at or near …").
      getMe: async (_request, { db }) => {
        await sql`selec id, key_hash from api_keys where key_hash = ${hashKey(operatorKey)}`.execute(db);
        throw new Error('unreachable');
      },
      // A table that does not exist: the error names it.
      listOrganizations: async (_request, { db }) => {
        await sql`select * from no_such_table`.execute(db);
        throw new Error('unreachable');
      },
      // A foreign key violation: the error names the table, the constraint and the missing value.
      createTask: async (_request, { db }) => {
        await sql`insert into tasks (team_id, title, owner_id, due_date) values (${randomBytes(8).toString('hex')}, 'x', ${memberId}, '2026-03-31')`.execute(db);
        throw new Error('unreachable');
      },
      // A unique violation on a key's hash: the error detail quotes the hash.
      getTask: async (_request, { db }) => {
        const existing = await db.selectFrom('api_keys').selectAll().where('key_hash', '=', hashKey(ownerKey)).executeTakeFirstOrThrow();
        await db.insertInto('api_keys').values({ ...existing, id: undefined as never, name: 'copy' }).execute();
        throw new Error('unreachable');
      },
      // A not-null violation on a user with a password hash: the error detail lists the failing row.
      updateTask: async (_request, { db }) => {
        const hash = await db.selectFrom('users').select('password_hash').where('password_hash', 'is not', null).executeTakeFirstOrThrow();
        await sql`insert into users (email, name, password_hash) values (${`x.${randomBytes(4).toString('hex')}@example.com`}, null, ${hash.password_hash})`.execute(db);
        throw new Error('unreachable');
      },
      // A plain programming error.
      deleteTask: async () => {
        const missing = undefined as unknown as { field: string };
        return { status: 204, body: missing.field as never };
      },
    },
  });

  const operator = await createOperator(db);
  operatorKey = operator.key;
  const world = await createTeamWorld(db);
  teamId = world.team.id;
  const owner = await world.person('OWNER', 'OWNER');
  ownerKey = owner.key;
  const member = await world.person('MEMBER', 'MEMBER');
  memberKey = member.key;
  memberId = member.user.id;
  expiredKey = (await createKey(db, member.user.id, { expiresAt: new Date(Date.now() - 60_000) })).key;
  revokedKey = (await createKey(db, member.user.id, { revoked: true })).key;
  Object.assign(secrets, { operatorKey, ownerKey, memberKey, expiredKey, revokedKey });
  for (const name of ['operatorKey', 'ownerKey', 'memberKey', 'expiredKey', 'revokedKey']) secrets[`${name}Hash`] = hashKey(secrets[name]!);

  const org = (email: string, owner: Record<string, unknown>) => ({
    name: `Leak test ${randomBytes(3).toString('hex')}`,
    timezone: 'Europe/Bratislava',
    defaultLocale: 'en',
    owner: { email, ...owner },
  });
  const ownerEmail = `owner.${randomBytes(4).toString('hex')}@example.com`;
  const platform = { key: operatorKey };

  // Successes that carry secrets.
  expect((await call('new platform organization with a password', 'POST', '/v1/platform/orgs', { ...platform, body: org(ownerEmail, { password: secrets.password }) })).status).toBe(201);
  expect((await call('provider key', 'PUT', '/v1/platform/ai/providers/OPENAI', { ...platform, body: { apiKey: secrets.providerKey, defaultModel: 'gpt-4.1-mini' } })).status).toBe(200);
  expect((await call('providers', 'GET', '/v1/platform/ai', platform)).status).toBe(200);
  const stored = await db.selectFrom('users').select('password_hash').where('email', '=', ownerEmail).executeTakeFirstOrThrow();
  secrets.passwordHash = stored.password_hash!;
  for (const key of [ownerKey, memberKey]) await call('me', 'GET', '/v1/me', { key });

  // Bad input carrying secrets.
  const fresh = () => `new.${randomBytes(4).toString('hex')}@example.com`;
  await call('password and externalOnly', 'POST', '/v1/platform/orgs', { ...platform, body: org(fresh(), { password: secrets.password, externalOnly: true }) });
  await call('short password', 'POST', '/v1/platform/orgs', { ...platform, body: org(fresh(), { password: secrets.shortPassword }) });
  await call('long password', 'POST', '/v1/platform/orgs', { ...platform, body: org(fresh(), { password: secrets.longPassword }) });
  await call('password with a bad e-mail', 'POST', '/v1/platform/orgs', { ...platform, body: org('not-an-e-mail', { password: secrets.password }) });
  await call('password with an unknown zone', 'POST', '/v1/platform/orgs', { ...platform, body: { ...org(fresh(), { password: secrets.password }), timezone: 'Mars/Olympus' } });
  await call('password as a number', 'POST', '/v1/platform/orgs', { ...platform, body: org(fresh(), { password: 12345678 }) });
  await call('password for a member', 'POST', `/v1/orgs/${world.org.id}/members`, { key: ownerKey, body: { email: fresh(), role: 'MEMBER', password: secrets.password } });
  await call('password without a platform scope', 'POST', '/v1/platform/orgs', { key: ownerKey, body: org(fresh(), { password: secrets.password }) });
  await call('short provider key', 'PUT', '/v1/platform/ai/providers/OPENAI', { ...platform, body: { apiKey: secrets.shortProviderKey, defaultModel: 'gpt-4.1-mini' } });
  await call('provider key of an unknown provider', 'PUT', '/v1/platform/ai/providers/MISTRAL', { ...platform, body: { apiKey: secrets.otherProviderKey, defaultModel: 'x' } });
  await call('provider key with no model', 'PUT', '/v1/platform/ai/providers/ANTHROPIC', { ...platform, body: { apiKey: secrets.otherProviderKey } });
  await call('provider key with an empty model', 'PUT', '/v1/platform/ai/providers/ANTHROPIC', { ...platform, body: { apiKey: secrets.otherProviderKey, defaultModel: '   ' } });
  await call('provider key without a platform scope', 'PUT', '/v1/platform/ai/providers/ANTHROPIC', { key: memberKey, body: { apiKey: secrets.otherProviderKey, defaultModel: 'x' } });
  await call('provider key in broken JSON', 'PUT', '/v1/platform/ai/providers/ANTHROPIC', {
    ...platform,
    rawBody: `{"apiKey": "${secrets.otherProviderKey}", `,
    headers: { 'content-type': 'application/json' },
  });
  await call('provider key as text', 'PUT', '/v1/platform/ai/providers/ANTHROPIC', {
    ...platform,
    rawBody: `apiKey=${secrets.otherProviderKey}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  await call('an API key in a query', 'GET', `/v1/teams/${teamId}/tasks?key=${memberKey}`, { key: memberKey });
  await call('an API key in a body', 'POST', `/v1/teams/${teamId}/tasks`, { key: memberKey, body: { title: memberKey, dueDate: 'tomorrow' } });
  await call('an API key as a cursor', 'GET', `/v1/teams/${teamId}/tasks?cursor=${ownerKey}`, { key: memberKey });
  await call('an API key as an id', 'GET', `/v1/tasks/${ownerKey}`, { key: memberKey });
  await call('an API key as a request id', 'GET', '/v1/me', { key: memberKey, headers: { 'x-request-id': memberKey } });
  await call('an API key as the request id of a refused request', 'GET', '/v1/me', { headers: { 'x-request-id': ownerKey } });
  await call('an unknown path', 'GET', `/v1/${memberKey}`, { key: memberKey });
  await call('a body over 64 KB', 'POST', `/v1/teams/${teamId}/tasks`, { key: memberKey, body: { title: secrets.password!.repeat(5000) } });

  // Unusable keys.
  await call('expired key', 'GET', '/v1/me', { key: expiredKey });
  await call('revoked key', 'GET', '/v1/me', { key: revokedKey });
  await call('key with another scheme', 'GET', '/v1/me', { headers: { authorization: `Basic ${ownerKey}` } });
  await call('read-only use of a platform key', 'GET', '/v1/me', { key: operatorKey });

  // Forced 500s from failing statements and a programming error.
  const taskPath = `/v1/tasks/00000000-0000-4000-8000-0000000000aa`;
  for (const [label, method, path, options] of [
    ['syntax error', 'GET', '/v1/me', { key: memberKey }],
    ['missing table', 'GET', '/v1/orgs', { key: memberKey }],
    ['foreign key', 'POST', `/v1/teams/${teamId}/tasks`, { key: memberKey, body: { title: 'Report', ownerId: memberId, dueDate: '2026-03-31' } }],
    ['unique key hash, with a key as the id in the path', 'GET', `/v1/tasks/${ownerKey}`, { key: memberKey }],
    ['not-null with a password hash', 'PATCH', taskPath, { key: memberKey, body: { title: 'Renamed' } }],
    ['programming error', 'DELETE', taskPath, { key: memberKey }],
  ] as const) {
    const response = await call(label, method, path, options as RequestOptions, failing);
    expect(response.status, label).toBe(500);
  }
  await new Promise((settle) => setImmediate(settle));
}, 120_000);

afterAll(async () => {
  await failing?.close();
  await app?.close();
});

/** The error lines of the log, without the fields that name the request (its path and route). */
function errorTexts(): string[] {
  return lines
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((entry) => (entry.level as number) >= 40)
    .map(({ path: _path, route: _route, ...rest }) => JSON.stringify(rest));
}

const errorBodies = () => responses.filter(({ response }) => response.status >= 400);

const sqlFragments = [/\bselec?t\s/i, /insert into/i, /\bupdate \w+ set\b/i, /\bdelete from\b/i, /syntax error at/i, /violates/i, /does not exist/i, /\bconstraint\b/i, /failing row/i, /\brelation\b/i, /\$argon2/];

describe(`no secret and no SQL in logs or error bodies (${databaseLabel})`, () => {
  it('the requests covered successes, bad input, unusable keys and forced 500s', () => {
    const statuses = new Set(responses.map(({ response }) => response.status));
    for (const status of [200, 201, 401, 403, 404, 413, 415, 422, 500]) expect(statuses, String(status)).toContain(status);
    expect(responses.filter(({ response }) => response.status === 500)).toHaveLength(6);
    expect(lines.filter((line) => line.includes('"internal error"'))).toHaveLength(6);
  });

  it('no log line holds an API key, a password, a provider key or their hashes', () => {
    const log = lines.join('\n');
    for (const [name, value] of Object.entries(secrets)) expect(log.includes(value), name).toBe(false);
  });

  it('no error body holds an API key, a password, a provider key or their hashes', () => {
    for (const { label, response } of errorBodies()) {
      for (const [name, value] of Object.entries(secrets)) expect(response.text.includes(value), `${label}: ${name}`).toBe(false);
    }
  });

  it('a request id that looks like an API key is replaced, not echoed', () => {
    for (const { label, response } of responses.filter(({ label: name }) => name.includes('as a request id') || name.includes('as the request id'))) {
      expect(response.headers.get('x-request-id'), label).not.toMatch(/^ak_/);
    }
  });

  it('no log line and no error body holds SQL or database error text', () => {
    for (const text of [...errorTexts(), ...errorBodies().map(({ response }) => response.text)]) {
      for (const fragment of sqlFragments) expect(text, String(fragment)).not.toMatch(fragment);
    }
  });

  it('no logged error and no error body names a table', async () => {
    const tables = (
      await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = 'public'`.execute(app.db)
    ).rows.map((row) => row.name);
    expect(tables).toEqual(expect.arrayContaining(['api_keys', 'users', 'tasks']));
    const names = [...tables, 'no_such_table'];
    // The stack of a programming error names source files (`handlers/tasks.ts`), so only the other fields count.
    const loggedErrors = lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((entry) => (entry.level as number) >= 40)
      .map((entry) => JSON.stringify({ ...(entry.err as object), stack: undefined, msg: entry.msg }));
    for (const text of loggedErrors) for (const name of names) expect(text, name).not.toMatch(new RegExp(`\\b${name}\\b`));
    // Error bodies speak of issues, goals and documents: there a table name counts when it is quoted, as
    // database errors write them, or has the shape of one (`api_keys`).
    for (const { response } of errorBodies()) {
      for (const name of names) {
        expect(response.text, name).not.toContain(`\\"${name}\\"`);
        if (name.includes('_')) expect(response.text, name).not.toMatch(new RegExp(`\\b${name}\\b`));
      }
    }
    for (const text of errorTexts()) for (const name of names) expect(text, name).not.toContain(`\\"${name}\\"`);
  });

  it('a forced 500 is still logged with its request id, the kind of error and, for the database, its SQLSTATE', () => {
    const internal = lines.map((line) => JSON.parse(line) as Record<string, any>).filter((entry) => entry.msg === 'internal error');
    for (const entry of internal) {
      expect(entry.requestId).toEqual(expect.any(String));
      expect(entry.err.type).toEqual(expect.any(String));
      expect(entry.err.stack).toMatch(/\bat /);
    }
    expect(internal.map((entry) => entry.err.sqlState).sort()).toEqual(
      expect.arrayContaining(['23502', '23503', '23505', '42601', '42P01']),
    );
    expect(internal.find((entry) => !entry.err.sqlState)!.err.message).toMatch(/field/);
  });
});

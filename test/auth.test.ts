/**
 * Authentication and scopes, as the reference's "Authentication" section and the contract's
 * description say: which keys get 401, which scopes allow which operations, a key acting with its
 * owner's current roles, lastUsedAt written at most about once a minute, keys stored only as hashes,
 * and the platform list of accounts.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../src/auth/apiKeys.js';
import { databaseLabel } from './support/database.js';
import { addOrganizationMember, createCaller, createKey, createOrganization, createUser } from './support/factories.js';
import { operations } from './support/contract.js';
import { walkPages } from './support/pages.js';
import { startTestApp, type ApiResponse, type TestApp } from './support/testApp.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const minute = 60_000;
const day = 24 * 60 * minute;
const someId = '00000000-0000-4000-8000-00000000c001';

function expectError(response: ApiResponse, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.body).toEqual({ error: { code, message: expect.any(String) } });
}

async function lastUsedAt(keyId: string): Promise<Date | null> {
  const row = await app.db.selectFrom('api_keys').select('last_used_at').where('id', '=', keyId).executeTakeFirstOrThrow();
  return row.last_used_at;
}

/**
 * The server records a key's use without awaiting it: poll the row until it is accepted, or for as long
 * as a busy machine may take to write it (a test that expects no write passes on the unchanged value).
 */
async function waitForLastUsedAt(keyId: string, accept: (value: Date | null) => boolean): Promise<Date | null> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await lastUsedAt(keyId);
    if (accept(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface PlatformUser {
  id: string;
  email: string;
  name: string;
  systemRole: string;
  orgCount: number;
  activeApiKeys: number;
  createdAt: string;
}

describe(`authentication: 401 unauthenticated (${databaseLabel})`, () => {
  it('a request without an Authorization header gets 401', async () => {
    const response = await app.request('GET', '/v1/me');
    expectError(response, 401, 'unauthenticated');
  });

  it.each([
    ['Basic', (key: string) => `Basic ${Buffer.from(`user:${key}`).toString('base64')}`],
    ['Token', (key: string) => `Token ${key}`],
    ['the bare key without a scheme', (key: string) => key],
  ])('a valid key sent with a non-Bearer scheme (%s) gets 401', async (_scheme, header) => {
    const { key } = await createCaller(app.db);
    const response = await app.request('GET', '/v1/me', { headers: { authorization: header(key) } });
    expectError(response, 401, 'unauthenticated');
  });

  it('an empty Bearer credential gets 401', async () => {
    const response = await app.request('GET', '/v1/me', { headers: { authorization: 'Bearer ' } });
    expectError(response, 401, 'unauthenticated');
  });

  it('a malformed key (ak_short) gets 401', async () => {
    const response = await app.request('GET', '/v1/me', { key: 'ak_short' });
    expectError(response, 401, 'unauthenticated');
  });

  it('a key without the ak_ prefix gets 401, even when the rest of it is a stored key', async () => {
    const { key } = await createCaller(app.db);
    const response = await app.request('GET', '/v1/me', { key: key.slice('ak_'.length) });
    expectError(response, 401, 'unauthenticated');
  });

  it('an unknown well-formed key gets 401', async () => {
    const response = await app.request('GET', '/v1/me', { key: generateKey().key });
    expectError(response, 401, 'unauthenticated');
  });

  it('an expired key (expiresAt in the past) gets 401', async () => {
    const user = await createUser(app.db);
    const { key } = await createKey(app.db, user.id, { expiresAt: new Date(Date.now() - minute) });
    const response = await app.request('GET', '/v1/me', { key });
    expectError(response, 401, 'unauthenticated');
  });

  it('a revoked key gets 401', async () => {
    const user = await createUser(app.db);
    const { key } = await createKey(app.db, user.id, { revoked: true });
    const response = await app.request('GET', '/v1/me', { key });
    expectError(response, 401, 'unauthenticated');
  });

  it('a key revoked after working gets 401 on the very next request', async () => {
    const { key, keyRow } = await createCaller(app.db);
    expect((await app.request('GET', '/v1/me', { key })).status).toBe(200);
    await app.db.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', keyRow.id).execute();
    const response = await app.request('GET', '/v1/me', { key });
    expectError(response, 401, 'unauthenticated');
  });
});

describe(`scopes: 403 insufficientScope (${databaseLabel})`, () => {
  const writeOperations = operations.filter((op) => (op.operation.security?.[0] as { apiKey?: string[] } | undefined)?.apiKey?.[0] === 'write');
  const pathOf = (template: string) => `/v1${template.replace(/\{\w+\}/g, someId)}`;

  it('a read key may read: GET /me answers 200', async () => {
    const { key } = await createCaller(app.db, { scopes: ['read'] });
    const response = await app.request('GET', '/v1/me', { key });
    expect(response.status).toBe(200);
    expect(response.body.scopes).toEqual(['read']);
  });

  it.each(writeOperations.map((op) => [op.method.toUpperCase(), op.path] as const))(
    'a read key gets 403 insufficientScope on the change %s %s',
    async (method, template) => {
      const { key } = await createCaller(app.db, { scopes: ['read'] });
      const response = await app.request(method, pathOf(template), { key });
      expectError(response, 403, 'insufficientScope');
    },
  );

  it('a read key gets 403 insufficientScope on a change with a well-formed body (scope is checked before the body)', async () => {
    const { user, key } = await createCaller(app.db, { scopes: ['read'] });
    const response = await app.request('POST', `/v1/teams/${someId}/tasks`, {
      key,
      body: { title: 'Call the supplier', ownerId: user.id, dueDate: '2026-04-01' },
    });
    expectError(response, 403, 'insufficientScope');
  });

  it('a read key gets 403 insufficientScope on a change with an invalid body, not 422', async () => {
    const { key } = await createCaller(app.db, { scopes: ['read'] });
    const response = await app.request('PATCH', `/v1/tasks/${someId}`, { key, body: {} });
    expectError(response, 403, 'insufficientScope');
  });

  it('a write key reads too: GET /me and GET /orgs answer 200', async () => {
    const { key } = await createCaller(app.db, { scopes: ['write'] });
    expect((await app.request('GET', '/v1/me', { key })).status).toBe(200);
    expect((await app.request('GET', '/v1/orgs', { key })).status).toBe(200);
  });

  it('a platform key gets 403 insufficientScope on GET /me', async () => {
    const { key } = await createCaller(app.db, { systemRole: 'SUPERADMIN', scopes: ['platform'] });
    const response = await app.request('GET', '/v1/me', { key });
    expectError(response, 403, 'insufficientScope');
  });

  it('a platform key gets 403 insufficientScope on a change outside platform administration', async () => {
    const { key } = await createCaller(app.db, { systemRole: 'SUPERADMIN', scopes: ['platform'] });
    const response = await app.request('PATCH', `/v1/tasks/${someId}`, { key, body: { completed: true } });
    expectError(response, 403, 'insufficientScope');
  });

  it('a write key of a SUPERADMIN gets 403 insufficientScope on GET /platform/users', async () => {
    const { key } = await createCaller(app.db, { systemRole: 'SUPERADMIN', scopes: ['write'] });
    const response = await app.request('GET', '/v1/platform/users', { key });
    expectError(response, 403, 'insufficientScope');
  });

  it('a read key of a SUPERADMIN gets 403 insufficientScope on GET /platform/users', async () => {
    const { key } = await createCaller(app.db, { systemRole: 'SUPERADMIN', scopes: ['read'] });
    const response = await app.request('GET', '/v1/platform/users', { key });
    expectError(response, 403, 'insufficientScope');
  });

  it('a platform key of an owner who is not a SUPERADMIN gets 403 insufficientScope on GET /platform/users', async () => {
    const { key } = await createCaller(app.db, { systemRole: 'USER', scopes: ['platform'] });
    const response = await app.request('GET', '/v1/platform/users', { key });
    expectError(response, 403, 'insufficientScope');
  });

  it('a platform key of a SUPERADMIN lists accounts oldest first, with orgCount and activeApiKeys counting only active keys', async () => {
    const operator = await createCaller(app.db, { systemRole: 'SUPERADMIN', scopes: ['platform'] });
    const older = await createUser(app.db, { name: 'Olga Older', email: `olga.${Date.now()}@example.com` });
    const newer = await createUser(app.db, { name: 'Nina Newer' });
    await app.db.updateTable('users').set({ created_at: new Date('2001-02-03T04:05:06.007Z') }).where('id', '=', older.id).execute();
    await app.db.updateTable('users').set({ created_at: new Date('2001-02-03T04:05:06.008Z') }).where('id', '=', newer.id).execute();
    for (const org of [await createOrganization(app.db), await createOrganization(app.db)]) {
      await addOrganizationMember(app.db, org.id, older.id, 'MEMBER');
    }
    await createKey(app.db, older.id, { scopes: ['read'] });
    await createKey(app.db, older.id, { scopes: ['write'] });
    await createKey(app.db, older.id, { revoked: true });
    await createKey(app.db, older.id, { expiresAt: new Date(Date.now() - day) });

    const { items: users } = await walkPages<PlatformUser>(app, '/v1/platform/users', operator.key, { limit: 200 });

    const createdAt = users.map((user) => user.createdAt);
    expect(createdAt).toEqual([...createdAt].sort());
    const olderIndex = users.findIndex((user) => user.id === older.id);
    const newerIndex = users.findIndex((user) => user.id === newer.id);
    expect(olderIndex).toBeGreaterThanOrEqual(0);
    expect(newerIndex).toBe(olderIndex + 1);
    expect(users[olderIndex]).toEqual({
      id: older.id,
      email: older.email,
      name: 'Olga Older',
      systemRole: 'USER',
      orgCount: 2,
      activeApiKeys: 2,
      createdAt: '2001-02-03T04:05:06.007Z',
    });
    expect(users[newerIndex]).toMatchObject({ id: newer.id, orgCount: 0, activeApiKeys: 0, createdAt: '2001-02-03T04:05:06.008Z' });
    expect(users.find((user) => user.id === operator.user.id)).toMatchObject({ systemRole: 'SUPERADMIN', activeApiKeys: 1 });
  });

  it('after its owner stops being a SUPERADMIN, the same platform key gets 403 insufficientScope on the very next request', async () => {
    const { user, key } = await createCaller(app.db, { systemRole: 'SUPERADMIN', scopes: ['platform'] });
    expect((await app.request('GET', '/v1/platform/users?limit=1', { key })).status).toBe(200);
    await app.db.updateTable('users').set({ system_role: 'USER' }).where('id', '=', user.id).execute();
    const response = await app.request('GET', '/v1/platform/users?limit=1', { key });
    expectError(response, 403, 'insufficientScope');
  });
});

describe(`a key acts with its owner's current roles (${databaseLabel})`, () => {
  it('after the owner is removed from an organization, GET /orgs/{orgId} with the same key answers 404 on the very next request', async () => {
    const { user, key } = await createCaller(app.db, { scopes: ['read'] });
    const org = await createOrganization(app.db);
    await addOrganizationMember(app.db, org.id, user.id, 'ADMIN');
    expect((await app.request('GET', `/v1/orgs/${org.id}`, { key })).status).toBe(200);

    await app.db.deleteFrom('organization_members').where('org_id', '=', org.id).where('user_id', '=', user.id).execute();

    const response = await app.request('GET', `/v1/orgs/${org.id}`, { key });
    expectError(response, 404, 'notFound');
  });

  it('after the owner is added to an organization, the same key sees it on the very next request', async () => {
    const { user, key } = await createCaller(app.db, { scopes: ['read'] });
    const org = await createOrganization(app.db);
    expect((await app.request('GET', `/v1/orgs/${org.id}`, { key })).status).toBe(404);

    await addOrganizationMember(app.db, org.id, user.id, 'MEMBER');

    const response = await app.request('GET', `/v1/orgs/${org.id}`, { key });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: org.id, role: 'MEMBER' });
  });
});

describe(`lastUsedAt (${databaseLabel})`, () => {
  it('after a request, the key\'s last_used_at is set to the time of the request', async () => {
    const { key, keyRow } = await createCaller(app.db);
    expect(keyRow.last_used_at).toBeNull();
    const before = Date.now();
    expect((await app.request('GET', '/v1/me', { key })).status).toBe(200);
    const after = Date.now();

    const used = await waitForLastUsedAt(keyRow.id, (value) => value !== null);

    expect(used).not.toBeNull();
    expect(used!.getTime()).toBeGreaterThanOrEqual(before);
    expect(used!.getTime()).toBeLessThanOrEqual(after);
  });

  it('a second request right after does not change last_used_at (written at most about once a minute)', async () => {
    const { key, keyRow } = await createCaller(app.db);
    expect((await app.request('GET', '/v1/me', { key })).status).toBe(200);
    const first = await waitForLastUsedAt(keyRow.id, (value) => value !== null);
    expect(first).not.toBeNull();

    expect((await app.request('GET', '/v1/orgs', { key })).status).toBe(200);
    await sleep(300);

    expect(await lastUsedAt(keyRow.id)).toEqual(first);
  });

  it('a key whose last_used_at is older than a minute gets it updated', async () => {
    const { key, keyRow } = await createCaller(app.db);
    const old = new Date(Date.now() - 2 * minute);
    await app.db.updateTable('api_keys').set({ last_used_at: old }).where('id', '=', keyRow.id).execute();
    const before = Date.now();

    expect((await app.request('GET', '/v1/me', { key })).status).toBe(200);
    const used = await waitForLastUsedAt(keyRow.id, (value) => value !== null && value.getTime() !== old.getTime());

    expect(used!.getTime()).toBeGreaterThanOrEqual(before);
  });
});

describe(`keys are stored only as hashes (${databaseLabel})`, () => {
  it('the api_keys row holds neither the key nor any column equal to it, only its SHA-256 hash', async () => {
    const { key, keyRow } = await createCaller(app.db);
    const row = await app.db.selectFrom('api_keys').selectAll().where('id', '=', keyRow.id).executeTakeFirstOrThrow();

    for (const [column, value] of Object.entries(row)) {
      const text = value instanceof Date ? value.toISOString() : JSON.stringify(value);
      expect(text, column).not.toContain(key);
      expect(text, column).not.toContain(key.slice('ak_'.length));
    }
    expect(row.key_hash).toBe(createHash('sha256').update(key).digest('hex'));
  });

  it('the stored prefix is the key\'s first 8 characters', async () => {
    const { key, keyRow } = await createCaller(app.db);
    const row = await app.db.selectFrom('api_keys').select('prefix').where('id', '=', keyRow.id).executeTakeFirstOrThrow();
    expect(row.prefix).toBe(key.slice(0, 8));
    expect(row.prefix).toMatch(/^ak_.{5}$/);
  });

  it('the key is accepted by its hash: a request with it authenticates as its owner', async () => {
    const { user, key, keyRow } = await createCaller(app.db);
    const response = await app.request('GET', '/v1/me', { key });
    expect(response.status).toBe(200);
    expect(response.body.user.id).toBe(user.id);
    expect(response.body.key.id).toBe(keyRow.id);
  });
});

describe(`GET /platform/users paginates (${databaseLabel})`, () => {
  it('with limit=2 a walk returns every account once, oldest first (accounts created at the same instant by id)', async () => {
    const operator = await createCaller(app.db, { systemRole: 'SUPERADMIN', scopes: ['platform'] });
    const sameInstant = new Date('2003-03-03T03:03:03.003Z');
    for (let index = 0; index < 5; index += 1) {
      const user = await createUser(app.db);
      await app.db
        .updateTable('users')
        .set({ created_at: index < 3 ? sameInstant : new Date(sameInstant.getTime() + index) })
        .where('id', '=', user.id)
        .execute();
    }
    const expected = await app.db.selectFrom('users').select(['id', 'created_at']).orderBy('created_at').orderBy('id').execute();

    const { items: users, sizes } = await walkPages<PlatformUser>(app, '/v1/platform/users', operator.key, { limit: 2 });

    expect(users.map((user) => user.id)).toEqual(expected.map((row) => row.id));
    expect(new Set(users.map((user) => user.id)).size).toBe(users.length);
    expect(sizes).toHaveLength(Math.max(1, Math.ceil(expected.length / 2)));
  });
});

/**
 * Authentication from memory in one process (src/auth/callerCache.ts), on the embedded database and
 * on PostgreSQL: a caller read once is kept; an unknown or revoked key never is; expiry is judged on
 * every request against the app's clock; and a change that takes rights away — made through the API
 * or in SQL on the app's own database — is refused on the very next request, with no wait: PGlite
 * tells its listeners at commit, and on PostgreSQL the connection that committed hears it before its
 * COMMIT returns. Several processes: test/authCache.processes.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../src/auth/apiKeys.js';
import { databaseLabel, postgresUrl } from './support/database.js';
import { addOrganizationMember, createCaller, createKey, createOrganization } from './support/factories.js';
import { waitFor } from './support/processes.js';
import { startTestApp, type TestApp } from './support/testApp.js';

const hour = 60 * 60 * 1000;
let clock: Date | undefined;
let app: TestApp;
let operatorKey: string;

beforeAll(async () => {
  app = await startTestApp({ now: () => clock ?? new Date() });
  operatorKey = (await createCaller(app.db, { systemRole: 'SUPERADMIN', scopes: ['platform'] })).key;
});
afterAll(() => app.close());

const kept = (key: string) => app.callers!.get(hashKey(key));

/**
 * Asks until the caller is kept. On PostgreSQL the listening connection hears a change of the test's
 * own (already heard by the connection that made it) a moment later, and a caller read meanwhile is
 * not kept, as any caller read while a notification comes.
 */
async function keep(key: string, path: string) {
  for (let attempt = 0; attempt < 50 && !kept(key); attempt += 1) {
    await expectStatus(key, 'GET', path, 200);
    if (!kept(key)) await new Promise((wait) => setTimeout(wait, 20));
  }
  expect(kept(key)).toBeDefined();
}

async function expectStatus(key: string, method: string, path: string, status: number, body?: unknown) {
  const response = await app.request(method, path, { key, body });
  expect(response.status, response.text).toBe(status);
  return response;
}

/** A member of a new organization with `role`, kept in memory. */
async function member(role: 'OWNER' | 'ADMIN' | 'MEMBER') {
  const organization = await createOrganization(app.db);
  const caller = await createCaller(app.db);
  await addOrganizationMember(app.db, organization.id, caller.user.id, role);
  await keep(caller.key, `/v1/orgs/${organization.id}`);
  return { ...caller, orgId: organization.id };
}

describe(`which callers are kept (${databaseLabel})`, () => {
  it('a caller read once is kept, with its organizations', async () => {
    const { key, orgId } = await member('MEMBER');
    expect(kept(key)!.caller.organizations.map((organization) => organization.id)).toEqual([orgId]);
  });

  it('an unknown key is refused and never kept', async () => {
    const key = `ak_${randomBytes(32).toString('base64url')}`;
    await expectStatus(key, 'GET', '/v1/me', 401);
    expect(kept(key)).toBeUndefined();
  });

  it('a revoked key is refused and never kept', async () => {
    const { user } = await createCaller(app.db);
    const { key } = await createKey(app.db, user.id, { revoked: true });
    await expectStatus(key, 'GET', '/v1/me', 401);
    expect(kept(key)).toBeUndefined();
  });

  it('a kept key is refused from the instant it expires by the app clock, with nothing changed in the database', async () => {
    const { user } = await createCaller(app.db);
    const expiresAt = new Date(Date.now() + hour);
    const { key } = await createKey(app.db, user.id, { expiresAt });
    try {
      clock = new Date(expiresAt.getTime() - 1);
      await keep(key, '/v1/me');
      clock = expiresAt;
      await expectStatus(key, 'GET', '/v1/me', 401);
      expect(kept(key)).toBeDefined();
    } finally {
      clock = undefined;
    }
  });

  it('recording a key use (last_used_at) keeps its caller', async () => {
    const { key, keyRow } = await createCaller(app.db);
    await keep(key, '/v1/me');
    await app.db.updateTable('api_keys').set({ last_used_at: new Date(Date.now() - hour) }).where('id', '=', keyRow.id).execute();
    expect(kept(key)).toBeDefined();
  });

  it('a kept caller cannot be changed by a handler: it is frozen, shared by every request of its key', async () => {
    const { key } = await member('MEMBER');
    expect(Object.isFrozen(kept(key)!.caller)).toBe(true);
    expect(Object.isFrozen(kept(key)!.caller.organizations[0])).toBe(true);
  });

  it('with the cache off (AUTH_CACHE=off) nothing is kept and every request reads its caller', async () => {
    const uncached = await startTestApp({ database: app.database, callerCache: false });
    try {
      const { key } = await createCaller(app.db);
      const response = await uncached.request('GET', '/v1/me', { key });
      expect(response.status).toBe(200);
      expect(uncached.callers).toBeUndefined();
    } finally {
      await uncached.close();
    }
  });
});

describe(`a change made through the API is refused on the very next request (${databaseLabel})`, () => {
  it('a revoked key', async () => {
    const { key, keyRow } = await createCaller(app.db);
    await expectStatus(key, 'GET', '/v1/me', 200);
    await expectStatus(operatorKey, 'DELETE', `/v1/platform/api-keys/${keyRow.id}`, 204);
    await expectStatus(key, 'GET', '/v1/me', 401);
  });

  it('a member removed', async () => {
    const owner = await member('OWNER');
    const { key, user } = await createCaller(app.db);
    await addOrganizationMember(app.db, owner.orgId, user.id, 'MEMBER');
    await expectStatus(key, 'GET', `/v1/orgs/${owner.orgId}`, 200);
    await expectStatus(owner.key, 'DELETE', `/v1/orgs/${owner.orgId}/members/${user.id}`, 204);
    await expectStatus(key, 'GET', `/v1/orgs/${owner.orgId}`, 404);
  });

  it('a role changed', async () => {
    const owner = await member('OWNER');
    const { key, user } = await createCaller(app.db);
    await addOrganizationMember(app.db, owner.orgId, user.id, 'ADMIN');
    await expectStatus(key, 'GET', `/v1/orgs/${owner.orgId}/members`, 200);
    await expectStatus(owner.key, 'PATCH', `/v1/orgs/${owner.orgId}/members/${user.id}`, 200, { role: 'MEMBER' });
    await expectStatus(key, 'GET', `/v1/orgs/${owner.orgId}/members`, 403);
  });

  it('an organization suspended', async () => {
    const { key, orgId } = await member('ADMIN');
    await expectStatus(key, 'PATCH', `/v1/orgs/${orgId}`, 200, { defaultLocale: 'en' });
    await expectStatus(operatorKey, 'PATCH', `/v1/platform/orgs/${orgId}`, 200, { status: 'SUSPENDED' });
    await expectStatus(key, 'PATCH', `/v1/orgs/${orgId}`, 409, { defaultLocale: 'en' });
  });

  it('a member added sees the organization at once', async () => {
    const owner = await member('OWNER');
    const { key, user } = await createCaller(app.db);
    await expectStatus(key, 'GET', `/v1/orgs/${owner.orgId}`, 404);
    await expectStatus(owner.key, 'POST', `/v1/orgs/${owner.orgId}/members`, 201, { email: user.email, role: 'MEMBER' });
    await expectStatus(key, 'GET', `/v1/orgs/${owner.orgId}`, 200);
  });

  it('an organization renamed shows its new name at once', async () => {
    const { key, orgId } = await member('OWNER');
    await expectStatus(key, 'GET', '/v1/me', 200);
    await expectStatus(key, 'PATCH', `/v1/orgs/${orgId}`, 200, { name: 'Renamed at once' });
    const me = await expectStatus(key, 'GET', '/v1/me', 200);
    expect(me.body.orgs.map((organization: { name: string }) => organization.name)).toEqual(['Renamed at once']);
  });
});

describe(`a change made in SQL is refused on the very next request (${databaseLabel})`, () => {
  it('a revoked key', async () => {
    const { key, keyRow } = await createCaller(app.db);
    await expectStatus(key, 'GET', '/v1/me', 200);
    await app.db.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', keyRow.id).execute();
    await expectStatus(key, 'GET', '/v1/me', 401);
  });

  it('a kept key whose expiry is moved into the past', async () => {
    const { key, keyRow } = await createCaller(app.db);
    await keep(key, '/v1/me');
    await app.db.updateTable('api_keys').set({ expires_at: new Date(Date.now() - hour) }).where('id', '=', keyRow.id).execute();
    await expectStatus(key, 'GET', '/v1/me', 401);
  });

  it('a deleted key', async () => {
    const { key, keyRow } = await createCaller(app.db);
    await expectStatus(key, 'GET', '/v1/me', 200);
    await app.db.deleteFrom('api_keys').where('id', '=', keyRow.id).execute();
    await expectStatus(key, 'GET', '/v1/me', 401);
  });

  it('a member removed', async () => {
    const { key, user, orgId } = await member('MEMBER');
    await app.db.deleteFrom('organization_members').where('org_id', '=', orgId).where('user_id', '=', user.id).execute();
    await expectStatus(key, 'GET', `/v1/orgs/${orgId}`, 404);
  });

  it('a role changed, inside a transaction: at its commit', async () => {
    const { key, user, orgId } = await member('ADMIN');
    await expectStatus(key, 'GET', `/v1/orgs/${orgId}/members`, 200);
    await app.db.transaction().execute((trx) =>
      trx.updateTable('organization_members').set({ role: 'MEMBER' }).where('org_id', '=', orgId).where('user_id', '=', user.id).execute(),
    );
    await expectStatus(key, 'GET', `/v1/orgs/${orgId}/members`, 403);
  });

  it('an organization suspended', async () => {
    const { key, orgId } = await member('ADMIN');
    await app.db.updateTable('organizations').set({ status: 'SUSPENDED' }).where('id', '=', orgId).execute();
    await expectStatus(key, 'PATCH', `/v1/orgs/${orgId}`, 409, { defaultLocale: 'en' });
  });

  it('a user no longer SUPERADMIN', async () => {
    const { key, user } = await createCaller(app.db, { systemRole: 'SUPERADMIN', scopes: ['platform'] });
    await expectStatus(key, 'GET', '/v1/platform/orgs', 200);
    await app.db.updateTable('users').set({ system_role: 'USER' }).where('id', '=', user.id).execute();
    await expectStatus(key, 'GET', '/v1/platform/orgs', 403);
  });

  it('a member added, and an account renamed', async () => {
    const { key, user } = await createCaller(app.db);
    const organization = await createOrganization(app.db);
    await expectStatus(key, 'GET', `/v1/orgs/${organization.id}`, 404);
    await addOrganizationMember(app.db, organization.id, user.id, 'MEMBER');
    await expectStatus(key, 'GET', `/v1/orgs/${organization.id}`, 200);
    await app.db.updateTable('users').set({ name: 'Renamed in SQL' }).where('id', '=', user.id).execute();
    expect((await expectStatus(key, 'GET', '/v1/me', 200)).body.user.name).toBe('Renamed in SQL');
  });

  it('a watched table truncated forgets every caller, also those it held no row of', async () => {
    const { key } = await createCaller(app.db);
    await member('MEMBER');
    await keep(key, '/v1/me');
    await app.db.transaction().execute(async (trx) => {
      // The rows are put back in the same transaction: only the truncation's `flush` concerns a caller without any.
      const rows = await trx.selectFrom('organization_members').selectAll().execute();
      await sql`truncate organization_members`.execute(trx);
      await trx.insertInto('organization_members').values(rows).execute();
    });
    expect(kept(key)).toBeUndefined();
  });
});

describe.skipIf(!postgresUrl)('an instance whose listening connection is cut off without an error (PostgreSQL only: PGlite listens inside the process)', () => {
  /**
   * The instance keeps a caller for a minute here, so that only the listener's heartbeat can make it
   * refuse a revoked key within seconds. Its listening connection is cut off by stopping the server
   * process behind it (SIGSTOP: no notification arrives, and nothing errors); the test's own session,
   * not the instance's pool, changes the key, as another instance or an operator would.
   */
  let cut: TestApp;
  let session: pg.Client;
  let stopped: number | undefined;
  beforeAll(async () => {
    cut = await startTestApp({ database: app.database, callerCache: { ttlMs: 60_000 } });
    session = new pg.Client({ connectionString: app.database.url });
    await session.connect();
  });
  afterAll(async () => {
    if (stopped !== undefined) process.kill(stopped, 'SIGCONT');
    await session?.end();
    await cut?.close();
  });

  const keptBy = (target: TestApp, key: string) => target.callers!.get(hashKey(key));

  /**
   * Stops the server process of the instance's listening connection. The instance's pooled
   * connections also listen for changes of callers (its own changes, heard at commit) and would hear
   * this one: they are ended, and the ones the pool opens next to send heartbeats do not listen.
   */
  async function cutOffListener(): Promise<void> {
    const { rows } = await session.query<{ pid: number }>(
      'select pid from pg_stat_activity where datname = current_database() and application_name = $1',
      [`teamos listen ${process.pid}`],
    );
    expect(rows, 'the listening connection of the instance').toHaveLength(1);
    stopped = rows[0]!.pid;
    process.kill(stopped, 'SIGSTOP');
    await session.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid not in ($1, pg_backend_pid())', [stopped]);
  }

  function reconnectListener(): void {
    if (stopped === undefined) return;
    process.kill(stopped, 'SIGCONT');
    stopped = undefined;
  }

  it('a key revoked in SQL is refused within about 2 s of its commit', async () => {
    const { key, keyRow } = await createCaller(app.db);
    for (let attempt = 0; attempt < 50 && !keptBy(cut, key); attempt += 1) await cut.request('GET', '/v1/me', { key });
    expect(keptBy(cut, key)).toBeDefined();
    try {
      await cutOffListener();
      await session.query('update api_keys set revoked_at = now() where id = $1', [keyRow.id]);
      const committed = Date.now();
      // 2 s of silence, and room for a busy machine; a kept caller would be accepted for a minute.
      await waitFor('the revoked key refused', async () => (await cut.request('GET', '/v1/me', { key })).status === 401, 10_000);
      console.info(`listener cut off: a key revoked in SQL refused ${Date.now() - committed} ms after its commit`);
    } finally {
      reconnectListener();
    }
  }, 60_000);

  it('keeps callers in memory again once its heartbeat is heard again', async () => {
    const { key } = await createCaller(app.db);
    try {
      await cutOffListener();
      // Long enough for the silence to be noticed: nothing is kept meanwhile.
      await new Promise((wait) => setTimeout(wait, 2_500));
      expect((await cut.request('GET', '/v1/me', { key })).status).toBe(200);
      expect(keptBy(cut, key)).toBeUndefined();
      reconnectListener();
      await waitFor('the caller kept again', async () => (await cut.request('GET', '/v1/me', { key })).status === 200 && keptBy(cut, key) !== undefined, 15_000);
    } finally {
      reconnectListener();
    }
  }, 60_000);
});

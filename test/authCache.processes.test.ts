/**
 * Authentication from memory on two real server processes (src/server.ts, each in a process group of
 * its own) on one PostgreSQL database, each keeping callers in memory (AUTH_CACHE on, the default).
 * For each change that takes a caller's rights away — a revoked key, a member removed, a role
 * changed, an organization suspended, a user no longer SUPERADMIN — made through the API on instance
 * A, through the operator command line and through SQL, the victim's next request on instance B is
 * refused, within 100 ms at the p99 of all the tries (twenty of each kind and way: the suite's one
 * timing, which only a lost notification could miss by far), and
 * through the API A itself refuses the very next request. A control drops the triggers of migration
 * 0007 and sees B go on serving a revoked key: the refusals come from the notifications, not from a
 * cache that was never used. A lost listening connection drops B's callers: a change made while it is
 * down is seen on B's next request.
 *
 * The command line has no command to remove a member, change a role or suspend an organization (it
 * stands in for the web application's account and key pages only): through it, a revoked key and a
 * user no longer SUPERADMIN. The API has no operation that takes SUPERADMIN away.
 *
 * PostgreSQL only (TEST_DATABASE_URL): the embedded database allows one process (test/authCache.test.ts
 * holds the in-process invalidation on both).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, type OpenDatabase } from '../src/db/connect.js';
import { migrateToLatest, migrations } from '../src/db/migrate.js';
import { createPostgresDatabase, postgresUrl } from './support/database.js';
import { addOrganizationMember, createCaller, createOrganization } from './support/factories.js';
import { waitFor } from './support/processes.js';
import { startServerProcess, stopServerProcess, type ServerProcess } from './support/serverProcess.js';
import { assertMatchesContract, send, type ApiResponse } from './support/testApp.js';

const root = resolve(import.meta.dirname, '..');
/** Tries per kind of change and way of making it. */
const tries = 20;
const refusedWithinMs = 100;
/** How long a poll of B may go on before the try counts as never refused (far above the bound: it only ends a failing try). */
const giveUpMs = 3_000;
const testMs = 180_000;

const log = (message: string) => console.info(`[authCache.processes] ${message}`);

type Way = 'API' | 'command line' | 'SQL';

/** How each kind of change can be made. */
const ways: Record<string, Way[]> = {
  'a revoked key': ['API', 'command line', 'SQL'],
  'a member removed': ['API', 'SQL'],
  'a role changed': ['API', 'SQL'],
  'an organization suspended': ['API', 'SQL'],
  'a user no longer SUPERADMIN': ['command line', 'SQL'],
};

interface Victim {
  key: string;
  /** The request whose answer the change turns into `refused`. */
  check: { method: string; path: string; body?: unknown };
  allowed: number;
  refused: number;
  /** The change, made one way. */
  change: Partial<Record<Way, () => Promise<void>>>;
}

describe.skipIf(!postgresUrl)('authentication from memory on two server processes on one PostgreSQL (PostgreSQL only: PGlite allows one process)', () => {
  let database: { url: string; drop(): Promise<void> } | undefined;
  let direct: OpenDatabase;
  const started: ServerProcess[] = [];
  let a: ServerProcess;
  let b: ServerProcess;
  let operatorKey: string;
  let ownerKey: string;
  let orgId: string;
  const latencies = new Map<string, number[]>();

  async function call(server: ServerProcess, key: string, method: string, path: string, body?: unknown): Promise<ApiResponse> {
    const response = await send(server.url, method, `/v1${path}`, { key, body });
    assertMatchesContract(method, `/v1${path}`, response);
    return response;
  }

  async function changed(server: ServerProcess, key: string, method: string, path: string, body?: unknown) {
    const response = await call(server, key, method, path, body);
    if (response.status >= 300) throw new Error(`${server.name} answered ${method} ${path} with ${response.status}: ${response.text}`);
  }

  /** `npm run admin` as the operator runs it (without npx, whose start costs seconds); resolves when its result is printed. */
  function admin(args: string[]): Promise<string> {
    return new Promise((done, fail) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/admin.ts', ...args], {
        cwd: root,
        env: { ...process.env, DATABASE_URL: database!.url },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      let printed = false;
      child.stdout.on('data', (chunk) => {
        stdout += chunk;
        // The result line is written after the command's transaction committed.
        if (!printed && stdout.endsWith('\n')) {
          printed = true;
          done(stdout.trim());
        }
      });
      child.stderr.on('data', (chunk) => (stderr += chunk));
      child.once('exit', (code) => {
        if (code !== 0) fail(new Error(`admin ${args.join(' ')} exited with ${code}: ${stderr}`));
        else if (!printed) done(stdout.trim());
      });
    });
  }

  const victims: Record<string, () => Promise<Victim>> = {
    'a revoked key': async () => {
      const { key, keyRow } = await createCaller(direct.db);
      return {
        key,
        check: { method: 'GET', path: '/me' },
        allowed: 200,
        refused: 401,
        change: {
          API: () => changed(a, operatorKey, 'DELETE', `/platform/api-keys/${keyRow.id}`),
          'command line': () => admin(['revoke-key', '--id', keyRow.id]).then(() => undefined),
          SQL: () => direct.db.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', keyRow.id).execute().then(() => undefined),
        },
      };
    },
    'a member removed': async () => {
      const { key, user } = await createCaller(direct.db);
      await addOrganizationMember(direct.db, orgId, user.id, 'MEMBER');
      return {
        key,
        check: { method: 'GET', path: `/orgs/${orgId}` },
        allowed: 200,
        refused: 404,
        change: {
          API: () => changed(a, ownerKey, 'DELETE', `/orgs/${orgId}/members/${user.id}`),
          SQL: () =>
            direct.db.deleteFrom('organization_members').where('org_id', '=', orgId).where('user_id', '=', user.id).execute().then(() => undefined),
        },
      };
    },
    'a role changed': async () => {
      const { key, user } = await createCaller(direct.db);
      await addOrganizationMember(direct.db, orgId, user.id, 'ADMIN');
      return {
        key,
        check: { method: 'GET', path: `/orgs/${orgId}/members?limit=1` },
        allowed: 200,
        refused: 403,
        change: {
          API: () => changed(a, ownerKey, 'PATCH', `/orgs/${orgId}/members/${user.id}`, { role: 'MEMBER' }),
          SQL: () =>
            direct.db
              .updateTable('organization_members')
              .set({ role: 'MEMBER' })
              .where('org_id', '=', orgId)
              .where('user_id', '=', user.id)
              .execute()
              .then(() => undefined),
        },
      };
    },
    'an organization suspended': async () => {
      const organization = await createOrganization(direct.db);
      const { key, user } = await createCaller(direct.db);
      await addOrganizationMember(direct.db, organization.id, user.id, 'ADMIN');
      return {
        key,
        // A change that changes nothing while the organization is active; any change is refused once it is suspended.
        check: { method: 'PATCH', path: `/orgs/${organization.id}`, body: { defaultLocale: 'en' } },
        allowed: 200,
        refused: 409,
        change: {
          API: () => changed(a, operatorKey, 'PATCH', `/platform/orgs/${organization.id}`, { status: 'SUSPENDED' }),
          SQL: () => direct.db.updateTable('organizations').set({ status: 'SUSPENDED' }).where('id', '=', organization.id).execute().then(() => undefined),
        },
      };
    },
    'a user no longer SUPERADMIN': async () => {
      const { key, user } = await createCaller(direct.db, { systemRole: 'SUPERADMIN', scopes: ['platform'] });
      return {
        key,
        check: { method: 'GET', path: '/platform/orgs?limit=1' },
        allowed: 200,
        refused: 403,
        change: {
          'command line': () => admin(['update-user', '--email', user.email, '--superadmin', 'false']).then(() => undefined),
          SQL: () => direct.db.updateTable('users').set({ system_role: 'USER' }).where('id', '=', user.id).execute().then(() => undefined),
        },
      };
    },
  };

  const ask = (server: ServerProcess, victim: Victim) => call(server, victim.key, victim.check.method, victim.check.path, victim.check.body);

  /** Asks until the server answers as allowed twice: the first answer has it read the caller and keep it. */
  async function warm(server: ServerProcess, victim: Victim) {
    for (let n = 0; n < 2; n += 1) {
      const answer = await ask(server, victim);
      expect(answer.status, `${server.name} before the change: ${answer.text}`).toBe(victim.allowed);
    }
  }

  /** From the moment the change returned to the first refusal on B, in ms (Infinity when B still allowed it after `giveUpMs`). */
  async function timeToRefusal(victim: Victim): Promise<number> {
    const changedAt = performance.now();
    for (;;) {
      const answer = await ask(b, victim);
      const elapsed = performance.now() - changedAt;
      if (answer.status === victim.refused) return elapsed;
      expect(answer.status, answer.text).toBe(victim.allowed);
      if (elapsed > giveUpMs) return Infinity;
    }
  }

  beforeAll(async () => {
    database = await createPostgresDatabase('teamos_auth_cache');
    direct = await openPostgres(database.url);
    await migrateToLatest(direct.db);
    const operator = await createCaller(direct.db, { systemRole: 'SUPERADMIN', scopes: ['platform'] });
    operatorKey = operator.key;
    const organization = await createOrganization(direct.db);
    orgId = organization.id;
    const owner = await createCaller(direct.db);
    await addOrganizationMember(direct.db, orgId, owner.user.id, 'OWNER');
    ownerKey = owner.key;

    const env = { DATABASE_URL: database.url, SECRETS_KEY: randomBytes(32).toString('hex') };
    const start = (name: string) => startServerProcess(name, env, { onSpawn: (server) => started.push(server) });
    [a, b] = await Promise.all([start('instance A'), start('instance B')]);
  }, testMs);

  afterAll(async () => {
    await Promise.all(started.map((server) => stopServerProcess(server)));
    for (const [what, measured] of latencies) {
      const sorted = [...measured].sort((x, y) => x - y);
      const at = (share: number) => sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)]!.toFixed(1);
      log(`${what}: refused on the other instance after p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms (${sorted.length} tries)`);
    }
    await direct?.close();
    await database?.drop();
  }, testMs);

  const cases = Object.entries(ways).flatMap(([kind, available]) => available.map((way) => [kind, way] as const));
  it.each(cases)('%s through the %s: the next request on the other instance is refused', async (kind, way) => {
    const measured: number[] = [];
    for (let n = 0; n < tries; n += 1) {
      const victim = await victims[kind]!();
      await warm(b, victim);
      if (way === 'API') await warm(a, victim);
      await victim.change[way]!();
      if (way === 'API') {
        // The instance that made the change heard of it before its COMMIT returned.
        const own = await ask(a, victim);
        expect(own.status, `instance A right after its own change: ${own.text}`).toBe(victim.refused);
      }
      measured.push(await timeToRefusal(victim));
    }
    latencies.set(`${kind} through the ${way}`, measured);
    const sorted = [...measured].sort((x, y) => x - y);
    expect(sorted.at(-1), `ms until refused, sorted: ${sorted.map((ms) => ms.toFixed(1)).join(', ')}`).toBeLessThan(Infinity);
  }, testMs);

  // The p99 over every try of every kind and way: a single request on a busy two-core machine may
  // itself take longer than 100 ms now and then, which one kind's twenty tries could not absorb.
  it('over all those tries, the next request on the other instance is refused within 100 ms (p99)', () => {
    const all = [...latencies.values()].flat().sort((x, y) => x - y);
    expect(all.length, 'the tries above ran').toBe(cases.length * tries);
    const p99 = all[Math.ceil(0.99 * all.length) - 1]!;
    expect(p99, `ms until refused, the slowest: ${all.slice(-10).map((ms) => ms.toFixed(1)).join(', ')}`).toBeLessThanOrEqual(refusedWithinMs);
  });

  // The triggers of 0010 (team members) call 0007's function: they go first and come back last.
  const dropCallerNotifications = async () => {
    await migrations['0010_team_member_notifications']!.down!(direct.db);
    await migrations['0007_caller_notifications']!.down!(direct.db);
  };
  const restoreCallerNotifications = async () => {
    await migrations['0007_caller_notifications']!.up(direct.db);
    await migrations['0010_team_member_notifications']!.up(direct.db);
  };

  it('control: without the triggers of migration 0007, the other instance goes on serving a key revoked in SQL (so the refusals above come from the notifications)', async () => {
    await dropCallerNotifications();
    try {
      const { key, keyRow } = await createCaller(direct.db);
      const victim: Victim = { key, check: { method: 'GET', path: '/me' }, allowed: 200, refused: 401, change: {} };
      await warm(b, victim);
      await direct.db.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', keyRow.id).execute();
      const revokedAt = performance.now();
      // Well above the bound, well below the 10 s a caller is kept.
      while (performance.now() - revokedAt < 3 * refusedWithinMs) expect((await ask(b, victim)).status).toBe(200);
    } finally {
      await restoreCallerNotifications();
    }
  }, testMs);

  it('a lost listening connection drops the callers kept: a key revoked while it is down is refused on the next request', async () => {
    const listener = `teamos listen ${b.pid}`;
    const listenerStart = () =>
      sql<{ backend_start: Date }>`select backend_start from pg_stat_activity where application_name = ${listener}`
        .execute(direct.db)
        .then(({ rows }) => rows[0]?.backend_start);
    const databaseNow = () => sql<{ at: Date }>`select clock_timestamp() as at`.execute(direct.db).then(({ rows }) => rows[0]!.at);
    // Without the triggers, B hears of the revocation by no connection at all (its pooled connections
    // listen too, for its own changes): only the callers dropped at the loss make it refuse. A try
    // proves it only when B asked before it listened again (it does 100 ms after the loss); the rare
    // try where it had is made again.
    await dropCallerNotifications();
    try {
      for (let attempt = 1; ; attempt += 1) {
        await waitFor(`instance B's listening connection (${listener})`, async () => (await listenerStart()) !== undefined, testMs);
        const { key, keyRow } = await createCaller(direct.db);
        const victim: Victim = { key, check: { method: 'GET', path: '/me' }, allowed: 200, refused: 401, change: {} };
        await warm(b, victim);
        const lostBefore = b.output().split('lost the connection that listens').length;
        const terminated = await sql<{ done: boolean }>`select pg_terminate_backend(pid) as done from pg_stat_activity where application_name = ${listener}`.execute(direct.db);
        expect(terminated.rows).toEqual([{ done: true }]);
        // Watched closely: B listens again 100 ms after the loss.
        while (b.output().split('lost the connection that listens').length === lostBefore) await new Promise((wait) => setTimeout(wait, 2));
        await direct.db.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', keyRow.id).execute();
        const answer = await ask(b, victim);
        const answeredAt = await databaseNow();
        expect(answer.status, answer.text).toBe(401);
        await waitFor(`instance B's listening connection back`, async () => (await listenerStart()) !== undefined, testMs);
        if ((await listenerStart())! > answeredAt) break;
        log(`try ${attempt}: B listened again before it answered; trying again`);
        expect(attempt).toBeLessThan(5);
      }
    } finally {
      await restoreCallerNotifications();
    }

    // Listening again, B forgets a revoked key again.
    const { key, keyRow } = await createCaller(direct.db);
    const victim: Victim = { key, check: { method: 'GET', path: '/me' }, allowed: 200, refused: 401, change: {} };
    await warm(b, victim);
    await direct.db.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', keyRow.id).execute();
    expect(await timeToRefusal(victim)).toBeLessThan(giveUpMs);
  }, testMs);
});

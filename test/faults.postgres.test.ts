/**
 * PostgreSQL stopped and started again under load: the real server (src/server.ts in a child
 * process) on a throwaway cluster of the test's own. During the outage `/readyz` is 503 and API
 * requests get a 500 `internal` in the error format without waiting for PostgreSQL to return; the
 * process lives on and serves again once PostgreSQL is back, without a restart; no multi-step write is
 * left half-done.
 *
 * The test moves from one phase to the next when the server has answered enough requests, never after
 * a set time: PostgreSQL stays down until requests sent after it stopped have been answered, so an
 * answer that waited for it would hold the outage, and fail the test by its timeout.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../src/db/connect.js';
import { createTeamWorld } from './support/factories.js';
import { freePort } from './support/ports.js';
import { createCluster, postgresBinaries, type Cluster } from './support/postgresCluster.js';
import { stopProcess, waitFor } from './support/processes.js';

const root = resolve(import.meta.dirname, '..');
const bin = postgresBinaries();

const workers = 6;
/** The test's own limit, which is also how long each of its phases may wait for answers. */
const testMs = 90_000;

interface Outcome {
  kind: 'me' | 'task' | 'member';
  startedAt: number;
  endedAt: number;
  status: number | 'refused';
  body: any;
  email?: string;
}

describe.skipIf(!bin)("PostgreSQL stopped and started again while the server runs under load (needs PostgreSQL's server binaries)", () => {
  let cluster: Cluster;
  let server: ChildProcess | undefined;
  let output = '';
  let baseUrl: string;
  let key: string;
  let ownerId: string;
  let orgId: string;
  let teamId: string;

  beforeAll(async () => {
    cluster = await createCluster(bin!);
    await cluster.start();
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    server = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      cwd: root,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATABASE_URL: cluster.url,
        SECRETS_KEY: randomBytes(32).toString('hex'),
        REDIS_URL: '',
        RATE_LIMIT_PER_MINUTE: '100000',
        LOG_LEVEL: 'warn',
        LOG_PRETTY: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    server.stdout!.on('data', (chunk) => (output += chunk));
    server.stderr!.on('data', (chunk) => (output += chunk));
    await waitFor('the server to answer /healthz', async () => (await fetch(`${baseUrl}/healthz`)).status === 200, 60_000);

    const database = await openPostgres(cluster.url);
    try {
      const world = await createTeamWorld(database.db);
      const owner = await world.person('OWNER', 'ADMIN');
      key = owner.key;
      ownerId = owner.user.id;
      orgId = world.org.id;
      teamId = world.team.id;
    } finally {
      await database.close();
    }
  }, 120_000);

  afterAll(async () => {
    await stopProcess(server);
    await cluster?.destroy();
  });

  async function call(kind: Outcome['kind'], index: number): Promise<Outcome> {
    const email = kind === 'member' ? `load-${index}-${randomBytes(3).toString('hex')}@example.com` : undefined;
    const [method, path, body] =
      kind === 'me'
        ? ['GET', '/v1/me', undefined]
        : kind === 'task'
          ? ['POST', `/v1/teams/${teamId}/tasks`, { title: `Load ${index}`, ownerId, dueDate: '2026-12-01' }]
          : ['POST', `/v1/orgs/${orgId}/members`, { email, role: 'MEMBER', externalOnly: true }];
    const startedAt = Date.now();
    try {
      const response = await fetch(`${baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body && JSON.stringify(body),
      });
      const text = await response.text();
      return { kind, startedAt, endedAt: Date.now(), status: response.status, body: text ? JSON.parse(text) : undefined, email };
    } catch (error) {
      return { kind, startedAt, endedAt: Date.now(), status: 'refused', body: String(error), email };
    }
  }

  /** `workers` clients sending requests one after another until `until()` holds. */
  async function load(until: () => boolean, outcomes: Outcome[]) {
    let next = 0;
    const kinds: Outcome['kind'][] = ['me', 'task', 'member'];
    await Promise.all(
      Array.from({ length: workers }, async () => {
        while (!until()) {
          const index = next++;
          outcomes.push(await call(kinds[index % kinds.length]!, index));
        }
      }),
    );
  }

  it('answers 500 internal and /readyz 503 while PostgreSQL is down, without waiting for it; serves again afterwards, and leaves nothing half-written', async () => {
    const outcomes: Outcome[] = [];
    const health: (number | string)[] = [];
    let done = false;
    const loading = load(() => done, outcomes);
    const answeredSince = (at: number) => outcomes.filter((outcome) => outcome.startedAt > at).length;
    let stoppingAt: number, stoppedAt: number, restartAt: number, healthyAt: number;
    try {
      await waitFor('load to be served', () => outcomes.length >= 60, testMs);
      stoppingAt = Date.now();
      await cluster.stop('fast');
      stoppedAt = Date.now();
      for (let i = 0; i < 5; i += 1) {
        health.push(await fetch(`${baseUrl}/readyz`).then((response) => response.status, (error: Error) => `${error.name}: ${String(error.cause ?? error.message)}`));
      }
      await waitFor('answers to requests sent during the outage', () => answeredSince(stoppedAt) >= 30, testMs);
      expect(server!.exitCode, output).toBeNull();

      restartAt = Date.now();
      await cluster.start();
      await waitFor('/readyz to answer 200 again', async () => (await fetch(`${baseUrl}/readyz`)).status === 200, testMs);
      healthyAt = Date.now();
      await waitFor('load to be served again', () => answeredSince(healthyAt) >= 60, testMs);
    } finally {
      done = true;
    }
    await loading;

    // The same process, never restarted.
    expect(server!.exitCode, output).toBeNull();
    expect(output).not.toMatch(/could not start|uncaught|unhandled/i);

    const before = outcomes.filter((outcome) => outcome.endedAt < stoppingAt);
    const during = outcomes.filter((outcome) => outcome.startedAt > stoppedAt && outcome.endedAt < restartAt);
    const after = outcomes.filter((outcome) => outcome.startedAt > healthyAt);
    expect(before.length).toBeGreaterThan(30);
    expect(during.length).toBeGreaterThanOrEqual(30);
    expect(after.length).toBeGreaterThanOrEqual(60);

    // No request lost its connection; every answer is a success or a clean 500 in the error format.
    expect(outcomes.filter((outcome) => typeof outcome.status !== 'number'), output).toEqual([]);
    for (const outcome of outcomes) {
      if (outcome.status === 500) expect(outcome.body).toEqual({ error: { code: 'internal', message: 'Something went wrong on our side.' } });
      else expect([200, 201]).toContain(outcome.status);
    }
    expect(before.every((outcome) => outcome.status === 200 || outcome.status === 201)).toBe(true);
    expect(during.every((outcome) => outcome.status === 500)).toBe(true);
    expect(health, output).toEqual([503, 503, 503, 503, 503]);
    expect(after.every((outcome) => outcome.status === 200 || outcome.status === 201), JSON.stringify(after.filter((o) => o.status !== 200 && o.status !== 201).slice(0, 3))).toBe(true);

    // Nothing half-written: every account the load created has its membership, every answered creation is stored.
    const database = await openPostgres(cluster.url);
    try {
      const orphans = await database.db
        .selectFrom('users')
        .select('email')
        .where('email', 'like', 'load-%')
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom('organization_members').select('user_id').whereRef('organization_members.user_id', '=', 'users.id').where('org_id', '=', orgId))),
        )
        .execute();
      expect(orphans).toEqual([]);
      const answeredMembers = outcomes.filter((outcome) => outcome.kind === 'member' && outcome.status === 201).map((outcome) => outcome.email!);
      const storedMembers = await database.db.selectFrom('users').select('email').where('email', 'like', 'load-%').execute();
      expect(storedMembers.map((row) => row.email)).toEqual(expect.arrayContaining(answeredMembers));
      const answeredTasks = outcomes.filter((outcome) => outcome.kind === 'task' && outcome.status === 201).map((outcome) => outcome.body.id as string);
      const storedTasks = await database.db.selectFrom('tasks').select('id').where('team_id', '=', teamId).execute();
      expect(storedTasks.map((row) => row.id)).toEqual(expect.arrayContaining(answeredTasks));
    } finally {
      await database.close();
    }
  }, testMs);
});

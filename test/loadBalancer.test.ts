/**
 * Three server processes on one PostgreSQL database and one Redis, behind a real HAProxy (round
 * robin, health checks on /readyz), under a mixed load of reads and changes from many keys, every
 * request through the balancer:
 * - a POST retried with its Idempotency-Key on another instance is replayed, never made twice;
 * - two editors on two instances with one If-Match tag: one 200, one 412;
 * - a key's 121st request in a minute is 429 on every instance;
 * - requests per second of the same load with one instance and with two (printed: a figure, not a target);
 * - one instance stopped (SIGTERM) and another killed (SIGKILL) under load: the balancer stops sending
 *   to them (to the stopped one while it still drains: its /readyz said so), no request started after
 *   it noticed fails, and both rejoin once restarted;
 * - a live stream (`client.live`) through the balancer gets a change made on another instance, and
 *   after its instance's SIGTERM resumes through the balancer on another with Last-Event-ID, nothing
 *   lost or repeated;
 * - afterwards every acknowledged change is there, read through the balancer, and its webhook came
 *   (counted once per webhook-id: a delivery may come twice, as promised).
 *
 * What clients saw before the balancer noticed a stop is counted and printed, never held to zero:
 * that depends on how fast the checks run on a busy machine.
 *
 * PostgreSQL only (TEST_DATABASE_URL), and only where HAProxy is installed (`.ci/run` installs it).
 * Every wait is for something observable — HAProxy's view of its servers (its admin socket), which
 * instance answered (X-Served-By), deliveries, exits — as long as the test may run; no duration is
 * held to a ceiling.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTeamOsClient, type FeedEvent } from '../client/src/index.js';
import { openPostgres, type OpenDatabase } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { checkEvent, checkResponse } from './support/contract.js';
import { createPostgresDatabase, postgresUrl } from './support/database.js';
import { createTeamWorld } from './support/factories.js';
import { haproxyInstalled, startBalancer, type Balancer } from './support/haproxy.js';
import { freePort } from './support/ports.js';
import { startRedis, stopProcess, waitFor } from './support/processes.js';
import { startReceiver, type Receiver } from './support/receiver.js';
import { killServerProcess, signalGroup, startServerProcess, stopServerProcess, type ServerProcess } from './support/serverProcess.js';
import { assertMatchesContract, operationFor, type ApiResponse, type RequestOptions } from './support/testApp.js';

const instances = ['api1', 'api2', 'api3'] as const;
type Instance = (typeof instances)[number];
/** The servers' limit: the default of RATE_LIMIT_PER_MINUTE, set because the process helper lifts it. */
const perMinute = 120;
/** The load's keys: each is used at most `loadPerKey` times a wall-clock minute, well under the limit. */
const loadKeys = 400;
const loadPerKey = 100;
/** The load's clients in the correctness tests; the throughput figures use `measureClients`. */
const loadClients = 8;
const measureClients = 16;
/** A measurement: the load runs `measureWarmupMs` before its requests are counted for `measureMs`. */
const measureWarmupMs = 2_000;
const measureMs = 10_000;
/** Each test's own limit; a wait inside a test may last `waitMs`, which leaves the test the time to say what it waited for. */
const testMs = 240_000;
const waitMs = testMs - 30_000;

const skipped = !postgresUrl
  ? 'the embedded database (PGlite) allows one process: set TEST_DATABASE_URL'
  : !haproxyInstalled
    ? "no haproxy binary (.ci/run installs Debian's package)"
    : undefined;
if (skipped) console.warn(`loadBalancer.test.ts: three instances behind HAProxy not tested: ${skipped}`);

const log = (message: string) => console.info(`[loadBalancer] ${message}`);

const ticksPerSecond = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;

/** The CPU seconds a process has used so far (Linux, /proc); 0 once it is gone. */
function cpuSeconds(pid: number): number {
  try {
    // After the command's closing parenthesis: state is field 3, utime 14 and stime 15 (proc(5)).
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
  } catch {
    return 0;
  }
}

/** The CPU seconds all PostgreSQL processes on the machine have used so far (its server's and every session's, whoever's). */
function postgresCpuSeconds(): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres') total += cpuSeconds(Number(entry));
    } catch {
      // The process ended meanwhile.
    }
  }
  return total;
}

/** The CPU seconds of all the machine's cores so far: busy, and in all. */
function machineCpu(): { busy: number; total: number } {
  const ticks = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = ticks.reduce((sum, n) => sum + n, 0);
  return { busy: (total - ticks[3]! - ticks[4]!) / ticksPerSecond, total: total / ticksPerSecond };
}

interface Answer extends ApiResponse {
  /** The instance that answered (X-Served-By); undefined for HAProxy's own answers. */
  servedBy: string | undefined;
}

/** One request of the load: when it was sent and answered, and how. */
interface Outcome {
  op: string;
  startedAt: number;
  endedAt: number;
  /** Undefined when no answer came at all (the connection failed). */
  status: number | undefined;
  servedBy: string | undefined;
  /** Why no answer came. */
  error?: string;
}

const succeeded = (outcome: Outcome) => outcome.status !== undefined && outcome.status >= 200 && outcome.status < 300 && outcome.servedBy !== undefined;
const seenAs = (outcome: Outcome) =>
  outcome.status === undefined ? 'no answer' : `${outcome.status}${outcome.servedBy ? ` from ${outcome.servedBy}` : ' from HAProxy'}`;

function tally(outcomes: readonly Outcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const outcome of outcomes) counts[seenAs(outcome)] = (counts[seenAs(outcome)] ?? 0) + 1;
  return counts;
}

interface LoadCaller {
  key: string;
  userId: string;
  /** The caller's own tasks it may still edit (none whose last edit has an unknown outcome), oldest first. */
  tasks: string[];
  /** The wall-clock minute its budget counts, and how much of it is used. */
  minute: number;
  used: number;
}

/** What an acknowledged change left: the task's titles, in order, as acknowledged, and the titles of edits whose outcome is unknown. */
interface TaskRecord {
  acknowledged: string[];
  unknown: string[];
}

describe.skipIf(skipped)(`three instances behind HAProxy on one PostgreSQL and one Redis (PostgreSQL only; needs haproxy)`, () => {
  let database: { url: string; drop(): Promise<void> } | undefined;
  let direct: OpenDatabase | undefined;
  let redis: ChildProcess | undefined;
  let receiver: Receiver | undefined;
  let balancer: Balancer | undefined;
  let env: Record<string, string>;
  const ports = new Map<Instance, number>();
  /** Every process started, running or not: afterAll stops what still runs. */
  const started: ServerProcess[] = [];
  const current = new Map<Instance, ServerProcess>();
  let orgId: string;
  let teamId: string;
  let owner: { key: string; userId: string };
  let editor: { key: string; userId: string };
  let makePerson: () => Promise<{ key: string; userId: string }>;
  const callers: LoadCaller[] = [];
  /** Every task created by an acknowledged request (the load's), by id. */
  const tasks = new Map<string, TaskRecord>();
  /** Problems with the contract in answers of the load: a background loop keeps them for the test to show. */
  const problems: string[] = [];
  let loadCount = 0;

  const start = async (name: Instance) => {
    const server = await startServerProcess(name, env, { port: ports.get(name)!, timeoutMs: testMs / 2, onSpawn: (process) => started.push(process) });
    current.set(name, server);
    return server;
  };

  /** A request through the balancer (to one instance with `instance`, while HAProxy counts it up). Fails when no answer comes. */
  async function exchange(method: string, path: string, options: RequestOptions & { instance?: Instance } = {}): Promise<Answer> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key) headers.authorization = `Bearer ${options.key}`;
    if (options.instance) headers['x-instance'] = options.instance;
    let body: string | undefined;
    if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    const response = await fetch(`${balancer!.url}${path}`, { method, headers, body, signal: AbortSignal.timeout(testMs / 4) });
    const text = await response.text();
    const json = response.headers.get('content-type')?.includes('json') && text !== '';
    return {
      status: response.status,
      headers: response.headers,
      text,
      body: json ? JSON.parse(text) : text || undefined,
      servedBy: response.headers.get('x-served-by') ?? undefined,
    };
  }

  /** `exchange`, with a server's answer checked against the contract (HAProxy's own are not the API's). */
  async function request(method: string, path: string, options: RequestOptions & { instance?: Instance } = {}): Promise<Answer> {
    const answer = await exchange(method, path, options);
    if (answer.servedBy !== undefined) assertMatchesContract(method, path, answer);
    return answer;
  }

  /**
   * The next load key with `requests` left in this wall-clock minute's budget, which they are taken
   * from; when none has, waits for the next minute (the clock, not the machine's speed).
   */
  let nextCaller = 0;
  async function pickCaller(requests: number): Promise<LoadCaller> {
    for (;;) {
      const minute = Math.floor(Date.now() / 60_000);
      for (let tried = 0; tried < callers.length; tried += 1) {
        const caller = callers[nextCaller++ % callers.length]!;
        if (caller.minute !== minute) Object.assign(caller, { minute, used: 0 });
        if (caller.used + requests <= loadPerKey) {
          caller.used += requests;
          return caller;
        }
      }
      await new Promise((wait) => setTimeout(wait, (minute + 1) * 60_000 - Date.now() + 10));
    }
  }

  /** One request of the load, kept in `outcomes`; the answer when it was a success. */
  async function timed(outcomes: Outcome[], op: string, caller: LoadCaller, method: string, path: string, options: RequestOptions = {}): Promise<Answer | undefined> {
    const startedAt = Date.now();
    // No answer at all is what a client sees of a dead instance; an answer outside the contract is kept as a problem.
    let error: string | undefined;
    const answer = await exchange(method, path, { ...options, key: caller.key }).catch((failure: Error) => {
      error = `${failure.message}${failure.cause ? `: ${(failure.cause as Error).message}` : ''}`;
      return undefined;
    });
    if (answer?.servedBy !== undefined) {
      try {
        assertMatchesContract(method, path, answer);
      } catch (mismatch) {
        problems.push((mismatch as Error).message);
      }
    }
    const outcome: Outcome = { op, startedAt, endedAt: Date.now(), status: answer?.status, servedBy: answer?.servedBy, ...(error ? { error } : {}) };
    outcomes.push(outcome);
    return succeeded(outcome) ? answer : undefined;
  }

  /**
   * One session of the mixed load, three reads and two changes by the next key: who am I, create a
   * task, list the team's tasks, read one of the key's own tasks back (the newest) and edit it with
   * the ETag just read.
   */
  async function session(outcomes: Outcome[]): Promise<void> {
    const caller = await pickCaller(5);
    const title = () => `Load ${++loadCount} ${randomBytes(3).toString('hex')}`;
    await timed(outcomes, 'getMe', caller, 'GET', '/v1/me');

    const createdTitle = title();
    const created = await timed(outcomes, 'createTask', caller, 'POST', `/v1/teams/${teamId}/tasks`, {
      body: { title: createdTitle, ownerId: caller.userId, dueDate: '2026-12-01' },
    });
    if (created) {
      tasks.set(created.body.id, { acknowledged: [createdTitle], unknown: [] });
      caller.tasks.push(created.body.id);
    }
    await timed(outcomes, 'listTasks', caller, 'GET', `/v1/teams/${teamId}/tasks?limit=20`);

    const taskId = caller.tasks.at(-1);
    const read = taskId === undefined ? undefined : await timed(outcomes, 'getTask', caller, 'GET', `/v1/tasks/${taskId}`);
    if (!read) return;
    const editedTitle = title();
    const edited = await timed(outcomes, 'updateTask', caller, 'PATCH', `/v1/tasks/${taskId}`, {
      body: { title: editedTitle },
      headers: { 'if-match': read.headers.get('etag')! },
    });
    const record = tasks.get(taskId!)!;
    if (edited) {
      record.acknowledged.push(editedTitle);
    } else {
      // It may or may not have been made: the task is left alone from now on.
      record.unknown.push(editedTitle);
      caller.tasks.splice(caller.tasks.indexOf(taskId!), 1);
    }
  }

  /** The receiver's deliveries read so far: the change each webhook-id carried, and ids that came again with another. */
  const deliveries = { byId: new Map<string, string>(), differing: [] as string[], requests: 0 };

  /** The changes acknowledged so far whose webhook has not come yet. */
  function undelivered(): string[] {
    const named = (type: string, id: string, title: string) => `${type} ${id} ${title}`;
    for (const received of receiver!.received.slice(deliveries.requests)) {
      const id = String(received.headers['webhook-id']);
      const change = named(received.event.type, received.event.data.object.id, received.event.data.object.title);
      if (deliveries.byId.has(id) && deliveries.byId.get(id) !== change) deliveries.differing.push(`${id}: ${deliveries.byId.get(id)} / ${change}`);
      deliveries.byId.set(id, change);
    }
    deliveries.requests = receiver!.received.length;
    const arrived = new Set(deliveries.byId.values());
    const missing: string[] = [];
    for (const [id, record] of tasks) {
      record.acknowledged.forEach((title, n) => {
        const change = named(n === 0 ? 'task.created' : 'task.updated', id, title);
        if (!arrived.has(change)) missing.push(change);
      });
    }
    return missing;
  }

  /** `clients` closed loops of the mixed load until stopped; every outcome kept. */
  function startLoad(clients: number) {
    const outcomes: Outcome[] = [];
    let running = true;
    const loops = Array.from({ length: clients }, async () => {
      while (running) await session(outcomes);
    });
    return {
      outcomes,
      async stop() {
        running = false;
        await Promise.all(loops);
        return outcomes;
      },
    };
  }

  /** Runs `work` under the mixed load; the load itself must then have seen only successes. */
  async function underLoad<T>(work: () => Promise<T>): Promise<T> {
    const load = startLoad(loadClients);
    try {
      await waitFor('the load to get answers', () => load.outcomes.length >= loadClients, waitMs);
      return await work();
    } finally {
      const outcomes = await load.stop();
      expect(tally(outcomes.filter((outcome) => !succeeded(outcome))), 'what the load saw other than success').toEqual({});
      expect(problems).toEqual([]);
    }
  }

  beforeAll(async () => {
    database = await createPostgresDatabase('teamos_load_balancer');
    direct = await openPostgres(database.url);
    await migrateToLatest(direct.db);
    const world = await createTeamWorld(direct.db);
    orgId = world.org.id;
    teamId = world.team.id;
    const person = async (orgRole: 'OWNER' | 'MEMBER', teamRole: 'ADMIN' | 'MEMBER') => {
      const made = await world.person(orgRole, teamRole);
      return { key: made.key, userId: made.user.id };
    };
    owner = await person('OWNER', 'ADMIN');
    editor = await person('MEMBER', 'ADMIN');
    makePerson = () => person('MEMBER', 'MEMBER');
    for (let batch = 0; batch < loadKeys; batch += 20) {
      const made = await Promise.all(Array.from({ length: 20 }, makePerson));
      callers.push(...made.map((caller) => ({ ...caller, tasks: [], minute: 0, used: 0 })));
    }

    const redisPort = await freePort();
    redis = await startRedis(redisPort);
    receiver = await startReceiver();
    env = {
      DATABASE_URL: database.url,
      SECRETS_KEY: randomBytes(32).toString('hex'),
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      RATE_LIMIT_PER_MINUTE: String(perMinute),
      WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
      // After SIGTERM an instance serves until HAProxy has counted it down, however long the checks
      // take on a busy machine; the test then ends the drain with a second signal.
      SHUTDOWN_DRAIN_MS: String(waitMs),
    };
    for (const name of instances) ports.set(name, await freePort());
    const startedAt = Date.now();
    await Promise.all(instances.map(start));
    balancer = await startBalancer(
      instances.map((name) => ({ name, port: ports.get(name)! })),
      { healthPath: '/readyz' },
    );
    await balancer.waitUntil(instances, true, testMs / 2);
    log(`three instances started and counted up by HAProxy after ${Date.now() - startedAt} ms`);

    const subscription = await request('POST', `/v1/orgs/${orgId}/webhooks`, {
      key: owner.key,
      body: { url: receiver.url, events: ['task.created', 'task.updated'] },
    });
    expect(subscription.status, subscription.text).toBe(201);
    await waitFor('the webhook.ping', () => receiver!.received.some((received) => received.event.type === 'webhook.ping'), testMs / 2);
  }, testMs);

  afterAll(async () => {
    // SIGINT, and the SIGTERM after it, skip the drain.
    for (const server of started) signalGroup(server, 'SIGINT');
    await Promise.all(started.map((server) => stopServerProcess(server, 5_000)));
    for (const server of started) signalGroup(server, 'SIGKILL');
    await balancer?.stop();
    await stopProcess(redis);
    await receiver?.close();
    await direct?.close();
    await database?.drop();
  }, 60_000);

  it('a POST retried with its Idempotency-Key on another instance is replayed, never made twice', async () => {
    await underLoad(async () => {
      const body = { title: `Retried ${randomBytes(4).toString('hex')}`, ownerId: owner.userId, dueDate: '2026-12-01' };
      const headers = { 'idempotency-key': `balanced-${randomBytes(8).toString('hex')}` };
      const send = (instance: Instance) => request('POST', `/v1/teams/${teamId}/tasks`, { key: owner.key, body, headers, instance });

      const first = await send('api1');
      const retries = [await send('api2'), await send('api3')];

      expect([first, ...retries].map((answer) => answer.servedBy)).toEqual(['api1', 'api2', 'api3']);
      expect(first.status).toBe(201);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      for (const retry of retries) {
        expect(retry.status).toBe(201);
        expect(retry.headers.get('idempotent-replayed')).toBe('true');
        expect(retry.text).toBe(first.text);
      }
      const rows = await direct!.db.selectFrom('tasks').select('id').where('title', '=', body.title).execute();
      expect(rows.map((row) => row.id)).toEqual([first.body.id]);
    });
  }, testMs);

  it('two editors on two instances with one If-Match tag: one 200, the other 412', async () => {
    await underLoad(async () => {
      const created = await request('POST', `/v1/teams/${teamId}/tasks`, {
        key: owner.key,
        body: { title: 'Edited twice at once', ownerId: owner.userId, dueDate: '2026-12-01' },
      });
      expect(created.status).toBe(201);
      const read = await request('GET', `/v1/tasks/${created.body.id}`, { key: owner.key });
      const tag = read.headers.get('etag')!;
      expect(tag).toMatch(/^"/);

      const edit = (who: { key: string }, title: string, instance: Instance) =>
        request('PATCH', `/v1/tasks/${created.body.id}`, { key: who.key, body: { title }, headers: { 'if-match': tag }, instance });
      const answers = await Promise.all([edit(owner, 'By the owner on api1', 'api1'), edit(editor, 'By the editor on api2', 'api2')]);

      expect(answers.map((answer) => answer.servedBy)).toEqual(['api1', 'api2']);
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 412]);
      const winner = answers.find((answer) => answer.status === 200)!;
      const after = await request('GET', `/v1/tasks/${created.body.id}`, { key: owner.key });
      expect(after.body.title).toBe(winner.body.title);
    });
  }, testMs);

  it(`a key's request past ${perMinute} in a wall-clock minute is 429 on every instance`, async () => {
    await underLoad(async () => {
      // The count is per wall-clock minute: a burst that a minute's turn cut in two proves nothing, and
      // is made again with a new key.
      for (let attempt = 1; ; attempt += 1) {
        const { key } = await makePerson();
        const startedAt = Date.now();
        const within: Answer[] = [];
        for (let n = 0; n < perMinute; n += 1) within.push(await request('GET', '/v1/me', { key }));
        const past = await Promise.all(instances.map((instance) => request('GET', '/v1/me', { key, instance })));
        const endedAt = Date.now();
        if (Math.floor(startedAt / 60_000) !== Math.floor(endedAt / 60_000)) {
          // The next burst begins as the new minute just has: it has the whole minute unless it is as slow as a minute.
          if (attempt === 2) throw new Error(`two bursts of ${perMinute + instances.length} requests each took a minute's turn (the last ${endedAt - startedAt} ms)`);
          log(`a minute turned during the burst (${endedAt - startedAt} ms): made again with a new key`);
          continue;
        }

        expect(within.map((answer) => answer.status)).toEqual(Array(perMinute).fill(200));
        expect(within.at(-1)!.headers.get('ratelimit')).toMatch(new RegExp(`^limit=${perMinute}, remaining=0, reset=\\d+$`));
        // Counted across the instances: each of them took part in the first 120.
        expect(new Set(within.map((answer) => answer.servedBy))).toEqual(new Set(instances));
        expect(past.map((answer) => answer.servedBy)).toEqual([...instances]);
        expect(past.map((answer) => answer.status)).toEqual(instances.map(() => 429));
        for (const answer of past) {
          expect(answer.body.error.code).toBe('rateLimited');
          expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
        }
        return;
      }
    });
  }, testMs);

  it('requests per second of the mixed load with one instance, then two, behind the balancer (printed, not a target)', async () => {
    const serverPids = () => instances.filter((name) => current.get(name)!.running()).map((name) => [name, current.get(name)!.pid] as const);
    const measure = async (serving: readonly Instance[]) => {
      for (const name of instances) await balancer!.setState(name, serving.includes(name) ? 'ready' : 'maint');
      await balancer!.waitUntil(serving, true, testMs / 4);
      await balancer!.waitUntil(instances.filter((name) => !serving.includes(name)), false, testMs / 4);
      // The webhooks of earlier changes are sent first: their deliveries would weigh on this measurement.
      await waitFor('the webhooks of the changes so far', () => undelivered().length === 0, waitMs);
      const load = startLoad(measureClients);
      await new Promise((wait) => setTimeout(wait, measureWarmupMs));
      const cpuBefore = {
        client: process.cpuUsage(),
        machine: machineCpu(),
        haproxy: cpuSeconds(balancer!.pid),
        postgres: postgresCpuSeconds(),
        servers: serverPids().map(([, pid]) => cpuSeconds(pid)),
      };
      const from = Date.now();
      await new Promise((wait) => setTimeout(wait, measureMs));
      const to = Date.now();
      const client = process.cpuUsage(cpuBefore.client);
      const machine = machineCpu();
      const seconds = (to - from) / 1000;
      const percent = (used: number) => `${Math.round((used / seconds) * 100)} %`;
      const used = {
        ...Object.fromEntries(serverPids().map(([name, pid], n) => [name, cpuSeconds(pid) - cpuBefore.servers[n]!])),
        haproxy: cpuSeconds(balancer!.pid) - cpuBefore.haproxy,
        'test process (clients, receiver)': (client.user + client.system) / 1e6,
        'PostgreSQL (all sessions, also other tests)': postgresCpuSeconds() - cpuBefore.postgres,
      };
      const busy = machine.busy - cpuBefore.machine.busy;
      const cpu = {
        ...Object.fromEntries(Object.entries(used).map(([name, time]) => [name, percent(time)])),
        'anything else on the machine': percent(busy - Object.values(used).reduce((sum, time) => sum + time, 0)),
        'machine (all cores)': `${percent(busy)} of ${percent(machine.total - cpuBefore.machine.total)}`,
      };
      const outcomes = await load.stop();
      const counted = outcomes.filter((outcome) => outcome.endedAt >= from && outcome.endedAt < to);
      expect(tally(outcomes.filter((outcome) => !succeeded(outcome))), `what the load saw other than success on ${serving.join(', ')}`).toEqual({});
      expect(new Set(counted.map((outcome) => outcome.servedBy))).toEqual(new Set(serving));
      return { rps: Math.round((counted.length * 1000) / (to - from)), cpu };
    };
    try {
      const one = await measure(['api1']);
      const two = await measure(['api1', 'api2']);
      log(
        `mixed load, ${measureClients} clients, ${measureMs / 1000} s each: one instance ${one.rps} requests/s, two instances ${two.rps} requests/s ` +
          `(${(two.rps / one.rps).toFixed(2)}×); CPU with one ${JSON.stringify(one.cpu)}; with two ${JSON.stringify(two.cpu)}`,
      );
    } finally {
      for (const name of instances) await balancer!.setState(name, 'ready');
      await balancer!.waitUntil(instances, true, testMs / 4);
    }
    expect(problems).toEqual([]);
  }, testMs);

  it('one instance stopped (SIGTERM) and another killed (SIGKILL) under load: the balancer stops sending to them, no request after it noticed fails, and both rejoin', async () => {
    const load = startLoad(loadClients);
    const servedSince = (name: string, since: number) => load.outcomes.some((outcome) => outcome.startedAt > since && outcome.servedBy === name && succeeded(outcome));
    let stopped: Awaited<ReturnType<typeof stopServerProcess>> | undefined;
    let drainingWhenNoticed = false;
    const times = { term: 0, termNoticed: 0, kill: 0, killNoticed: 0, restarted: 0, rejoined: 0 };
    try {
      await waitFor('each instance to serve the load', () => instances.every((name) => servedSince(name, 0)), waitMs);

      const terminated = current.get('api2')!;
      times.term = Date.now();
      signalGroup(terminated, 'SIGTERM');
      await balancer!.waitUntil(['api2'], false, testMs / 4);
      times.termNoticed = Date.now();
      drainingWhenNoticed = terminated.running();
      // The second signal ends the drain: the process finishes what it has in hand and exits.
      signalGroup(terminated, 'SIGTERM');
      stopped = await terminated.exited;

      const killed = current.get('api3')!;
      times.kill = Date.now();
      await killServerProcess(killed);
      await balancer!.waitUntil(['api3'], false, testMs / 4);
      times.killNoticed = Date.now();
      // The load goes on with one instance until it has answered as many requests as there are clients, twice over.
      await waitFor('api1 alone to serve the load', () => load.outcomes.filter((outcome) => outcome.startedAt > times.killNoticed).length >= 2 * loadClients, waitMs);

      times.restarted = Date.now();
      await Promise.all([start('api2'), start('api3')]);
      await balancer!.waitUntil(instances, true, testMs / 4);
      times.rejoined = Date.now();
      await waitFor('api2 and api3 to serve the load again', () => servedSince('api2', times.rejoined) && servedSince('api3', times.rejoined), waitMs);
    } finally {
      await load.stop();
    }

    const outcomes = load.outcomes;
    const failed = outcomes.filter((outcome) => !succeeded(outcome));
    // A request fails "before HAProxy noticed" a stop when it was under way at the stop or began before HAProxy counted the instance down.
    const beforeNoticed = (stop: number, noticed: number) => (outcome: Outcome) => outcome.endedAt >= stop && outcome.startedAt < noticed;
    const duringTerm = failed.filter(beforeNoticed(times.term, times.termNoticed));
    const duringKill = failed.filter(beforeNoticed(times.kill, times.killNoticed));
    const otherwise = failed.filter((outcome) => !duringTerm.includes(outcome) && !duringKill.includes(outcome));
    const described = (list: readonly Outcome[]) => list.map((outcome) => ({ ...outcome, startedAt: outcome.startedAt - times.term, endedAt: outcome.endedAt - times.term }));
    log(
      `${outcomes.length} requests under load; HAProxy counted the SIGTERM'd instance down after ${times.termNoticed - times.term} ms, ` +
        `the SIGKILL'd one after ${times.killNoticed - times.kill} ms; what clients saw other than success before it noticed: ` +
        `SIGTERM ${JSON.stringify(tally(duringTerm))}, SIGKILL ${JSON.stringify(tally(duringKill))} ` +
        `(${JSON.stringify([...new Set(duringKill.map((outcome) => outcome.error ?? outcome.status))])}); both back in rotation ${times.rejoined - times.restarted} ms after their restart`,
    );

    // A stop is graceful: /readyz told HAProxy while the process still served (its drain), and it then exited by itself.
    expect(drainingWhenNoticed).toBe(true);
    expect(stopped).toEqual({ code: 0, signal: null });
    // Once HAProxy counted an instance down, it sent it nothing (api2 still served during its drain).
    expect(outcomes.filter((outcome) => outcome.startedAt > times.termNoticed && outcome.startedAt < times.restarted && outcome.servedBy === 'api2')).toEqual([]);
    expect(outcomes.filter((outcome) => outcome.startedAt > times.killNoticed && outcome.startedAt < times.restarted && outcome.servedBy === 'api3')).toEqual([]);
    // Nothing else failed: before the stops, between them once the first was noticed, after the kill was noticed, and while both rejoined.
    const fromTerm = Object.fromEntries(Object.entries(times).map(([moment, at]) => [moment, at - times.term]));
    expect(described(otherwise), `failed outside the moments before HAProxy noticed a stop (ms from the SIGTERM: ${JSON.stringify(fromTerm)})`).toEqual([]);
    expect(problems).toEqual([]);
  }, testMs);

  it('a live stream through the balancer gets a change made on another instance, and after its instance stops resumes on another with Last-Event-ID, nothing lost or repeated', async () => {
    const connections: { servedBy: string | undefined; status: number; lastEventId: string | null }[] = [];
    const received: FeedEvent[] = [];
    const client = createTeamOsClient({
      baseUrl: `${balancer!.url}/v1`,
      apiKey: owner.key,
      retry: false,
      fetch: async (request) => {
        const response = await fetch(request);
        if (new URL(request.url).pathname.endsWith('/events/stream')) {
          connections.push({ servedBy: response.headers.get('x-served-by') ?? undefined, status: response.status, lastEventId: request.headers.get('last-event-id') });
          const operation = operationFor('GET', new URL(request.url).pathname);
          for (const problem of checkResponse(operation!, response.status, response.headers.get('content-type'), '', response.headers).problems) problems.push(`the stream: ${problem}`);
        }
        return response;
      },
    });
    const stopping = new AbortController();
    client.live({
      teamIds: [teamId],
      types: ['task.created'],
      signal: stopping.signal,
      onEvent: (event) => {
        for (const problem of checkEvent(event).problems) problems.push(`an event on the stream: ${problem}`);
        received.push(event);
      },
    });
    const titles = () => received.map((event) => (event.type === 'task.created' ? event.data.object.title : event.type));
    const create = (title: string, instance?: Instance) =>
      request('POST', `/v1/teams/${teamId}/tasks`, { key: owner.key, body: { title, ownerId: owner.userId, dueDate: '2026-12-01' }, ...(instance ? { instance } : {}) });
    try {
      // The instance answers once it has placed the stream at the log's end: a change made from then on is on it.
      await waitFor('the stream open', () => connections[0]?.status === 200, waitMs);
      const holder = connections[0]!.servedBy as Instance;
      const other = instances.find((name) => name !== holder)!;
      expect((await create('Made on another instance', other)).servedBy).toBe(other);
      await waitFor('the change on the stream', () => received.length === 1, waitMs);

      signalGroup(current.get(holder)!, 'SIGTERM');
      await balancer!.waitUntil([holder], false, testMs / 4);
      expect((await create('While its instance drains', other)).status).toBe(201);
      // The second signal ends the drain: the instance ends its streams with retry:1000, and the client comes back through the balancer.
      signalGroup(current.get(holder)!, 'SIGTERM');
      expect(await current.get(holder)!.exited).toEqual({ code: 0, signal: null });
      expect((await create('After it stopped')).status).toBe(201);
      await waitFor('the stream back with every change', () => titles().length >= 3 && connections.length >= 2, waitMs);
      // One more change once they came: an event sent twice would have come before it.
      expect((await create('Last')).status).toBe(201);
      await waitFor('the last change', () => titles().includes('Last'), waitMs);

      expect(titles()).toEqual(['Made on another instance', 'While its instance drains', 'After it stopped', 'Last']);
      expect(connections).toHaveLength(2);
      expect(connections[1]!.status).toBe(200);
      expect(connections[1]!.servedBy).not.toBe(holder);
      // It resumed after the last event its first connection delivered.
      expect(received.map((event) => event.id)).toContain(connections[1]!.lastEventId);
      log(`a stream held by ${holder} resumed on ${connections[1]!.servedBy} after its SIGTERM, with Last-Event-ID`);

      await start(holder);
      await balancer!.waitUntil(instances, true, testMs / 4);
    } finally {
      stopping.abort();
    }
    expect(problems).toEqual([]);
  }, testMs);

  it('every change acknowledged through the balancer is there afterwards, as last acknowledged', async () => {
    const titles = new Map<string, string>();
    let cursor: string | null = null;
    do {
      const caller = await pickCaller(1);
      const page: Answer = await request('GET', `/v1/teams/${teamId}/tasks?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { key: caller.key });
      expect(page.status).toBe(200);
      for (const task of page.body.data) titles.set(task.id, task.title);
      cursor = page.body.nextCursor;
    } while (cursor !== null);

    expect(tasks.size).toBeGreaterThan(0);
    const lost: { id: string; expected: string[]; found: string | undefined }[] = [];
    for (const [id, record] of tasks) {
      // An edit whose answer never came may have been made after the last acknowledged one.
      const possible = [record.acknowledged.at(-1)!, ...record.unknown];
      if (!possible.includes(titles.get(id)!)) lost.push({ id, expected: possible, found: titles.get(id) });
    }
    expect(lost).toEqual([]);
    log(`${tasks.size} acknowledged creates and ${[...tasks.values()].reduce((sum, record) => sum + record.acknowledged.length - 1, 0)} acknowledged edits all read back`);
  }, testMs);

  it('every acknowledged change has its webhook delivered; a webhook-id that came twice carried the same event', async () => {
    const changes = [...tasks.values()].reduce((sum, record) => sum + record.acknowledged.length, 0);
    expect(changes).toBeGreaterThan(0);
    await waitFor(`webhooks for ${changes} acknowledged changes`, () => undelivered().length === 0, waitMs).catch((error: Error) => {
      throw new Error(`${error.message}: ${undelivered().length} missing, e.g. ${undelivered().slice(0, 3).join('; ')}`);
    });
    expect(deliveries.differing).toEqual([]);
    log(
      `${changes} acknowledged changes, each delivered; ${deliveries.requests} delivery requests for ${deliveries.byId.size} webhook-ids ` +
        `(${deliveries.requests - deliveries.byId.size} sent again)`,
    );
  }, testMs);
});

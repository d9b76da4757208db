/**
 * The Prometheus metrics, scraped over HTTP from their own listener (as src/server.ts serves them
 * with METRICS_PORT) after real traffic: requests by operation id, method and status class; the
 * database's failed statements by SQLSTATE class and its pool; the rate limit's 429s and fail-open
 * passes; idempotency replays and 409s; If-Match 412s; webhook attempts by outcome and the backlog of
 * due deliveries; Node's own metrics. No label ever holds a key, an email, an id or a path, whatever
 * the requests were.
 *
 * Counters are compared before and after the traffic that moves them, against what the answers say
 * (how many 409s came back, how many attempts the delivery log holds), never against a time.
 */
import { METHODS, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { createSecretBox } from '../src/auth/secrets.js';
import type { HandlerMap } from '../src/handlers/types.js';
import { createHttpServer } from '../src/http/httpServer.js';
import { countStatementError, createMetrics, observePool, type Metrics } from '../src/observability/metrics.js';
import { startMetricsServer } from '../src/observability/metricsServer.js';
import { operations } from './support/contract.js';
import { createPostgresDatabase, createTestDatabase, databaseLabel, postgresUrl, type TestDatabase } from './support/database.js';
import { createCaller, createTeamWorld } from './support/factories.js';
import { freePort } from './support/ports.js';
import { waitFor } from './support/processes.js';
import { startReceiver, type Receiver } from './support/receiver.js';
import { assertMatchesContract, send, type ApiResponse, type RequestOptions } from './support/testApp.js';

interface ObservedApp {
  url: string;
  metricsUrl: string;
  database: TestDatabase;
  metrics: Metrics;
  request(method: string, path: string, options?: RequestOptions): Promise<ApiResponse>;
  close(): Promise<void>;
}

/**
 * The app on a database whose failed statements it counts, and its metrics on a listener of their
 * own, as src/server.ts puts them together. The clock stands still unless a test moves it.
 */
async function startObservedApp(
  options: { rateLimitPerMinute?: number; redisUrl?: string; now?: () => Date; handlers?: Partial<HandlerMap>; deliver?: boolean } = {},
): Promise<ObservedApp> {
  const metrics = createMetrics();
  const database = await createTestDatabase({ onError: (error) => countStatementError(metrics, error) });
  if (database.poolStats) observePool(metrics, database.poolStats);
  const created = await createApp({
    db: database.db,
    config: { rateLimitPerMinute: options.rateLimitPerMinute ?? 10_000, redisUrl: options.redisUrl },
    logger: pino({ level: 'silent' }),
    secrets: createSecretBox(randomBytes(32)),
    metrics,
    now: options.now,
    handlers: options.handlers,
    webhooks: { allowPrivateTargets: true, ...(options.deliver ? { deliver: { listen: database.listen, pollMs: 50 } } : {}) },
  });
  const api: Server = await new Promise((listening) => {
    const server = createHttpServer(created.app).listen(0, '127.0.0.1', () => listening(server));
  });
  const metricsServer = await startMetricsServer(metrics.registry, 0, '127.0.0.1');
  const url = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  return {
    url,
    metricsUrl: `http://127.0.0.1:${(metricsServer.address() as AddressInfo).port}/metrics`,
    database,
    metrics,
    request: async (method, path, requestOptions) => {
      const response = await send(url, method, path, requestOptions);
      assertMatchesContract(method, path, response);
      return response;
    },
    close: async () => {
      for (const server of [api, metricsServer]) {
        server.closeAllConnections();
        await new Promise((closed) => server.close(closed));
      }
      await created.close();
      await database.close();
    },
  };
}

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a scrape, from the Prometheus text format. */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    expect(match, `a sample line: ${line}`).not.toBeNull();
    const labels: Record<string, string> = {};
    for (const [, name, value] of match![2]?.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g) ?? []) labels[name!] = value!.replace(/\\(.)/g, (_all, c: string) => (c === 'n' ? '\n' : c));
    samples.push({ name: match![1]!, labels, value: Number(match![3]) });
  }
  return samples;
}

async function scrape(app: ObservedApp): Promise<Sample[]> {
  const response = await fetch(app.metricsUrl);
  expect(response.status).toBe(200);
  return parse(await response.text());
}

/** The value of the one sample of `name` with exactly these labels; 0 when there is none yet. */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter((sample) => sample.name === name && JSON.stringify(Object.entries(sample.labels).sort()) === JSON.stringify(Object.entries(labels).sort()));
  expect(found.length, `${name} ${JSON.stringify(labels)}`).toBeLessThanOrEqual(1);
  return found[0]?.value ?? 0;
}

const requests = (operationId: string, method: string, statusClass: string) => ({ operation_id: operationId, method, status_class: statusClass });
const count = 'http_server_request_duration_seconds_count';

const clock = { at: Date.parse('2026-11-26T10:00:30.000Z') };
const now = () => new Date(clock.at);

describe(`the Prometheus metrics (${databaseLabel})`, () => {
  let app: ObservedApp;
  beforeAll(async () => {
    app = await startObservedApp({ rateLimitPerMinute: 20, now });
  });
  afterAll(() => app?.close());

  it('answers GET /metrics in the Prometheus text format on its own port, and nothing else there; the API port has no /metrics', async () => {
    const response = await fetch(app.metricsUrl);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(await response.text()).toContain('# TYPE http_server_request_duration_seconds histogram');
    expect((await fetch(app.metricsUrl, { method: 'POST' })).status).toBe(405);
    expect((await fetch(app.metricsUrl.replace('/metrics', '/v1/me'))).status).toBe(404);

    const onApi = await send(app.url, 'GET', '/metrics');
    expect(onApi.status).toBe(404);
    expect(onApi.text).not.toContain('http_server_request_duration_seconds');
  });

  it("counts and times requests by the contract's operation id, method and status class, and anything outside the contract as unknown", async () => {
    const { key } = await createCaller(app.database.db);
    const before = await scrape(app);
    for (let i = 0; i < 3; i += 1) expect((await app.request('GET', '/v1/me', { key })).status).toBe(200);
    expect((await app.request('GET', '/v1/me')).status).toBe(401);
    expect((await app.request('GET', `/v1/tasks/${randomUUID()}`, { key })).status).toBe(404);
    expect((await app.request('GET', '/v1/nowhere', { key })).status).toBe(404);
    expect((await app.request('PUT', '/v1/me', { key })).status).toBe(405);
    const after = await scrape(app);

    const delta = (labels: Record<string, string>) => valueOf(after, count, labels) - valueOf(before, count, labels);
    expect({
      getMe2xx: delta(requests('getMe', 'GET', '2xx')),
      getMe4xx: delta(requests('getMe', 'GET', '4xx')),
      getTask4xx: delta(requests('getTask', 'GET', '4xx')),
      unknownGet: delta(requests('unknown', 'GET', '4xx')),
      unknownPut: delta(requests('unknown', 'PUT', '4xx')),
    }).toEqual({ getMe2xx: 3, getMe4xx: 1, getTask4xx: 1, unknownGet: 1, unknownPut: 1 });
    // A histogram: every request is in the +Inf bucket, and the sum of durations grew.
    expect(valueOf(after, 'http_server_request_duration_seconds_bucket', { ...requests('getMe', 'GET', '2xx'), le: '+Inf' })).toBe(valueOf(after, count, requests('getMe', 'GET', '2xx')));
    expect(valueOf(after, 'http_server_request_duration_seconds_sum', requests('getMe', 'GET', '2xx'))).toBeGreaterThan(valueOf(before, 'http_server_request_duration_seconds_sum', requests('getMe', 'GET', '2xx')));
  });

  it('leaves the probes out of the request metrics', async () => {
    const before = (await scrape(app)).filter((sample) => sample.name === count);
    expect((await send(app.url, 'GET', '/healthz')).status).toBe(200);
    expect((await send(app.url, 'GET', '/readyz')).status).toBe(200);
    expect((await scrape(app)).filter((sample) => sample.name === count)).toEqual(before);
  });

  it('counts requests refused with 429', async () => {
    const { key } = await createCaller(app.database.db);
    const before = valueOf(await scrape(app), 'rate_limit_refused_total');
    const answers: number[] = [];
    for (let i = 0; i < 23; i += 1) answers.push((await app.request('GET', '/v1/me', { key })).status);
    expect(answers.filter((status) => status === 429)).toHaveLength(3);
    expect(valueOf(await scrape(app), 'rate_limit_refused_total') - before).toBe(3);
  });

  it('counts idempotency replays and 409s as the answers say', async () => {
    const world = await createTeamWorld(app.database.db);
    const member = await world.person('MEMBER', 'MEMBER');
    const before = await scrape(app);
    const headers = { 'idempotency-key': randomUUID() };
    const body = { title: 'Call the freight forwarder', ownerId: member.user.id, dueDate: '2026-12-01' };
    const answers = await Promise.all(Array.from({ length: 6 }, () => app.request('POST', `/v1/teams/${world.team.id}/tasks`, { key: member.key, body, headers })));
    const retry = await app.request('POST', `/v1/teams/${world.team.id}/tasks`, { key: member.key, body, headers });
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    const after = await scrape(app);

    const replayed = [...answers, retry].filter((answer) => answer.headers.get('idempotent-replayed') === 'true').length;
    const inUse = answers.filter((answer) => answer.status === 409).length;
    expect(valueOf(after, 'idempotency_replays_total') - valueOf(before, 'idempotency_replays_total')).toBe(replayed);
    expect(valueOf(after, 'idempotency_key_in_use_total') - valueOf(before, 'idempotency_key_in_use_total')).toBe(inUse);
  });

  it('counts If-Match 412s', async () => {
    const world = await createTeamWorld(app.database.db);
    const member = await world.person('MEMBER', 'MEMBER');
    const task = await app.request('POST', `/v1/teams/${world.team.id}/tasks`, { key: member.key, body: { title: 'Book the van', ownerId: member.user.id, dueDate: '2026-12-01' } });
    const { headers } = await app.request('GET', `/v1/tasks/${task.body.id}`, { key: member.key });
    const before = valueOf(await scrape(app), 'if_match_precondition_failed_total');
    const stale = await app.request('PATCH', `/v1/tasks/${task.body.id}`, { key: member.key, body: { title: 'Book the truck' }, headers: { 'if-match': '"stale"' } });
    const current = await app.request('PATCH', `/v1/tasks/${task.body.id}`, { key: member.key, body: { title: 'Book the truck' }, headers: { 'if-match': headers.get('etag')! } });
    expect([stale.status, current.status], current.text).toEqual([412, 200]);
    expect(valueOf(await scrape(app), 'if_match_precondition_failed_total') - before).toBe(1);
  });

  it('counts failed statements by SQLSTATE class', async () => {
    const before = await scrape(app);
    await expect(sql`select 1 / 0`.execute(app.database.db)).rejects.toThrow();
    await expect(sql`select * from no_such_table`.execute(app.database.db)).rejects.toThrow();
    await expect(sql`select * from no_such_table`.execute(app.database.db)).rejects.toThrow();
    const after = await scrape(app);
    const delta = (sqlstateClass: string) => valueOf(after, 'db_statement_errors_total', { sqlstate_class: sqlstateClass }) - valueOf(before, 'db_statement_errors_total', { sqlstate_class: sqlstateClass });
    expect({ dataException: delta('22'), syntaxOrAccess: delta('42') }).toEqual({ dataException: 1, syntaxOrAccess: 2 });
  });

  it.runIf(postgresUrl)("shows the pool's connections: open, idle and waiting (PostgreSQL only: PGlite has no pool)", async () => {
    await sql`select 1`.execute(app.database.db);
    const samples = await scrape(app);
    const stats = app.database.poolStats!();
    expect(valueOf(samples, 'db_pool_connections')).toBeGreaterThanOrEqual(1);
    expect(valueOf(samples, 'db_pool_connections')).toBe(stats.total);
    expect(valueOf(samples, 'db_pool_idle_connections')).toBe(stats.idle);
    expect(valueOf(samples, 'db_pool_waiting_requests')).toBe(stats.waiting);
  });

  it.skipIf(postgresUrl)('shows no pool on the embedded database, which has none (PGlite only)', async () => {
    expect((await scrape(app)).filter((sample) => sample.name.startsWith('db_pool_'))).toEqual([]);
  });

  it('shows the backlog of due webhook deliveries and how long the oldest has waited (no worker runs here)', async () => {
    const world = await createTeamWorld(app.database.db);
    const owner = await world.person('OWNER');
    const before = valueOf(await scrape(app), 'webhook_deliveries_due');
    // The subscription's ping is due at once; nobody sends it.
    const created = await app.request('POST', `/v1/orgs/${world.org.id}/webhooks`, { key: owner.key, body: { url: 'http://127.0.0.1:9/hooks', events: ['*'] } });
    expect(created.status).toBe(201);
    expect(valueOf(await scrape(app), 'webhook_deliveries_due') - before).toBe(1);

    clock.at += 90_000;
    const later = await scrape(app);
    expect(valueOf(later, 'webhook_oldest_due_delivery_age_seconds')).toBeGreaterThanOrEqual(90);
    const { oldest } = await app.database.db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.min('next_attempt_at').as('oldest'))
      .where('state', '=', 'PENDING')
      .executeTakeFirstOrThrow();
    expect(valueOf(later, 'webhook_oldest_due_delivery_age_seconds')).toBe((clock.at - new Date(oldest as Date).getTime()) / 1000);
  });

  describe.skipIf(!postgresUrl)('the lag of the event log (PostgreSQL only: on PGlite no transaction runs beside a scrape)', () => {
    /** A session of its own on `url` with a transaction that has written (it has a transaction id), open until `release`. */
    async function openWriter(url: string) {
      const session = new pg.Client({ connectionString: url });
      await session.connect();
      await session.query('begin');
      await session.query('select pg_current_xact_id()');
      return { release: () => session.query('rollback').finally(() => session.end()) };
    }

    async function newTask() {
      const world = await createTeamWorld(app.database.db);
      const owner = await world.person('OWNER', 'ADMIN');
      const created = await app.request('POST', `/v1/teams/${world.team.id}/tasks`, {
        key: owner.key,
        body: { title: 'Book the customs broker', ownerId: owner.user.id, dueDate: '2026-12-01' },
      });
      expect(created.status).toBe(201);
    }

    const lag = async () => valueOf(await scrape(app), 'event_log_horizon_lag_seconds');

    it('shows how long the first event held back by an open transaction of the database has waited, and 0 once it ends', async () => {
      const writer = await openWriter(app.database.url!);
      try {
        await newTask();
        expect(await lag()).toBe(0);
        clock.at += 90_000;
        expect(await lag()).toBe(90);
      } finally {
        await writer.release();
      }
      expect(await lag()).toBe(0);
    });

    it('shows 0 while only a transaction of another database of the server is open', async () => {
      const other = await createPostgresDatabase('teamos_other');
      const writer = await openWriter(other.url);
      try {
        await newTask();
        clock.at += 90_000;
        expect(await lag()).toBe(0);
      } finally {
        await writer.release();
        await other.drop();
      }
    });
  });

  it("includes Node's own metrics: event-loop lag, heap, GC, CPU", async () => {
    const names = new Set((await scrape(app)).map((sample) => sample.name));
    for (const name of ['nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes', 'process_cpu_user_seconds_total', 'nodejs_version_info']) expect(names).toContain(name);
    expect([...names].some((name) => name.startsWith('nodejs_gc_duration_seconds'))).toBe(true);
  });

  it("never puts a key, an email, an id or a path in a label, after hostile requests: operation ids are the contract's or unknown", async () => {
    const { key } = await createCaller(app.database.db);
    const email = 'someone@example.com';
    const hostile: [string, string, RequestOptions?][] = [
      ['GET', `/v1/${key}`],
      ['GET', `/v1/users/${email}`, { key }],
      ['GET', `/v1/tasks/${randomUUID()}`, { key }],
      ['GET', `/v1/orgs/${randomUUID()}/members?email=${email}&key=${key}`, { key }],
      ['DELETE', `/v1/tasks/${key}`, { key }],
      ['GET', '/v1/%00', { key }],
      ['GET', '/v1/%FF%FE', { key }],
      ['GET', `/etc/${randomUUID()}/passwd`],
      ['POST', `/v1/me/${email}`, { key, body: { email } }],
      ['PATCH', `/v1/TASKS/${randomUUID()}/`, { key, body: {} }],
      ['GET', '/v1/me', { headers: { authorization: `Bearer ${key}x`, 'x-request-id': key, traceparent: key } }],
      ['GET', `/${'a/'.repeat(50)}`],
      ['OPTIONS', `/v1/users/${email}`],
      ['HEAD', '/v1/me', { key }],
    ];
    for (const [method, path, options] of hostile) {
      const response = await send(app.url, method, path, options);
      expect(response.status, `${method} ${path}`).toBeLessThan(500);
    }

    const samples = await scrape(app);
    const operationIds = new Set([...operations.map((op) => op.operationId), 'unknown']);
    const seen = new Set<string>();
    for (const { name, labels } of samples) {
      for (const [label, value] of Object.entries(labels)) {
        expect(value, `${name} ${label}`).not.toMatch(/ak_|@|[0-9a-f]{8}-[0-9a-f]{4}-|%|\//i);
        if (label === 'operation_id') {
          expect(operationIds, `${name} operation_id`).toContain(value);
          seen.add(value);
        }
        if (label === 'method') expect(METHODS).toContain(value);
        if (label === 'status_class') expect(value).toMatch(/^[1-5]xx$/);
      }
    }
    expect(seen).toContain('unknown');
    expect(seen).toContain('getMe');
  });
});

describe(`the Prometheus metrics of webhook delivery (${databaseLabel})`, () => {
  let app: ObservedApp;
  let receiver: Receiver;
  beforeAll(async () => {
    // A still clock: a failed attempt's retry never comes due during the test.
    const at = new Date();
    app = await startObservedApp({ deliver: true, now: () => at });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await app?.close();
    await receiver?.close();
  });

  /** The delivery log's attempts, by the outcome the metrics name: what the counter must say. */
  async function attemptsLogged(): Promise<Record<string, number>> {
    const rows = await app.database.db
      .selectFrom('webhook_attempts')
      .innerJoin('webhook_deliveries', 'webhook_deliveries.id', 'webhook_attempts.delivery_id')
      .select(['webhook_attempts.status_code', 'webhook_deliveries.state'])
      .where('webhook_attempts.status_code', 'is not', null)
      .execute();
    const outcomes: Record<string, number> = {};
    for (const row of rows) {
      const outcome = row.status_code! < 300 ? 'delivered' : row.state === 'FAILED' ? 'failed' : 'retrying';
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    }
    return outcomes;
  }

  it('counts delivery attempts by outcome: delivered, retrying, failed', { timeout: 180_000 }, async () => {
    const world = await createTeamWorld(app.database.db);
    const owner = await world.person('OWNER');
    receiver.answer = ({ event }) => ({ status: event.type === 'webhook.ping' ? 204 : 503 });
    const created = await app.request('POST', `/v1/orgs/${world.org.id}/webhooks`, { key: owner.key, body: { url: receiver.url, events: ['team.created', 'team.updated'] } });
    expect(created.status).toBe(201);
    const team = await app.request('POST', `/v1/orgs/${world.org.id}/teams`, { key: owner.key, body: { name: 'Retried' } });
    expect(team.status).toBe(201);
    expect((await app.request('POST', `/v1/orgs/${world.org.id}/teams`, { key: owner.key, body: { name: 'Retried too' } })).status).toBe(201);
    await receiver.waitFor(3, 170_000);

    receiver.answer = ({ event }) => ({ status: event.type === 'webhook.ping' ? 204 : 410 });
    expect((await app.request('PATCH', `/v1/teams/${team.body.id}`, { key: owner.key, body: { name: 'Gone' } })).status).toBe(200);
    await receiver.waitFor(4, 170_000);

    const expected = { delivered: 1, retrying: 2, failed: 1 };
    await waitFor(
      'every attempt recorded and counted',
      async () => {
        const samples = await scrape(app);
        const counted = Object.fromEntries(Object.keys(expected).map((outcome) => [outcome, valueOf(samples, 'webhook_delivery_attempts_total', { outcome })]));
        return JSON.stringify(counted) === JSON.stringify(expected);
      },
      170_000,
    );
    expect(await attemptsLogged()).toEqual(expected);
  });
});

describe(`the Prometheus metrics while Redis is away (${databaseLabel})`, () => {
  it('counts each request let through without a limit (fail-open)', { timeout: 120_000 }, async () => {
    const app = await startObservedApp({ rateLimitPerMinute: 1, redisUrl: `redis://127.0.0.1:${await freePort()}` });
    try {
      const { key } = await createCaller(app.database.db);
      const answers: number[] = [];
      for (let i = 0; i < 3; i += 1) answers.push((await app.request('GET', '/v1/me', { key })).status);
      expect(answers).toEqual([200, 200, 200]);
      const samples = await scrape(app);
      expect([valueOf(samples, 'rate_limit_unavailable_total'), valueOf(samples, 'rate_limit_refused_total')]).toEqual([3, 0]);
    } finally {
      await app.close();
    }
  });
});

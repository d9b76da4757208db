/**
 * `npm run bench`: throughput and latency on this machine, loopback only, bounded in time, compared
 * with the physical floor of the stack in the same run. Every server runs in this process, one after
 * the other under load; autocannon runs as a child process so that it does not share their event loop.
 *
 * The floors (`floorServer`): for each shape of request, an Express 5 route doing the least work of
 * that shape as prepared statements straight through the driver (`pg`, or PGlite's own client): the
 * key's lookup by its hash, then nothing, a primary-key read, a page of 51 tasks mapped to records, a
 * transaction with one UPDATE … RETURNING, or one with an INSERT … RETURNING. Every API figure is a
 * ratio to the floor of its shape, each measured with it in the order floor, API, API, floor (half a
 * run each), so that the machine's drift cancels out:
 *   - GET /v1/me ≥ 1.0 × the key lookup; GET /v1/tasks/{id} ≥ 0.9 × the read;
 *   - GET /v1/teams/{teamId}/tasks, the issue list, the meeting list and the organization's member
 *     list (pages of 50) ≥ 0.7 × the page; GET /v1/meetings/{id} (with ratings, segues, headlines
 *     and messages) ÷ the read reported;
 *   - PATCH /v1/tasks/{id}, a task per connection, ≥ 0.8 × the change; POST a task ≥ 0.7 × the create;
 *   - GET /v1/me with production's request log lines on (info, to /dev/null; the other figures are
 *     taken with the logger silent) reported;
 *   - each read's p99 at half its measured maximum rate ≤ 1.5 × the p99 of its floor route paced at
 *     the same rate in the same run, the requests evenly paced (scripts/pacedLoad.ts: autocannon's
 *     rate option sends each second's quota in one burst);
 *   - GET /v1/orgs/{orgId}/events (a page of 100 of the event log) ≥ 0.80 × the task page of 50;
 *   - OpenTelemetry tracing (benchTracing): GET /v1/me with tracing off, as the server runs without
 *     OTEL_EXPORTER_OTLP_ENDPOINT, costs ≤ 1 % of the request's server CPU (what off adds, timed apart
 *     from the machine's noise), and its rate ÷ the same app on a database without a statement log
 *     reported; on, exporting to a local sink, reported;
 *   - GET /v1/teams/{teamId}/scorecard (10 metrics, 13 weeks of 5 years of values) ≥ 0.50 × GET /v1/me,
 *     and GET /v1/metrics/{id}/values reported.
 * The organization's event log holds 100,000 events on PostgreSQL and 20,000 on PGlite before the
 * changes measured add theirs. On PostgreSQL one team holds 1,000,000 tasks (one `insert … select` statement): the first page of
 * its task list is compared with the page after the 900,000th task (keyset: deep within 1.2× of first),
 * unfiltered and with ?completed=false, and the deep page's plan is explained. The same figures are
 * then measured on the embedded PGlite (in memory, 10,000 tasks).
 *
 * Outgoing webhooks, on each database (benchWebhooks), against a receiver in a child process that
 * answers 204 and checks nothing:
 *   - PATCH /v1/tasks/{id} with one active subscription wanting `task.updated` ≥ 0.95 × the same PATCH
 *     with none, each of the 20 connections changing a task of its own (scripts/spreadLoad.ts; A B B A,
 *     the subscription switched off and on between halves; no worker): the change writes its event
 *     either way, so a subscription costs it nothing. Reported: the same PATCH ÷ its floor (the key's
 *     lookup, then begin, UPDATE … RETURNING, commit), the same with all connections changing one
 *     task, and with the worker delivering in the server's process;
 *   - fan-out and delivery from a backlog of events written in bulk (5,000 on PostgreSQL, 2,000 on
 *     PGlite): ≥ 500 deliveries/s, with the worker's settings and the statements it ran;
 *   - change-to-receipt latency at 50 evenly paced PATCHes a second (receipt − the event's `timestamp`):
 *     p99 < 1 s.
 *
 * BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) names a server on which a
 * throwaway database is created and dropped. BENCH_SECONDS (default 10) sets each run's length.
 * BENCH_PGLITE=0 skips the embedded database. BENCH_ONLY=webhooks measures the webhook figures alone,
 * BENCH_ONLY=tracing the tracing figures, BENCH_ONLY=feed the feed's (PostgreSQL then seeded with
 * 10,000 tasks). Each pair of runs (`loadPair`) also prints where a request's CPU went: the server's
 * process, PostgreSQL's processes and the rest of the machine (the load generator, the kernel).
 * BENCH_WEBHOOK_CONCURRENCY and BENCH_WEBHOOK_POLL_MS set the worker's `concurrency` and `pollMs` for
 * the throughput figure (its defaults otherwise).
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import express from 'express';
import { DummyDriver, Kysely, PostgresAdapter, PostgresDialect, PostgresIntrospector, PostgresQueryCompiler, sql, type CompiledQuery } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pg from 'pg';
import { pino } from 'pino';
import { contractDocument, createApp, type App } from '../src/app.js';
import { generateKey, hashKey } from '../src/auth/apiKeys.js';
import { createSecretBox } from '../src/auth/secrets.js';
import { openPostgres, statementLog, type DatabaseOptions, type OpenDatabase } from '../src/db/connect.js';
import { createLogger } from '../src/logger.js';
import type { Database, TaskRow } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { DEFAULT_PAGE_LIMIT, encodeCursor } from '../src/db/pagination.js';
import { teamTaskPages } from '../src/db/queries/tasks.js';
import { handlers } from '../src/handlers/index.js';
import type { HandlerMap } from '../src/handlers/types.js';
import { etagOf } from '../src/http/conditional.js';
import { loadContract, operationRoutes } from '../src/http/router.js';
import { countStatementError, createMetrics } from '../src/observability/metrics.js';
import { startTracing, type Tracing } from '../src/observability/tracing.js';
import { taskJson, toTask } from '../src/records/tasks.js';
import { addWeeks, currentWeekMonday } from '../src/time.js';
import { deliveryBody, eventText } from '../src/webhooks/outbox.js';
import type { WorkerOptions } from '../src/webhooks/worker.js';
import type { Listen } from '../src/db/listen.js';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '..');
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = 20;
const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const postgresTaskCount = 1_000_000;
const pgliteTaskCount = 10_000;
/** Events in the organization's log before the changes measured add theirs. */
const postgresLogEvents = 100_000;
const pgliteLogEvents = 20_000;
/** BENCH_ONLY=webhooks, tracing or feed: only those figures (PostgreSQL then seeds 10,000 tasks instead of a million). */
const only = process.env.BENCH_ONLY || undefined;
if (only !== undefined && only !== 'webhooks' && only !== 'tracing' && only !== 'feed') throw new Error(`BENCH_ONLY=${only}: the values known are "webhooks", "tracing" and "feed"`);
const webhooksOnly = only === 'webhooks';
const tracingOnly = only === 'tracing';
const feedOnly = only === 'feed';
const deepPosition = 900_000;
/** Rows in each of the other lists the bench pages through: issues, meetings, organization members. */
const listRows = 200;
const metricCount = 10;
const weeksOfValues = 260;
const zone = 'Europe/Bratislava';
/** /proc counts CPU time in ticks of 1/100 s (USER_HZ on Linux). */
const tickMicroseconds = 10_000;

interface Result {
  name: string;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  mean: number;
  non2xx: number;
  /** CPU time per request (µs) of the pair's halves (`loadPair`). */
  cpu?: CpuPerRequest;
}

/**
 * Where a request's CPU goes: this process (the server under test), PostgreSQL's processes (none for
 * PGlite, which runs in this process) and the rest of the machine (the load generator, the kernel's
 * loopback), from /proc at the tick's resolution, which a half-run's thousands of requests average out.
 */
interface CpuPerRequest {
  server: number;
  postgres: number;
  rest: number;
}

interface CpuSample {
  server: number;
  postgres: number;
  machine: number;
}

/**
 * CPU time (µs) of every process named `postgres`, with that of the ones that ended: the postmaster
 * counts its reaped children's (a backend whose connection closed) in its own `cutime` and `cstime`.
 */
function postgresCpu(): number {
  let ticks = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== 'postgres') continue;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  }
  return ticks * tickMicroseconds;
}

function cpuSample(): CpuSample {
  const usage = process.cpuUsage();
  const times = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.split(/\s+/).slice(1).map(Number);
  const busy = times.reduce((sum, time) => sum + time, 0) - times[3]! - times[4]!;
  return { server: usage.user + usage.system, postgres: postgresCpu(), machine: busy * tickMicroseconds };
}

interface LoadOptions {
  headers?: Record<string, string>;
  method?: string;
  body?: string;
  duration?: number;
}

async function listen(handler: RequestListener): Promise<{ url: string; close: () => Promise<unknown> }> {
  const server: Server = await new Promise((ready) => {
    const started = createServer(handler).listen(0, '127.0.0.1', () => ready(started));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((done) => server.close(done)),
  };
}

async function autocannon(url: string, options: LoadOptions = {}): Promise<Omit<Result, 'name'>> {
  const args = [url, '--connections', String(connections), '--duration', String(options.duration ?? seconds), '--json'];
  for (const [header, value] of Object.entries(options.headers ?? {})) args.push('--headers', `${header}=${value}`);
  if (options.method) args.push('--method', options.method);
  if (options.body) args.push('--body', options.body, '--headers', 'content-type=application/json');
  const { stdout } = await run(resolve(root, 'node_modules/.bin/autocannon'), args, { maxBuffer: 64 * 1024 * 1024 });
  return loadReport(stdout);
}

/** autocannon's JSON report (of its command line, or of scripts/spreadLoad.ts) as a result. */
function loadReport(json: string): Omit<Result, 'name'> {
  const report = JSON.parse(json) as { requests: { average: number }; latency: { p50: number; p99: number; average: number }; non2xx: number };
  const { latency } = report;
  return { requestsPerSecond: report.requests.average, p50: latency.p50, p99: latency.p99, mean: latency.average, non2xx: report.non2xx };
}

/**
 * The same load with one connection per path (scripts/spreadLoad.ts): a change measured on rows of
 * its own per connection, so that its cost shows rather than the time one row's lock is held.
 */
async function spreadLoad(origin: string, paths: string[], options: LoadOptions): Promise<Omit<Result, 'name'>> {
  const headerArguments = Object.entries(options.headers ?? {}).map(([header, value]) => `${header}=${value}`);
  const args = [resolve(root, 'scripts/spreadLoad.ts'), origin, options.method ?? 'GET', String(options.duration ?? seconds), options.body ?? '', paths.join(','), ...headerArguments];
  const { stdout } = await run(resolve(root, 'node_modules/.bin/tsx'), args, { maxBuffer: 64 * 1024 * 1024 });
  return loadReport(stdout);
}

/** `connections` requests at a time with Node's fetch for the bench's duration; a fresh request from `init` each time. */
async function closedLoop(name: string, url: string, init: () => RequestInit): Promise<Result> {
  const latencies: number[] = [];
  let non2xx = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until) {
        const sent = performance.now();
        const response = await fetch(url, init());
        await response.arrayBuffer();
        latencies.push(performance.now() - sent);
        if (response.status >= 300) non2xx += 1;
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const at = (share: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * share))]! * 10) / 10;
  const result = {
    name,
    requestsPerSecond: latencies.length / ((performance.now() - started) / 1000),
    p50: at(0.5),
    p99: at(0.99),
    mean: latencies.reduce((sum, latency) => sum + latency, 0) / latencies.length,
    non2xx,
  };
  print([result]);
  return result;
}

/** Microseconds to compute the ETag of `body`, the mean of many runs. */
function etagMicroseconds(body: string): number {
  const runs = 100_000;
  for (let run = 0; run < 1_000; run += 1) etagOf(body);
  const started = process.hrtime.bigint();
  for (let run = 0; run < runs; run += 1) etagOf(body);
  return Number(process.hrtime.bigint() - started) / 1_000 / runs;
}

function print(results: Result[]) {
  for (const result of results) {
    const cpu = result.cpu && `   CPU µs/request: server ${result.cpu.server.toFixed(0)}, PostgreSQL ${result.cpu.postgres.toFixed(0)}, rest ${result.cpu.rest.toFixed(0)}`;
    console.log(
      `${result.name.padEnd(58)} ${result.requestsPerSecond.toFixed(0).padStart(7)} req/s   p50 ${String(result.p50).padStart(4)} ms   p99 ${String(result.p99).padStart(4)} ms${result.non2xx ? `   (${result.non2xx} non-2xx!)` : ''}${cpu ?? ''}`,
    );
  }
}

/** Requests at a fixed rate, evenly spaced, latency counted from each one's scheduled start (scripts/pacedLoad.ts). */
async function paced(name: string, url: string, rate: number, duration: number, headers: Record<string, string>): Promise<Result> {
  const args = [resolve(root, 'scripts/pacedLoad.ts'), url, String(Math.round(rate)), String(duration), ...Object.entries(headers).map(([header, value]) => `${header}=${value}`)];
  const { stdout } = await run(resolve(root, 'node_modules/.bin/tsx'), args, { maxBuffer: 1024 * 1024 });
  const result = { name, ...(JSON.parse(stdout) as Omit<Result, 'name'>) };
  print([result]);
  return result;
}

async function load(name: string, url: string, options: LoadOptions = {}): Promise<Result> {
  const result = { name, ...(await autocannon(url, options)) };
  print([result]);
  return result;
}

/**
 * Two targets whose latencies are compared, each loaded in two halves in the order A B B A, so that
 * a drift of the machine's speed weighs on both alike. Each figure is the mean of its two halves.
 */
type Target = {
  name: string;
  url: string;
  /** Runs before each of the target's halves (the webhook pair switches a subscription off or on). */
  before?: () => Promise<void>;
  /** Paths under `url`'s origin, one connection each, instead of `connections` connections to `url`. */
  paths?: string[];
} & Omit<LoadOptions, 'duration'>;

async function loadPair(a: Target, b: Target, headers: Record<string, string>): Promise<[Result, Result]> {
  const duration = Math.max(1, Math.round(seconds / 2));
  // The floor routes ignore the key header; sent to both, it keeps the requests alike on the wire.
  const options = ({ before: _before, paths: _paths, ...target }: Target) => ({ ...target, headers: { ...headers, ...target.headers }, duration });
  const spent = new Map<Target, CpuSample & { requests: number }>([a, b].map((target) => [target, { server: 0, postgres: 0, machine: 0, requests: 0 }]));
  const half = async (target: Target) => {
    await target.before?.();
    const started = cpuSample();
    const result = target.paths ? await spreadLoad(new URL(target.url).origin, target.paths, options(target)) : await autocannon(target.url, options(target));
    const ended = cpuSample();
    const sum = spent.get(target)!;
    for (const part of ['server', 'postgres', 'machine'] as const) sum[part] += ended[part] - started[part];
    sum.requests += result.requestsPerSecond * duration;
    return result;
  };
  const cpuOf = (target: Target): CpuPerRequest => {
    const { server, postgres, machine, requests } = spent.get(target)!;
    return { server: server / requests, postgres: postgres / requests, rest: Math.max(0, machine - server - postgres) / requests };
  };
  const a1 = await half(a);
  const b1 = await half(b);
  const b2 = await half(b);
  const a2 = await half(a);
  const merge = (name: string, x: Omit<Result, 'name'>, y: Omit<Result, 'name'>): Result => ({
    name,
    requestsPerSecond: (x.requestsPerSecond + y.requestsPerSecond) / 2,
    p50: (x.p50 + y.p50) / 2,
    p99: (x.p99 + y.p99) / 2,
    mean: (x.mean + y.mean) / 2,
    non2xx: x.non2xx + y.non2xx,
  });
  const results: [Result, Result] = [
    { ...merge(a.name, a1, a2), cpu: cpuOf(a) },
    { ...merge(b.name, b1, b2), cpu: cpuOf(b) },
  ];
  print(results);
  return results;
}

// ---------------------------------------------------------------------------------------------------
// Seeding

interface World {
  userId: string;
  orgId: string;
  teamId: string;
  ownerIds: string[];
  readKey: string;
  writeKey: string;
}

async function seedWorld(db: Kysely<Database>): Promise<World> {
  const user = await db.insertInto('users').values({ email: 'bench@example.com', name: 'Bench Person', timezone: zone }).returning('id').executeTakeFirstOrThrow();
  const org = await db
    .insertInto('organizations')
    .values({ name: 'Bench Org', slug: 'bench-org', timezone: zone, default_locale: 'en' })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db.insertInto('organization_members').values({ org_id: org.id, user_id: user.id, role: 'OWNER' }).execute();
  const keys: string[] = [];
  for (const scopes of [['read'], ['write']] as const) {
    const { key, prefix, hash } = generateKey();
    await db
      .insertInto('api_keys')
      .values({ user_id: user.id, name: `bench ${scopes[0]}`, prefix, key_hash: hash, scopes: [...scopes], expires_at: new Date(Date.now() + 86_400_000) })
      .execute();
    keys.push(key);
  }
  const team = await db.insertInto('teams').values({ org_id: org.id, name: 'Operations', slug: 'operations' }).returning('id').executeTakeFirstOrThrow();
  const colleagues = await db
    .insertInto('users')
    .values(['Jana Kováčová', 'Peter Novák', 'Eva Horváthová'].map((person, index) => ({ email: `colleague${index}@example.com`, name: person, timezone: zone })))
    .returning('id')
    .execute();
  const ownerIds = [user.id, ...colleagues.map((colleague) => colleague.id)];
  await db
    .insertInto('organization_members')
    .values(colleagues.map((colleague) => ({ org_id: org.id, user_id: colleague.id, role: 'MEMBER' as const })))
    .execute();
  await db.insertInto('team_members').values(ownerIds.map((ownerId) => ({ team_id: team.id, user_id: ownerId, role: 'MEMBER' }))).execute();
  return { userId: user.id, orgId: org.id, teamId: team.id, ownerIds, readKey: keys[0]!, writeKey: keys[1]! };
}

/**
 * The team's tasks in one statement: distinct creation instants a millisecond apart (the list's sort
 * key), four owners taking turns in runs of three, every fourth task completed, due dates spread over a year.
 */
async function seedTasks(db: Kysely<Database>, world: World, count: number) {
  await sql`
    insert into tasks (team_id, title, owner_id, due_date, completed, completed_at, created_at)
    select
      ${world.teamId},
      (array['Prepare', 'Review', 'Send', 'Draft', 'Follow up on', 'Schedule', 'Update', 'Close'])[1 + n % 8]
        || ' ' || (array['the freight quote', 'the quarterly report', 'the hiring plan', 'customer feedback',
                        'the supplier contract', 'the onboarding checklist', 'the budget forecast'])[1 + n % 7]
        || ' #' || n,
      (${world.ownerIds}::text[])[1 + (n / 3) % ${world.ownerIds.length}],
      date '2026-01-05' + (n % 365)::int,
      n % 4 = 0,
      case when n % 4 = 0 then timestamptz '2026-01-05T08:00:00Z' + n * interval '1 millisecond' + interval '2 days' end,
      timestamptz '2026-01-05T08:00:00Z' + n * interval '1 millisecond'
    from generate_series(1, ${count}) as n
  `.execute(db);
}

/** A Scorecard: `metricCount` metrics in order with `weeksOfValues` weekly values each, the newest this week. */
async function seedScorecard(db: Kysely<Database>, world: World) {
  const lastWeek = currentWeekMonday(new Date(), zone);
  await sql`
    insert into metrics (team_id, title, goal, owner_id, unit, position)
    select ${world.teamId}, 'Measurable #' || n, '>=' || (n * 10), (${world.ownerIds}::text[])[1 + n % ${world.ownerIds.length}], case when n % 3 = 0 then '%' end, n
    from generate_series(1, ${metricCount}) as n
  `.execute(db);
  await sql`
    insert into metric_values (metric_id, week, value, on_track, entered_by_id)
    select m.id, ${lastWeek}::date - 7 * w, (m.position * 10 + w % 7 - 3)::text, w % 7 >= 3, m.owner_id
    from metrics m cross join generate_series(0, ${weeksOfValues - 1}) as w
    where m.team_id = ${world.teamId}
  `.execute(db);
  const first = await db.selectFrom('metrics').select('id').where('team_id', '=', world.teamId).where('position', '=', 1).executeTakeFirstOrThrow();
  return { metricId: first.id, firstWeek: addWeeks(lastWeek, 1 - weeksOfValues), lastWeek };
}

/** A completed meeting rated by everyone in the team, with a segue each, two headlines and two cascading messages. */
async function seedMeeting(db: Kysely<Database>, world: World) {
  const startedAt = new Date(Date.now() - 2 * 3_600_000);
  const meeting = await db
    .insertInto('meetings')
    .values({
      team_id: world.teamId,
      date: currentWeekMonday(startedAt, zone),
      status: 'COMPLETED',
      started_at: startedAt,
      ended_at: new Date(startedAt.getTime() + 90 * 60_000),
      duration_min: 90,
      created_by_id: world.userId,
      notes: 'Reviewed the Scorecard and the Rocks; two issues solved.',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db.insertInto('meeting_ratings').values(world.ownerIds.map((userId, index) => ({ meeting_id: meeting.id, user_id: userId, rating: 7 + (index % 4) }))).execute();
  await db.insertInto('segues').values(world.ownerIds.map((userId) => ({ meeting_id: meeting.id, user_id: userId, content: 'Good news from the week: the new warehouse opened.' }))).execute();
  await db
    .insertInto('headlines')
    .values([
      { meeting_id: meeting.id, user_id: world.userId, type: 'CUSTOMER', content: 'Baltic Trade renewed for two years.' },
      { meeting_id: meeting.id, user_id: world.ownerIds[1]!, type: 'EMPLOYEE', content: 'Eva starts as team lead on Monday.' },
    ])
    .execute();
  await db
    .insertInto('cascading_messages')
    .values([
      { meeting_id: meeting.id, org_id: world.orgId, user_id: world.userId, content: 'The office is closed on Friday.' },
      { meeting_id: meeting.id, org_id: world.orgId, user_id: world.userId, content: 'New expense policy from December.' },
    ])
    .execute();
  return meeting.id;
}

/** `count` `task.updated` events of the world's team about `task`, in one statement, each its id put in front of the same text. */
async function insertEventsInBulk(db: Kysely<Database>, world: World, task: unknown, count: number) {
  const at = new Date();
  const stand = randomUUID();
  const afterId = deliveryBody(stand, eventText(stand, 'task.updated', at, { orgId: world.orgId, teamId: world.teamId, object: task })).slice(1);
  await sql`
    insert into webhook_events (id, org_id, team_id, type, event, created_at)
    select e.id, ${world.orgId}, ${world.teamId}, 'task.updated', '{"id":' || to_json(e.id)::text || ',' || ${afterId}::text, ${at}
    from (select gen_random_uuid()::text as id from generate_series(1, ${count}::int)) e
  `.execute(db);
}

/**
 * More than a page of 50 in the other lists the bench reads: issues, weekly meetings rated by the
 * team (before the seeded meeting's week), and members of the organization; and an event log of
 * `logEvents` events, so that the feed is read from a log of some size, as the changes measured
 * before it make it anyway.
 */
async function seedLists(db: Kysely<Database>, world: World, logEvents: number) {
  const sample = await db.selectFrom('tasks').selectAll().where('team_id', '=', world.teamId).limit(1).executeTakeFirstOrThrow();
  await insertEventsInBulk(db, world, toTask(sample), logEvents);
  const lastWeek = currentWeekMonday(new Date(), zone);
  await sql`
    insert into issues (team_id, title, description, priority, status, created_by_id, resolved_at, created_at)
    select
      ${world.teamId},
      (array['Carrier keeps missing', 'Hiring pipeline is thin for', 'Invoices are late from', 'No owner for'])[1 + n % 4]
        || ' ' || (array['the Žilina route', 'the warehouse team', 'the supplier contract', 'the quarterly report'])[1 + n % 3] || ' #' || n,
      case when n % 2 = 0 then 'Raised in the weekly meeting; "urgent" per the customer.' end,
      (array['HIGH', 'MEDIUM', 'LOW'])[1 + n % 3],
      (array['OPEN', 'SOLVING', 'SOLVED'])[1 + n % 3],
      (${world.ownerIds}::text[])[1 + n % ${world.ownerIds.length}],
      case when n % 3 = 2 then timestamptz '2026-02-01T08:00:00Z' + n * interval '1 minute' end,
      timestamptz '2026-01-05T08:00:00Z' + n * interval '1 second'
    from generate_series(1, ${listRows}) as n
  `.execute(db);
  await sql`
    insert into meetings (team_id, date, status, started_at, ended_at, duration_min, created_by_id, created_at)
    select ${world.teamId}, ${lastWeek}::date - 7 * n, 'COMPLETED',
      (${lastWeek}::date - 7 * n) + time '09:00' at time zone ${zone},
      (${lastWeek}::date - 7 * n) + time '10:30' at time zone ${zone},
      90, ${world.userId}, (${lastWeek}::date - 7 * n) + time '08:00' at time zone ${zone}
    from generate_series(1, ${listRows}) as n
  `.execute(db);
  await sql`
    insert into meeting_ratings (meeting_id, user_id, rating)
    select m.id, u.id, 6 + (ascii(m.id) + ascii(u.id)) % 5
    from meetings m cross join unnest(${world.ownerIds}::text[]) as u(id)
    where m.team_id = ${world.teamId} and m.date < ${lastWeek}::date
  `.execute(db);
  await sql`
    insert into users (email, name, timezone)
    select 'member' || n || '@example.com', (array['Jana', 'Peter', 'Eva', 'Marek', 'Zuzana'])[1 + n % 5] || ' Member ' || n, ${zone}
    from generate_series(1, ${listRows}) as n
  `.execute(db);
  await sql`
    insert into organization_members (org_id, user_id, role, joined_at)
    select ${world.orgId}, u.id, case when u.email like '%0@example.com' then 'ADMIN' else 'MEMBER' end, u.created_at
    from users u where u.email like 'member%@example.com'
  `.execute(db);
}

/** The task list's order, as src/db/queries/tasks.ts pages it: (created_at instant, id string) ascending. */
function tasksInOrder(db: Kysely<Database>, teamId: string, completed?: boolean) {
  let query = db.selectFrom('tasks').selectAll('tasks').where('tasks.team_id', '=', teamId);
  if (completed !== undefined) query = query.where('tasks.completed', '=', completed);
  return query.orderBy('tasks.created_at', 'asc').orderBy('tasks.id', 'asc');
}

/**
 * The cursor the server hands out after the `position`th task of the list, and a single fetch
 * checking that the page after it holds exactly the next tasks in order. `position` counts from 1.
 */
async function deepCursor(db: Kysely<Database>, apiUrl: string, auth: Record<string, string>, teamId: string, position: number, completed?: boolean) {
  const row = await tasksInOrder(db, teamId, completed).offset(position - 1).limit(1).executeTakeFirstOrThrow();
  const cursor = encodeCursor([row.created_at, row.id]);
  const expected = await tasksInOrder(db, teamId, completed).select('tasks.id').offset(position).limit(DEFAULT_PAGE_LIMIT).execute();
  const filter = completed === undefined ? '' : `completed=${completed}&`;
  const path = `/v1/teams/${teamId}/tasks?${filter}cursor=${cursor}`;
  const response = await fetch(`${apiUrl}${path}`, { headers: auth });
  const page = (await response.json()) as { data?: { id: string }[]; nextCursor?: string | null };
  const ids = page.data?.map((task) => task.id) ?? [];
  if (response.status !== 200 || ids.length !== DEFAULT_PAGE_LIMIT || ids.some((id, index) => id !== expected[index]?.id) || !page.nextCursor) {
    throw new Error(`The page after item ${position} (${path}) is not items ${position + 1}-${position + DEFAULT_PAGE_LIMIT}: ${response.status} ${JSON.stringify(page).slice(0, 300)}`);
  }
  return { row, path, cursor };
}

/**
 * EXPLAIN (ANALYZE, BUFFERS) of the deep page's statement, exactly as the server runs it: the task
 * list's page function is run once on a Kysely instance that records the compiled query.
 */
async function explainDeepPage(databaseUrl: string, teamId: string, userId: string, cursor: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  let compiled: CompiledQuery | undefined;
  const recording = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: databaseUrl, max: 1 }) }),
    log: (event) => void (compiled = event.query),
  });
  try {
    await teamTaskPages(taskJson)(recording, teamId, userId, {}, { limit: DEFAULT_PAGE_LIMIT, cursor });
    const { sql: text, parameters } = compiled!;
    const explain = async () => (await client.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${text}`, [...parameters])).rows.map((line) => line['QUERY PLAN']);
    const custom = await explain();
    // The server runs it as a named prepared statement, planned generically (src/db/connect.ts).
    await client.query('set plan_cache_mode = force_generic_plan');
    const generic = await explain();
    return { sql: text, custom, generic };
  } finally {
    await recording.destroy();
    await client.end();
  }
}

const usesKeysetIndex = (plan: string[]) => plan.some((line) => /Index Scan using tasks_team_id_created_at_id_idx on tasks/.test(line));

// ---------------------------------------------------------------------------------------------------
// Measuring one stack

/** A primary-key query straight through the database's own driver, as a prepared statement. */
type RawQuery = (name: string, text: string, values: unknown[]) => Promise<unknown[]>;

interface Stack {
  label: string;
  db: Kysely<Database>;
  raw: RawQuery;
  /** The same, inside `begin` … `commit` on one connection: the floor of a change. */
  rawChange: RawQuery;
  world: World;
  taskId: string;
  meetingId: string;
  metricId: string;
  /** The database's notifications, by which the API's apps keep callers in memory as production does (AUTH_CACHE on). */
  subscribe: Listen;
}

interface Check {
  check: string;
  value: string;
  target: string;
  pass: boolean;
  note: string;
}

const atLeast = (check: string, value: number, target: number, note = ''): Check => ({
  check,
  value: value.toFixed(2),
  target: `≥ ${target.toFixed(2)}`,
  pass: value >= target,
  note,
});
const atMost = (check: string, value: number, target: number, note = ''): Check => ({
  check,
  value: value.toFixed(2),
  target: `≤ ${target.toFixed(2)}`,
  pass: value <= target,
  note,
});
const below = (check: string, value: number, target: number, note = ''): Check => ({ check, value: `${value}`, target: `< ${target}`, pass: value < target, note });
const reported = (check: string, value: number, note = ''): Check => ({ check, value: value.toFixed(2), target: 'reported', pass: true, note });

/**
 * The floors of the stack, one per shape of request: Express routes doing the least work of that
 * shape through the raw driver (prepared statements), each starting with the key's lookup by the hash
 * of the request's bearer key, as every API request must:
 *   - `/floor/key`: the key's lookup alone (the floor of `GET /v1/me`);
 *   - `/floor/read`: and one primary-key read (a task);
 *   - `/floor/page`: and 51 tasks of the team through the task list's index, in its order, the first
 *     50 mapped to records by the API's own mapper and sent with `res.json` with a cursor;
 *   - `PATCH /floor/tasks/:id`: and `begin`, one `UPDATE … RETURNING`, `commit`;
 *   - `POST /floor/teams/:teamId/tasks`: and `begin`, one `INSERT … RETURNING`, `commit`, answered 201.
 */
async function floorServer(stack: Stack) {
  const floor = express();
  floor.set('etag', false);
  const keyOf = async (req: express.Request) => {
    const [key] = await stack.raw('bench_floor_key', 'select id, user_id, scopes, expires_at, revoked_at from api_keys where key_hash = $1', [
      hashKey((req.headers.authorization ?? '').slice('Bearer '.length)),
    ]);
    if (!key) throw new Error('the floor was sent an unknown key');
    return key;
  };
  floor.get('/floor/key', async (req, res) => {
    res.json({ key: await keyOf(req) });
  });
  floor.get('/floor/read', async (req, res) => {
    await keyOf(req);
    const [task] = await stack.raw('bench_floor_task', 'select * from tasks where id = $1', [stack.taskId]);
    res.json(toTask(task as TaskRow));
  });
  floor.get('/floor/page', async (req, res) => {
    await keyOf(req);
    const rows = (await stack.raw(
      'bench_floor_page',
      'select * from tasks where team_id = $1 order by created_at, id limit 51',
      [stack.world.teamId],
    )) as TaskRow[];
    const data = rows.slice(0, DEFAULT_PAGE_LIMIT);
    const last = data.at(-1)!;
    res.json({ data: data.map(toTask), nextCursor: rows.length > DEFAULT_PAGE_LIMIT ? encodeCursor([last.created_at.toISOString(), last.id]) : null });
  });
  floor.patch('/floor/tasks/:id', express.json(), async (req, res) => {
    await keyOf(req);
    const [task] = await stack.rawChange('bench_floor_change', 'update tasks set title = $1 where id = $2 returning *', [req.body.title, req.params.id]);
    res.json(toTask(task as TaskRow));
  });
  floor.post('/floor/teams/:teamId/tasks', express.json(), async (req, res) => {
    await keyOf(req);
    const [task] = await stack.rawChange(
      'bench_floor_create',
      'insert into tasks (team_id, title, owner_id, due_date) values ($1, $2, $3, $4) returning *',
      [req.params.teamId, req.body.title, req.body.ownerId, req.body.dueDate],
    );
    res.status(201).json(toTask(task as TaskRow));
  });
  return listen(floor);
}

async function measureStack(stack: Stack, results: Result[]): Promise<Check[]> {
  const logger = pino({ level: 'silent' });
  const full = await createApp({
    db: stack.db,
    config: { rateLimitPerMinute: 10_000_000, redisUrl: undefined },
    logger,
    secrets: createSecretBox(randomBytes(32)),
    callerCache: { subscribe: stack.subscribe },
  });
  const api = await listen(full.app);
  // The same server with the log lines production writes (one per request at info), to a sink.
  const withLogs = await createApp({
    db: stack.db,
    config: { rateLimitPerMinute: 10_000_000, redisUrl: undefined },
    logger: createLogger('info', false, pino.destination({ dest: '/dev/null', sync: false })),
    secrets: createSecretBox(randomBytes(32)),
    callerCache: { subscribe: stack.subscribe },
  });
  const logging = await listen(withLogs.app);
  const floor = await floorServer(stack);
  try {
    const read = { authorization: `Bearer ${stack.world.readKey}` };
    const write = { authorization: `Bearer ${stack.world.writeKey}` };
    const paths = {
      me: '/v1/me',
      task: `/v1/tasks/${stack.taskId}`,
      list: `/v1/teams/${stack.world.teamId}/tasks`,
      meeting: `/v1/meetings/${stack.meetingId}`,
      issues: `/v1/teams/${stack.world.teamId}/issues`,
      meetings: `/v1/teams/${stack.world.teamId}/meetings`,
      members: `/v1/orgs/${stack.world.orgId}/members`,
      scorecard: `/v1/teams/${stack.world.teamId}/scorecard`,
      values: `/v1/metrics/${stack.metricId}/values`,
    };
    for (const [name, path] of Object.entries(paths)) {
      const response = await fetch(`${api.url}${path}`, { headers: read });
      if (response.status !== 200) throw new Error(`${stack.label}: GET ${path} (${name}) answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
    }
    const meeting = (await (await fetch(`${api.url}${paths.meeting}`, { headers: read })).json()) as Record<string, unknown[]>;
    const scorecard = (await (await fetch(`${api.url}${paths.scorecard}`, { headers: read })).json()) as { metrics: { values: unknown[] }[] };
    for (const list of ['list', 'issues', 'meetings', 'members'] as const) {
      const page = (await (await fetch(`${api.url}${paths[list]}`, { headers: read })).json()) as { data: unknown[] };
      if (page.data.length !== DEFAULT_PAGE_LIMIT) throw new Error(`${stack.label}: GET ${paths[list]} holds ${page.data.length} items, not a page of ${DEFAULT_PAGE_LIMIT}`);
    }
    if (!meeting.ratings?.length || !meeting.segues?.length || !meeting.headlines?.length || !meeting.messages?.length) {
      throw new Error(`${stack.label}: the meeting lacks ratings, segues, headlines or messages`);
    }
    if (scorecard.metrics.length !== metricCount || scorecard.metrics.some((metric) => metric.values.length !== 13)) {
      throw new Error(`${stack.label}: the Scorecard does not hold ${metricCount} metrics with 13 weeks each`);
    }

    const name = (what: string) => `${stack.label}: ${what}`;
    // Each figure is paired with its floor, A B B A, so that a drift of the machine's speed during the
    // run weighs on both sides of the ratio alike.
    const keyFloor = { name: name('floor: the key lookup'), url: `${floor.url}/floor/key` };
    const readFloor = { name: name('floor: the key lookup + a primary-key read'), url: `${floor.url}/floor/read` };
    const pageFloor = { name: name('floor: the key lookup + 51 tasks by the index, mapped, res.json'), url: `${floor.url}/floor/page` };
    const [meFloor, me] = await loadPair(keyFloor, { name: name('GET /v1/me'), url: `${api.url}${paths.me}` }, read);
    const [taskFloor, task] = await loadPair(readFloor, { name: name('GET /v1/tasks/{id}'), url: `${api.url}${paths.task}` }, read);
    const [listFloor, list] = await loadPair(pageFloor, { name: name('GET /v1/teams/{teamId}/tasks (50 per page)'), url: `${api.url}${paths.list}` }, read);
    const [meetingFloor, meetingRead] = await loadPair(
      readFloor,
      { name: name('GET /v1/meetings/{id} (ratings, segues, headlines, messages)'), url: `${api.url}${paths.meeting}` },
      read,
    );
    const [issuesFloor, issues] = await loadPair(pageFloor, { name: name('GET /v1/teams/{teamId}/issues (50 per page)'), url: `${api.url}${paths.issues}` }, read);
    const [meetingsFloor, meetings] = await loadPair(pageFloor, { name: name('GET /v1/teams/{teamId}/meetings (50 per page)'), url: `${api.url}${paths.meetings}` }, read);
    const [membersFloor, members] = await loadPair(pageFloor, { name: name('GET /v1/orgs/{orgId}/members (50 per page)'), url: `${api.url}${paths.members}` }, read);
    const logged = await load(name('GET /v1/me with request log lines on (info, to /dev/null)'), `${logging.url}${paths.me}`, { headers: read });
    // Changes, each against the floor of its shape: a PATCH of a task per connection, and a POST.
    const ownTasks = (await stack.db.selectFrom('tasks').select('id').where('team_id', '=', stack.world.teamId).orderBy('created_at', 'desc').limit(connections).execute()).map(
      (row) => `/v1/tasks/${row.id}`,
    );
    const patchBody = JSON.stringify({ title: 'Send the revised freight quote' });
    const changeHeaders = { 'content-type': 'application/json' };
    const [patchFloor, patch] = await loadPair(
      { name: name(`floor: the key lookup + begin, UPDATE … RETURNING, commit, ${connections} tasks`), url: `${floor.url}/floor/tasks/x`, method: 'PATCH', body: patchBody, headers: changeHeaders, paths: ownTasks.map((path) => path.replace('/v1/tasks/', '/floor/tasks/')) },
      { name: name(`PATCH /v1/tasks/{id}, ${connections} tasks`), url: `${api.url}/v1/tasks/x`, method: 'PATCH', body: patchBody, headers: changeHeaders, paths: ownTasks },
      write,
    );
    const createBody = JSON.stringify({ title: 'Call the carrier', ownerId: stack.world.userId, dueDate: '2026-11-27' });
    const [createFloor, create] = await loadPair(
      { name: name('floor: the key lookup + begin, INSERT … RETURNING, commit'), url: `${floor.url}/floor/teams/${stack.world.teamId}/tasks`, method: 'POST', body: createBody, headers: changeHeaders },
      { name: name('POST /v1/teams/{teamId}/tasks'), url: `${api.url}/v1/teams/${stack.world.teamId}/tasks`, method: 'POST', body: createBody, headers: changeHeaders },
      write,
    );
    const scorecardRead = await load(name(`GET /v1/teams/{teamId}/scorecard (${metricCount} × 13 weeks)`), `${api.url}${paths.scorecard}`, { headers: read });
    const values = await load(name(`GET /v1/metrics/{id}/values (${weeksOfValues} weeks, page of 50)`), `${api.url}${paths.values}`, { headers: read });
    // Safe retries and conditional requests: what an ETag, a 304 and an Idempotency-Key cost.
    const taskUrl = `${api.url}${paths.task}`;
    const taskAnswer = await fetch(taskUrl, { headers: read });
    const taskBody = await taskAnswer.text();
    const tag = taskAnswer.headers.get('etag')!;
    const cached = await fetch(taskUrl, { headers: { ...read, 'if-none-match': tag } });
    if (cached.status !== 304) throw new Error(`${stack.label}: If-None-Match answered ${cached.status}`);
    const [fresh, notModified] = await loadPair(
      { name: name('GET /v1/tasks/{id} (200 with its ETag)'), url: taskUrl },
      { name: name('GET /v1/tasks/{id} with If-None-Match (304)'), url: taskUrl, headers: { 'if-none-match': tag } },
      read,
    );
    notModified.non2xx = 0; // every answer is the 304 checked above
    const tagCost = etagMicroseconds(taskBody);
    const tasksUrl = `${api.url}${paths.list}`;
    const newTask = JSON.stringify({ title: 'Call the carrier', ownerId: stack.world.userId, dueDate: '2026-11-27' });
    // A new key on every request needs a loader of our own (autocannon's command line cannot vary a
    // header); both sides of this pair go through it, so the ratio compares like with like.
    const postInit = (key?: string): RequestInit => ({
      method: 'POST',
      headers: { ...write, 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
      body: newTask,
    });
    const post = await closedLoop(name('POST /v1/teams/{teamId}/tasks (fetch loader)'), tasksUrl, () => postInit());
    const postWithKey = await closedLoop(name('POST …/tasks with a new Idempotency-Key each (fetch loader)'), tasksUrl, () => postInit(randomBytes(12).toString('base64url')));
    const replayKey = randomBytes(12).toString('base64url');
    // The first request runs the change; sent alone, so that every request of the loop is a replay
    // (while it runs, the others would get 409 idempotencyKeyInUse).
    await (await fetch(tasksUrl, postInit(replayKey))).arrayBuffer();
    const replay = await closedLoop(name('POST …/tasks, the same Idempotency-Key: replays (fetch loader)'), tasksUrl, () => postInit(replayKey));

    // Each read paced at half its maximum rate, then its floor paced at the same rate: the read's p99
    // is held to the floor's own tail at that rate on this machine, not to an absolute figure.
    const halfDuration = Math.max(3, Math.round(seconds / 2) + 1);
    const tails: { what: string; read: Result; floor: Result }[] = [];
    for (const [what, path, max, floorUrl] of [
      ['GET /v1/me', paths.me, me, keyFloor.url],
      ['GET /v1/tasks/{id}', paths.task, task, readFloor.url],
      ['GET …/tasks page', paths.list, list, pageFloor.url],
      ['GET …/issues page', paths.issues, issues, pageFloor.url],
      ['GET …/meetings page', paths.meetings, meetings, pageFloor.url],
      ['GET …/members page', paths.members, members, pageFloor.url],
      ['GET /v1/meetings/{id}', paths.meeting, meetingRead, readFloor.url],
      ['GET …/scorecard', paths.scorecard, scorecardRead, readFloor.url],
    ] as const) {
      const rate = max.requestsPerSecond / 2;
      const answer = await paced(name(`${what} at half its maximum rate (${Math.round(rate)}/s)`), `${api.url}${path}`, rate, halfDuration, read);
      const floorTail = await paced(name('  its floor at the same rate'), floorUrl, rate, halfDuration, read);
      tails.push({ what, read: answer, floor: floorTail });
    }
    results.push(meFloor, me, taskFloor, task, listFloor, list, meetingFloor, meetingRead, issuesFloor, issues, meetingsFloor, meetings, membersFloor, members);
    results.push(logged, patchFloor, patch, createFloor, create, scorecardRead, values, fresh, notModified, post, postWithKey, replay);
    results.push(...tails.flatMap((tail) => [tail.read, tail.floor]));

    const rps = (result: Result) => result.requestsPerSecond;
    return [
      atLeast(name('GET /v1/me ÷ its floor (the key lookup)'), rps(me) / rps(meFloor), 1.0),
      atLeast(name('GET /v1/tasks/{id} ÷ its floor (+ a primary-key read)'), rps(task) / rps(taskFloor), 0.9),
      atLeast(name('GET …/tasks page ÷ its floor (+ 51 rows, mapped)'), rps(list) / rps(listFloor), 0.7),
      atLeast(name('GET …/issues page ÷ the page floor'), rps(issues) / rps(issuesFloor), 0.7),
      atLeast(name('GET …/meetings page ÷ the page floor'), rps(meetings) / rps(meetingsFloor), 0.7),
      atLeast(name('GET …/members page ÷ the page floor'), rps(members) / rps(membersFloor), 0.7),
      reported(name('GET /v1/meetings/{id} ÷ the read floor'), rps(meetingRead) / rps(meetingFloor)),
      reported(name('GET /v1/me, request log lines on ÷ off'), rps(logged) / rps(me), `${rps(logged).toFixed(0)} req/s`),
      atLeast(name('PATCH /v1/tasks/{id} ÷ its floor (begin, UPDATE … RETURNING, commit)'), rps(patch) / rps(patchFloor), 0.8, `${rps(patch).toFixed(0)} / ${rps(patchFloor).toFixed(0)} req/s, a task per connection, p99 ${patch.p99} ms`),
      atLeast(name('POST …/tasks ÷ its floor (begin, INSERT … RETURNING, commit)'), rps(create) / rps(createFloor), 0.7, `${rps(create).toFixed(0)} / ${rps(createFloor).toFixed(0)} req/s`),
      ...tails.map((tail) =>
        atMost(name(`p99 of ${tail.what} at half rate ÷ its floor's p99`), tail.read.p99 / tail.floor.p99, 1.5, `${tail.read.p99} / ${tail.floor.p99} ms`),
      ),
      atLeast(name('GET …/scorecard ÷ GET /v1/me'), rps(scorecardRead) / rps(me), 0.5, `p99 ${scorecardRead.p99} ms`),
      reported(name('GET /v1/metrics/{id}/values ÷ GET /v1/me'), rps(values) / rps(me), `p99 ${values.p99} ms`),
      // The tag's share of a read: its hashing time against the time per request of the one server thread.
      below(name('ETag of GET /v1/tasks/{id}: share of the read (%)'), Number(((tagCost * rps(fresh)) / 1e4).toFixed(2)), 5, `${tagCost.toFixed(2)} µs per tag`),
      atLeast(name('GET /v1/tasks/{id}: 304 ÷ 200'), rps(notModified) / rps(fresh), 1),
      atLeast(name('POST …/tasks: without ÷ with Idempotency-Key'), rps(postWithKey) / rps(post), 1 / 1.15, `${rps(post).toFixed(0)} / ${rps(postWithKey).toFixed(0)} req/s`),
      atLeast(name('POST …/tasks: replay ÷ first run with a key'), rps(replay) / rps(postWithKey), 1),
    ];
  } finally {
    await api.close();
    await logging.close();
    await floor.close();
    await full.close();
    await withLogs.close();
  }
}

/** The event feed's page of 100 against the task page of 50, the page a reader of the log compares it with: ≥ 0.8. */
async function benchFeed(stack: Stack, results: Result[]): Promise<Check[]> {
  const full = await createApp({
    db: stack.db,
    config: { rateLimitPerMinute: 10_000_000, redisUrl: undefined },
    logger: pino({ level: 'silent' }),
    secrets: createSecretBox(randomBytes(32)),
    callerCache: { subscribe: stack.subscribe },
  });
  const api = await listen(full.app);
  try {
    const read = { authorization: `Bearer ${stack.world.readKey}` };
    const feedUrl = `${api.url}/v1/orgs/${stack.world.orgId}/events?limit=100`;
    const page = (await (await fetch(feedUrl, { headers: read })).json()) as { data: unknown[] };
    if (page.data.length !== 100) throw new Error(`${stack.label}: the feed's page holds ${page.data.length} events, not 100`);
    const [taskPage, feedPage] = await loadPair(
      { name: `${stack.label}: GET /v1/teams/{teamId}/tasks (50 per page)`, url: `${api.url}/v1/teams/${stack.world.teamId}/tasks` },
      { name: `${stack.label}: GET /v1/orgs/{orgId}/events (100 per page)`, url: feedUrl },
      read,
    );
    results.push(taskPage, feedPage);
    const rps = (result: Result) => result.requestsPerSecond;
    return [atLeast(`${stack.label}: GET …/events page of 100 ÷ GET …/tasks page of 50`, rps(feedPage) / rps(taskPage), 0.8, `${rps(feedPage).toFixed(0)} / ${rps(taskPage).toFixed(0)} req/s`)];
  } finally {
    await api.close();
    await full.close();
  }
}

// ---------------------------------------------------------------------------------------------------
// Webhooks

/**
 * The receiver of the webhook figures: a bare `node:http` server in a child process (so that it does
 * not share the event loop of the server under test) answering every POST 204 without checking
 * anything. It counts deliveries and new connections, and notes each one's arrival time on the
 * machine's clock (epoch milliseconds, sub-millisecond resolution); told to, it also notes the
 * event's `timestamp` and the probe number in the task's title, for the commit-to-receipt latency.
 */
const receiverSource = String.raw`
const http = require('node:http');
const clock = () => performance.timeOrigin + performance.now();
let count = 0, connections = 0, first = 0, last = 0, expected = Infinity, record = false, samples = [];
const report = (type) => process.send({ type, count, connections, first, last, samples });
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const at = clock();
    count += 1;
    if (count === 1) first = at;
    last = at;
    if (record) {
      const raw = Buffer.concat(chunks).toString('utf8');
      const timestamp = /"timestamp":"([^"]+)"/.exec(raw);
      const probe = /"title":"Latency probe #(\d+)"/.exec(raw);
      samples.push([at, timestamp ? Date.parse(timestamp[1]) : NaN, probe ? Number(probe[1]) : -1]);
    }
    res.writeHead(204).end();
    if (count === expected) report('reached');
  });
});
server.on('connection', () => { connections += 1; });
process.on('message', (message) => {
  if (message.type === 'reset') {
    count = 0; connections = 0; first = 0; last = 0; expected = Infinity; samples = []; record = Boolean(message.record);
    report('reset');
  } else if (message.type === 'expect') {
    expected = message.count;
    if (count >= expected) report('reached');
  } else if (message.type === 'report') report('report');
});
process.on('disconnect', () => process.exit(0));
server.listen(0, '127.0.0.1', () => process.send({ type: 'ready', port: server.address().port }));
`;

interface ReceiverReport {
  count: number;
  connections: number;
  /** Arrival of the first and the latest delivery, epoch ms. */
  first: number;
  last: number;
  /** [arrival, the event's timestamp, probe number] per delivery, when recording. */
  samples: [number, number, number][];
}

interface WebhookReceiver {
  url: string;
  reset(record?: boolean): Promise<void>;
  /** Resolves when `count` deliveries have come since the reset, or with what came when `timeoutMs` ran out. */
  waitFor(count: number, timeoutMs: number): Promise<ReceiverReport & { reached: boolean }>;
  report(): Promise<ReceiverReport>;
  close(): Promise<void>;
}

/** Epoch milliseconds with sub-millisecond resolution, comparable across the processes of this machine. */
const clock = () => performance.timeOrigin + performance.now();

async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const child = spawn(process.execPath, ['-e', receiverSource], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const waiting = new Map<string, (message: ReceiverReport & { port?: number }) => void>();
  child.on('message', (message: ReceiverReport & { type: string; port?: number }) => {
    const waiter = waiting.get(message.type);
    waiting.delete(message.type);
    waiter?.(message);
  });
  const ask = (message: object | undefined, reply: string, timeoutMs = 10_000) =>
    new Promise<ReceiverReport & { port?: number }>((resolved, failed) => {
      const timer = setTimeout(() => {
        waiting.delete(reply);
        failed(new Error(`the webhook receiver did not answer "${reply}" within ${timeoutMs} ms`));
      }, timeoutMs);
      waiting.set(reply, (answer) => {
        clearTimeout(timer);
        resolved(answer);
      });
      if (message) child.send(message);
    });
  const { port } = await ask(undefined, 'ready');
  const report = () => ask({ type: 'report' }, 'report');
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    reset: async (record = false) => void (await ask({ type: 'reset', record }, 'reset')),
    waitFor: async (count, timeoutMs) => {
      try {
        return { ...(await ask({ type: 'expect', count }, 'reached', timeoutMs)), reached: true };
      } catch {
        return { ...(await report()), reached: false };
      }
    },
    report,
    close: async () => {
      const exited = new Promise((done) => child.once('exit', done));
      child.disconnect();
      await exited;
    },
  };
}

/** The share-th quantile of ascending `sorted`, to 0.1 ms. */
const quantile = (sorted: number[], share: number) => Math.round((sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))] ?? NaN) * 10) / 10;

interface WebhookStack extends Stack {
  /** NOTIFY on the database, for the delivery worker. */
  listen: OpenDatabase['listen'];
  /** A handle for the worker's own app that tells of every statement it runs (PostgreSQL: a pool of its own); undefined where it cannot. */
  openCounted?: (onQuery: (text: string) => void) => Promise<{ db: Kysely<Database>; close: () => Promise<void> }>;
  /** Pending deliveries the worker's throughput is measured on. */
  deliveryCount: number;
}

const webhookRate = 50;

/**
 * The event log and outgoing webhooks, on one stack:
 *   - PATCH /v1/tasks/{id} with one active subscription wanting `task.updated` ÷ the same PATCH with
 *     none (the subscription switched off between halves of an A B B A pair): ≥ 0.95 — a change writes
 *     its event either way and nothing else, so a subscription costs it nothing; no worker runs;
 *   - the same PATCH ÷ its floor (Express, the key's lookup, then `begin`, one `UPDATE … RETURNING`,
 *     `commit`), a task per connection, with the event written: reported;
 *   - the same with the delivery worker running in the server's process as well (reported), and how
 *     many of the deliveries written during the load had arrived when it ended;
 *   - fan-out and delivery together from a backlog of `deliveryCount` events written in bulk: ≥ 500
 *     deliveries/s;
 *   - change-to-receipt latency at 50 evenly paced PATCHes a second, the worker running: receipt − the
 *     event's `timestamp` (the change's time on the server), p99 < 1 s; receipt − the API's answer reported.
 * The receiver is a child process answering 204 (startWebhookReceiver).
 */
async function benchWebhooks(stack: WebhookStack, results: Result[]): Promise<Check[]> {
  const name = (what: string) => `${stack.label}: ${what}`;
  const { db, world } = stack;
  const logger = pino({ level: 'silent' });
  const config = { rateLimitPerMinute: 10_000_000, redisUrl: undefined };
  const box = createSecretBox(randomBytes(32));
  const receiver = await startWebhookReceiver();
  const opened = new Set<() => Promise<void>>();
  /** An app under test and its listening server; with `deliver`, its delivery worker runs. */
  const start = async (deliver?: WorkerSettings, database = db) => {
    const app = await createApp({
      db: database,
      config,
      logger,
      secrets: box,
      webhooks: { allowPrivateTargets: true, ...(deliver ? { deliver } : {}) },
      callerCache: { subscribe: stack.subscribe },
    });
    const server = await listen(app.app);
    const close = async () => {
      opened.delete(close);
      await server.close();
      await app.close();
    };
    opened.add(close);
    return { url: server.url, close };
  };
  const clear = async () => {
    // Deliveries and attempts go with their events (on delete cascade).
    await db.deleteFrom('webhook_events').execute();
    await db.deleteFrom('webhook_subscriptions').execute();
  };
  const subscribe = async (events: string[], isActive = true) =>
    (
      await db
        .insertInto('webhook_subscriptions')
        .values({ org_id: world.orgId, url: receiver.url, events, description: 'bench', is_active: isActive, secret: box.seal(`whsec_${randomBytes(24).toString('base64')}`) })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;
  const setActive = (id: string, isActive: boolean) => async () => {
    await db.updateTable('webhook_subscriptions').set({ is_active: isActive }).where('id', '=', id).execute();
  };
  const deliveriesByState = async () =>
    Object.fromEntries(
      (await sql<{ state: string; count: number }>`select state, count(*)::int as count from webhook_deliveries group by state`.execute(db)).rows.map((row) => [row.state, row.count]),
    ) as Record<string, number>;
  const total = (states: Record<string, number>) => Object.values(states).reduce((sum, count) => sum + count, 0);
  const eventCount = async () => (await sql<{ count: number }>`select count(*)::int as count from webhook_events`.execute(db)).rows[0]!.count;

  const write = { authorization: `Bearer ${world.writeKey}` };
  const taskPath = `/v1/tasks/${stack.taskId}`;
  const patchBody = JSON.stringify({ title: 'Send the revised freight quote' });
  const patchOnce = async (url: string) => {
    const response = await fetch(`${url}${taskPath}`, { method: 'PATCH', headers: { ...write, 'content-type': 'application/json' }, body: patchBody });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${stack.label}: PATCH ${taskPath} answered ${response.status}`);
  };
  const checks: Check[] = [];
  try {
    await clear();
    console.log(`\n${stack.label}: webhooks (receiver ${receiver.url} in a child process, answering 204)`);

    // 1. What one matching subscription costs a PATCH: nothing, since the change writes its event either way.
    const plain = await start();
    const subscription = await subscribe(['task.updated'], false);
    await patchOnce(plain.url);
    await setActive(subscription, true)();
    await patchOnce(plain.url);
    if (total(await deliveriesByState()) !== 0 || (await eventCount()) !== 2) {
      throw new Error(`${stack.label}: a PATCH did not write exactly its event, or wrote a delivery in the request`);
    }
    // Each connection changes a task of its own: the figure is what the outbox adds to a change. On one
    // task for all, the statement it adds inside the row's lock lengthens the queue every request waits
    // in, which is reported too.
    const rows = (await db.selectFrom('tasks').select('id').where('team_id', '=', world.teamId).orderBy('id').limit(connections).execute()).map((row) => `/v1/tasks/${row.id}`);
    const patchTarget = (what: string, url: string, before: () => Promise<void>, paths?: string[]): Target => ({
      name: name(what),
      url: `${url}${taskPath}`,
      method: 'PATCH',
      body: patchBody,
      before,
      ...(paths ? { paths } : {}),
    });
    // A second of load first, so that neither side of the pair pays for a cold start of the new server.
    await autocannon(`${plain.url}${taskPath}`, { method: 'PATCH', body: patchBody, headers: write, duration: 1 });
    const [without, withSubscription] = await loadPair(
      patchTarget(`PATCH /v1/tasks/{id}, ${rows.length} tasks, no webhook subscription`, plain.url, setActive(subscription, false), rows),
      patchTarget(`PATCH /v1/tasks/{id}, ${rows.length} tasks, 1 matching subscription (no worker)`, plain.url, setActive(subscription, true), rows),
      write,
    );
    const [withoutOneTask, withSubscriptionOneTask] = await loadPair(
      patchTarget('PATCH /v1/tasks/{id}, one task, no webhook subscription', plain.url, setActive(subscription, false)),
      patchTarget('PATCH /v1/tasks/{id}, one task, 1 matching subscription', plain.url, setActive(subscription, true)),
      write,
    );
    const written = await eventCount();

    // 1a. The same PATCH against its floor, a task per connection, the event written.
    const floor = await floorServer(stack);
    const closeFloor = async () => {
      opened.delete(closeFloor);
      await floor.close();
    };
    opened.add(closeFloor);
    const floorPaths = rows.map((path) => path.replace('/v1/tasks/', '/floor/tasks/'));
    const [changeFloor, changeApi] = await loadPair(
      { name: name(`floor: key lookup + begin, UPDATE … RETURNING, commit, ${rows.length} tasks`), url: `${floor.url}/floor/tasks/x`, method: 'PATCH', body: patchBody, headers: { 'content-type': 'application/json' }, paths: floorPaths },
      patchTarget(`PATCH /v1/tasks/{id}, ${rows.length} tasks, its event written`, plain.url, setActive(subscription, false), rows),
      write,
    );
    results.push(changeFloor, changeApi);

    // 1b. The same with the delivery worker in the server's process, as production runs it.
    await clear();
    const subscription2 = await subscribe(['task.updated'], false);
    const working = await start({ listen: stack.listen });
    await receiver.reset();
    const [without2, withWorker] = await loadPair(
      patchTarget(`PATCH /v1/tasks/{id}, ${rows.length} tasks, no webhook subscription`, plain.url, setActive(subscription2, false), rows),
      patchTarget(`PATCH /v1/tasks/{id}, ${rows.length} tasks, 1 subscription, worker delivering`, working.url, setActive(subscription2, true), rows),
      write,
    );
    const duringLoad = await deliveriesByState();
    const receivedDuringLoad = (await receiver.report()).count;
    await working.close();
    results.push(without, withSubscription, withoutOneTask, withSubscriptionOneTask, without2, withWorker);

    // 2. Fan-out and delivery from a backlog of events written in bulk after the subscription.
    await clear();
    await subscribe(['*']);
    const task = await (await fetch(`${plain.url}${taskPath}`, { headers: write })).json();
    await insertEventsInBulk(db, world, task, stack.deliveryCount);
    await sql`analyze webhook_events, webhook_deliveries, webhook_subscriptions`.execute(db);
    await receiver.reset();
    const statements = { fanOuts: 0, claims: 0, attempts: 0, all: 0 };
    const counted = await stack.openCounted?.((text) => {
      statements.all += 1;
      if (/webhook_fanout/i.test(text)) statements.fanOuts += 1;
      else if (/skip locked/i.test(text)) statements.claims += 1;
      else if (/update webhook_attempts/i.test(text)) statements.attempts += 1;
    });
    const settings = webhookWorkerSettings();
    const timeoutMs = Math.max(30, seconds * 3) * 1000;
    const startedAt = clock();
    const worker = await start({ listen: stack.listen, ...settings }, counted?.db ?? db);
    const arrived = await receiver.waitFor(stack.deliveryCount, timeoutMs);
    const elapsed = ((arrived.reached ? arrived.last : clock()) - startedAt) / 1000;
    await worker.close();
    await counted?.close();
    const backlog = await deliveriesByState();
    const throughput = arrived.count / elapsed;
    const settingsText = `concurrency ${settings.concurrency ?? '32 (default)'}, poll ${settings.pollMs ?? '250 (default)'} ms, lease ${settings.leaseMs ?? '10,000 (default)'} ms`;
    console.log(
      `${name(`worker: ${arrived.count.toLocaleString('en')} of ${stack.deliveryCount.toLocaleString('en')} backlog events fanned out and delivered in ${elapsed.toFixed(2)} s`).padEnd(58)} ${throughput.toFixed(0).padStart(7)} deliveries/s ` +
        `(first after ${(arrived.first - startedAt).toFixed(0)} ms; ${arrived.connections} new receiver connections; ${settingsText}; states ${JSON.stringify(backlog)}` +
        (counted ? `; ${statements.fanOuts} fan-out, ${statements.claims} claim and ${statements.attempts} attempt statements, ${statements.all} in all` : '') +
        ')',
    );

    // 3. Commit-to-receipt latency: 50 changes a second, evenly paced, one subscription, the worker running.
    await clear();
    await subscribe(['task.updated']);
    const probed = await start({ listen: stack.listen });
    await receiver.reset(true);
    const probeSeconds = Math.min(10, Math.max(4, seconds));
    const probes = webhookRate * probeSeconds;
    const answeredAt: number[] = [];
    let non2xx = 0;
    const sending: Promise<void>[] = [];
    const pacingStarted = performance.now();
    for (let probe = 0; probe < probes; probe += 1) {
      const wait = pacingStarted + (probe * 1000) / webhookRate - performance.now();
      if (wait > 0) await new Promise((done) => setTimeout(done, wait));
      sending.push(
        fetch(`${probed.url}${taskPath}`, {
          method: 'PATCH',
          headers: { ...write, 'content-type': 'application/json' },
          body: JSON.stringify({ title: `Latency probe #${probe}` }),
        }).then(async (response) => {
          await response.arrayBuffer();
          answeredAt[probe] = clock();
          if (response.status !== 200) non2xx += 1;
        }),
      );
    }
    await Promise.all(sending);
    const sentRate = probes / ((performance.now() - pacingStarted) / 1000);
    const receipts = await receiver.waitFor(probes, 10_000);
    await probed.close();
    await plain.close();
    const afterAnswer = receipts.samples.map(([at, , probe]) => at - answeredAt[probe]!).sort((a, b) => a - b);
    const afterTimestamp = receipts.samples.map(([at, timestamp]) => at - timestamp).sort((a, b) => a - b);
    // A delivery that never came counts as the longest wait there is.
    for (let missing = receipts.samples.length; missing < probes; missing += 1) {
      afterAnswer.push(Infinity);
      afterTimestamp.push(Infinity);
    }
    // The event's timestamp is the change's time on the server, before its commit: receipt − timestamp
    // is the whole way from change to receiver. Receipt − answer can come out negative, because the
    // client that reads the answer shares its event loop with the worker that sends the delivery.
    const latency: Result = {
      name: name(`webhook receipt after the event's timestamp, ${webhookRate} PATCH/s paced`),
      requestsPerSecond: sentRate,
      p50: quantile(afterTimestamp, 0.5),
      p99: quantile(afterTimestamp, 0.99),
      mean: afterTimestamp.reduce((sum, value) => sum + value, 0) / afterTimestamp.length,
      non2xx,
    };
    print([latency]);
    console.log(
      `${name("  … receipt after the PATCH's answer").padEnd(58)} p50 ${quantile(afterAnswer, 0.5)} ms   p99 ${quantile(afterAnswer, 0.99)} ms   max ${quantile(afterAnswer, 1)} ms ` +
        `(${receipts.count} of ${probes} received, ${receipts.connections} new receiver connections)`,
    );
    results.push(latency);

    const rps = (result: Result) => result.requestsPerSecond;
    checks.push(
      atLeast(name('PATCH task: 1 webhook subscription ÷ none'), rps(withSubscription) / rps(without), 0.95, `${rps(withSubscription).toFixed(0)} / ${rps(without).toFixed(0)} req/s, a task per connection, ${written.toLocaleString('en')} events written`),
      reported(name('PATCH task ÷ its floor (begin, UPDATE … RETURNING, commit)'), rps(changeApi) / rps(changeFloor), `${rps(changeApi).toFixed(0)} / ${rps(changeFloor).toFixed(0)} req/s, a task per connection, the event written`),
      reported(name('PATCH one task from every connection: 1 subscription ÷ none'), rps(withSubscriptionOneTask) / rps(withoutOneTask), `${rps(withSubscriptionOneTask).toFixed(0)} / ${rps(withoutOneTask).toFixed(0)} req/s, every connection on one task`),
      reported(
        name('PATCH task: subscription + worker ÷ none'),
        rps(withWorker) / rps(without2),
        `${rps(withWorker).toFixed(0)} / ${rps(without2).toFixed(0)} req/s; ${receivedDuringLoad.toLocaleString('en')} of ${total(duringLoad).toLocaleString('en')} written received by the load's end`,
      ),
      atLeast(name('webhook fan-out and delivery: deliveries per second'), throughput, 500, `${arrived.count} of ${stack.deliveryCount} in ${elapsed.toFixed(2)} s; ${settingsText}`),
      below(name('webhook change → receipt p99 (ms)'), latency.p99, 1000, `p50 ${latency.p50} ms; after the PATCH's answer p50 ${quantile(afterAnswer, 0.5)}, p99 ${quantile(afterAnswer, 0.99)} ms`),
    );
    return checks;
  } finally {
    for (const close of [...opened].reverse()) await close();
    await receiver.close();
    await clear();
  }
}

type WorkerSettings = Pick<WorkerOptions, 'listen' | 'pollMs' | 'concurrency' | 'leaseMs'>;

/** The worker's settings for the throughput figure: its defaults unless BENCH_WEBHOOK_CONCURRENCY / BENCH_WEBHOOK_POLL_MS say otherwise. */
function webhookWorkerSettings(): Omit<WorkerSettings, 'listen'> {
  const concurrency = process.env.BENCH_WEBHOOK_CONCURRENCY;
  const pollMs = process.env.BENCH_WEBHOOK_POLL_MS;
  return { ...(concurrency ? { concurrency: Number(concurrency) } : {}), ...(pollMs ? { pollMs: Number(pollMs) } : {}) };
}

// ---------------------------------------------------------------------------------------------------
// Tracing

/**
 * The OTLP/HTTP sink of the tracing figures: a bare `node:http` server in a child process that answers
 * every export 200 and keeps nothing but the count of exports and of the spans in them.
 */
const spanSinkSource = String.raw`
const http = require('node:http');
let exports = 0, spans = 0;
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    exports += 1;
    spans += (Buffer.concat(chunks).toString('latin1').match(/"spanId"/g) ?? []).length;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
process.on('message', () => process.send({ exports, spans }));
process.on('disconnect', () => process.exit(0));
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
`;

async function startSpanSink() {
  const child = spawn(process.execPath, ['-e', spanSinkSource], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const next = () => new Promise<{ port?: number; exports: number; spans: number }>((answered) => child.once('message', answered));
  const { port } = await next();
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    /** Exports and spans received so far. */
    counts: async () => {
      const answer = next();
      child.send({});
      return answer;
    },
    close: async () => {
      const exited = new Promise((done) => child.once('exit', done));
      child.disconnect();
      await exited;
    },
  };
}

interface TracingStack extends Stack {
  /** Another handle on the stack's database, opened with `hooks` as src/server.ts opens its own. */
  open(hooks: DatabaseOptions): Promise<{ db: Kysely<Database>; close(): Promise<void> }>;
}

/**
 * What OpenTelemetry tracing (src/observability/tracing.ts) costs GET /v1/me, on one stack, each pair
 * A B B A as elsewhere:
 *   - off, as src/server.ts runs without OTEL_EXPORTER_OTLP_ENDPOINT (no SDK loaded; the database's
 *     statement log counting failed statements, the tracing hook unset) ÷ the app the other figures
 *     are measured with (a database without a statement log): reported. Kysely's statement log, which
 *     production runs for its error metrics whether tracing is on or not, is all that differs, so
 *     what off costs is that log's time per statement (timed over a driver that does nothing,
 *     `statementLogNanoseconds`) × the request's statements ÷ the server's CPU per request (this
 *     process's CPU over the pair): ≤ 1 %. The rate ratio alone cannot tell 1 % on a shared
 *     machine, whose noise between halves is several per cent;
 *   - on, every request's span and its statements' spans exported to a sink in a child process
 *     (answering 200, keeping nothing), ÷ off: reported, with the spans the sink received.
 * The traced app is made afresh before each of its halves and closed before the off side's: the
 * AsyncLocalStorage that carries its context puts a hook on every promise of the process (Node 20)
 * while it lives, which must not weigh on the other side.
 */
/**
 * Nanoseconds the off side's statement log adds to one statement, timed apart from the machine's
 * noise: Kysely with and without it over a driver that does nothing, so that the statement itself
 * costs nothing on either side; the median of alternating rounds.
 */
async function statementLogNanoseconds(options: DatabaseOptions): Promise<number> {
  const make = (hooks: DatabaseOptions) =>
    new Kysely<Database>({
      dialect: {
        createAdapter: () => new PostgresAdapter(),
        createDriver: () => new DummyDriver(),
        createIntrospector: (db) => new PostgresIntrospector(db),
        createQueryCompiler: () => new PostgresQueryCompiler(),
      },
      ...statementLog(hooks),
    });
  const bare = make({});
  const logged = make(options);
  const query = bare.selectFrom('users').selectAll().where('id', '=', 'a key').compile();
  const statements = 100_000;
  const time = async (db: Kysely<Database>) => {
    const start = process.hrtime.bigint();
    for (let index = 0; index < statements; index += 1) await db.executeQuery(query);
    return Number(process.hrtime.bigint() - start) / statements;
  };
  const added: number[] = [];
  for (let round = 0; round < 7; round += 1) {
    const without = await time(bare);
    const withLog = await time(logged);
    added.push(withLog - without);
  }
  await Promise.all([bare.destroy(), logged.destroy()]);
  return added.sort((x, y) => x - y)[Math.floor(added.length / 2)]!;
}

async function benchTracing(stack: TracingStack, results: Result[]): Promise<Check[]> {
  const name = (what: string) => `${stack.label}: ${what}`;
  const headers = { authorization: `Bearer ${stack.world.readKey}` };
  const appOn = async (db: Kysely<Database>, tracing?: Tracing) =>
    createApp({
      db,
      config: { rateLimitPerMinute: 10_000_000, redisUrl: undefined },
      logger: pino({ level: 'silent' }),
      secrets: createSecretBox(randomBytes(32)),
      // Alike on every side: Node's own metrics once for the process, not once per app made.
      metrics: createMetrics({ processMetrics: false }),
      tracing,
      // No callers kept in memory: every request sends its key's lookup, so that the statement log
      // and the statement spans have a statement to pass, as for a caller read anew.
    });
  const sink = await startSpanSink();
  const counting = createMetrics({ processMetrics: false });
  const onError = (error: unknown) => countStatementError(counting, error);
  const offDatabase = await stack.open({ onError });
  let traced: { app: App; tracing: Tracing } | undefined;
  const onDatabase = await stack.open({ onError, onStatement: (event) => traced?.tracing.statement(event) });
  let counted = 0;
  const countedDatabase = await stack.open({ onStatement: () => (counted += 1) });
  const countedApp = await appOn(countedDatabase.db);
  const countedServer = await listen(countedApp.app);
  const baseline = await appOn(stack.db);
  const off = await appOn(offDatabase.db);
  const baselineServer = await listen(baseline.app);
  const offServer = await listen(off.app);
  const onServer = await listen((req, res) => traced!.app.app(req, res));
  const stopTraced = async () => {
    await traced?.app.close();
    traced = undefined;
  };
  const startTraced = async () => {
    await stopTraced();
    const tracing = await startTracing({ url: sink.url }, pino({ level: 'silent' }));
    traced = { app: await appOn(onDatabase.db, tracing), tracing };
  };
  try {
    const target = (what: string, url: string, before?: () => Promise<void>): Target => ({ name: name(what), url: `${url}/v1/me`, ...(before ? { before } : {}) });
    // A second of load on each first, so that no side pays for a cold start.
    await startTraced();
    for (const server of [baselineServer, offServer, onServer]) await autocannon(`${server.url}/v1/me`, { headers, duration: 1 });
    await stopTraced();
    // The statements a request sends, each of which passes the statement log once.
    const probes = 20;
    for (let index = 0; index < probes; index += 1) await (await fetch(`${countedServer.url}/v1/me`, { headers })).arrayBuffer();
    const statementsPerRequest = counted / probes;
    const cpuBefore = process.cpuUsage();
    const [untraced, tracingOff] = await loadPair(
      target('GET /v1/me, no statement log (the other figures)', baselineServer.url),
      target('GET /v1/me, tracing off as the server runs it', offServer.url),
      headers,
    );
    // The servers run in this process and autocannon in a child: this process's CPU over the pair is the servers'.
    const cpu = process.cpuUsage(cpuBefore);
    const pairRequests = (untraced.requestsPerSecond + tracingOff.requestsPerSecond) * 2 * Math.max(1, Math.round(seconds / 2));
    const cpuPerRequestNs = ((cpu.user + cpu.system) * 1000) / pairRequests;
    const logNs = await statementLogNanoseconds({ onError });
    const offShare = (logNs * statementsPerRequest) / cpuPerRequestNs;
    console.log(
      `${name('  … what off adds, apart from noise').padEnd(58)} ${logNs.toFixed(0)} ns a statement × ${statementsPerRequest} of ${(cpuPerRequestNs / 1000).toFixed(0)} µs of server CPU a request`,
    );
    const before = await sink.counts();
    const [offAgain, tracingOn] = await loadPair(
      target('GET /v1/me, tracing off', offServer.url, stopTraced),
      target('GET /v1/me, tracing on, exporting to a local sink', onServer.url, startTraced),
      headers,
    );
    await stopTraced();
    const after = await sink.counts();
    const spans = after.spans - before.spans;
    // Each side ran two halves of the pair's length.
    const requests = tracingOn.requestsPerSecond * 2 * Math.max(1, Math.round(seconds / 2));
    console.log(
      `${name('  … spans received by the sink').padEnd(58)} ${spans.toLocaleString('en')} in ${(after.exports - before.exports).toLocaleString('en')} exports, ${(spans / requests).toFixed(2)} a request`,
    );
    results.push(untraced, tracingOff, offAgain, tracingOn);
    const rps = (result: Result) => result.requestsPerSecond;
    return [
      atMost(name("GET /v1/me, tracing off: its statement log's share of the CPU, %"), offShare * 100, 1, `${logNs.toFixed(0)} ns × ${statementsPerRequest} statements of ${(cpuPerRequestNs / 1000).toFixed(0)} µs a request`),
      reported(name('GET /v1/me, tracing off ÷ no statement log'), rps(tracingOff) / rps(untraced), `${rps(tracingOff).toFixed(0)} / ${rps(untraced).toFixed(0)} req/s, within the noise of the machine`),
      reported(name('GET /v1/me, tracing on ÷ off'), rps(tracingOn) / rps(offAgain), `${rps(tracingOn).toFixed(0)} / ${rps(offAgain).toFixed(0)} req/s, p99 ${tracingOn.p99} / ${offAgain.p99} ms; ${(spans / requests).toFixed(2)} spans a request exported`),
    ];
  } finally {
    await stopTraced();
    await onServer.close();
    await offServer.close();
    await baselineServer.close();
    await countedServer.close();
    await countedApp.close();
    await countedDatabase.close();
    await off.close();
    await baseline.close();
    await onDatabase.close();
    await offDatabase.close();
    await sink.close();
  }
}

// ---------------------------------------------------------------------------------------------------
// PostgreSQL

async function benchPostgres(results: Result[]): Promise<Check[]> {
  const name = `teamos_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  // Seeding a million tasks in one statement may outlast the server's statement limit.
  const database = await openPostgres(url.toString(), { statementTimeoutMs: 0 });
  const rawPool = new pg.Pool({ connectionString: url.toString() });
  try {
    const db = database.db;
    await migrateToLatest(db);
    const world = await seedWorld(db);
    const seedingStarted = performance.now();
    const taskCount = only ? pgliteTaskCount : postgresTaskCount;
    await seedTasks(db, world, taskCount);
    const seeded = performance.now();
    const scorecard = await seedScorecard(db, world);
    const meetingId = await seedMeeting(db, world);
    await seedLists(db, world, postgresLogEvents);
    // Vacuumed, analyzed and checkpointed now, so that neither autovacuum nor the flushing of the new
    // pages competes with the measurements that follow.
    await sql`vacuum (analyze)`.execute(db);
    await sql`checkpoint`.execute(db);
    const { size } = (await sql<{ size: string }>`select pg_size_pretty(pg_total_relation_size('tasks')) as size`.execute(db)).rows[0]!;
    console.log(
      `PostgreSQL: seeded ${taskCount.toLocaleString('en')} tasks in one team with one insert … select in ${((seeded - seedingStarted) / 1000).toFixed(1)} s (table + indexes ${size}); ` +
        `a Scorecard of ${metricCount} metrics × ${weeksOfValues} weeks (${scorecard.firstWeek} to ${scorecard.lastWeek}); a meeting with ${world.ownerIds.length} ratings and segues, 2 headlines, 2 messages; an event log of ${postgresLogEvents.toLocaleString('en')} events`,
    );
    const middle = await tasksInOrder(db, world.teamId).offset(taskCount / 2 - 1).limit(1).executeTakeFirstOrThrow();
    const stack: Stack = {
      label: 'PostgreSQL',
      db,
      raw: async (statement, text, values) => (await rawPool.query({ name: statement, text, values })).rows,
      rawChange: async (statement, text, values) => {
        const client = await rawPool.connect();
        try {
          await client.query('begin');
          const { rows } = await client.query({ name: statement, text, values });
          await client.query('commit');
          return rows;
        } finally {
          client.release();
        }
      },
      world,
      taskId: middle.id,
      meetingId,
      metricId: scorecard.metricId,
      subscribe: database.subscribe,
    };
    const webhookStack: WebhookStack = {
      ...stack,
      listen: database.listen,
      // The worker's app gets a pool of its own, whose statements are counted.
      openCounted: async (onQuery) => {
        const counted = await openPostgres(url.toString(), { onQuery });
        return { db: counted.db, close: () => counted.close() };
      },
      deliveryCount: 5_000,
    };
    const tracingStack: TracingStack = {
      ...stack,
      open: async (hooks) => {
        const opened = await openPostgres(url.toString(), hooks);
        return { db: opened.db, close: () => opened.close() };
      },
    };
    if (only) {
      console.log(`Bench: ${seconds} s per run, ${connections} connections, autocannon on loopback; Node ${process.version}`);
      if (feedOnly) return await benchFeed(stack, results);
      return await (webhooksOnly ? benchWebhooks(webhookStack, results) : benchTracing(tracingStack, results));
    }

    const logger = pino({ level: 'silent' });
    const full = await createApp({ db, config: { rateLimitPerMinute: 10_000_000, redisUrl: undefined }, logger, secrets: createSecretBox(randomBytes(32)) });
    const api = await listen(full.app);
    const auth = { authorization: `Bearer ${world.readKey}` };
    const answer = await (await fetch(`${api.url}/v1/me`, { headers: auth })).json();
    const bare = express();
    bare.set('etag', false);
    bare.get('/v1/me', (_req, res) => {
      res.json(answer);
    });
    const bareServer = await listen(bare);
    // The contract router alone: a constant handler, a fixed caller, no database.
    const contract = await loadContract(contractDocument);
    const routed = express();
    routed.use((req, _res, next) => {
      req.requestId = 'bench';
      req.caller = { keyId: 'k', keyName: 'bench', keyExpiresAt: new Date(), scopes: ['read'], userId: world.userId, email: 'bench@example.com', name: 'Bench Person', timezone: null, systemRole: 'USER', organizations: [] };
      next();
    });
    const constant: HandlerMap['getMe'] = async () => ({ status: 200, body: answer });
    routed.use('/v1', operationRoutes({ contract, handlers: { ...handlers, getMe: constant }, db, logger, secrets: createSecretBox(randomBytes(32)), now: () => new Date() }, []).authenticated);
    const routedServer = await listen(routed);

    const checks: Check[] = [];
    try {
      const deep = await deepCursor(db, api.url, auth, world.teamId, deepPosition);
      // Three of four tasks are open: 90 % into the open ones, like the unfiltered deep page.
      const openCount = postgresTaskCount - postgresTaskCount / 4;
      const deepOpen = await deepCursor(db, api.url, auth, world.teamId, (openCount * 9) / 10, false);
      const plan = await explainDeepPage(url.toString(), world.teamId, world.userId, deep.cursor);
      console.log(`\nEXPLAIN (ANALYZE, BUFFERS) of the deep page (after item ${deepPosition.toLocaleString('en')}):\n  ${plan.sql}`);
      for (const line of plan.custom) console.log(`  ${line}`);
      const keyset = usesKeysetIndex(plan.custom) && usesKeysetIndex(plan.generic);
      console.log(`Index Scan on tasks_team_id_created_at_id_idx: custom plan ${usesKeysetIndex(plan.custom) ? 'yes' : 'NO'}, generic plan ${usesKeysetIndex(plan.generic) ? 'yes' : 'NO'}\n`);

      console.log(`Bench: ${seconds} s per run, ${connections} connections, autocannon on loopback; Node ${process.version}`);
      const bareResult = await load('bare Express route (same JSON from memory)', `${bareServer.url}/v1/me`);
      const routedResult = await load('contract routing + validation, constant body', `${routedServer.url}/v1/me`, { headers: auth });
      results.push(bareResult, routedResult);
      const firstPath = `/v1/teams/${world.teamId}/tasks`;
      const [first, deeper] = await loadPair(
        { name: 'PostgreSQL: GET …/tasks, first page', url: `${api.url}${firstPath}` },
        { name: `  … page after item ${deepPosition.toLocaleString('en')}`, url: `${api.url}${deep.path}` },
        auth,
      );
      const [firstOpen, deeperOpen] = await loadPair(
        { name: '  … ?completed=false, first page', url: `${api.url}${firstPath}?completed=false` },
        { name: `  … ?completed=false, after open item ${((openCount * 9) / 10).toLocaleString('en')}`, url: `${api.url}${deepOpen.path}` },
        auth,
      );
      results.push(first, deeper, firstOpen, deeperOpen);
      const latency = (check: string, a: Result, b: Result): Check => ({
        check,
        value: (b.p50 / a.p50).toFixed(2),
        target: '≤ 1.20',
        pass: b.p50 / a.p50 <= 1.2,
        note: `p99 ${(b.p99 / a.p99).toFixed(2)}, mean ${(b.mean / a.mean).toFixed(2)}, req/s ${(b.requestsPerSecond / a.requestsPerSecond).toFixed(2)}`,
      });
      checks.push(
        latency('PostgreSQL: deep page ÷ first page (p50)', first, deeper),
        latency('PostgreSQL: deep ÷ first, ?completed=false (p50)', firstOpen, deeperOpen),
        { check: 'PostgreSQL: deep page is an index range scan', value: keyset ? 'yes' : 'no', target: 'yes', pass: keyset, note: 'tasks_team_id_created_at_id_idx' },
        reported('routing + validation alone ÷ bare route', routedResult.requestsPerSecond / bareResult.requestsPerSecond),
      );
    } finally {
      await api.close();
      await bareServer.close();
      await routedServer.close();
      await full.close();
    }
    checks.push(...(await measureStack(stack, results)));
    checks.push(...(await benchFeed(stack, results)));
    checks.push(...(await benchTracing(tracingStack, results)));
    checks.push(...(await benchWebhooks(webhookStack, results)));
    return checks;
  } finally {
    await rawPool.end();
    await database.close();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

// ---------------------------------------------------------------------------------------------------
// PGlite

async function benchPglite(results: Result[]): Promise<Check[]> {
  // Days stay `YYYY-MM-DD` text, as src/db/connect.ts sets it up; the raw floor uses the same client.
  const pglite = await PGlite.create({ parsers: { 1082: (value: string) => value } });
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  try {
    await migrateToLatest(db);
    const world = await seedWorld(db);
    await seedTasks(db, world, pgliteTaskCount);
    const scorecard = await seedScorecard(db, world);
    const meetingId = await seedMeeting(db, world);
    await seedLists(db, world, pgliteLogEvents);
    await sql`vacuum (analyze)`.execute(db);
    const middle = await tasksInOrder(db, world.teamId).offset(pgliteTaskCount / 2 - 1).limit(1).executeTakeFirstOrThrow();
    console.log(`\nPGlite (in memory): seeded ${pgliteTaskCount.toLocaleString('en')} tasks, the same Scorecard and meeting, an event log of ${pgliteLogEvents.toLocaleString('en')} events`);
    const stack: Stack = {
      label: 'PGlite',
      db,
      raw: async (_statement, text, values) => (await pglite.query(text, values)).rows,
      rawChange: (_statement, text, values) => pglite.transaction(async (tx) => (await tx.query(text, values)).rows),
      world,
      taskId: middle.id,
      meetingId,
      metricId: scorecard.metricId,
      subscribe: async (channel, onNotify, events = {}) => {
        const unsubscribe = await pglite.listen(channel, (payload) => onNotify(payload));
        events.listening?.(false);
        return async () => {
          if (!pglite.closed) await unsubscribe();
        };
      },
    };
    const checks = only ? [] : await measureStack(stack, results);
    if (!only || feedOnly) checks.push(...(await benchFeed(stack, results)));
    if (feedOnly) return checks;
    if (!webhooksOnly) {
      // Kysely instances of their own on the same PGlite, whose destruction would close it: left to the stack's.
      const open = async (hooks: DatabaseOptions) => ({ db: new Kysely<Database>({ dialect: new PGliteDialect(pglite), ...statementLog(hooks) }), close: async () => undefined });
      checks.push(...(await benchTracing({ ...stack, open }, results)));
    }
    const listen: OpenDatabase['listen'] = (channel, onNotify) => stack.subscribe(channel, () => onNotify());
    if (!tracingOnly) checks.push(...(await benchWebhooks({ ...stack, listen, deliveryCount: 2_000 }, results)));
    return checks;
  } finally {
    await db.destroy();
  }
}

async function main() {
  const results: Result[] = [];
  const checks = await benchPostgres(results);
  if (process.env.BENCH_PGLITE !== '0') checks.push(...(await benchPglite(results)));
  console.log('\nSummary');
  for (const line of checks) {
    console.log(`  ${line.pass ? 'PASS' : 'MISS'}  ${line.check.padEnd(58)} ${line.value.padStart(6)}  (target ${line.target})${line.note ? `   ${line.note}` : ''}`);
  }
  // A PATCH answering anything but 200 would make its figure meaningless.
  if (results.some((result) => result.non2xx > 0)) process.exitCode = 1;
}

await main();

/**
 * `npm run bench`: throughput and latency on this machine, loopback only, bounded in time.
 *   1. GET /v1/me with a valid key on PostgreSQL (the whole pipeline: auth, rate limit, routing,
 *      validation, handler; one query) next to a bare Express 5 route answering the same JSON.
 *      Target: /v1/me at ≥ 0.4× the bare route.
 *   2. Routing + validation alone: a constant handler behind the contract router, with no database,
 *      next to the same bare route.
 *   3. A team with 1,000,000 tasks, seeded with one SQL statement: GET /v1/tasks/{id} next to the bare
 *      route (target ≥ 0.4×), and the first page of GET /v1/teams/{teamId}/tasks next to the page after
 *      the 900,000th task (target: deep within 1.2× of first), unfiltered and with ?completed=false.
 *   4. A Scorecard of 30 metrics with 5 years (260 weeks) of values each, up to the current week:
 *      GET /v1/teams/{teamId}/scorecard (the default 13 weeks; target ≥ 0.5× GET /v1/me of the same
 *      run) and GET /v1/metrics/{id}/values (first page of 50), reported with their p99.
 * BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) names a server on which a
 * throwaway database is created and dropped. BENCH_SECONDS (default 10) sets each run's length.
 * autocannon runs as a child process so that it does not share the server's event loop.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import express from 'express';
import { sql, type Kysely, type SqlBool } from 'kysely';
import pg from 'pg';
import { pino } from 'pino';
import { contractDocument, createApp } from '../src/app.js';
import { generateKey } from '../src/auth/apiKeys.js';
import { createSecretBox } from '../src/auth/secrets.js';
import { openPostgres } from '../src/db/connect.js';
import type { Database } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { DEFAULT_PAGE_LIMIT, encodeCursor } from '../src/db/pagination.js';
import { handlers } from '../src/handlers/index.js';
import type { HandlerMap } from '../src/handlers/types.js';
import { loadContract, operationRoutes } from '../src/http/router.js';
import { addWeeks, currentWeekMonday } from '../src/time.js';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '..');
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = 20;
const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const taskCount = 1_000_000;
const deepPosition = 900_000;
const metricCount = 30;
const weeksOfValues = 260;

interface Result {
  name: string;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  mean: number;
  non2xx: number;
}

async function listen(app: express.Express): Promise<{ url: string; server: Server }> {
  const server: Server = await new Promise((ready) => {
    const started = app.listen(0, '127.0.0.1', () => ready(started));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function autocannon(url: string, headers: Record<string, string>, duration: number): Promise<Omit<Result, 'name'>> {
  const args = [url, '--connections', String(connections), '--duration', String(duration), '--json'];
  for (const [header, value] of Object.entries(headers)) args.push('--headers', `${header}=${value}`);
  const { stdout } = await run(resolve(root, 'node_modules/.bin/autocannon'), args, { maxBuffer: 64 * 1024 * 1024 });
  const report = JSON.parse(stdout) as {
    requests: { average: number };
    latency: { p50: number; p99: number; average: number };
    non2xx: number;
  };
  const { latency } = report;
  return { requestsPerSecond: report.requests.average, p50: latency.p50, p99: latency.p99, mean: latency.average, non2xx: report.non2xx };
}

async function load(name: string, url: string, headers: Record<string, string> = {}): Promise<Result> {
  const result = { name, ...(await autocannon(url, headers, seconds)) };
  print([result]);
  return result;
}

/**
 * Two targets whose latencies are compared, each loaded for the run's length in two halves in the
 * order A B B A, so that a drift of the machine's speed during the runs weighs on both alike.
 * Each figure is the mean of its two halves.
 */
async function loadPair(a: { name: string; url: string }, b: { name: string; url: string }, headers: Record<string, string>): Promise<[Result, Result]> {
  const half = Math.max(1, Math.round(seconds / 2));
  const a1 = await autocannon(a.url, headers, half);
  const b1 = await autocannon(b.url, headers, half);
  const b2 = await autocannon(b.url, headers, half);
  const a2 = await autocannon(a.url, headers, half);
  const merge = (name: string, x: Omit<Result, 'name'>, y: Omit<Result, 'name'>): Result => ({
    name,
    requestsPerSecond: (x.requestsPerSecond + y.requestsPerSecond) / 2,
    p50: (x.p50 + y.p50) / 2,
    p99: (x.p99 + y.p99) / 2,
    mean: (x.mean + y.mean) / 2,
    non2xx: x.non2xx + y.non2xx,
  });
  const results: [Result, Result] = [merge(a.name, a1, a2), merge(b.name, b1, b2)];
  print(results);
  return results;
}

function print(results: Result[]) {
  for (const result of results) {
    console.log(
      `${result.name.padEnd(52)} ${result.requestsPerSecond.toFixed(0).padStart(7)} req/s   p50 ${String(result.p50).padStart(4)} ms   p99 ${String(result.p99).padStart(4)} ms${result.non2xx ? `   (${result.non2xx} non-2xx!)` : ''}`,
    );
  }
}

/**
 * One team's tasks in one statement: distinct creation instants a millisecond apart (the list's sort
 * key), four owners taking turns in runs of three, every fourth task completed, due dates spread over a year.
 */
async function seedTasks(db: Kysely<Database>, teamId: string, ownerIds: string[]) {
  await sql`
    insert into tasks (team_id, title, owner_id, due_date, completed, completed_at, created_at)
    select
      ${teamId},
      (array['Prepare', 'Review', 'Send', 'Draft', 'Follow up on', 'Schedule', 'Update', 'Close'])[1 + n % 8]
        || ' ' || (array['the freight quote', 'the quarterly report', 'the hiring plan', 'customer feedback',
                        'the supplier contract', 'the onboarding checklist', 'the budget forecast'])[1 + n % 7]
        || ' #' || n,
      (${ownerIds}::text[])[1 + (n / 3) % ${ownerIds.length}],
      date '2026-01-05' + (n % 365)::int,
      n % 4 = 0,
      case when n % 4 = 0 then timestamptz '2026-01-05T08:00:00Z' + n * interval '1 millisecond' + interval '2 days' end,
      timestamptz '2026-01-05T08:00:00Z' + n * interval '1 millisecond'
    from generate_series(1, ${taskCount}) as n
  `.execute(db);
}

/**
 * A Scorecard in two statements: `metricCount` metrics in order, then `weeksOfValues` weekly values of
 * each, the newest in `lastWeek`. Returns the first metric's id.
 */
async function seedScorecard(db: Kysely<Database>, teamId: string, ownerIds: string[], lastWeek: string) {
  await sql`
    insert into metrics (team_id, title, goal, owner_id, unit, position)
    select ${teamId}, 'Measurable #' || n, '>=' || (n * 10), (${ownerIds}::text[])[1 + n % ${ownerIds.length}], case when n % 3 = 0 then '%' end, n
    from generate_series(1, ${metricCount}) as n
  `.execute(db);
  await sql`
    insert into metric_values (metric_id, week, value, on_track, entered_by_id)
    select m.id, ${lastWeek}::date - 7 * w, (m.position * 10 + w % 7 - 3)::text, w % 7 >= 3, m.owner_id
    from metrics m cross join generate_series(0, ${weeksOfValues - 1}) as w
    where m.team_id = ${teamId}
  `.execute(db);
  const first = await db.selectFrom('metrics').select('id').where('team_id', '=', teamId).where('position', '=', 1).executeTakeFirstOrThrow();
  return first.id;
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
  return { row, path };
}

/** EXPLAIN (ANALYZE, BUFFERS) of the deep page's query, built the way paginate() builds it. */
async function explainDeepPage(databaseUrl: string, db: Kysely<Database>, teamId: string, after: { created_at: Date; id: string }) {
  const compiled = db
    .selectFrom('tasks')
    .selectAll('tasks')
    .where('tasks.team_id', '=', teamId)
    .where(sql<SqlBool>`(${sql.ref('tasks.created_at')}, ${sql.ref('tasks.id')}) > (${after.created_at}, ${after.id})`)
    .orderBy(sql.ref('tasks.created_at'), 'asc')
    .orderBy(sql.ref('tasks.id'), 'asc')
    .limit(DEFAULT_PAGE_LIMIT + 1)
    .compile();
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const explain = async () =>
      (await client.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${compiled.sql}`, [...compiled.parameters])).rows.map((line) => line['QUERY PLAN']);
    const custom = await explain();
    // The server runs it as a named prepared statement, which PostgreSQL may plan generically.
    await client.query('set plan_cache_mode = force_generic_plan');
    const generic = await explain();
    return { sql: compiled.sql, custom, generic };
  } finally {
    await client.end();
  }
}

const usesKeysetIndex = (plan: string[]) => plan.some((line) => /Index Scan using tasks_team_id_created_at_id_idx on tasks/.test(line));

async function main() {
  const name = `teamos_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  // Seeding a million tasks in one statement may outlast the server's statement limit.
  const database = await openPostgres(url.toString(), { statementTimeoutMs: 0 });
  const closers: (() => Promise<unknown>)[] = [];
  try {
    await migrateToLatest(database.db);
    const user = await database.db
      .insertInto('users')
      .values({ email: 'bench@example.com', name: 'Bench Person', timezone: 'Europe/Bratislava' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const org = await database.db
      .insertInto('organizations')
      .values({ name: 'Bench Org', slug: 'bench-org', timezone: 'Europe/Bratislava', default_locale: 'en' })
      .returning('id')
      .executeTakeFirstOrThrow();
    await database.db.insertInto('organization_members').values({ org_id: org.id, user_id: user.id, role: 'OWNER' }).execute();
    const { key, prefix, hash } = generateKey();
    await database.db
      .insertInto('api_keys')
      .values({ user_id: user.id, name: 'bench', prefix, key_hash: hash, scopes: ['read'], expires_at: new Date(Date.now() + 86_400_000) })
      .execute();

    const team = await database.db
      .insertInto('teams')
      .values({ org_id: org.id, name: 'Operations', slug: 'operations' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const colleagues = await database.db
      .insertInto('users')
      .values(['Jana Kováčová', 'Peter Novák', 'Eva Horváthová'].map((person, index) => ({ email: `colleague${index}@example.com`, name: person, timezone: 'Europe/Bratislava' })))
      .returning('id')
      .execute();
    const ownerIds = [user.id, ...colleagues.map((colleague) => colleague.id)];
    await database.db
      .insertInto('organization_members')
      .values(colleagues.map((colleague) => ({ org_id: org.id, user_id: colleague.id, role: 'MEMBER' as const })))
      .execute();
    await database.db.insertInto('team_members').values(ownerIds.map((ownerId) => ({ team_id: team.id, user_id: ownerId, role: 'MEMBER' }))).execute();
    const seedingStarted = performance.now();
    await seedTasks(database.db, team.id, ownerIds);
    const seeded = performance.now();
    // Vacuumed, analyzed and checkpointed now, so that neither autovacuum nor the flushing of the new
    // pages competes with the measurements that follow.
    await sql`vacuum (analyze) tasks`.execute(database.db);
    await sql`checkpoint`.execute(database.db);
    const { size } = (await sql<{ size: string }>`select pg_size_pretty(pg_total_relation_size('tasks')) as size`.execute(database.db)).rows[0]!;
    console.log(
      `Seeded ${taskCount.toLocaleString('en')} tasks in one team with one insert … select from generate_series in ${((seeded - seedingStarted) / 1000).toFixed(1)} s; vacuum (analyze) + checkpoint ${((performance.now() - seeded) / 1000).toFixed(1)} s; table + indexes ${size}`,
    );

    // The bench caller's zone decides the Scorecard's current week.
    const lastWeek = currentWeekMonday(new Date(), 'Europe/Bratislava');
    const firstMetricId = await seedScorecard(database.db, team.id, ownerIds, lastWeek);
    await sql`vacuum (analyze) metric_values`.execute(database.db);
    console.log(`Seeded a Scorecard of ${metricCount} metrics with ${weeksOfValues} weeks of values each (${addWeeks(lastWeek, 1 - weeksOfValues)} to ${lastWeek})`);

    const logger = pino({ level: 'silent' });
    const secrets = createSecretBox(randomBytes(32));
    const full = await createApp({ db: database.db, config: { rateLimitPerMinute: 10_000_000, redisUrl: undefined }, logger, secrets });
    const api = await listen(full.app);
    closers.push(full.close, () => new Promise((done) => api.server.close(done)));

    const auth = { authorization: `Bearer ${key}` };
    const answer = await (await fetch(`${api.url}/v1/me`, { headers: auth })).json();
    const bare = express();
    bare.get('/v1/me', (_req, res) => {
      res.json(answer);
    });
    const bareServer = await listen(bare);
    closers.push(() => new Promise((done) => bareServer.server.close(done)));

    // The contract router alone: a constant handler, a fixed caller, no database.
    const contract = await loadContract(contractDocument);
    const routed = express();
    routed.use(express.json({ limit: '64kb' }));
    routed.use((req, _res, next) => {
      req.requestId = 'bench';
      req.caller = { keyId: 'k', keyName: 'bench', keyExpiresAt: new Date(), scopes: ['read'], userId: user.id, email: 'bench@example.com', name: 'Bench Person', timezone: null, systemRole: 'USER', organizations: [] };
      next();
    });
    const constant: HandlerMap['getMe'] = async () => ({ status: 200, body: answer });
    routed.use('/v1', operationRoutes({ contract, handlers: { ...handlers, getMe: constant }, db: database.db, logger, secrets }, [], 'authenticated'));
    const routedServer = await listen(routed);
    closers.push(() => new Promise((done) => routedServer.server.close(done)));

    const middle = await tasksInOrder(database.db, team.id).offset(taskCount / 2 - 1).limit(1).executeTakeFirstOrThrow();
    const taskResponse = await fetch(`${api.url}/v1/tasks/${middle.id}`, { headers: auth });
    if (taskResponse.status !== 200) throw new Error(`GET /v1/tasks/${middle.id} answered ${taskResponse.status}`);
    const scorecardPath = `/v1/teams/${team.id}/scorecard`;
    const scorecard = (await (await fetch(`${api.url}${scorecardPath}`, { headers: auth })).json()) as { metrics?: { values: unknown[] }[] };
    if (scorecard.metrics?.length !== metricCount || scorecard.metrics.some((metric) => metric.values.length !== 13)) {
      throw new Error(`GET ${scorecardPath} does not hold ${metricCount} metrics with 13 weeks each: ${JSON.stringify(scorecard).slice(0, 300)}`);
    }
    const valuesPath = `/v1/metrics/${firstMetricId}/values`;
    const firstPath = `/v1/teams/${team.id}/tasks`;
    const firstOpenPath = `${firstPath}?completed=false`;
    const deep = await deepCursor(database.db, api.url, auth, team.id, deepPosition);
    // Three of four tasks are open: 90 % into the open ones, like the unfiltered deep page.
    const openCount = taskCount - taskCount / 4;
    const deepOpen = await deepCursor(database.db, api.url, auth, team.id, (openCount * 9) / 10, false);
    console.log(`Checked: the deep pages hold items ${deepPosition + 1}-${deepPosition + DEFAULT_PAGE_LIMIT} (and open items ${(openCount * 9) / 10 + 1}-${(openCount * 9) / 10 + DEFAULT_PAGE_LIMIT}) in order`);

    const plan = await explainDeepPage(url.toString(), database.db, team.id, deep.row);
    console.log(`\nEXPLAIN (ANALYZE, BUFFERS) of the deep page (after item ${deepPosition.toLocaleString('en')}):\n  ${plan.sql}`);
    for (const line of plan.custom) console.log(`  ${line}`);
    const keyset = usesKeysetIndex(plan.custom) && usesKeysetIndex(plan.generic);
    console.log(
      `Index Scan on tasks_team_id_created_at_id_idx: custom plan ${usesKeysetIndex(plan.custom) ? 'yes' : 'NO'}, generic (prepared) plan ${usesKeysetIndex(plan.generic) ? 'yes' : 'NO'}\n`,
    );

    console.log(`Bench: ${seconds} s per run, ${connections} connections, autocannon on loopback; Node ${process.version}`);
    const bareResult = await load('bare Express route (same JSON from memory)', `${bareServer.url}/v1/me`);
    const meResult = await load('GET /v1/me, full pipeline on PostgreSQL', `${api.url}/v1/me`, auth);
    const routedResult = await load('contract routing + validation, constant body', `${routedServer.url}/v1/me`, auth);
    const taskResult = await load('GET /v1/tasks/{id} (1M tasks)', `${api.url}/v1/tasks/${middle.id}`, auth);
    const scorecardResult = await load(`GET /v1/teams/{teamId}/scorecard (${metricCount} × 13 weeks)`, `${api.url}${scorecardPath}`, auth);
    const valuesResult = await load(`GET /v1/metrics/{id}/values (${weeksOfValues} weeks, page of 50)`, `${api.url}${valuesPath}`, auth);
    const [firstResult, deepResult] = await loadPair(
      { name: 'GET /v1/teams/{teamId}/tasks, first page', url: `${api.url}${firstPath}` },
      { name: `  … page after item ${deepPosition.toLocaleString('en')}`, url: `${api.url}${deep.path}` },
      auth,
    );
    const [firstOpenResult, deepOpenResult] = await loadPair(
      { name: '  … ?completed=false, first page', url: `${api.url}${firstOpenPath}` },
      { name: `  … ?completed=false, after open item ${((openCount * 9) / 10).toLocaleString('en')}`, url: `${api.url}${deepOpen.path}` },
      auth,
    );

    const overheadMs = 1000 / routedResult.requestsPerSecond - 1000 / bareResult.requestsPerSecond;
    console.log(
      `routing + validation alone: ${(routedResult.requestsPerSecond / bareResult.requestsPerSecond).toFixed(2)}× the bare route, about ${(overheadMs * 1000).toFixed(0)} µs of server time per request`,
    );

    const atLeast = (value: number, target: number) => ({ value: value.toFixed(2), target: `≥ ${target.toFixed(2)}`, pass: value >= target });
    const atMost = (value: number, target: number) => ({ value: value.toFixed(2), target: `≤ ${target.toFixed(2)}`, pass: value <= target });
    // Latency ratios: p50 is the target; autocannon reports whole milliseconds, so the mean is shown too.
    const deepRatios = (first: Result, deeper: Result) =>
      `p99 ${(deeper.p99 / first.p99).toFixed(2)}, mean ${(deeper.mean / first.mean).toFixed(2)}, req/s ${(deeper.requestsPerSecond / first.requestsPerSecond).toFixed(2)}`;
    const summary = [
      { check: 'GET /v1/me ÷ bare route (req/s)', ...atLeast(meResult.requestsPerSecond / bareResult.requestsPerSecond, 0.4), note: '' },
      { check: 'GET /v1/tasks/{id} ÷ bare route (req/s)', ...atLeast(taskResult.requestsPerSecond / bareResult.requestsPerSecond, 0.4), note: '' },
      { check: 'deep page ÷ first page (p50 latency)', ...atMost(deepResult.p50 / firstResult.p50, 1.2), note: deepRatios(firstResult, deepResult) },
      { check: 'deep ÷ first, ?completed=false (p50)', ...atMost(deepOpenResult.p50 / firstOpenResult.p50, 1.2), note: deepRatios(firstOpenResult, deepOpenResult) },
      { check: 'GET …/scorecard ÷ GET /v1/me (req/s)', ...atLeast(scorecardResult.requestsPerSecond / meResult.requestsPerSecond, 0.5), note: `p99 ${scorecardResult.p99} ms` },
      {
        check: 'GET /v1/metrics/{id}/values ÷ GET /v1/me (req/s)',
        value: (valuesResult.requestsPerSecond / meResult.requestsPerSecond).toFixed(2),
        target: 'reported',
        pass: true,
        note: `p99 ${valuesResult.p99} ms`,
      },
      { check: 'deep page is an index range scan (keyset)', value: keyset ? 'yes' : 'no', target: 'yes', pass: keyset, note: 'tasks_team_id_created_at_id_idx' },
    ];
    console.log('\nSummary');
    for (const line of summary) {
      console.log(`  ${line.pass ? 'PASS' : 'MISS'}  ${line.check.padEnd(44)} ${line.value.padStart(5)}  (target ${line.target})${line.note ? `   ${line.note}` : ''}`);
    }
    const results = [bareResult, meResult, routedResult, taskResult, scorecardResult, valuesResult, firstResult, deepResult, firstOpenResult, deepOpenResult];
    if (results.some((result) => result.non2xx > 0)) process.exitCode = 1;
  } finally {
    for (const close of closers.reverse()) await close();
    await database.close();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

await main();

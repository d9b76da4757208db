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
 *   - GET /v1/me ≥ 1.0 × the key lookup; GET /v1/tasks/{id} ≥ 0.95 × the read (each warmed up, then
 *     three rounds of floor, API, API, floor, the median round's figure);
 *   - GET /v1/teams/{teamId}/tasks, the issue list, the meeting list and the organization's member
 *     list (pages of 50) ≥ 0.85 × the page (three rounds); GET /v1/meetings/{id} (with ratings, segues, headlines
 *     and messages) ÷ the read reported;
 *   - PATCH /v1/tasks/{id}, a task per connection, ≥ 0.9 × the change; POST a task ≥ 0.85 × the create
 *     (three rounds each);
 *   - GET /v1/me with production's request log lines on (info, to /dev/null; the other figures are
 *     taken with the logger silent) reported;
 *   - each read's p99 ≤ 1.5 × the p99 of its floor route in each of three runs, the two paced together in alternating slices
 *     of 100 ms at half the maximum rate of the slower, measured right before; the requests evenly
 *     paced (scripts/pacedLoad.ts: autocannon's rate option sends each second's quota in one burst);
 *   - GET /v1/orgs/{orgId}/events (a page of 100 of the event log) ≥ 0.80 × the task page of 50;
 *   - OpenTelemetry tracing (benchTracing): GET /v1/me with tracing off, as the server runs without
 *     OTEL_EXPORTER_OTLP_ENDPOINT, costs ≤ 1 % of the request's server CPU (what off adds, timed apart
 *     from the machine's noise), and its rate ÷ the same app on a database without a statement log
 *     reported; on, exporting to a local sink, reported;
 *   - GET /v1/teams/{teamId}/scorecard (10 metrics, 13 weeks of 5 years of values) ≥ 0.50 × GET /v1/me,
 *     and GET /v1/metrics/{id}/values reported.
 * The request pipeline stage by stage (benchStages, scripts/bench/stages.ts): the CPU µs per request of
 * each stage for GET /v1/me (rate limit in memory and in Redis) and a task read, from V8's profile;
 * GET /v1/me ≥ 0.8 × a bare Express route answering the same JSON; the task read ≥ 3 × the Prism
 * mock's. BENCH_ONLY=stages measures it alone; BENCH_ONLY=shapes every shape against its floor
 * (the reads, pages, changes and paced tails above) on 10,000 tasks.
 *
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
 * The team snapshot, on each database (benchSnapshot, scripts/bench/snapshot.ts): a team of 10,000 open
 * tasks, 1,000 open issues and a Scorecard of 100 metrics × 13 weeks loaded in one request, bytes and
 * time against paging the lists for the same records (reported); a PATCH's rate while 200 clients
 * load snapshots ÷ with none ≥ 0.8.
 *
 * client.sync's local copy, on each database (benchSync, scripts/bench/sync.ts): catching up after 1,000
 * missed events from storage against a reload from the snapshot (time and bytes), and the copy's heap
 * for 10,000 records in Node (KB a record); reported.
 *
 * The live event streams, on PostgreSQL, servers in processes of their own (benchStreams,
 * scripts/bench/streams.ts): change → event on another instance at 50 PATCHes a second with 500 streams
 * open, p99 ≤ 250 ms; 1,000 idle streams' memory (≤ 64 KB resident a stream) and heartbeat round;
 * a PATCH with 500 streams open ÷ none ≥ 0.97 when they do not follow its team, ≥ 0.8 when they
 * receive its event.
 *
 * BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) names a server on which a
 * throwaway database is created and dropped. BENCH_SECONDS (default 10) sets each run's length.
 * BENCH_PGLITE=0 skips the embedded database. BENCH_ONLY=webhooks measures the webhook figures alone,
 * BENCH_ONLY=tracing the tracing figures, BENCH_ONLY=feed the feed's, BENCH_ONLY=streams the live
 * streams', BENCH_ONLY=idle-streams only the idle streams' memory and heartbeat figures (with
 * BENCH_HEAP_SNAPSHOTS=dir, the server's heap snapshots with one and with 1,000 streams written
 * there), BENCH_ONLY=snapshot the team snapshot's, BENCH_ONLY=sync client.sync's catch-up and memory (scripts/bench/sync.ts), BENCH_ONLY=floor `/v1/me` and a task against their floors and the p99s at half rate of
 * those and of the issue page, the meeting read and the Scorecard (PostgreSQL then seeded with 10,000
 * tasks), BENCH_ONLY=csv the CSV export of the million tasks and a 10,000-row import (scripts/bench/csv.ts),
 * BENCH_ONLY=export a change's p99 during an organization's export ÷ without (scripts/bench/export.ts;
 * PostgreSQL then seeded with BENCH_EXPORT_RECORDS tasks, 200,000 unless given), BENCH_ONLY=against
 * this checkout's API against another's in one process (BENCH_AGAINST=dir; scripts/bench/against.ts). Each pair of runs (`loadPair`) also prints where a request's CPU went: the server's
 * process, PostgreSQL's processes and the rest of the machine (the load generator, the kernel).
 * BENCH_WEBHOOK_CONCURRENCY and BENCH_WEBHOOK_POLL_MS set the worker's `concurrency` and `pollMs` for
 * the throughput figure (its defaults otherwise).
 */
import { randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, sql } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pg from 'pg';
import { openPostgres, statementLog, type DatabaseOptions, type OpenDatabase } from '../src/db/connect.js';
import type { Database } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { connections, seconds, type Check, type Result } from './bench/harness.js';
import { metricCount, seedLists, seedMeeting, seedScorecard, seedTasks, seedWorld, tasksInOrder, weeksOfValues, type Stack } from './bench/seed.js';
import { benchExport } from './bench/export.js';
import { benchCsv } from './bench/csv.js';
import { benchDeepPages, benchFeed, benchFloor, measureStack } from './bench/shapes.js';
import { benchSnapshot } from './bench/snapshot.js';
import { benchStages } from './bench/stages.js';
import { benchAgainst } from './bench/against.js';
import { benchSync } from './bench/sync.js';
import { benchIdleStreams, benchStreams } from './bench/streams.js';
import { benchTracing, type TracingStack } from './bench/tracing.js';
import { benchWebhooks, type WebhookStack } from './bench/webhooks.js';

const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const postgresTaskCount = 1_000_000;
const pgliteTaskCount = 10_000;
/** Events in the organization's log before the changes measured add theirs. */
const postgresLogEvents = 100_000;
const pgliteLogEvents = 20_000;
/** BENCH_ONLY=webhooks, tracing, feed, streams, idle-streams, floor, snapshot, sync, csv or export: only those figures (PostgreSQL then seeds 10,000 tasks instead of a million, but for csv). */
const only = process.env.BENCH_ONLY || undefined;
const onlyValues = ['webhooks', 'tracing', 'feed', 'streams', 'idle-streams', 'floor', 'snapshot', 'sync', 'csv', 'export', 'stages', 'shapes', 'against'];
if (only !== undefined && !onlyValues.includes(only)) throw new Error(`BENCH_ONLY=${only}: the values known are ${onlyValues.map((value) => `"${value}"`).join(', ')}`);
const webhooksOnly = only === 'webhooks';
const tracingOnly = only === 'tracing';
const feedOnly = only === 'feed';
const idleStreamsOnly = only === 'idle-streams';
const streamsOnly = only === 'streams' || idleStreamsOnly;
const floorOnly = only === 'floor';
const snapshotOnly = only === 'snapshot';
/** `client.sync`'s catch-up and memory (scripts/bench/sync.ts). */
const syncOnly = only === 'sync';
/** The CSV export and import alone, on the full million tasks (scripts/bench/csv.ts). */
const csvOnly = only === 'csv';
const exportOnly = only === 'export';
/** The CPU of each stage of the request pipeline (scripts/bench/stages.ts). */
const stagesOnly = only === 'stages';
/** Every shape against its floor (`measureStack`: reads, pages, changes, tails) on 10,000 tasks. */
const shapesOnly = only === 'shapes';
/** This checkout's API against another's (scripts/bench/against.ts). */
const againstOnly = only === 'against';
/** The tasks of the organization exported by BENCH_ONLY=export on PostgreSQL. */
const exportTaskCount = Number(process.env.BENCH_EXPORT_RECORDS ?? 200_000);

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
  // An idle connection that the throwaway database's drop ends may report it after the pool has ended.
  rawPool.on('error', () => undefined);
  try {
    const db = database.db;
    await migrateToLatest(db);
    const world = await seedWorld(db);
    const seedingStarted = performance.now();
    const taskCount = exportOnly ? exportTaskCount : only && !csvOnly ? pgliteTaskCount : postgresTaskCount;
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
      if (exportOnly) return await benchExport(stack, { inThread: false });
      if (floorOnly) return await benchFloor(stack, results);
      if (stagesOnly) return await benchStages(stack, results);
      if (againstOnly) return await benchAgainst(stack, results);
      if (shapesOnly) return await measureStack(stack, results);
      if (snapshotOnly) return await benchSnapshot(stack, results);
      if (syncOnly) return await benchSync(stack);
      if (csvOnly) return await benchCsv(stack, taskCount, results);
      if (idleStreamsOnly) return await benchIdleStreams({ ...stack, databaseUrl: url.toString() });
      if (streamsOnly) return await benchStreams({ ...stack, databaseUrl: url.toString() }, results);
      return await (webhooksOnly ? benchWebhooks(webhookStack, results) : benchTracing(tracingStack, results));
    }

    const checks = await benchDeepPages(db, world, url.toString(), taskCount, results);
    checks.push(...(await measureStack(stack, results)));
    checks.push(...(await benchStages(stack, results)));
    checks.push(...(await benchFeed(stack, results)));
    checks.push(...(await benchSnapshot(stack, results)));
    checks.push(...(await benchSync(stack)));
    checks.push(...(await benchTracing(tracingStack, results)));
    checks.push(...(await benchWebhooks(webhookStack, results)));
    checks.push(...(await benchStreams({ ...stack, databaseUrl: url.toString() }, results)));
    checks.push(...(await benchCsv(stack, taskCount, results)));
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
    if (exportOnly) return await benchExport(stack, { inThread: true });
    const checks = only && !shapesOnly ? [] : await measureStack(stack, results);
    if (shapesOnly) return checks;
    if (!only || feedOnly) checks.push(...(await benchFeed(stack, results)));
    if (feedOnly) return checks;
    if (!only || snapshotOnly) checks.push(...(await benchSnapshot(stack, results)));
    if (snapshotOnly) return checks;
    if (!only || syncOnly) checks.push(...(await benchSync(stack)));
    if (syncOnly) return checks;
    if (floorOnly) return await benchFloor(stack, results);
    if (!only || stagesOnly) checks.push(...(await benchStages(stack, results)));
    if (stagesOnly) return checks;
    if (againstOnly) return await benchAgainst(stack, results);
    if (!only || csvOnly) checks.push(...(await benchCsv(stack, pgliteTaskCount, results)));
    if (csvOnly) return checks;
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
  // The streams' figures need server processes on one database: PostgreSQL's alone.
  if (process.env.BENCH_PGLITE !== '0' && !streamsOnly) checks.push(...(await benchPglite(results)));
  console.log('\nSummary');
  for (const line of checks) {
    console.log(`  ${line.pass ? 'PASS' : 'MISS'}  ${line.check.padEnd(58)} ${line.value.padStart(6)}  (target ${line.target})${line.note ? `   ${line.note}` : ''}`);
  }
  // A PATCH answering anything but 200 would make its figure meaningless.
  if (results.some((result) => result.non2xx > 0 || (result.errors ?? 0) > 0)) process.exitCode = 1;
}

await main();

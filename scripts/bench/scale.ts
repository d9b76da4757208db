/**
 * `npm run bench:scale` (`make bench-scale`): what a request costs as the data grows. For each area,
 * one database per size (seeded by SQL: scripts/bench/scaleSeed.ts), all open at once, each behind
 * its own app; every request is measured at every size in the same run, sequentially (one request at
 * a time, so the figure is a request's latency, not a throughput), in rounds of one request a size so
 * that the machine's drift weighs on every size alike. Each figure is a ratio to the
 * same request at the smallest size (median and p99 of SCALE_SAMPLES requests after a warm-up).
 *
 *   - a team's tasks and issues, 1,000 / 100,000 / 1,000,000 of each: first page, a page near the
 *     end (a cursor 60 items before it), a filtered page (open tasks of one owner; open HIGH issues,
 *     the issue list having no owner filter), an item read, a create, a PATCH;
 *   - an organization's event log, 10,000 / 1,000,000 / 5,000,000 events: a feed page from the
 *     start, the middle and the end (`after` an event there), and a change's cost (a PATCH of a task,
 *     which writes its event into that log); then, at the largest size, the retention's purge of
 *     1,000,000 expired events (`purgeExpiredEvents`, as the worker runs it): how long, the p99 of
 *     changes made during it against changes before and after it, the longest change, and the longest
 *     wait for a lock seen in `pg_stat_activity` (sampled every 10 ms on a connection of its own);
 *   - an organization of 100 / 1,000 / 10,000 members (a member page; `/v1/me` of a member of 50
 *     teams, the caller kept in memory as production does and, read from the database, with the cache
 *     off) and a Scorecard of 100 metrics holding 13 / 52 / 260 weeks of values (its default view of 13
 *     weeks: the answer stays the same, the history behind it grows).
 * Targets: every request at the largest size ≤ 1.3 × its median at the smallest; a change's p99 during
 * the purge ≤ 2 × without it; no change waiting for a lock > 100 ms.
 *
 * PostgreSQL: SCALE_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) names a server
 * on which a database is created per size and dropped after. PGlite then runs the sizes it can hold
 * (see `pgliteSizes`), each in a data directory of its own. SCALE_POSTGRES=0 or SCALE_PGLITE=0 skips
 * one. SCALE_ONLY=items|events|org measures one area; SCALE_ONLY=purge only the purge, at the largest
 * event log (no chart written). SCALE_DIVIDE=n divides every size by n (a quick trial of the bench
 * itself; figures not comparable; with SCALE_ONLY=purge, a shorter purge of the same shape: 1,000,000
 * ÷ n expired events, on PGlite 500,000 ÷ n, half of its largest log). Writes a chart per database to
 * docs/performance/scale-<database>.svg with its figures beside it in .json (SCALE_CHART=0: not;
 * SCALE_CHART_ONLY=1 draws the charts again from the .json files without measuring) and prints the
 * table in Markdown.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { pino } from 'pino';
import { compile, type TopLevelSpec } from 'vega-lite';
import type { Field } from 'vega-lite/build/src/channeldef.js';
import type { LayerSpec } from 'vega-lite/build/src/spec/index.js';
import * as vega from 'vega';
import { createApp, type App } from '../../src/app.js';
import { createSecretBox } from '../../src/auth/secrets.js';
import { openPglite, openPostgres, type OpenDatabase } from '../../src/db/connect.js';
import type { Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { encodeCursor } from '../../src/db/pagination.js';
import { defaultEventRetentionDays } from '../../src/rules/webhookDelivery.js';
import { purgeExpiredEvents } from '../../src/webhooks/worker.js';
import { atMost, listen, reported, type Check } from './harness.js';
import { seedEventLog, seedMembers, seedScorecard, seedTeamItems } from './scaleSeed.js';
import { seedWorld, type World } from './seed.js';

const root = resolve(import.meta.dirname, '../..');
const serverUrl = process.env.SCALE_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const samples = Number(process.env.SCALE_SAMPLES ?? 200);
const divide = Number(process.env.SCALE_DIVIDE ?? 1);
const only = process.env.SCALE_ONLY || undefined;
if (only !== undefined && !['items', 'events', 'purge', 'org'].includes(only)) throw new Error(`SCALE_ONLY=${only}: the values known are "items", "events", "purge" and "org"`);
const warmUp = 20;
const ratioTarget = 1.3;
const purgeP99Target = 2;
const lockWaitTargetMs = 100;
const expiredEvents = Math.round(1_000_000 / divide);
const lockSampleMs = 10;

type Engine = 'PostgreSQL' | 'PGlite';
type Area = 'items' | 'events' | 'org';

const sizesOf: Record<Area, number[]> = {
  items: [1_000, 100_000, 1_000_000],
  events: [10_000, 1_000_000, 5_000_000],
  org: [100, 1_000, 10_000],
};
const scorecardWeeks = [13, 52, 260];
const scorecardMetrics = 100;
const teamsOfMember = 50;

/**
 * What PGlite can hold. It keeps its whole database in the memory of its WebAssembly instance (a
 * 32-bit address space: at most 4 GB, and the data directory's files are read into it): 5,000,000
 * events (about 4 GB with their indexes on PostgreSQL) do not fit, so its event log stops at 1,000,000.
 */
const pgliteSizes: Record<Area, number[]> = { ...sizesOf, events: [10_000, 1_000_000] };
const pgliteCannot = 'PGlite: no event log of 5,000,000 events (about 4 GB with its indexes on PostgreSQL; PGlite holds its database in the memory of a 32-bit WebAssembly instance, 4 GB at most)';

interface Sized {
  size: number;
  url: string;
  world: World;
  /** Paths and keys the requests of this size need (cursors, ids). */
  at: Record<string, string>;
}

interface Probe {
  name: string;
  method?: 'GET' | 'POST' | 'PATCH';
  path: (sized: Sized) => string;
  body?: (sized: Sized, index: number) => unknown;
  /** The key, when not the Owner's. */
  key?: (sized: Sized) => string;
  status: number;
  /** A change: the targets' ratio applies to it as to a read. */
  size?: (sized: Sized) => number;
}

interface Figure {
  engine: Engine;
  area: string;
  request: string;
  size: number;
  median: number;
  p99: number;
}

const figures: Figure[] = [];
const checks: Check[] = [];
const notes: string[] = [];

/** Unrounded: the harness's `quantile` rounds to 0.1 ms, too coarse a step for ratios of sub-millisecond medians. */
const quantile = (sorted: number[], share: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))]!;
const ms = (value: number) => (value < 10 ? value.toFixed(2) : value.toFixed(1));

/** One request, timed from its sending to the end of its body; throws on an unexpected status. */
async function timed(probe: Probe, sized: Sized, index: number): Promise<number> {
  const body = probe.body?.(sized, index);
  const started = performance.now();
  const send = () =>
    fetch(`${sized.url}${probe.path(sized)}`, {
      method: probe.method ?? 'GET',
      headers: { authorization: `Bearer ${probe.key?.(sized) ?? sized.world.writeKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  // PGlite runs a statement in this process's thread: while a purge's batch holds it, the server's
  // keep-alive timer and the client's next request on that connection fire together, and the server
  // closes the connection under it. Sent again on a new one, timed from the first try.
  const response = await send().catch((error: unknown) => {
    if ((error as { cause?: { code?: string } }).cause?.code !== 'ECONNRESET') throw error;
    return send();
  });
  const text = await response.text();
  const elapsed = performance.now() - started;
  if (response.status !== probe.status) throw new Error(`${probe.name} at ${sized.size}: ${response.status} ${text.slice(0, 300)}`);
  return elapsed;
}

/**
 * Every probe at every size: a warm-up, then `samples` rounds of one request a size, the sizes' order
 * turning each round, so that a stall of the machine (this one is shared) hits every size alike
 * rather than a run of one size's requests.
 */
async function measure(engine: Engine, area: string, sizes: Sized[], probes: Probe[]): Promise<void> {
  for (const probe of probes) {
    const latencies = sizes.map(() => [] as number[]);
    let index = 0;
    for (const sized of sizes) for (let n = 0; n < warmUp; n += 1) await timed(probe, sized, (index += 1));
    for (let round = 0; round < samples; round += 1) {
      for (let turn = 0; turn < sizes.length; turn += 1) {
        const at = (round + turn) % sizes.length;
        latencies[at]!.push(await timed(probe, sizes[at]!, (index += 1)));
      }
    }
    const line = sizes.map((sized, at) => {
      const sorted = latencies[at]!.sort((a, b) => a - b);
      const figure = { engine, area, request: probe.name, size: probe.size?.(sized) ?? sized.size, median: quantile(sorted, 0.5), p99: quantile(sorted, 0.99) };
      figures.push(figure);
      return figure;
    });
    const [smallest, largest] = [line[0]!, line.at(-1)!];
    const ratio = largest.median / smallest.median;
    console.log(
      `${engine} ${area}: ${probe.name.padEnd(34)} ${line.map((figure) => `${figure.size.toLocaleString('en')}: ${ms(figure.median)} / ${ms(figure.p99)} ms`).join('   ')}   ×${ratio.toFixed(2)}`,
    );
    checks.push(atMost(`${engine}: ${probe.name} at ${largest.size.toLocaleString('en')} ÷ ${smallest.size.toLocaleString('en')} (median)`, ratio, ratioTarget));
  }
}

// ---------------------------------------------------------------------------------------------------
// Databases

interface Opened {
  database: OpenDatabase;
  /** A raw connection to the same database (PostgreSQL only): the purge's lock sampler. */
  url?: string;
  drop(): Promise<void>;
}

async function openSized(engine: Engine, label: string): Promise<Opened> {
  if (engine === 'PGlite') {
    const directory = mkdtempSync(join(tmpdir(), `teamos-scale-${label}-`));
    const database = await openPglite(directory);
    await migrateToLatest(database.db);
    return {
      database,
      drop: async () => {
        await database.close();
        rmSync(directory, { recursive: true, force: true });
      },
    };
  }
  const name = `teamos_scale_${label}_${randomBytes(3).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  // Seeding millions of rows in one statement outlasts the app's statement limit.
  const database = await openPostgres(url.toString(), { statementTimeoutMs: 0 });
  await migrateToLatest(database.db);
  return {
    database,
    url: url.toString(),
    drop: async () => {
      await database.close();
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

/** After seeding: statistics current and pages flushed, so that neither autovacuum nor the checkpointer competes with the measurements. */
async function settle(engine: Engine, db: Kysely<Database>) {
  await sql`vacuum (analyze)`.execute(db);
  if (engine === 'PostgreSQL') await sql`checkpoint`.execute(db);
}

interface Stood extends Sized {
  opened: Opened;
  app: App;
  close(): Promise<void>;
}

/** A database of one size, seeded by `seed`, with the app over it. */
async function stand(engine: Engine, area: string, size: number, seed: (db: Kysely<Database>, world: World) => Promise<Record<string, string>>): Promise<Stood> {
  const opened = await openSized(engine, `${area}_${size}`);
  const { db } = opened.database;
  const started = performance.now();
  let world: World;
  let at: Record<string, string>;
  try {
    world = await seedWorld(db);
    at = await seed(db, world);
    await settle(engine, db);
  } catch (error) {
    await opened.drop();
    throw error;
  }
  console.log(`${engine} ${area}: seeded ${size.toLocaleString('en')} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const app = await createApp({
    db,
    config: { rateLimitPerMinute: 10_000_000, redisUrl: undefined },
    logger: pino({ level: 'silent' }),
    secrets: createSecretBox(randomBytes(32)),
    callerCache: { subscribe: opened.database.subscribe },
  });
  const server = await listen(app.app);
  return {
    size,
    url: server.url,
    world,
    at,
    opened,
    app,
    close: async () => {
      await server.close();
      await app.close();
      await opened.drop();
    },
  };
}

/** One at a time: PGlite seeding a million rows while another instance holds its own would double the memory at the peak. */
async function standAll(engine: Engine, area: string, sizes: number[], seed: (db: Kysely<Database>, world: World, size: number) => Promise<Record<string, string>>): Promise<Stood[]> {
  const stood: Stood[] = [];
  try {
    for (const size of sizes) stood.push(await stand(engine, area, size, (db, world) => seed(db, world, size)));
    return stood;
  } catch (error) {
    for (const each of stood) await each.close();
    throw error;
  }
}

/** The cursor a list hands out after the item `position` (from 1) in its order (createdAt, id). */
async function listCursor(db: Kysely<Database>, table: 'tasks' | 'issues', teamId: string, position: number): Promise<string> {
  const row = await db.selectFrom(table).select(['created_at', 'id']).where('team_id', '=', teamId).orderBy('created_at').orderBy('id').offset(position - 1).limit(1).executeTakeFirstOrThrow();
  return encodeCursor([row.created_at, row.id]);
}

// ---------------------------------------------------------------------------------------------------
// Areas

const titled = (index: number) => ({ title: `Scale change #${index}` });

async function benchItems(engine: Engine, sizes: number[]) {
  const stood = await standAll(engine, 'items', sizes, async (db, world, size) => {
    await seedTeamItems(db, world, size);
    const middle = async (table: 'tasks' | 'issues') =>
      (await db.selectFrom(table).select('id').where('team_id', '=', world.teamId).orderBy('created_at').orderBy('id').offset(size / 2).limit(1).executeTakeFirstOrThrow()).id;
    return {
      deepTasks: await listCursor(db, 'tasks', world.teamId, Math.max(1, size - 60)),
      deepIssues: await listCursor(db, 'issues', world.teamId, Math.max(1, size - 60)),
      task: await middle('tasks'),
      issue: await middle('issues'),
      owner: world.ownerIds[1]!,
    };
  });
  try {
    const tasks = (sized: Sized) => `/v1/teams/${sized.world.teamId}/tasks`;
    const issues = (sized: Sized) => `/v1/teams/${sized.world.teamId}/issues`;
    await measure(engine, 'tasks and issues', stood, [
      { name: 'tasks: first page', path: tasks, status: 200 },
      { name: 'tasks: page near the end', path: (s) => `${tasks(s)}?cursor=${s.at.deepTasks}`, status: 200 },
      { name: 'tasks: open, of one owner', path: (s) => `${tasks(s)}?completed=false&ownerId=${s.at.owner}`, status: 200 },
      { name: 'tasks: read', path: (s) => `/v1/tasks/${s.at.task}`, status: 200 },
      { name: 'tasks: create', method: 'POST', path: tasks, body: (s, i) => ({ title: `Scale task #${i}`, ownerId: s.at.owner, dueDate: '2026-12-01' }), status: 201 },
      { name: 'tasks: PATCH', method: 'PATCH', path: (s) => `/v1/tasks/${s.at.task}`, body: (_s, i) => titled(i), status: 200 },
      { name: 'issues: first page', path: issues, status: 200 },
      { name: 'issues: page near the end', path: (s) => `${issues(s)}?cursor=${s.at.deepIssues}`, status: 200 },
      { name: 'issues: open, HIGH', path: (s) => `${issues(s)}?status=OPEN&priority=HIGH`, status: 200 },
      { name: 'issues: read', path: (s) => `/v1/issues/${s.at.issue}`, status: 200 },
      { name: 'issues: create', method: 'POST', path: issues, body: (_s, i) => ({ title: `Scale issue #${i}` }), status: 201 },
      { name: 'issues: PATCH', method: 'PATCH', path: (s) => `/v1/issues/${s.at.issue}`, body: (_s, i) => titled(i), status: 200 },
    ]);
  } finally {
    for (const each of stood) await each.close();
  }
}

/** Sequential PATCHes of one task until `until` says stop; each one's latency. */
async function changes(sized: Sized, until: () => boolean, probe: Probe): Promise<number[]> {
  const latencies: number[] = [];
  let index = 0;
  while (!until()) latencies.push(await timed(probe, sized, (index += 1)));
  return latencies.sort((a, b) => a - b);
}

/**
 * The retention's purge at the largest log, as the worker runs it, with changes going on: a change's
 * latency before, during and after it, and the longest wait for a lock any backend of the database
 * was seen in while it ran (PostgreSQL).
 */
async function benchPurge(engine: Engine, sized: Stood, change: Probe) {
  const { db } = sized.opened.database;
  const before = new Date(Date.now() - defaultEventRetentionDays * 86_400_000);
  const quietMs = 10_000;
  const timedFor = (duration: number) => {
    const end = performance.now() + duration;
    return changes(sized, () => performance.now() >= end, change);
  };
  const without = await timedFor(quietMs / 2);
  let longestWaitMs = 0;
  let waitingQuery = '';
  let sampling = true;
  const sampler = sized.opened.url ? new pg.Client({ connectionString: sized.opened.url }) : undefined;
  await sampler?.connect();
  const sampled = (async () => {
    while (sampler && sampling) {
      const { rows } = await sampler.query<{ waited_ms: number; query: string }>(
        `select extract(epoch from clock_timestamp() - query_start) * 1000 as waited_ms, query from pg_stat_activity
         where datname = current_database() and wait_event_type = 'Lock' order by query_start limit 1`,
      );
      if (rows[0] && Number(rows[0].waited_ms) > longestWaitMs) [longestWaitMs, waitingQuery] = [Number(rows[0].waited_ms), rows[0].query];
      await new Promise((wake) => setTimeout(wake, lockSampleMs));
    }
  })();
  let purging = true;
  const started = performance.now();
  const purged = purgeExpiredEvents(db, before, { inThread: engine === 'PGlite' }).finally(() => (purging = false));
  const during = await changes(sized, () => !purging, change);
  const count = await purged;
  const purgeSeconds = (performance.now() - started) / 1000;
  sampling = false;
  await sampled;
  await sampler?.end();
  const after = await timedFor(quietMs / 2);
  const quiet = [...without, ...after].sort((a, b) => a - b);
  const ratio = quantile(during, 0.99) / quantile(quiet, 0.99);
  const longest = during.at(-1) ?? 0;
  console.log(
    `${engine} purge: ${count.toLocaleString('en')} expired events in ${purgeSeconds.toFixed(1)} s; a change during it p50 ${ms(quantile(during, 0.5))} p99 ${ms(quantile(during, 0.99))} max ${ms(longest)} ms (${during.length} changes), ` +
      `without p50 ${ms(quantile(quiet, 0.5))} p99 ${ms(quantile(quiet, 0.99))} ms; longest lock wait seen ${ms(longestWaitMs)} ms${waitingQuery ? ` (${waitingQuery.slice(0, 80)})` : ''}`,
  );
  notes.push(
    `${engine}: purge of ${count.toLocaleString('en')} expired events from a log of ${sized.size.toLocaleString('en')} in ${purgeSeconds.toFixed(1)} s; a change during it p50 ${ms(quantile(during, 0.5))} / p99 ${ms(quantile(during, 0.99))} / max ${ms(longest)} ms (${during.length} changes), without it p50 ${ms(quantile(quiet, 0.5))} / p99 ${ms(quantile(quiet, 0.99))} ms` +
      (sampler ? `; longest wait for a lock seen ${ms(longestWaitMs)} ms` : ''),
  );
  checks.push(atMost(`${engine}: a change's p99 during the purge ÷ without`, ratio, purgeP99Target), reported(`${engine}: longest change during the purge (ms)`, longest));
  if (sampler) checks.push(atMost(`${engine}: longest wait for a lock during the purge (ms)`, longestWaitMs, lockWaitTargetMs));
}

/** The event log's requests at every size, then the purge at the largest; `purgeOnly`: the largest log and its purge alone. */
async function benchEvents(engine: Engine, sizes: number[], purgeOnly = false) {
  const largest = sizes.at(-1)!;
  const stood = await standAll(engine, 'events', purgeOnly ? [largest] : sizes, async (db, world, size) => {
    await seedTeamItems(db, world, 10);
    await seedEventLog(db, world, size, size === largest ? Math.min(expiredEvents, size / 2) : 0, defaultEventRetentionDays);
    const eventAt = async (position: number) =>
      (await db.selectFrom('webhook_events').select('id').where('org_id', '=', world.orgId).orderBy('txid').orderBy('position').offset(position).limit(1).executeTakeFirstOrThrow()).id;
    const task = await db.selectFrom('tasks').select('id').where('team_id', '=', world.teamId).limit(1).executeTakeFirstOrThrow();
    return { middle: await eventAt(size / 2), end: await eventAt(Math.max(0, size - 150)), task: task.id };
  });
  try {
    const feed = (sized: Sized) => `/v1/orgs/${sized.world.orgId}/events`;
    const change: Probe = { name: 'a change (PATCH, its event)', method: 'PATCH', path: (s) => `/v1/tasks/${s.at.task}`, body: (_s, i) => titled(i), status: 200 };
    if (!purgeOnly) {
      await measure(engine, 'event log', stood, [
        { name: 'feed: page from the start', path: feed, status: 200 },
        { name: 'feed: page from the middle', path: (s) => `${feed(s)}?after=${s.at.middle}`, status: 200 },
        { name: 'feed: page at the end', path: (s) => `${feed(s)}?after=${s.at.end}`, status: 200 },
        change,
      ]);
    }
    await benchPurge(engine, stood.at(-1)!, change);
  } finally {
    for (const each of stood) await each.close();
  }
}

async function benchOrganization(engine: Engine, sizes: number[]) {
  const stood = await standAll(engine, 'org', sizes, async (db, world, size) => {
    const { memberKey } = await seedMembers(db, world, size, teamsOfMember);
    await seedScorecard(db, world, scorecardMetrics, scorecardWeeks[sizes.indexOf(size)]!);
    return { memberKey };
  });
  try {
    // The same app without the caller kept in memory: the caller read from the database on every request.
    const uncached = await Promise.all(
      stood.map(async (sized) => {
        const app = await createApp({ db: sized.opened.database.db, config: { rateLimitPerMinute: 10_000_000, redisUrl: undefined }, logger: pino({ level: 'silent' }), secrets: createSecretBox(randomBytes(32)) });
        return { app, server: await listen(app.app) };
      }),
    );
    try {
      await measure(engine, 'organization', stood, [
        { name: 'members: first page', path: (s) => `/v1/orgs/${s.world.orgId}/members`, status: 200 },
        { name: '/v1/me of a member of 50 teams', path: () => '/v1/me', key: (s) => s.at.memberKey!, status: 200 },
      ]);
      await measure(
        engine,
        'organization',
        stood.map((sized, at) => ({ ...sized, url: uncached[at]!.server.url })),
        [{ name: '/v1/me, not kept in memory', path: () => '/v1/me', key: (s) => s.at.memberKey!, status: 200 }],
      );
      await measure(engine, 'Scorecard', stood, [
        { name: `Scorecard (${scorecardMetrics} metrics × 13 of n weeks)`, path: (s) => `/v1/teams/${s.world.teamId}/scorecard`, status: 200, size: (s) => scorecardMetrics * scorecardWeeks[stood.indexOf(s as Stood)]! },
      ]);
    } finally {
      for (const { app, server } of uncached) {
        await server.close();
        await app.close();
      }
    }
  } finally {
    for (const each of stood) await each.close();
  }
}

// ---------------------------------------------------------------------------------------------------
// Report

/**
 * The chart of one database's figures: each request's median ÷ its median at the smallest size, against
 * the data's size. One panel per area, stacked, each with its own legend (a shared one of 20 colours
 * cannot be read) and a label at every size measured in it (a log axis labels only powers of ten).
 */
async function chart(engine: Engine, engineFigures: Figure[], date: string): Promise<string> {
  const data = engineFigures.map((figure) => {
    const smallest = engineFigures.find((other) => other.area === figure.area && other.request === figure.request)!;
    return { ...figure, ratio: figure.median / smallest.median };
  });
  const highest = Math.max(ratioTarget, ...data.map((point) => point.ratio));
  // An area with more requests than ten colours tell apart gets a panel per resource ("tasks: read" → tasks).
  const crowded = new Set([...new Set(data.map((point) => point.area))].filter((area) => new Set(data.filter((point) => point.area === area).map((point) => point.request)).size > 10));
  const panelOf = (point: Figure) => (crowded.has(point.area) && point.request.includes(': ') ? point.request.split(': ')[0]! : point.area);
  const areas = [...new Set(data.map(panelOf))];
  const panel = (area: string): LayerSpec<Field> => {
    const points = data.filter((point) => panelOf(point) === area);
    const sizes = [...new Set(points.map((point) => point.size))].sort((a, b) => a - b);
    return {
      title: { text: area, anchor: 'start' },
      width: 420,
      height: 180,
      data: { values: points },
      layer: [
        {
          mark: { type: 'line', point: true },
          encoding: {
            x: {
              field: 'size',
              type: 'quantitative',
              scale: { type: 'log', domain: [sizes[0]!, sizes.at(-1)!], nice: false },
              axis: { values: sizes, format: ',', labelOverlap: false, labelFlush: true },
              title: 'rows (log scale)',
            },
            y: { field: 'ratio', type: 'quantitative', scale: { domain: [0, Math.ceil(highest * 12) / 10] }, title: 'median ÷ at smallest' },
            color: { field: 'request', type: 'nominal', scale: { scheme: 'tableau10' }, legend: { title: null, labelLimit: 320 } },
          },
        },
        { mark: { type: 'rule', strokeDash: [4, 4], color: 'red' }, encoding: { y: { datum: ratioTarget } } },
      ],
    };
  };
  const spec: TopLevelSpec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: `${engine}: median latency ÷ the same request at the smallest size, against data size (${date})`,
    vconcat: areas.map(panel),
    resolve: { scale: { x: 'independent', color: 'independent' }, legend: { color: 'independent' } },
  };
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  return svg;
}

interface Stored {
  date: string;
  figures: Figure[];
}

const chartPath = (engine: Engine, extension: 'svg' | 'json') => resolve(root, `docs/performance/scale-${engine.toLowerCase()}.${extension}`);

/** The chart of a database's figures, and the figures beside it, so that the chart can be drawn again without measuring (SCALE_CHART_ONLY=1). */
async function writeChart(engine: Engine) {
  const stored: Stored = { date: new Date().toISOString().slice(0, 10), figures: figures.filter((figure) => figure.engine === engine) };
  writeFileSync(chartPath(engine, 'json'), `${JSON.stringify(stored, null, 1)}\n`);
  writeFileSync(chartPath(engine, 'svg'), await chart(engine, stored.figures, stored.date));
  console.log(`Chart: ${chartPath(engine, 'svg')}`);
}

async function redrawCharts() {
  for (const engine of ['PostgreSQL', 'PGlite'] as const) {
    if (!existsSync(chartPath(engine, 'json'))) continue;
    const stored = JSON.parse(readFileSync(chartPath(engine, 'json'), 'utf8')) as Stored;
    writeFileSync(chartPath(engine, 'svg'), await chart(engine, stored.figures, stored.date));
    console.log(`Chart: ${chartPath(engine, 'svg')}`);
  }
}

function table(): string {
  const lines = ['| database | area | request | size | median ms | p99 ms | median ÷ smallest |', '|---|---|---|---:|---:|---:|---:|'];
  for (const figure of figures) {
    const smallest = figures.find((other) => other.engine === figure.engine && other.area === figure.area && other.request === figure.request)!;
    const ratio = figure.median / smallest.median;
    const largest = figures.filter((other) => other.engine === figure.engine && other.request === figure.request).at(-1) === figure;
    const mark = largest ? (ratio <= ratioTarget ? ' ✓' : ' **✗**') : '';
    lines.push(`| ${figure.engine} | ${figure.area} | ${figure.request} | ${figure.size.toLocaleString('en')} | ${ms(figure.median)} | ${ms(figure.p99)} | ${ratio.toFixed(2)}${mark} |`);
  }
  return lines.join('\n');
}

async function benchEngine(engine: Engine, sizes: Record<Area, number[]>) {
  const scaled = (area: Area) => sizes[area].map((size) => Math.round(size / divide));
  if (!only || only === 'items') await benchItems(engine, scaled('items'));
  if (!only || only === 'events') await benchEvents(engine, scaled('events'));
  if (only === 'purge') await benchEvents(engine, scaled('events'), true);
  if (!only || only === 'org') await benchOrganization(engine, scaled('org'));
  // The purge alone gives no figure to chart: the charts of a full run stay as they are.
  if (process.env.SCALE_CHART !== '0' && only !== 'purge') await writeChart(engine);
}

async function main() {
  if (process.env.SCALE_CHART_ONLY === '1') return redrawCharts();
  const started = new Date();
  console.log(`Scale bench: ${samples} sequential requests per request and size after ${warmUp} of warm-up, the sizes taking turns; Node ${process.version}; load average ${loadavg().map((load) => load.toFixed(2)).join(' ')}`);
  if (process.env.SCALE_POSTGRES !== '0') await benchEngine('PostgreSQL', sizesOf);
  if (process.env.SCALE_PGLITE !== '0') {
    notes.push(pgliteCannot);
    await benchEngine('PGlite', pgliteSizes);
  }
  console.log(`\nRun ${started.toISOString()} to ${new Date().toISOString()}; load average at the end ${loadavg().map((load) => load.toFixed(2)).join(' ')}\n`);
  console.log(table());
  console.log('');
  for (const note of notes) console.log(`- ${note}`);
  console.log('\nSummary');
  for (const line of checks) console.log(`  ${line.pass ? 'PASS' : 'MISS'}  ${line.check.padEnd(76)} ${line.value.padStart(7)}  (target ${line.target})${line.note ? `   ${line.note}` : ''}`);
}

await main();

/**
 * `npm run soak`: a bounded mixed workload against the real app on PostgreSQL, to find errors and
 * leaks that only show over time. Not part of CI or `npm test`.
 *
 * - A throwaway database is created on SOAK_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres)
 *   and dropped afterwards; the server runs in a child process (the real app, logging warnings and
 *   errors), so that its memory is measured alone.
 * - SOAK_CONCURRENCY workers (default 8) start requests at SOAK_RATE per second in all (default
 *   200) and repeat scenarios that read and write every area — tasks, issues, goals and
 *   milestones, metrics, values and the Scorecard, meetings with ratings, segues, headlines and
 *   cascading messages, vision, seats, people reviews, documents, organization and platform
 *   administration — with six keys: organization Owner, Admin, two Members, a read-only Viewer and
 *   a platform operator; refusals they must get (403, 404, 422) are part of the mix.
 * - For SOAK_MINUTES (default 10); every 10 s the server's RSS and heap (used, after a full garbage
 *   collection, so that garbage waiting for collection is not mistaken for growth) are sampled.
 * - Prints throughput, p50/p99 latency, the error count (every 5xx and every status a step did not
 *   expect) and the memory trend after warm-up (the first 2 minutes, or the first third of a
 *   shorter run): the mean of the first minute of samples after warm-up against the mean of the
 *   last minute, the least-squares slope and the range. Target: 0 errors, and RSS and heap each
 *   within ±10 % from the first minute to the last. The exit code is 1 when a target is missed.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createApp } from '../src/app.js';
import { generateKey } from '../src/auth/apiKeys.js';
import type { Scope } from '../src/auth/scopes.js';
import { createSecretBox } from '../src/auth/secrets.js';
import { openPostgres } from '../src/db/connect.js';
import type { Database, OrganizationRole, TeamRole } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createLogger } from '../src/logger.js';
import { addWeeks, currentWeekMonday, quarterOf } from '../src/time.js';
import type { Kysely } from 'kysely';

const sampleEveryMs = 10_000;

interface MemorySample {
  atSeconds: number;
  rssMb: number;
  heapMb: number;
}

// ---------------------------------------------------------------------------------------------
// The server: the real app in a child process, answering memory samples over IPC.

async function serve(): Promise<void> {
  const database = await openPostgres(process.env.SOAK_DATABASE!);
  const { app, close } = await createApp({
    db: database.db,
    // High enough never to answer 429: the soak measures the app, not the budget of one key.
    config: { rateLimitPerMinute: 10_000_000, redisUrl: undefined },
    logger: createLogger('warn', false),
    secrets: createSecretBox(randomBytes(32)),
  });
  const server = app.listen(0, '127.0.0.1', () => {
    process.send!({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  });
  process.on('message', (message: string) => {
    if (message === 'sample') {
      globalThis.gc!();
      const memory = process.memoryUsage();
      process.send!({ rss: memory.rss, heapUsed: memory.heapUsed });
    } else if (message === 'stop') {
      server.closeAllConnections();
      server.close(() => {
        void close()
          .then(() => database.close())
          .then(() => process.exit(0));
      });
    }
  });
}

// ---------------------------------------------------------------------------------------------
// The load: seeded callers, scenarios, statistics.

interface Person {
  id: string;
  key: string;
}

interface World {
  orgId: string;
  teamId: string;
  owner: Person;
  admin: Person;
  alice: Person;
  bob: Person;
  viewer: Person;
  operator: Person;
  metricIds: string[];
}

const minutes = Number(process.env.SOAK_MINUTES ?? 10);
const concurrency = Number(process.env.SOAK_CONCURRENCY ?? 8);
const rate = Number(process.env.SOAK_RATE ?? 200);
const serverUrl = process.env.SOAK_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const timeZone = 'Europe/Bratislava';

const latencies: number[] = [];
let requestCount = 0;
let errorCount = 0;
const errorExamples: string[] = [];
const byRoute = new Map<string, number>();

class Unexpected extends Error {}

async function person(
  db: Kysely<Database>,
  name: string,
  scopes: Scope[],
  options: { orgId?: string; orgRole?: OrganizationRole; teamId?: string; teamRole?: TeamRole; superadmin?: boolean } = {},
): Promise<Person> {
  const user = await db
    .insertInto('users')
    .values({
      email: `${name.toLowerCase()}.${randomBytes(3).toString('hex')}@soak.example`,
      name,
      timezone: timeZone,
      system_role: options.superadmin ? 'SUPERADMIN' : 'USER',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  if (options.orgId && options.orgRole) {
    await db.insertInto('organization_members').values({ org_id: options.orgId, user_id: user.id, role: options.orgRole }).execute();
  }
  if (options.teamId && options.teamRole) {
    await db.insertInto('team_members').values({ team_id: options.teamId, user_id: user.id, role: options.teamRole }).execute();
  }
  const { key, prefix, hash } = generateKey();
  await db
    .insertInto('api_keys')
    .values({ user_id: user.id, name: 'soak', prefix, key_hash: hash, scopes, expires_at: new Date(Date.now() + 7 * 86_400_000) })
    .execute();
  return { id: user.id, key };
}

async function seed(db: Kysely<Database>): Promise<Omit<World, 'metricIds'>> {
  const org = await db
    .insertInto('organizations')
    .values({ name: 'Soak Logistics', slug: 'soak-logistics', timezone: timeZone, default_locale: 'en' })
    .returning('id')
    .executeTakeFirstOrThrow();
  const team = await db
    .insertInto('teams')
    .values({ org_id: org.id, name: 'Operations', slug: 'operations' })
    .returning('id')
    .executeTakeFirstOrThrow();
  const at = { orgId: org.id, teamId: team.id };
  return {
    orgId: org.id,
    teamId: team.id,
    owner: await person(db, 'Olga', ['write'], { ...at, orgRole: 'OWNER', teamRole: 'OWNER' }),
    admin: await person(db, 'Adam', ['write'], { ...at, orgRole: 'ADMIN', teamRole: 'ADMIN' }),
    alice: await person(db, 'Alice', ['write'], { ...at, orgRole: 'MEMBER', teamRole: 'MEMBER' }),
    bob: await person(db, 'Bob', ['write'], { ...at, orgRole: 'MEMBER', teamRole: 'MEMBER' }),
    viewer: await person(db, 'Vera', ['read'], { ...at, orgRole: 'MEMBER', teamRole: 'VIEWER' }),
    operator: await person(db, 'Petra', ['platform'], { superadmin: true }),
  };
}

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;
const chance = (probability: number) => Math.random() < probability;
const tag = () => randomBytes(3).toString('hex');
const today = () => new Date().toISOString().slice(0, 10);

function client(baseUrl: string) {
  /** One request; a status outside `expected` (or any 5xx) counts as an error and ends the scenario. */
  return async function call<T = any>(who: Person, method: string, path: string, body: unknown, expected: number[], route: string): Promise<T> {
    await nextSlot();
    const started = performance.now();
    let status = 0;
    let text = '';
    try {
      const response = await fetch(`${baseUrl}/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${who.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      status = response.status;
      text = await response.text();
    } catch (error) {
      text = String(error);
    }
    latencies.push(performance.now() - started);
    requestCount += 1;
    byRoute.set(`${method} ${route}`, (byRoute.get(`${method} ${route}`) ?? 0) + 1);
    if (status >= 500 || !expected.includes(status)) {
      errorCount += 1;
      if (errorExamples.length < 20) errorExamples.push(`${method} ${route} → ${status} (expected ${expected.join('/')}): ${text.slice(0, 300)}`);
      throw new Unexpected();
    }
    return (text ? JSON.parse(text) : undefined) as T;
  };
}

type Call = ReturnType<typeof client>;

let slot = 0;
/**
 * Requests start at a constant rate (SOAK_RATE per second, shared by the workers), not as fast as
 * the server answers: the server's memory depends on its load, so a constant load makes its trend
 * readable on a shared machine whose speed varies. A worker that falls behind does not catch up in
 * a burst.
 */
async function nextSlot(): Promise<void> {
  const now = performance.now();
  slot = Math.max(now, slot + 1000 / rate);
  if (slot > now) await new Promise((wait) => setTimeout(wait, slot - now));
}

function scenarios(w: World, call: Call, quarters: string[], weeks: string[]) {
  const members = [w.owner, w.admin, w.alice, w.bob];
  const writers = [w.alice, w.bob, w.admin];
  const t = `/teams/${w.teamId}`;
  return {
    async tasks() {
      const who = pick(writers);
      const task = await call(who, 'POST', `${t}/tasks`, { title: `Follow up on quote ${tag()}`, ownerId: pick(members).id, dueDate: today() }, [201], '/teams/{teamId}/tasks');
      await call(pick([...members, w.viewer]), 'GET', `/tasks/${task.id}`, undefined, [200], '/tasks/{id}');
      await call(who, 'PATCH', `/tasks/${task.id}`, { completed: true }, [200], '/tasks/{id}');
      const page = await call(w.viewer, 'GET', `${t}/tasks?limit=20${chance(0.5) ? '&completed=false' : ''}`, undefined, [200], '/teams/{teamId}/tasks');
      if (page.nextCursor) await call(w.alice, 'GET', `${t}/tasks?limit=20&cursor=${encodeURIComponent(page.nextCursor)}`, undefined, [200], '/teams/{teamId}/tasks');
      if (chance(0.8)) await call(w.admin, 'DELETE', `/tasks/${task.id}`, undefined, [204], '/tasks/{id}');
      await call(w.viewer, 'POST', `${t}/tasks`, { title: 'Not allowed', ownerId: w.viewer.id, dueDate: today() }, [403], '/teams/{teamId}/tasks');
      await call(w.alice, 'POST', `${t}/tasks`, { ownerId: w.alice.id, dueDate: 'tomorrow' }, [422], '/teams/{teamId}/tasks');
    },
    async issues() {
      const who = pick(writers);
      const issue = await call(who, 'POST', `${t}/issues`, { title: `Late deliveries ${tag()}`, priority: pick(['HIGH', 'MEDIUM', 'LOW']) }, [201], '/teams/{teamId}/issues');
      await call(who, 'PATCH', `/issues/${issue.id}`, { status: 'SOLVED' }, [200], '/issues/{id}');
      await call(w.viewer, 'GET', `/issues/${issue.id}`, undefined, [200], '/issues/{id}');
      await call(pick(members), 'GET', `${t}/issues?limit=20`, undefined, [200], '/teams/{teamId}/issues');
      if (chance(0.8)) await call(w.admin, 'DELETE', `/issues/${issue.id}`, undefined, [204], '/issues/{id}');
      await call(w.alice, 'GET', `/issues/${randomBytes(8).toString('hex')}`, undefined, [404], '/issues/{id}');
    },
    async goals() {
      const goal = await call(w.admin, 'POST', `${t}/goals`, { title: `Sign new customers ${tag()}`, ownerId: w.alice.id, quarter: pick(quarters) }, [201], '/teams/{teamId}/goals');
      const milestone = await call(w.admin, 'POST', `/goals/${goal.id}/milestones`, { title: 'Close the contract', dueDate: today() }, [201], '/goals/{id}/milestones');
      await call(w.alice, 'PATCH', `/milestones/${milestone.id}`, { completed: true }, [200], '/milestones/{id}');
      await call(w.alice, 'PATCH', `/goals/${goal.id}`, { status: pick(['ON_TRACK', 'OFF_TRACK']) }, [200], '/goals/{id}');
      await call(w.bob, 'PATCH', `/goals/${goal.id}`, { title: 'Not allowed' }, [403], '/goals/{id}');
      await call(w.viewer, 'GET', `/goals/${goal.id}`, undefined, [200], '/goals/{id}');
      await call(pick(members), 'GET', `${t}/goals?limit=20`, undefined, [200], '/teams/{teamId}/goals');
      await call(w.owner, 'GET', `/orgs/${w.orgId}/goals?limit=20`, undefined, [200], '/orgs/{orgId}/goals');
      if (chance(0.3)) await call(w.admin, 'DELETE', `/milestones/${milestone.id}`, undefined, [204], '/milestones/{id}');
      if (chance(0.8)) await call(w.admin, 'DELETE', `/goals/${goal.id}`, undefined, [204], '/goals/{id}');
    },
    async metrics() {
      const metricId = pick(w.metricIds);
      const week = pick(weeks);
      await call(pick(writers), 'PUT', `/metrics/${metricId}/values/${week}`, { value: String(80 + Math.floor(Math.random() * 20)) }, [200], '/metrics/{id}/values/{week}');
      await call(w.viewer, 'GET', `/metrics/${metricId}/values?from=${weeks[0]}&to=${weeks.at(-1)}`, undefined, [200], '/metrics/{id}/values');
      await call(pick(members), 'GET', `${t}/scorecard`, undefined, [200], '/teams/{teamId}/scorecard');
      await call(w.viewer, 'GET', `${t}/metrics`, undefined, [200], '/teams/{teamId}/metrics');
      if (chance(0.2)) {
        const metric = await call(w.admin, 'POST', `${t}/metrics`, { title: `Quotes answered ${tag()}`, goal: '>=95', ownerId: w.bob.id, unit: '%' }, [201], '/teams/{teamId}/metrics');
        await call(w.admin, 'PATCH', `/metrics/${metric.id}`, { title: `Quotes answered in a day ${tag()}` }, [200], '/metrics/{id}');
        await call(w.admin, 'DELETE', `/metrics/${metric.id}`, undefined, [204], '/metrics/{id}');
      }
    },
    async meetings() {
      const meeting = await call(w.admin, 'POST', `${t}/meetings`, { date: today() }, [201], '/teams/{teamId}/meetings');
      const m = `/meetings/${meeting.id}`;
      await call(w.admin, 'PATCH', m, { status: 'IN_PROGRESS' }, [200], '/meetings/{id}');
      await call(w.alice, 'POST', `${m}/segues`, { content: 'A good weekend in the Tatras.' }, [201], '/meetings/{id}/segues');
      await call(w.bob, 'POST', `${m}/headlines`, { type: pick(['CUSTOMER', 'EMPLOYEE']), content: 'Baltic Trade renewed for a year.' }, [201], '/meetings/{id}/headlines');
      const message = await call(w.alice, 'POST', `${m}/messages`, { content: 'Quotes are answered within a working day.' }, [201], '/meetings/{id}/messages');
      // A later meeting started by another worker closes this one's self-rating window: 409 is expected then.
      await call(w.bob, 'PUT', `${m}/ratings/me`, { rating: 1 + Math.floor(Math.random() * 10) }, [200, 409], '/meetings/{id}/ratings/me');
      await call(w.admin, 'PUT', `${m}/ratings/${w.alice.id}`, { rating: 8 }, [200, 204], '/meetings/{id}/ratings/{userId}');
      await call(w.viewer, 'GET', m, undefined, [200], '/meetings/{id}');
      await call(w.admin, 'PATCH', m, { status: 'COMPLETED' }, [200], '/meetings/{id}');
      await call(w.admin, 'PATCH', m, { notes: 'Quotes: one working day from December.' }, [200], '/meetings/{id}');
      await call(pick(members), 'GET', `${m}/recap`, undefined, [200], '/meetings/{id}/recap');
      await call(w.viewer, 'POST', '/messages/acknowledge', { ids: [message.id] }, [403], '/messages/acknowledge');
      await call(w.bob, 'POST', '/messages/acknowledge', { ids: [message.id] }, [204], '/messages/acknowledge');
      if (chance(0.3)) await call(w.admin, 'DELETE', `/messages/${message.id}`, undefined, [204], '/messages/{id}');
      await call(pick(members), 'GET', `${t}/meetings?limit=10`, undefined, [200], '/teams/{teamId}/meetings');
    },
    async vision() {
      await call(pick([...members, w.viewer]), 'GET', `${t}/vision`, undefined, [200], '/teams/{teamId}/vision');
      await call(w.admin, 'PATCH', `${t}/vision`, pick([
        { field: 'tenYearTarget', value: `€50M annual revenue by 2036 (${tag()})` },
        { field: 'coreValues', value: ['Deliver on our promises', 'Help first', `Grow ${tag()}`] },
      ]), [200], '/teams/{teamId}/vision');
      await call(w.alice, 'PATCH', `${t}/vision`, { field: 'tenYearTarget', value: 'Not allowed' }, [403], '/teams/{teamId}/vision');
    },
    async seats() {
      const seat = await call(w.admin, 'POST', `${t}/org-chart/seats`, { title: `Head of Sales ${tag()}`, userId: pick(members).id, responsibilities: 'Hit the sales target.' }, [201], '/teams/{teamId}/org-chart/seats');
      const child = await call(w.admin, 'POST', `${t}/org-chart/seats`, { title: 'Sales Analyst', parentId: seat.id, userId: null }, [201], '/teams/{teamId}/org-chart/seats');
      await call(w.admin, 'PATCH', `/org-chart/seats/${child.id}`, { userId: w.bob.id }, [200], '/org-chart/seats/{id}');
      await call(pick([...members, w.viewer]), 'GET', `${t}/org-chart`, undefined, [200], '/teams/{teamId}/org-chart');
      await call(w.admin, 'DELETE', `/org-chart/seats/${seat.id}`, undefined, [204], '/org-chart/seats/{id}');
    },
    async peopleReviews() {
      const [reviewer, reviewed] = chance(0.5) ? [w.alice, w.bob] : [w.admin, pick(members)];
      await call(reviewer, 'PUT', `${t}/people-reviews`, {
        userId: reviewed.id,
        quarter: pick(quarters),
        coreValuesScores: { 'Deliver on our promises': chance(0.8), 'Help first': chance(0.8) },
        gwc: { getsIt: true, wantsIt: chance(0.9), capacityToDoIt: chance(0.7) },
        notes: chance(0.5) ? 'Strong with existing customers.' : undefined,
      }, [200], '/teams/{teamId}/people-reviews');
      await call(pick(members), 'GET', `${t}/people-reviews?limit=20`, undefined, [200], '/teams/{teamId}/people-reviews');
    },
    async documents() {
      const document = await call(pick(writers), 'POST', `${t}/documents`, { name: `Pipeline ${tag()}`, url: `https://crm.soak.example/${tag()}` }, [201], '/teams/{teamId}/documents');
      await call(w.viewer, 'GET', `${t}/documents?limit=20`, undefined, [200], '/teams/{teamId}/documents');
      await call(w.admin, 'DELETE', `/documents/${document.id}`, undefined, [204], '/documents/{id}');
    },
    async administration() {
      await call(pick([...members, w.viewer]), 'GET', '/me', undefined, [200], '/me');
      await call(pick(members), 'GET', '/orgs', undefined, [200], '/orgs');
      await call(w.viewer, 'GET', `/orgs/${w.orgId}`, undefined, [200], '/orgs/{orgId}');
      await call(w.owner, 'GET', `/orgs/${w.orgId}/members?limit=50`, undefined, [200], '/orgs/{orgId}/members');
      await call(w.admin, 'GET', `/orgs/${w.orgId}/teams`, undefined, [200], '/orgs/{orgId}/teams');
      await call(w.alice, 'GET', `${t}/members`, undefined, [200], '/teams/{teamId}/members');
      await call(w.admin, 'PATCH', `/orgs/${w.orgId}`, { defaultLocale: pick(['en', 'sk']) }, [200], '/orgs/{orgId}');
      await call(w.alice, 'PATCH', `/orgs/${w.orgId}`, { defaultLocale: 'sk' }, [403], '/orgs/{orgId}');
      if (chance(0.5)) {
        const added = await call(w.owner, 'POST', `/orgs/${w.orgId}/members`, { email: `guest.${tag()}${tag()}@soak.example`, role: 'MEMBER', externalOnly: true }, [201], '/orgs/{orgId}/members');
        const userId = added.userId;
        await call(w.admin, 'POST', `${t}/members`, { userId, role: 'VIEWER' }, [201], '/teams/{teamId}/members');
        await call(w.admin, 'PATCH', `${t}/members/${userId}`, { role: 'MEMBER' }, [200], '/teams/{teamId}/members/{userId}');
        await call(w.admin, 'DELETE', `${t}/members/${userId}`, undefined, [204], '/teams/{teamId}/members/{userId}');
        await call(w.owner, 'DELETE', `/orgs/${w.orgId}/members/${userId}`, undefined, [204], '/orgs/{orgId}/members/{userId}');
      }
      await call(w.operator, 'GET', '/platform/orgs?limit=20', undefined, [200], '/platform/orgs');
      await call(w.operator, 'GET', '/platform/users?limit=20', undefined, [200], '/platform/users');
      await call(w.operator, 'GET', '/platform/ai', undefined, [200], '/platform/ai');
      if (chance(0.2)) {
        await call(w.operator, 'PUT', '/platform/ai/providers/OPENAI', { apiKey: `sk-soak-${randomBytes(12).toString('hex')}`, defaultModel: 'gpt-4.1-mini' }, [200], '/platform/ai/providers/{type}');
      }
      await call(w.alice, 'GET', '/platform/orgs', undefined, [403], '/platform/orgs');
    },
  };
}

/** How often each area's scenario runs, relative to the others. */
const weights: Record<string, number> = {
  tasks: 4,
  issues: 3,
  goals: 2,
  metrics: 3,
  meetings: 1,
  vision: 1,
  seats: 1,
  peopleReviews: 2,
  documents: 2,
  administration: 2,
};

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

function startServer(databaseUrl: string): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(fileURLToPath(import.meta.url), ['--server'], {
    execArgv: ['--import', 'tsx', '--expose-gc'],
    env: { ...process.env, SOAK_DATABASE: databaseUrl },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((ready, fail) => {
    child.once('message', (message: { url: string }) => ready({ child, url: message.url }));
    child.once('exit', (code) => fail(new Error(`the server stopped with code ${code}`)));
  });
}

function sampleMemory(child: ChildProcess): Promise<{ rss: number; heapUsed: number }> {
  return new Promise((answered) => {
    child.once('message', answered);
    child.send('sample');
  });
}

async function main(): Promise<void> {
  const name = `teamos_soak_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  let child: ChildProcess | undefined;
  try {
    const database = await openPostgres(url.toString());
    await migrateToLatest(database.db);
    const seeded = await seed(database.db);
    await database.close();

    const server = await startServer(url.toString());
    child = server.child;
    const call = client(server.url);

    const world: World = { ...seeded, metricIds: [] };
    await call(world.admin, 'POST', `/teams/${world.teamId}/vision`, {}, [201], '/teams/{teamId}/vision');
    for (const title of ['On-time delivery', 'New quotes', 'Open claims', 'Trucks on the road', 'Customer score']) {
      const metric = await call(world.admin, 'POST', `/teams/${world.teamId}/metrics`, { title, goal: '>=90', ownerId: world.alice.id }, [201], '/teams/{teamId}/metrics');
      world.metricIds.push(metric.id);
    }
    const thisWeek = currentWeekMonday(new Date(), timeZone);
    const weeks = Array.from({ length: 13 }, (_, index) => addWeeks(thisWeek, index - 12));
    const quarters = [...new Set(weeks.map((week) => quarterOf(week)))];
    const all = scenarios(world, call, quarters, weeks);
    const table = Object.entries(weights).flatMap(([scenario, weight]) => Array<string>(weight).fill(scenario));
    const ran = new Map<string, number>();

    const durationMs = minutes * 60_000;
    const warmUpSeconds = Math.min(120, (minutes * 60) / 3);
    console.log(
      `Soak: ${minutes} min, ${concurrency} workers, ${rate} requests/s offered, database ${name}; warm-up ${warmUpSeconds} s; server pid ${child.pid}; machine load ${(await loadAverage()).join(' ')}`,
    );
    const started = performance.now();
    const deadline = started + durationMs;
    const samples: MemorySample[] = [];
    let lastCount = 0;
    const sampler = setInterval(() => {
      void sampleMemory(child!).then((memory) => {
        const atSeconds = Math.round((performance.now() - started) / 1000);
        const sample = { atSeconds, rssMb: memory.rss / 2 ** 20, heapMb: memory.heapUsed / 2 ** 20 };
        samples.push(sample);
        const interval = requestCount - lastCount;
        lastCount = requestCount;
        console.log(
          `${String(atSeconds).padStart(5)} s  ${(interval / (sampleEveryMs / 1000)).toFixed(0).padStart(5)} req/s  errors ${errorCount}  rss ${sample.rssMb.toFixed(1)} MB  heap ${sample.heapMb.toFixed(1)} MB`,
        );
      });
    }, sampleEveryMs);

    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (performance.now() < deadline) {
          const scenario = pick(table) as keyof typeof all;
          ran.set(scenario, (ran.get(scenario) ?? 0) + 1);
          try {
            await all[scenario]();
          } catch (error) {
            if (!(error instanceof Unexpected)) throw error;
          }
        }
      }),
    );
    const elapsedSeconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    await new Promise((settle) => setTimeout(settle, 500));

    const sorted = Float64Array.from(latencies).sort();
    console.log('');
    console.log(`Requests: ${requestCount} in ${elapsedSeconds.toFixed(0)} s = ${(requestCount / elapsedSeconds).toFixed(0)} req/s (${rate} offered) over ${byRoute.size} operations`);
    console.log(`Scenarios: ${[...ran].map(([scenario, count]) => `${scenario} ${count}`).join(', ')}`);
    console.log(`Latency: p50 ${percentile(sorted, 50).toFixed(1)} ms, p99 ${percentile(sorted, 99).toFixed(1)} ms, max ${percentile(sorted, 100).toFixed(1)} ms`);
    console.log(`Errors (5xx or unexpected status): ${errorCount}`);
    for (const example of errorExamples) console.log(`  ${example}`);

    const steady = samples.filter((sample) => sample.atSeconds > warmUpSeconds);
    let flat = false;
    if (steady.length >= 2) {
      // A minute of samples on each side (fewer in a short run): single samples swing with the load of
      // the moment (RSS by tens of MB), a leak moves the level.
      const window = Math.max(1, Math.min(Math.round(60_000 / sampleEveryMs), Math.floor(steady.length / 2)));
      const trend = (key: 'rssMb' | 'heapMb', label: string) => {
        const values = steady.map((sample) => sample[key]);
        const first = mean(values.slice(0, window));
        const last = mean(values.slice(-window));
        const change = ((last - first) / first) * 100;
        const minutesAt = steady.map((sample) => sample.atSeconds / 60);
        const meanAt = mean(minutesAt);
        const meanValue = mean(values);
        const slope =
          minutesAt.reduce((sum, at, index) => sum + (at - meanAt) * (values[index]! - meanValue), 0) /
          minutesAt.reduce((sum, at) => sum + (at - meanAt) ** 2, 0);
        console.log(
          `${label} after warm-up: mean of the first ${window} samples ${first.toFixed(1)} MB, of the last ${window} ${last.toFixed(1)} MB (${change >= 0 ? '+' : ''}${change.toFixed(1)} %); slope ${slope >= 0 ? '+' : ''}${slope.toFixed(2)} MB/min; samples ${Math.min(...values).toFixed(1)}-${Math.max(...values).toFixed(1)} MB`,
        );
        return Math.abs(change) <= 10;
      };
      const rssFlat = trend('rssMb', 'RSS ');
      const heapFlat = trend('heapMb', 'heap');
      flat = rssFlat && heapFlat;
      console.log(`Memory ${flat ? 'flat' : 'NOT flat'} within ±10 % after warm-up (${steady.length} samples)`);
    } else {
      console.log('Memory: too few samples after warm-up to judge a trend (run longer)');
    }
    const counts = await rowCounts(url.toString());
    console.log(`Rows at the end: ${counts}`);
    console.log(`Machine load at the end: ${(await loadAverage()).join(' ')}`);
    if (errorCount > 0 || !flat) process.exitCode = 1;
  } finally {
    if (child && child.exitCode === null) {
      const exited = new Promise((done) => child!.once('exit', done));
      child.send('stop');
      await Promise.race([exited, new Promise((done) => setTimeout(done, 10_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

async function loadAverage(): Promise<string[]> {
  const { loadavg } = await import('node:os');
  return loadavg().map((value) => value.toFixed(2));
}

async function rowCounts(databaseUrl: string): Promise<string> {
  const database = new pg.Client({ connectionString: databaseUrl });
  await database.connect();
  try {
    const tables = ['tasks', 'issues', 'goals', 'meetings', 'metric_values', 'people_reviews', 'documents', 'seats', 'users'];
    const counts: string[] = [];
    for (const table of tables) {
      const { rows } = await database.query<{ count: string }>(`select count(*) as count from ${table}`);
      counts.push(`${table} ${rows[0]!.count}`);
    }
    return counts.join(', ');
  } finally {
    await database.end();
  }
}

if (process.argv.includes('--server')) await serve();
else await main();

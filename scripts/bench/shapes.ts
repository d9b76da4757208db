/**
 * Each shape of request against its floor (`floorServer`), the event feed's page, and on PostgreSQL
 * the deep page of a million tasks and what the contract's routing costs alone.
 */
import { randomBytes } from 'node:crypto';
import express from 'express';
import { Kysely, PostgresDialect, type CompiledQuery } from 'kysely';
import pg from 'pg';
import { pino } from 'pino';
import { contractDocument, createApp } from '../../src/app.js';
import { hashKey } from '../../src/auth/apiKeys.js';
import { createSecretBox } from '../../src/auth/secrets.js';
import type { Database, TaskRow } from '../../src/db/database.js';
import { DEFAULT_PAGE_LIMIT, encodeCursor } from '../../src/db/pagination.js';
import { teamTaskPages } from '../../src/db/queries/tasks.js';
import { handlers } from '../../src/handlers/index.js';
import type { HandlerMap } from '../../src/handlers/types.js';
import { etagOf } from '../../src/http/conditional.js';
import { loadContract, operationRoutes } from '../../src/http/router.js';
import { createLogger } from '../../src/logger.js';
import { taskJson, toTask } from '../../src/records/tasks.js';
import { atLeast, atMost, autocannon, below, closedLoop, connections, listen, load, loadPair, pacedPair, reported, seconds, type Check, type Result } from './harness.js';
import { apiOf, metricCount, tasksInOrder, weeksOfValues, type Stack, type World } from './seed.js';

const deepPosition = 900_000;

/** Microseconds to compute the ETag of `body`, the mean of many runs. */
function etagMicroseconds(body: string): number {
  const runs = 100_000;
  for (let run = 0; run < 1_000; run += 1) etagOf(body);
  const started = process.hrtime.bigint();
  for (let run = 0; run < runs; run += 1) etagOf(body);
  return Number(process.hrtime.bigint() - started) / 1_000 / runs;
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
export async function floorServer(stack: Stack) {
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

/** The throughput pairs of `/v1/me` and a task against their floors are measured in rounds (`loadPair`): their targets are the tightest. */
const pairRounds = 3;

interface Tail {
  what: string;
  read: Result;
  floor: Result;
}

/** Each read's paced tail is taken this many times, and holds only when it holds every time. */
const tailRuns = 3;

/**
 * Each read paced together with its floor route, in alternating slices (`pacedPair`), at half the
 * maximum rate of the slower of the two measured right before (a second of each at full load): the
 * read's p99 is held to the floor's own tail at that rate on this machine, not to an absolute figure.
 * A maximum measured minutes earlier was no guide on this shared machine: paced at half of it, a pair
 * found the machine slower and queued for seconds, which measures the queue, not the read.
 */
async function pacedTails(label: string, apiUrl: string, headers: Record<string, string>, reads: [what: string, path: string, floorUrl: string][]): Promise<Tail[][]> {
  const runs: Tail[][] = [];
  for (let run = 0; run < tailRuns; run += 1) runs.push(await pacedTailsOnce(label, apiUrl, headers, reads));
  // By read: its runs.
  return reads.map((_, index) => runs.map((tails) => tails[index]!));
}

async function pacedTailsOnce(label: string, apiUrl: string, headers: Record<string, string>, reads: [what: string, path: string, floorUrl: string][]): Promise<Tail[]> {
  const tails: Tail[] = [];
  for (const [what, path, floorUrl] of reads) {
    const fullLoad = async (url: string) => (await autocannon(url, { headers, duration: 1 })).requestsPerSecond;
    const rate = Math.min(await fullLoad(`${apiUrl}${path}`), await fullLoad(floorUrl)) / 2;
    const [read, floor] = await pacedPair(
      [`${label}: ${what} at half the slower side's maximum rate (${Math.round(rate)}/s)`, `${label}:   its floor at the same rate, in alternating slices`],
      [`${apiUrl}${path}`, floorUrl],
      rate,
      Math.max(6, seconds),
      headers,
    );
    tails.push({ what, read, floor });
  }
  return tails;
}

/** Held when every run holds; the figure is the worst run's. */
const tailCheck = (label: string) => (runs: Tail[]) => {
  const ratios = runs.map((tail) => tail.read.p99 / tail.floor.p99);
  const worst = runs[ratios.indexOf(Math.max(...ratios))]!;
  return atMost(
    `${label}: p99 of ${worst.what} at half rate ÷ its floor's p99, worst of ${runs.length}`,
    Math.max(...ratios),
    1.5,
    `runs ${ratios.map((ratio) => ratio.toFixed(2)).join(', ')}; worst ${worst.read.p99} / ${worst.floor.p99} ms (p50 ${worst.read.p50} / ${worst.floor.p50})`,
  );
};


/**
 * `BENCH_ONLY=floor`: the figures of `measureStack` that were missed last, alone — `/v1/me` and a task
 * against their floors (in rounds), and the p99 at half rate of `/v1/me`, a task, the issue page,
 * the meeting read and the Scorecard against their floors'.
 */
export async function benchFloor(stack: Stack, results: Result[]): Promise<Check[]> {
  const full = await apiOf(stack);
  const api = await listen(full.app);
  const floor = await floorServer(stack);
  try {
    const read = { authorization: `Bearer ${stack.world.readKey}` };
    const name = (what: string) => `${stack.label}: ${what}`;
    const paths = {
      me: '/v1/me',
      task: `/v1/tasks/${stack.taskId}`,
      issues: `/v1/teams/${stack.world.teamId}/issues`,
      meeting: `/v1/meetings/${stack.meetingId}`,
      scorecard: `/v1/teams/${stack.world.teamId}/scorecard`,
    };
    for (const path of Object.values(paths)) {
      const response = await fetch(`${api.url}${path}`, { headers: read });
      if (response.status !== 200) throw new Error(`${stack.label}: GET ${path} answered ${response.status}`);
    }
    const keyFloor = { name: name('floor: the key lookup'), url: `${floor.url}/floor/key` };
    const readFloor = { name: name('floor: the key lookup + a primary-key read'), url: `${floor.url}/floor/read` };
    const [meFloor, me] = await loadPair(keyFloor, { name: name('GET /v1/me'), url: `${api.url}${paths.me}` }, read, { rounds: pairRounds });
    const [taskFloor, task] = await loadPair(readFloor, { name: name('GET /v1/tasks/{id}'), url: `${api.url}${paths.task}` }, read, { rounds: pairRounds });
    const tails = await pacedTails(stack.label, api.url, read, [
      ['GET /v1/me', paths.me, keyFloor.url],
      ['GET /v1/tasks/{id}', paths.task, readFloor.url],
      ['GET …/issues page', paths.issues, `${floor.url}/floor/page`],
      ['GET /v1/meetings/{id}', paths.meeting, readFloor.url],
      ['GET …/scorecard', paths.scorecard, readFloor.url],
    ]);
    results.push(meFloor, me, taskFloor, task, ...tails.flat().flatMap((tail) => [tail.read, tail.floor]));
    const rps = (result: Result) => result.requestsPerSecond;
    return [
      atLeast(name('GET /v1/me ÷ its floor (the key lookup)'), rps(me) / rps(meFloor), 1.0, `${rps(me).toFixed(0)} / ${rps(meFloor).toFixed(0)} req/s`),
      atLeast(name('GET /v1/tasks/{id} ÷ its floor (+ a primary-key read)'), rps(task) / rps(taskFloor), 0.95, `${rps(task).toFixed(0)} / ${rps(taskFloor).toFixed(0)} req/s`),
      ...tails.map(tailCheck(stack.label)),
    ];
  } finally {
    await api.close();
    await floor.close();
    await full.close();
  }
}

export async function measureStack(stack: Stack, results: Result[]): Promise<Check[]> {
  const full = await apiOf(stack);
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
    const [meFloor, me] = await loadPair(keyFloor, { name: name('GET /v1/me'), url: `${api.url}${paths.me}` }, read, { rounds: pairRounds });
    const [taskFloor, task] = await loadPair(readFloor, { name: name('GET /v1/tasks/{id}'), url: `${api.url}${paths.task}` }, read, { rounds: pairRounds });
    const [listFloor, list] = await loadPair(pageFloor, { name: name('GET /v1/teams/{teamId}/tasks (50 per page)'), url: `${api.url}${paths.list}` }, read, { rounds: pairRounds });
    const [meetingFloor, meetingRead] = await loadPair(
      readFloor,
      { name: name('GET /v1/meetings/{id} (ratings, segues, headlines, messages)'), url: `${api.url}${paths.meeting}` },
      read,
    );
    const [issuesFloor, issues] = await loadPair(pageFloor, { name: name('GET /v1/teams/{teamId}/issues (50 per page)'), url: `${api.url}${paths.issues}` }, read, { rounds: pairRounds });
    const [meetingsFloor, meetings] = await loadPair(pageFloor, { name: name('GET /v1/teams/{teamId}/meetings (50 per page)'), url: `${api.url}${paths.meetings}` }, read, { rounds: pairRounds });
    const [membersFloor, members] = await loadPair(pageFloor, { name: name('GET /v1/orgs/{orgId}/members (50 per page)'), url: `${api.url}${paths.members}` }, read, { rounds: pairRounds });
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
      { rounds: pairRounds },
    );
    const createBody = JSON.stringify({ title: 'Call the carrier', ownerId: stack.world.userId, dueDate: '2026-11-27' });
    const [createFloor, create] = await loadPair(
      { name: name('floor: the key lookup + begin, INSERT … RETURNING, commit'), url: `${floor.url}/floor/teams/${stack.world.teamId}/tasks`, method: 'POST', body: createBody, headers: changeHeaders },
      { name: name('POST /v1/teams/{teamId}/tasks'), url: `${api.url}/v1/teams/${stack.world.teamId}/tasks`, method: 'POST', body: createBody, headers: changeHeaders },
      write,
      { rounds: pairRounds },
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

    const tails = await pacedTails(stack.label, api.url, read, [
      ['GET /v1/me', paths.me, keyFloor.url],
      ['GET /v1/tasks/{id}', paths.task, readFloor.url],
      ['GET …/tasks page', paths.list, pageFloor.url],
      ['GET …/issues page', paths.issues, pageFloor.url],
      ['GET …/meetings page', paths.meetings, pageFloor.url],
      ['GET …/members page', paths.members, pageFloor.url],
      ['GET /v1/meetings/{id}', paths.meeting, readFloor.url],
      ['GET …/scorecard', paths.scorecard, readFloor.url],
    ]);
    results.push(meFloor, me, taskFloor, task, listFloor, list, meetingFloor, meetingRead, issuesFloor, issues, meetingsFloor, meetings, membersFloor, members);
    results.push(logged, patchFloor, patch, createFloor, create, scorecardRead, values, fresh, notModified, post, postWithKey, replay);
    results.push(...tails.flat().flatMap((tail) => [tail.read, tail.floor]));

    const rps = (result: Result) => result.requestsPerSecond;
    return [
      atLeast(name('GET /v1/me ÷ its floor (the key lookup)'), rps(me) / rps(meFloor), 1.0),
      atLeast(name('GET /v1/tasks/{id} ÷ its floor (+ a primary-key read)'), rps(task) / rps(taskFloor), 0.95),
      atLeast(name('GET …/tasks page ÷ its floor (+ 51 rows, mapped)'), rps(list) / rps(listFloor), 0.85),
      atLeast(name('GET …/issues page ÷ the page floor'), rps(issues) / rps(issuesFloor), 0.85),
      atLeast(name('GET …/meetings page ÷ the page floor'), rps(meetings) / rps(meetingsFloor), 0.85),
      atLeast(name('GET …/members page ÷ the page floor'), rps(members) / rps(membersFloor), 0.85),
      reported(name('GET /v1/meetings/{id} ÷ the read floor'), rps(meetingRead) / rps(meetingFloor)),
      reported(name('GET /v1/me, request log lines on ÷ off'), rps(logged) / rps(me), `${rps(logged).toFixed(0)} req/s`),
      atLeast(name('PATCH /v1/tasks/{id} ÷ its floor (begin, UPDATE … RETURNING, commit)'), rps(patch) / rps(patchFloor), 0.9, `${rps(patch).toFixed(0)} / ${rps(patchFloor).toFixed(0)} req/s, a task per connection, p99 ${patch.p99} ms`),
      atLeast(name('POST …/tasks ÷ its floor (begin, INSERT … RETURNING, commit)'), rps(create) / rps(createFloor), 0.85, `${rps(create).toFixed(0)} / ${rps(createFloor).toFixed(0)} req/s`),
      ...tails.map(tailCheck(stack.label)),
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
export async function benchFeed(stack: Stack, results: Result[]): Promise<Check[]> {
  const full = await apiOf(stack);
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

/**
 * PostgreSQL's figures of the contract's routing and of the task list's depth, `taskCount` tasks in
 * one team: a bare Express route and the contract's routing alone (a constant handler, a fixed
 * caller, no database); the first page of the task list against the page after item `deepPosition`
 * (keyset), unfiltered and with ?completed=false, and the deep page's plan explained.
 */
export async function benchDeepPages(db: Kysely<Database>, world: World, databaseUrl: string, taskCount: number, results: Result[]): Promise<Check[]> {
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
  routed.use('/v1', operationRoutes({ contract, handlers: { ...handlers, getMe: constant }, db, logger, secrets: createSecretBox(randomBytes(32)), now: () => new Date(), knownLogEnd: { at: () => ({ txid: '0', position: '0' }) } }, []).authenticated);
  const routedServer = await listen(routed);

  const checks: Check[] = [];
  try {
    const deep = await deepCursor(db, api.url, auth, world.teamId, deepPosition);
    // Three of four tasks are open: 90 % into the open ones, like the unfiltered deep page.
    const openCount = taskCount - taskCount / 4;
    const deepOpen = await deepCursor(db, api.url, auth, world.teamId, (openCount * 9) / 10, false);
    const plan = await explainDeepPage(databaseUrl, world.teamId, world.userId, deep.cursor);
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
  return checks;
}

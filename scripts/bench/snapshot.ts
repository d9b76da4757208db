/**
 * The team snapshot (`BENCH_ONLY=snapshot`, and in the full run): a team of 10,000 open tasks, 1,000
 * open issues and a Scorecard of 100 metrics × 13 weeks.
 *   - One load: `GET /v1/teams/{teamId}/snapshot` against paging the lists for the same records (pages
 *     of 200, one request after the other, as a screen would), bytes on the wire and time, each the
 *     median of 3 rounds; the snapshot both plain and gzip-compressed.
 *   - A PATCH's rate while 200 clients load snapshots ÷ with none (A B B A halves), target ≥ 0.8; the
 *     loaders run in a child process (autocannon, 200 connections, each answer read in full).
 */
import { spawn } from 'node:child_process';
import { get } from 'node:http';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/db/database.js';
import { currentWeekMonday } from '../../src/time.js';
import { atLeast, autocannon, listen, print, reported, seconds, type Check, type Result } from './harness.js';
import { apiOf, zone, type Stack, type World } from './seed.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const openTasks = 10_000;
const openIssues = 1_000;
const metrics = 100;
const weeks = 13;
const loaders = 200;

/** A team of its own in the bench's organization, its members the world's team's. */
async function seedSnapshotTeam(db: Kysely<Database>, world: World): Promise<string> {
  const team = await db.insertInto('teams').values({ org_id: world.orgId, name: 'Snapshot', slug: 'snapshot' }).returning('id').executeTakeFirstOrThrow();
  await db.insertInto('team_members').values(world.ownerIds.map((userId) => ({ team_id: team.id, user_id: userId, role: 'MEMBER' as const }))).execute();
  await sql`
    insert into tasks (team_id, title, owner_id, due_date, created_at)
    select ${team.id}, 'Follow up on the freight quote #' || n, (${world.ownerIds}::text[])[1 + n % ${world.ownerIds.length}],
      date '2026-01-05' + (n % 365)::int, timestamptz '2026-01-05T08:00:00Z' + n * interval '1 millisecond'
    from generate_series(1, ${openTasks}) as n
  `.execute(db);
  await sql`
    insert into issues (team_id, title, description, priority, status, created_by_id, created_at)
    select ${team.id}, 'Carrier keeps missing the Žilina route #' || n, case when n % 2 = 0 then 'Raised in the weekly meeting.' end,
      (array['HIGH', 'MEDIUM', 'LOW'])[1 + n % 3], 'OPEN', (${world.ownerIds}::text[])[1 + n % ${world.ownerIds.length}],
      timestamptz '2026-01-05T08:00:00Z' + n * interval '1 millisecond'
    from generate_series(1, ${openIssues}) as n
  `.execute(db);
  await sql`
    insert into metrics (team_id, title, goal, owner_id, position)
    select ${team.id}, 'Measurable #' || n, '>=' || (n * 10), (${world.ownerIds}::text[])[1 + n % ${world.ownerIds.length}], n
    from generate_series(1, ${metrics}) as n
  `.execute(db);
  await sql`
    insert into metric_values (metric_id, week, value, on_track, entered_by_id)
    select m.id, ${currentWeekMonday(new Date(), zone)}::date - 7 * w, (m.position * 10 + w % 7)::text, w % 2 = 0, m.owner_id
    from metrics m cross join generate_series(0, ${weeks - 1}) as w
    where m.team_id = ${team.id}
  `.execute(db);
  return team.id;
}

/** One GET read to its end: the bytes on the wire (compressed or not, as sent) and the time. */
function fetchRaw(url: string, headers: Record<string, string>): Promise<{ status: number; bytes: number; ms: number; body: string }> {
  const started = performance.now();
  return new Promise((done, fail) => {
    get(url, { headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const raw = Buffer.concat(chunks);
        done({ status: response.statusCode!, bytes: raw.length, ms: performance.now() - started, body: response.headers['content-encoding'] ? '' : raw.toString('utf8') });
      });
      response.on('error', fail);
    }).on('error', fail);
  });
}

/** Every page of the lists that hold the snapshot's records, one request after the other. */
async function pageTheLists(url: string, teamId: string, headers: Record<string, string>) {
  let bytes = 0;
  let requests = 0;
  const started = performance.now();
  const read = async (path: string) => {
    const answer = await fetchRaw(`${url}${path}`, headers);
    if (answer.status !== 200 && answer.status !== 404) throw new Error(`${path} answered ${answer.status}`);
    bytes += answer.bytes;
    requests += 1;
    return answer.body;
  };
  const all = async (path: string) => {
    let cursor: string | null = null;
    do {
      const page = JSON.parse(await read(`${path}${path.includes('?') ? '&' : '?'}limit=200${cursor ? `&cursor=${cursor}` : ''}`)) as { nextCursor: string | null };
      cursor = page.nextCursor;
    } while (cursor);
  };
  const team = `/v1/teams/${teamId}`;
  await read(team);
  await all(`${team}/members`);
  await read(`${team}/vision`);
  await read(`${team}/org-chart`);
  await all(`${team}/documents`);
  await all(`${team}/people-reviews`);
  await all(`${team}/goals?quarter=2026-Q4`);
  await all(`${team}/goals?quarter=2026-Q3`);
  await read(`${team}/scorecard`);
  await all(`${team}/meetings`);
  await all(`${team}/issues?status=OPEN`);
  await all(`${team}/issues?status=SOLVING`);
  await all(`${team}/tasks?completed=false`);
  await all(`${team}/tasks?completed=true`);
  return { bytes, requests, ms: performance.now() - started };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** `loaders` connections loading the snapshot in a loop for `duration` seconds, in a child process. */
function loadSnapshots(url: string, key: string, duration: number): Promise<{ requests: number; p50: number; non2xx: number }> {
  const args = [url, '--connections', String(loaders), '--duration', String(duration), '--timeout', '600', '--json', '--headers', `authorization=Bearer ${key}`, '--headers', 'accept-encoding=gzip'];
  return new Promise((done, fail) => {
    const child = spawn(resolve(root, 'node_modules/.bin/autocannon'), args, { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', fail);
    child.on('close', () => {
      try {
        const report = JSON.parse(out) as { requests: { total: number }; latency: { p50: number }; non2xx: number };
        done({ requests: report.requests.total, p50: report.latency.p50, non2xx: report.non2xx });
      } catch (error) {
        fail(error);
      }
    });
  });
}

export async function benchSnapshot(stack: Stack, results: Result[]): Promise<Check[]> {
  const teamId = await seedSnapshotTeam(stack.db, stack.world);
  const full = await apiOf(stack);
  const api = await listen(full.app);
  const label = (what: string) => `${stack.label}: ${what}`;
  try {
    const read = { authorization: `Bearer ${stack.world.readKey}` };
    const snapshotUrl = `${api.url}/v1/teams/${teamId}/snapshot`;
    // 1. One load, against paging the lists; warmed up once each.
    await fetchRaw(snapshotUrl, read);
    await pageTheLists(api.url, teamId, read);
    const plain: number[] = [];
    const zipped: number[] = [];
    const paged: number[] = [];
    let sizes = { plain: 0, gzip: 0, lists: 0, requests: 0 };
    for (let round = 0; round < 3; round += 1) {
      const one = await fetchRaw(snapshotUrl, { ...read, 'accept-encoding': 'identity' });
      const compressed = await fetchRaw(snapshotUrl, { ...read, 'accept-encoding': 'gzip' });
      const lists = await pageTheLists(api.url, teamId, read);
      if (one.status !== 200 || compressed.status !== 200) throw new Error(`the snapshot answered ${one.status}, ${compressed.status}`);
      plain.push(one.ms);
      zipped.push(compressed.ms);
      paged.push(lists.ms);
      sizes = { plain: one.bytes, gzip: compressed.bytes, lists: lists.bytes, requests: lists.requests };
    }
    const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MB`;
    console.log(
      `${label(`snapshot of ${openTasks.toLocaleString('en')} tasks, ${openIssues.toLocaleString('en')} issues, ${metrics} metrics × ${weeks} weeks`)}: ` +
        `${mb(sizes.plain)} in ${median(plain).toFixed(0)} ms, gzip ${mb(sizes.gzip)} in ${median(zipped).toFixed(0)} ms; ` +
        `paging the lists: ${sizes.requests} requests, ${mb(sizes.lists)} in ${median(paged).toFixed(0)} ms`,
    );

    // 2. A PATCH's rate while `loaders` clients load snapshots, ÷ with none (A B B A).
    const write = { authorization: `Bearer ${stack.world.writeKey}` };
    const patch = { method: 'PATCH', body: JSON.stringify({ title: 'Changed during the snapshot bench' }), headers: write };
    const taskUrl = `${api.url}/v1/tasks/${stack.taskId}`;
    const half = Math.max(2, Math.round(seconds / 2));
    await autocannon(taskUrl, { ...patch, duration: 1 });
    const alone: Result[] = [];
    const loaded: Result[] = [];
    const snapshots: { requests: number; p50: number; non2xx: number }[] = [];
    const withLoaders = async () => {
      const loading = loadSnapshots(snapshotUrl, stack.world.readKey, half + 4);
      // The loaders connect and fill the queue first.
      await new Promise((ramp) => setTimeout(ramp, 2_000));
      const result = { name: label(`PATCH /v1/tasks/{id} while ${loaders} clients load snapshots`), ...(await autocannon(taskUrl, { ...patch, duration: half })) };
      snapshots.push(await loading);
      return result;
    };
    alone.push({ name: label('PATCH /v1/tasks/{id}, no snapshot loading'), ...(await autocannon(taskUrl, { ...patch, duration: half })) });
    loaded.push(await withLoaders());
    loaded.push(await withLoaders());
    alone.push({ name: label('PATCH /v1/tasks/{id}, no snapshot loading'), ...(await autocannon(taskUrl, { ...patch, duration: half })) });
    const mean = (runs: Result[]): Result => ({
      ...runs[0]!,
      requestsPerSecond: runs.reduce((sum, run) => sum + run.requestsPerSecond, 0) / runs.length,
      p50: Math.max(...runs.map((run) => run.p50)),
      p99: Math.max(...runs.map((run) => run.p99)),
      non2xx: runs.reduce((sum, run) => sum + run.non2xx, 0),
    });
    const [none, busy] = [mean(alone), mean(loaded)];
    print([none, busy]);
    results.push(none, busy);
    const loadedSnapshots = snapshots.reduce((sum, run) => sum + run.requests, 0);
    console.log(`${label('snapshots loaded meanwhile')}: ${loadedSnapshots} in ${2 * (half + 4)} s (p50 ${Math.max(...snapshots.map((run) => run.p50))} ms, queue included)`);
    return [
      reported(label('snapshot ÷ paging the lists, time'), median(plain) / median(paged), `${median(plain).toFixed(0)} / ${median(paged).toFixed(0)} ms (${sizes.requests} requests)`),
      reported(label('snapshot gzip ÷ paging the lists, bytes'), sizes.gzip / sizes.lists, `${mb(sizes.gzip)} / ${mb(sizes.lists)} (plain ${mb(sizes.plain)})`),
      atLeast(label(`PATCH with ${loaders} clients loading snapshots ÷ none`), busy.requestsPerSecond / none.requestsPerSecond, 0.8, `${busy.requestsPerSecond.toFixed(0)} / ${none.requestsPerSecond.toFixed(0)} req/s; ${loadedSnapshots} snapshots meanwhile`),
    ];
  } finally {
    await api.close();
    await full.close();
  }
}

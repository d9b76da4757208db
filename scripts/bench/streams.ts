/**
 * The live event streams (`GET /v1/events/stream`, src/live/streams.ts) on PostgreSQL, each server a
 * process of its own (src/server.ts under tsx, as production runs it with its delivery worker, whose
 * fan-out wakes every process's streams) and the streams read by a client in another child process:
 *   - change → event on a stream of ANOTHER instance: 50 evenly paced PATCHes a second sent to
 *     instance A, 500 streams open on instance B (100 keys, 5 streams each, in 10 teams of 10 people,
 *     each stream following its team, the changes taking the teams in turn, so that each reaches 50
 *     streams): from just before the PATCH is sent to the event's arrival on each stream, p99 ≤ 250 ms;
 *   - 1,000 idle streams on one instance (200 keys × 5): resident memory per stream ≤ 64 KB (and the
 *     V8 heap's reported, also against the instance once they closed; all after a full collection;
 *     BENCH_ONLY=idle-streams alone), and what a heartbeat round costs, the server's CPU
 *     time over a window with 1,000 streams less one with a single stream, ÷ the comment lines the
 *     client received, × 1,000;
 *   - PATCH /v1/tasks/{id} on the instance holding those 500 streams ÷ the same with no stream open,
 *     three rounds of A B B A, a task per connection: of a team no stream follows, ≥ 0.97; of the
 *     streams' teams, each change sent to 50 streams, ≥ 0.8.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { sql, type Kysely } from 'kysely';
import { generateKey } from '../../src/auth/apiKeys.js';
import type { Database } from '../../src/db/database.js';
import { freePort } from '../ports.js';
import { atLeast, atMost, clock, connections, loadPair, print, processCpu, quantile, reported, seconds, type Check, type Result, type Target } from './harness.js';
import { zone, type Stack } from './seed.js';

const root = resolve(import.meta.dirname, '../..');
const changeRate = 50;
const teams = 20;
const teamSize = 10;
const perKey = 5;
/** Teams whose streams the latency and change figures use (10 × 10 people × 5 = 500 streams). */
const latencyTeams = 10;
/** How long a side of the PATCH pairs waits after opening or closing the streams before it is measured. */
const settleMs = 1_000;
const idleStreams = teams * teamSize * perKey;

/**
 * The streams' reader: a child process opening streams with node:http and reading each to the end.
 * It notes each message's arrival on the machine's clock with the probe number in the task's title,
 * and counts comment lines (the heartbeats). It stands for clients on other machines, yet runs on the
 * server's two cores, so it does as little as it can: it finds the messages' boundaries in the bytes
 * as they come and decodes only a probe's number (with fetch's web streams and a text decoder it spent
 * about 20 µs a message, more than the server spends writing one; docs/performance.md).
 */
const clientSource = String.raw`
const http = require('node:http');
const clock = () => performance.timeOrigin + performance.now();
let open = [], samples = [], messages = 0, comments = 0;
const probe = Buffer.from('"title":"Latency probe #');
function judge(block) {
  if (block[0] === 0x3a) { comments += 1; return; }
  if (block.indexOf('data:') === -1) return;
  messages += 1;
  const at = block.indexOf(probe);
  if (at === -1) return;
  let number = 0;
  for (let index = at + probe.length; block[index] >= 0x30 && block[index] <= 0x39; index++) number = number * 10 + block[index] - 0x30;
  samples.push(clock(), number);
}
function read(url, key) {
  return new Promise((resolve) => {
    const request = http.get(url, { headers: { authorization: 'Bearer ' + key }, agent: false }, (response) => {
      if (response.statusCode !== 200) {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode, text }));
        return;
      }
      let pending = null;
      response.on('error', () => undefined);
      response.on('data', (chunk) => {
        let bytes = pending ? Buffer.concat([pending, chunk]) : chunk;
        let start = 0, boundary;
        while ((boundary = bytes.indexOf('\n\n', start)) !== -1) {
          judge(bytes.subarray(start, boundary));
          start = boundary + 2;
        }
        pending = start < bytes.length ? bytes.subarray(start) : null;
      });
      const reading = new Promise((done) => response.once('close', done));
      resolve({ status: 200, stream: { abort: () => request.destroy(), reading } });
    });
    request.on('error', (error) => resolve({ status: 0, text: String(error) }));
  });
}
process.on('message', async (message) => {
  if (message.type === 'open') {
    if (open.length === 0) {
      const opened = await Promise.all(message.streams.map(([url, key]) => read(url, key)));
      const refused = opened.filter((one) => one.status !== 200);
      open = opened.filter((one) => one.status === 200).map((one) => one.stream);
      process.send({ type: 'opened', count: open.length, refused: refused.slice(0, 3) });
    } else process.send({ type: 'opened', count: open.length, refused: [] });
  } else if (message.type === 'close') {
    for (const stream of open) stream.abort();
    await Promise.all(open.map((stream) => stream.reading));
    open = [];
    process.send({ type: 'closed' });
  } else if (message.type === 'reset') {
    samples = []; messages = 0; comments = 0;
    process.send({ type: 'reset' });
  } else if (message.type === 'count') {
    process.send({ type: 'count', messages, comments, probes: samples.length / 2 });
  } else if (message.type === 'report') {
    process.send({ type: 'report', messages, comments, samples });
  }
});
process.on('disconnect', () => process.exit(0));
process.send({ type: 'ready' });
`;

interface ClientCount {
  messages: number;
  comments: number;
  probes: number;
}

interface StreamClient {
  /** Opens a stream on each [url, key], unless streams are open already; answers how many opened. */
  open(streams: [string, string][]): Promise<number>;
  close(): Promise<void>;
  reset(): Promise<void>;
  count(): Promise<ClientCount>;
  /** Arrival (epoch ms) and probe number, flat, in pairs. */
  report(): Promise<{ messages: number; comments: number; samples: number[] }>;
  stop(): Promise<void>;
}

async function startStreamClient(): Promise<StreamClient> {
  const child = spawn(process.execPath, ['-e', clientSource], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const waiting = new Map<string, (message: any) => void>();
  child.on('message', (message: { type: string }) => {
    const waiter = waiting.get(message.type);
    waiting.delete(message.type);
    waiter?.(message);
  });
  const ask = (message: object | undefined, reply: string, timeoutMs = 120_000) =>
    new Promise<any>((resolved, failed) => {
      const timer = setTimeout(() => {
        waiting.delete(reply);
        failed(new Error(`the stream client did not answer "${reply}" within ${timeoutMs} ms`));
      }, timeoutMs);
      waiting.set(reply, (answer) => {
        clearTimeout(timer);
        resolved(answer);
      });
      if (message) child.send(message);
    });
  await ask(undefined, 'ready');
  return {
    open: async (streams) => {
      const { count, refused } = await ask({ type: 'open', streams }, 'opened');
      if (count !== streams.length) throw new Error(`${streams.length - count} of ${streams.length} streams were refused: ${JSON.stringify(refused)}`);
      return count;
    },
    close: async () => void (await ask({ type: 'close' }, 'closed')),
    reset: async () => void (await ask({ type: 'reset' }, 'reset')),
    count: () => ask({ type: 'count' }, 'count'),
    report: () => ask({ type: 'report' }, 'report'),
    stop: async () => {
      const exited = new Promise((done) => child.once('exit', done));
      child.disconnect();
      await exited;
    },
  };
}

interface ServerProcess {
  url: string;
  pid: number;
  child: ChildProcess;
  metricsUrl: string;
  stop(): Promise<void>;
}

/** src/server.ts in a process group of its own on `databaseUrl`, answering /healthz. */
async function startServer(name: string, databaseUrl: string, secretsKey: string): Promise<ServerProcess> {
  const port = await freePort();
  let metricsPort = await freePort();
  while (metricsPort === port) metricsPort = await freePort();
  // SIGUSR2 collects the garbage, so that memory is measured without it (Node gives the signal no other use);
  // SIGWINCH writes a heap snapshot into BENCH_HEAP_SNAPSHOTS, when given, to see what the memory is.
  const entry =
    "process.on('SIGUSR2', () => globalThis.gc()); " +
    "process.on('SIGWINCH', async () => { const dir = process.env.BENCH_HEAP_SNAPSHOTS; if (dir) (await import('node:v8')).writeHeapSnapshot(dir + '/server-' + Date.now() + '.heapsnapshot'); }); " +
    "await import('./src/server.ts');";
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', entry], {
    cwd: root,
    detached: true,
    env: {
      ...process.env,
      PORT: String(port),
      METRICS_PORT: String(metricsPort),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      SECRETS_KEY: secretsKey,
      REDIS_URL: '',
      RATE_LIMIT_PER_MINUTE: '10000000',
      LOG_LEVEL: 'warn',
      LOG_PRETTY: '0',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const url = `http://127.0.0.1:${port}`;
  const signal = (what: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, what);
    } catch {
      // gone already
    }
  };
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    signal('SIGTERM');
    const timer = setTimeout(() => signal('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  };
  // A start takes a few seconds, many more on a busy machine: the deadline only names a server that never answers.
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited before it answered /healthz`);
    if (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) }).then((res) => res.ok, () => false)) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`${name} did not answer /healthz within 120 s`);
    }
    await new Promise((wait) => setTimeout(wait, 200));
  }
  return { url, pid: child.pid!, child, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`, stop };
}

interface Memory {
  rss: number;
  heap: number;
  /** Memory outside V8's heap that V8 knows of (buffers). */
  external: number;
  /** V8's heap as committed, and of it the young generation (which grows with a burst of allocations and stays grown). */
  heapTotal: number;
  newSpace: number;
}

/** Resident memory (bytes) of the process, its V8 heap in use and its external memory from its own /metrics, right after a full collection. */
async function memoryOf(server: ServerProcess): Promise<Memory> {
  process.kill(server.pid, 'SIGUSR2');
  await pause(2_000);
  const status = readFileSync(`/proc/${server.pid}/status`, 'utf8');
  const rss = Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
  const metrics = await (await fetch(server.metricsUrl)).text();
  const figure = (pattern: RegExp) => Number(pattern.exec(metrics)![1]);
  return {
    rss,
    heap: figure(/^nodejs_heap_size_used_bytes (\S+)$/m),
    external: figure(/^nodejs_external_memory_bytes (\S+)$/m),
    heapTotal: figure(/^nodejs_heap_size_total_bytes (\S+)$/m),
    newSpace: figure(/^nodejs_heap_space_size_total_bytes\{space="new"\} (\S+)$/m),
  };
}

/** A heap snapshot of the server into BENCH_HEAP_SNAPSHOTS, when given; answers once it is written (the server answers again). */
async function heapSnapshotOf(server: ServerProcess): Promise<void> {
  if (!process.env.BENCH_HEAP_SNAPSHOTS) return;
  process.kill(server.pid, 'SIGWINCH');
  await pause(1_000);
  await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(300_000) });
}

const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));

interface StreamPeople {
  /** Per team: its id, two of its tasks, and its people's read keys. */
  teams: { teamId: string; taskIds: string[]; keys: string[] }[];
}

/** `teams` teams of `teamSize` people each, every person with a read key, two tasks per team; the world's Owner (the writer) in each. */
async function seedStreamPeople(db: Kysely<Database>, stack: Stack): Promise<StreamPeople> {
  const { world } = stack;
  const people = await sql<{ id: string }>`
    insert into users (email, name, timezone)
    select 'watcher' || n || '@example.com', 'Watcher ' || n, ${zone} from generate_series(1, ${teams * teamSize}) as n
    returning id
  `.execute(db);
  const userIds = people.rows.map((row) => row.id);
  await db.insertInto('organization_members').values(userIds.map((userId) => ({ org_id: world.orgId, user_id: userId, role: 'MEMBER' as const }))).execute();
  const keys = userIds.map(() => generateKey());
  await db
    .insertInto('api_keys')
    .values(userIds.map((userId, index) => ({ user_id: userId, name: 'bench stream', prefix: keys[index]!.prefix, key_hash: keys[index]!.hash, scopes: ['read'], expires_at: new Date(Date.now() + 86_400_000) })))
    .execute();
  const result: StreamPeople = { teams: [] };
  for (let team = 0; team < teams; team += 1) {
    const { id: teamId } = await db.insertInto('teams').values({ org_id: world.orgId, name: `Screen ${team}`, slug: `screen-${team}` }).returning('id').executeTakeFirstOrThrow();
    const members = userIds.slice(team * teamSize, (team + 1) * teamSize);
    await db.insertInto('team_members').values([world.userId, ...members].map((userId) => ({ team_id: teamId, user_id: userId, role: 'MEMBER' }))).execute();
    const tasks = await db
      .insertInto('tasks')
      .values([0, 1].map((index) => ({ team_id: teamId, title: `Screen task ${team}.${index}`, owner_id: world.userId, due_date: '2026-11-27' })))
      .returning('id')
      .execute();
    result.teams.push({ teamId, taskIds: tasks.map((task) => task.id), keys: keys.slice(team * teamSize, (team + 1) * teamSize).map((key) => key.key) });
  }
  return result;
}

/** [url, key] of `perKey` streams per person of the first `teamCount` teams, each following its team. */
const streamsOf = (server: ServerProcess, people: StreamPeople, teamCount: number): [string, string][] =>
  people.teams.slice(0, teamCount).flatMap((team) => team.keys.flatMap((key) => Array.from({ length: perKey }, (): [string, string] => [`${server.url}/v1/events/stream?teamId=${team.teamId}`, key])));

export interface StreamsStack extends Stack {
  /** The database's URL, for the server processes. */
  databaseUrl: string;
}

/**
 * 1,000 idle streams on a fresh instance: resident memory, V8 heap and external memory per stream,
 * each after a full collection, and a heartbeat round's server CPU.
 *
 * Opening 1,000 streams at once grows V8's young generation to its most (32 MB, printed) and leaves
 * old-generation pages committed: a cost of the burst, paid once per process, that the resident figure
 * counts as the streams'. Reported beside it: what the streams hold, from the same instance once they
 * are closed again (one stream open), and what they left behind (a leak would show there).
 */
async function measureIdleStreams(stack: StreamsStack, client: StreamClient, people: StreamPeople, secretsKey: string, servers: ServerProcess[]): Promise<Check[]> {
  const name = (what: string) => `${stack.label}: ${what}`;
  const idle = await startServer('instance C', stack.databaseUrl, secretsKey);
  servers.push(idle);
  const allStreams = streamsOf(idle, people, teams);
  // One stream first, so that the live streams' own machinery (the 1 s poll, the listening) runs on both sides.
  await client.open(allStreams.slice(0, 1));
  await pause(3_000);
  const windowMs = 30_000;
  await client.reset();
  const cpuOneBefore = processCpu(idle.pid);
  await pause(windowMs);
  const cpuOne = processCpu(idle.pid) - cpuOneBefore;
  const commentsOne = (await client.count()).comments;
  const before = await memoryOf(idle);
  await heapSnapshotOf(idle);
  await client.close();
  await client.open(allStreams);
  await pause(5_000);
  const after = await memoryOf(idle);
  await heapSnapshotOf(idle);
  await heapSnapshotOf(idle);
  await client.reset();
  const cpuAllBefore = processCpu(idle.pid);
  await pause(windowMs);
  const cpuAll = processCpu(idle.pid) - cpuAllBefore;
  const commentsAll = (await client.count()).comments;
  await client.close();
  await client.open(allStreams.slice(0, 1));
  await pause(3_000);
  const closed = await memoryOf(idle);
  await client.close();
  const added = allStreams.length - 1;
  const perStream = (field: keyof Memory, from = before) => (after[field] - from[field]) / added / 1024;
  const leftBehind = (field: keyof Memory) => ((closed[field] - before[field]) / 2 ** 20).toFixed(1);
  const heartbeatMicroseconds = (cpuAll - cpuOne) / Math.max(1, commentsAll - commentsOne);
  const roundMs = (heartbeatMicroseconds * idleStreams) / 1000;
  const megabytes = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
  console.log(
    `${name(`${idleStreams.toLocaleString('en')} idle streams on one instance`).padEnd(58)} RSS ${megabytes(before.rss)} → ${megabytes(after.rss)} → ${megabytes(closed.rss)} MB once closed, ` +
      `heap ${megabytes(before.heap)} → ${megabytes(after.heap)} → ${megabytes(closed.heap)} MB (committed ${megabytes(before.heapTotal)} → ${megabytes(after.heapTotal)} → ${megabytes(closed.heapTotal)} MB, ` +
      `of it the young generation ${megabytes(before.newSpace)} → ${megabytes(after.newSpace)} → ${megabytes(closed.newSpace)} MB), ` +
      `external ${megabytes(before.external)} → ${megabytes(after.external)} MB; ` +
      `server CPU over ${windowMs / 1000} s: ${(cpuOne / 1000).toFixed(0)} ms with 1 stream (${commentsOne} comments), ` +
      `${(cpuAll / 1000).toFixed(0)} ms with ${idleStreams.toLocaleString('en')} (${commentsAll.toLocaleString('en')} comments)`,
  );
  return [
    atMost(
      name(`stream: resident memory per idle stream (KB), ${idleStreams.toLocaleString('en')} open`),
      perStream('rss'),
      64,
      `V8 heap ${perStream('heap').toFixed(1)} KB (committed ${perStream('heapTotal').toFixed(1)} KB, of it the young generation ${perStream('newSpace').toFixed(1)} KB), external ${perStream('external').toFixed(1)} KB per stream; all after a full collection`,
    ),
    reported(
      name(`stream: V8 heap the ${idleStreams.toLocaleString('en')} idle streams hold, per stream (KB)`),
      perStream('heap', closed),
      `from the same instance once they closed (1 stream open); left behind: heap ${leftBehind('heap')} MB, RSS ${leftBehind('rss')} MB; resident ${perStream('rss', closed).toFixed(1)} KB per stream (V8 keeps or frees pages as it likes)`,
    ),
    reported(name(`stream: a heartbeat round to ${idleStreams.toLocaleString('en')} streams, server CPU (ms)`), roundMs, `${heartbeatMicroseconds.toFixed(1)} µs per comment line; one round every 10 s`),
  ];
}

/** The idle streams' figures alone (BENCH_ONLY=idle-streams). */
export async function benchIdleStreams(stack: StreamsStack): Promise<Check[]> {
  const people = await seedStreamPeople(stack.db, stack);
  const client = await startStreamClient();
  const servers: ServerProcess[] = [];
  try {
    console.log(`\n${stack.label}: idle live streams (a server process under tsx; the streams' reader in a child process)`);
    return await measureIdleStreams(stack, client, people, randomBytes(32).toString('hex'), servers);
  } finally {
    await client.close().catch(() => undefined);
    await client.stop();
    await Promise.all(servers.map((server) => server.stop()));
  }
}

export async function benchStreams(stack: StreamsStack, results: Result[]): Promise<Check[]> {
  const name = (what: string) => `${stack.label}: ${what}`;
  const write = { authorization: `Bearer ${stack.world.writeKey}` };
  const secretsKey = randomBytes(32).toString('hex');
  const people = await seedStreamPeople(stack.db, stack);
  const client = await startStreamClient();
  const servers: ServerProcess[] = [];
  const patch = async (url: string, taskId: string, title: string) => {
    const response = await fetch(`${url}/v1/tasks/${taskId}`, { method: 'PATCH', headers: { ...write, 'content-type': 'application/json' }, body: JSON.stringify({ title }) });
    await response.arrayBuffer();
    return response.status;
  };
  /** Waits until the client has received `probes` probe messages, or `timeoutMs` ran out. */
  const awaitProbes = async (probes: number, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while ((await client.count()).probes < probes && Date.now() < deadline) await pause(200);
  };
  try {
    console.log(`\n${stack.label}: live streams (server processes under tsx; the streams' reader in a child process)`);
    const [a, b] = [await startServer('instance A', stack.databaseUrl, secretsKey), await startServer('instance B', stack.databaseUrl, secretsKey)];
    servers.push(a!, b!);
    const latencyStreams = streamsOf(b!, people, latencyTeams);
    const receivers = teamSize * perKey;

    // 1. Change on A → event on B's streams, 50 changes a second.
    await client.open(latencyStreams);
    // A second of changes first, until they arrive: every stream is live and neither server is cold.
    await client.reset();
    for (let probe = 0; probe < changeRate; probe += 1) await patch(a!.url, people.teams[probe % latencyTeams]!.taskIds[0]!, `Latency probe #${probe}`);
    await awaitProbes(changeRate * receivers, 30_000);
    await client.reset();
    const probeSeconds = Math.min(10, Math.max(4, seconds));
    const probes = changeRate * probeSeconds;
    const sentAt: number[] = [];
    const answeredAt: number[] = [];
    let non2xx = 0;
    const sending: Promise<void>[] = [];
    const pacingStarted = performance.now();
    for (let probe = 0; probe < probes; probe += 1) {
      const wait = pacingStarted + (probe * 1000) / changeRate - performance.now();
      if (wait > 0) await pause(wait);
      sentAt[probe] = clock();
      sending.push(
        patch(a!.url, people.teams[probe % latencyTeams]!.taskIds[0]!, `Latency probe #${probe}`).then((status) => {
          answeredAt[probe] = clock();
          if (status !== 200) non2xx += 1;
        }),
      );
    }
    await Promise.all(sending);
    const sentRate = probes / ((performance.now() - pacingStarted) / 1000);
    await awaitProbes(probes * receivers, 10_000);
    const { samples } = await client.report();
    const afterSend: number[] = [];
    const afterAnswer: number[] = [];
    for (let index = 0; index < samples.length; index += 2) {
      const probe = samples[index + 1]!;
      if (sentAt[probe] === undefined) continue;
      afterSend.push(samples[index]! - sentAt[probe]!);
      afterAnswer.push(samples[index]! - answeredAt[probe]!);
    }
    const received = afterSend.length;
    // An event that never came counts as the longest wait there is.
    for (let missing = received; missing < probes * receivers; missing += 1) afterSend.push(Infinity);
    afterSend.sort((x, y) => x - y);
    afterAnswer.sort((x, y) => x - y);
    const latency: Result = {
      name: name(`stream event on B after its PATCH on A was sent, ${changeRate}/s`),
      requestsPerSecond: sentRate,
      p50: quantile(afterSend, 0.5),
      p99: quantile(afterSend, 0.99),
      mean: afterSend.reduce((sum, value) => sum + value, 0) / afterSend.length,
      non2xx,
    };
    print([latency]);
    console.log(
      `${name("  … after the PATCH's answer").padEnd(58)} p50 ${quantile(afterAnswer, 0.5)} ms   p99 ${quantile(afterAnswer, 0.99)} ms   max ${quantile(afterAnswer, 1)} ms ` +
        `(${received.toLocaleString('en')} of ${(probes * receivers).toLocaleString('en')} arrivals on ${latencyStreams.length} streams)`,
    );
    results.push(latency);

    // 2. A PATCH on B, a task per connection, with B's 500 streams open ÷ with none: first changes of
    // the world's own team, which no stream follows (the streams' cost to a change: every wake-up's
    // shared read and each stream's judging of what it brought), then changes the streams receive
    // (what sending them costs too, on this machine's two cores).
    const body = JSON.stringify({ title: 'Send the revised freight quote' });
    const pair = (paths: string[], what: string) => {
      const target = (side: string, before: () => Promise<void>): Target => ({
        name: name(`PATCH /v1/tasks/{id} on B, ${what}, ${side}`),
        url: `${b!.url}/v1/tasks/x`,
        method: 'PATCH',
        body,
        headers: { 'content-type': 'application/json' },
        paths,
        before,
      });
      // Each side measured once the server has settled: opening 500 streams (their access decided,
      // their first catch-up, the burst's garbage) is not what a change costs with them open.
      const settled = async (change: () => Promise<unknown>) => {
        await change();
        await pause(settleMs);
      };
      return loadPair(
        target('no stream open', () => settled(() => client.close())),
        target(`${latencyStreams.length} streams open`, () => settled(() => client.open(latencyStreams))),
        write,
        { serverPid: b!.pid, rounds: 3 },
      );
    };
    const unfollowed = (await stack.db.selectFrom('tasks').select('id').where('team_id', '=', stack.world.teamId).orderBy('created_at', 'desc').limit(connections).execute()).map(
      (row) => `/v1/tasks/${row.id}`,
    );
    const [none, withStreams] = await pair(unfollowed, `${unfollowed.length} tasks no stream follows`);
    await client.reset();
    const followed = people.teams.slice(0, latencyTeams).flatMap((team) => team.taskIds.map((taskId) => `/v1/tasks/${taskId}`));
    const [noneFollowed, withStreamsFollowed] = await pair(followed, `${followed.length} tasks the streams follow`);
    const streamedMessages = (await client.count()).messages;
    await client.close();
    results.push(none, withStreams, noneFollowed, withStreamsFollowed);
    await Promise.all(servers.splice(0).map((server) => server.stop()));

    // 3. 1,000 idle streams on a fresh instance: memory per stream and a heartbeat round's CPU.
    const idle = await measureIdleStreams(stack, client, people, secretsKey, servers);

    const rps = (result: Result) => result.requestsPerSecond;
    return [
      atMost(
        name('stream: PATCH on A sent → event on B, p99 (ms)'),
        latency.p99,
        250,
        `p50 ${latency.p50} ms, ${latencyStreams.length} streams, ${changeRate} changes/s; after the PATCH's answer p99 ${quantile(afterAnswer, 0.99)} ms`,
      ),
      ...idle,
      atLeast(
        name(`PATCH task: ${latencyStreams.length} streams open ÷ none`),
        rps(withStreams) / rps(none),
        0.97,
        `${rps(withStreams).toFixed(0)} / ${rps(none).toFixed(0)} req/s, a task per connection, of a team no stream follows`,
      ),
      atLeast(
        name(`PATCH task: ${latencyStreams.length} streams receiving the changes ÷ none`),
        rps(withStreamsFollowed) / rps(noneFollowed),
        0.8,
        `${rps(withStreamsFollowed).toFixed(0)} / ${rps(noneFollowed).toFixed(0)} req/s; ${streamedMessages.toLocaleString('en')} messages streamed (${teamSize * perKey} per change)`,
      ),
    ];
  } finally {
    await client.close().catch(() => undefined);
    await client.stop();
    await Promise.all(servers.map((server) => server.stop()));
  }
}

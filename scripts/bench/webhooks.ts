/** Outgoing webhooks: what a subscription costs a change, the worker's throughput and change-to-receipt latency. */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { pino } from 'pino';
import { createApp } from '../../src/app.js';
import { createSecretBox } from '../../src/auth/secrets.js';
import type { OpenDatabase } from '../../src/db/connect.js';
import type { Database } from '../../src/db/database.js';
import type { WorkerOptions } from '../../src/webhooks/worker.js';
import { atLeast, autocannon, below, clock, connections, listen, loadPair, print, quantile, reported, seconds, type Check, type Result, type Target } from './harness.js';
import { insertEventsInBulk, type Stack } from './seed.js';
import { floorServer } from './shapes.js';

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

export interface WebhookStack extends Stack {
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
export async function benchWebhooks(stack: WebhookStack, results: Result[]): Promise<Check[]> {
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

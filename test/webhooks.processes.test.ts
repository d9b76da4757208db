/**
 * Webhook delivery across real server processes (src/server.ts, each in a process group of its own)
 * on one PostgreSQL database: two processes deliver 1,000 events between them exactly once, signed
 * (checked with the `standardwebhooks` package); a process killed (SIGKILL) while its deliveries are
 * in flight loses none of them — another process sends them, with the same webhook-id, once their
 * lease has run out; a process stopped (SIGTERM) with deliveries still pending sends them after its
 * restart. PostgreSQL only (TEST_DATABASE_URL): the embedded database allows one process. Linux only
 * where a delivery is traced to the process that sent it (/proc).
 *
 * The process killed is told to take a short lease (WEBHOOKS_LEASE_MS, read by src/config.ts), so that
 * the wait for it fits in a test; the others keep the default. A server that ignores the setting fails
 * that test at once, and says so.
 *
 * The tests wait for what must happen (deliveries, rows, exits) as long as they may run, and hold no
 * duration to a ceiling: how fast two busy cores deliver is the bench's business, not theirs.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { openPostgres, type OpenDatabase } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { checkResponse, operations } from './support/contract.js';
import { createPostgresDatabase, postgresUrl } from './support/database.js';
import { createTeamWorld } from './support/factories.js';
import { waitFor } from './support/processes.js';
import {
  killServerProcess,
  ownerOfConnection,
  signalGroup,
  startServerProcess,
  stopServerProcess,
  type ServerProcess,
} from './support/serverProcess.js';

/** The lease of the process the test kills: longer than any delivery here takes, short enough to wait out. */
const leaseMs = 4_000;
const changes = 1_000;
const parallelRequests = 12;
/** Each test's own limit, which is also how long any of its waits may last. */
const testMs = 90_000;

interface Delivery {
  webhookId: string;
  raw: string;
  headers: IncomingHttpHeaders;
  event: { type: string; timestamp: string; data: { orgId: string; teamId: string | null; object: any } };
  /** Date.now() when the whole request had come. */
  at: number;
  /** The server process that sent it (found from the connection); undefined if none of ours. */
  from: string | undefined;
  /** The status it was answered with; undefined while held, or when its connection closed unanswered. */
  status: number | undefined;
  /** Its connection closed before it was answered (the sender died). */
  dropped: boolean;
  release(status: number): void;
}

interface ProcessReceiver {
  url: string;
  deliveries: Delivery[];
  /** Deliveries it says yes to are held: neither answered nor refused until released. */
  holdIf: ((delivery: Delivery) => boolean) | undefined;
  /** The status the others are answered with at once. */
  status: number;
  close(): Promise<void>;
}

/** A webhook receiver on loopback that knows which server process sent each delivery, and can hold deliveries unanswered. */
async function startProcessReceiver(servers: () => readonly ServerProcess[]): Promise<ProcessReceiver> {
  const owners = new WeakMap<Socket, string | undefined>();
  let port = 0;
  const receiver = { deliveries: [] as Delivery[], holdIf: undefined, status: 204 } as ProcessReceiver;
  const server: Server = createServer((req, res) => {
    // Asked at once, while the sender's end of the connection surely exists; once per connection.
    if (!owners.has(req.socket)) owners.set(req.socket, ownerOfConnection(req.socket.remotePort!, port, servers())?.name);
    const from = owners.get(req.socket);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const delivery: Delivery = {
        webhookId: String(req.headers['webhook-id']),
        raw,
        headers: req.headers,
        event: JSON.parse(raw),
        at: Date.now(),
        from,
        status: undefined,
        dropped: false,
        release(status) {
          if (delivery.status !== undefined || delivery.dropped) return;
          delivery.status = status;
          res.writeHead(status).end();
        },
      };
      res.on('close', () => {
        if (delivery.status === undefined) delivery.dropped = true;
      });
      receiver.deliveries.push(delivery);
      if (!receiver.holdIf?.(delivery)) delivery.release(receiver.status);
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${port}/hooks`;
  receiver.close = async () => {
    server.closeAllConnections();
    await new Promise((closed) => server.close(closed));
  };
  return receiver;
}

const delivered = (delivery: Delivery) => delivery.status !== undefined && delivery.status >= 200 && delivery.status < 300;

/** Deliveries of `task.created` grouped by the created task's id. */
function byTask(deliveries: readonly Delivery[]): Map<string, Delivery[]> {
  const grouped = new Map<string, Delivery[]>();
  for (const delivery of deliveries) {
    if (delivery.event.type !== 'task.created') continue;
    const id = delivery.event.data.object.id as string;
    grouped.set(id, [...(grouped.get(id) ?? []), delivery]);
  }
  return grouped;
}

/** Every request per webhook-id, for ids seen more than once: what a failure shows. */
function repeated(deliveries: readonly Delivery[]) {
  const perId = new Map<string, Delivery[]>();
  for (const delivery of deliveries) perId.set(delivery.webhookId, [...(perId.get(delivery.webhookId) ?? []), delivery]);
  return [...perId.entries()]
    .filter(([, list]) => list.length > 1)
    .map(([id, list]) => ({ id, requests: list.map((d) => ({ from: d.from, status: d.status, dropped: d.dropped, msAfterEvent: d.at - Date.parse(d.event.timestamp) })) }));
}

const log = (message: string) => console.info(`[webhooks.processes] ${message}`);

describe.skipIf(!postgresUrl)('webhook delivery across server processes on one PostgreSQL (PostgreSQL only: PGlite allows one process)', () => {
  let database: { url: string; drop(): Promise<void> } | undefined;
  let direct: OpenDatabase | undefined;
  let receiver: ProcessReceiver | undefined;
  let env: Record<string, string>;
  /** Every process started, running or not: afterAll stops what still runs. */
  const started: ServerProcess[] = [];
  const running = () => started.filter((server) => server.running());
  let secret: string;
  let key: string;
  let ownerId: string;
  let teamId: string;

  /** A server process on the test's database, in `started` from the moment it exists (it may deliver before it answers /healthz). */
  const start = (name: string, extraEnv: Record<string, string> = {}) =>
    startServerProcess(name, { ...env, ...extraEnv }, { onSpawn: (server) => started.push(server) });

  function verified(delivery: Delivery) {
    return new Webhook(secret).verify(delivery.raw, delivery.headers as Record<string, string>);
  }

  async function createTask(server: ServerProcess, n: number): Promise<string> {
    const response = await fetch(`${server.url}/v1/teams/${teamId}/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: `Process delivery ${n}`, ownerId, dueDate: '2026-12-01' }),
    });
    const body = await response.json();
    if (response.status !== 201) throw new Error(`${server.name} answered ${response.status}: ${JSON.stringify(body)}`);
    return body.id as string;
  }

  /** `count` tasks, the n-th sent to `servers[n % servers.length]`, `parallel` requests at a time; their ids. */
  async function createTasks(count: number, servers: readonly ServerProcess[], parallel = parallelRequests): Promise<string[]> {
    const ids: string[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(parallel, count) }, async () => {
        while (next < count) {
          const n = next++;
          ids.push(await createTask(servers[n % servers.length]!, n));
        }
      }),
    );
    return ids;
  }

  async function deliveryRows(eventIds: readonly string[]) {
    if (eventIds.length === 0) return [];
    return direct!.db
      .selectFrom('webhook_deliveries')
      .select(['event_id', 'state', 'attempt_count', 'next_attempt_at', 'lease_until'])
      .where('event_id', 'in', eventIds)
      .execute();
  }

  const quietOutput = (server: ServerProcess) => expect(server.output(), server.name).not.toMatch(/could not|uncaught|unhandled|fatal/i);

  beforeAll(async () => {
    database = await createPostgresDatabase('teamos_webhook_processes');
    direct = await openPostgres(database.url);
    // Migrated here (the servers then find nothing to do), so that the people exist before they start.
    await migrateToLatest(direct.db);
    const world = await createTeamWorld(direct.db);
    const owner = await world.person('OWNER', 'ADMIN');
    key = owner.key;
    ownerId = owner.user.id;
    teamId = world.team.id;

    env = { DATABASE_URL: database.url, SECRETS_KEY: randomBytes(32).toString('hex'), WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' };
    const startedAt = Date.now();
    const [a] = await Promise.all([start('server A'), start('server B')]);
    log(`two server processes answered /healthz after ${Date.now() - startedAt} ms`);

    receiver = await startProcessReceiver(() => started);
    const created = await fetch(`${a.url}/v1/orgs/${world.org.id}/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, events: ['task.created'] }),
    });
    const subscription = await created.json();
    expect(created.status, JSON.stringify(subscription)).toBe(201);
    secret = subscription.secret;
    await waitFor('the webhook.ping', () => receiver!.deliveries.some((delivery) => delivery.event.type === 'webhook.ping' && delivered(delivery)), testMs);
  }, testMs);

  afterAll(async () => {
    // Every process still running, through its group: SIGTERM, SIGKILL after 5 s.
    await Promise.all(started.map((server) => stopServerProcess(server, 5_000)));
    for (const server of started) signalGroup(server, 'SIGKILL');
    await receiver?.close();
    await direct?.close();
    await database?.drop();
  }, 30_000);

  it('two processes deliver 1,000 events between them: every one exactly once, signed', async () => {
    const servers = running();
    expect(servers.map((server) => server.name).sort()).toEqual(['server A', 'server B']);
    const [ping] = receiver!.deliveries;
    expect(verified(ping!)).toEqual(ping!.event);
    const before = receiver!.deliveries.length;

    const startedAt = Date.now();
    const taskIds = await createTasks(changes, servers);
    const requestsDoneAt = Date.now();
    expect(new Set(taskIds).size).toBe(changes);
    const deliveredIds = () => new Set(receiver!.deliveries.slice(before).filter(delivered).map((delivery) => delivery.webhookId));
    await waitFor(`${changes} task.created deliveries`, () => deliveredIds().size >= changes, testMs).catch((error: Error) => {
      throw new Error(`${error.message}: ${deliveredIds().size} came`);
    });
    const allDeliveredAt = Date.now();
    // Long enough for a second delivery of anything to show: several polls of both workers.
    await new Promise((wait) => setTimeout(wait, 1_500));

    const deliveries = receiver!.deliveries.slice(before);
    // Exactly once: one request per webhook-id, each answered 2xx (none dropped); one per created task.
    expect(repeated(deliveries)).toEqual([]);
    expect(deliveries).toHaveLength(changes);
    expect(deliveries.filter((delivery) => !delivered(delivery))).toEqual([]);
    expect([...byTask(deliveries).keys()].sort()).toEqual([...taskIds].sort());
    // Each signed as Standard Webhooks says.
    for (const delivery of deliveries) {
      expect(verified(delivery)).toEqual(delivery.event);
      expect(delivery.event.type).toBe('task.created');
    }

    // Both workers took part, and the database agrees: one attempt each, all delivered.
    const sentBy = Object.fromEntries(servers.map((server) => [server.name, deliveries.filter((d) => d.from === server.name).length]));
    expect(Object.values(sentBy).reduce((sum, n) => sum + n, 0), 'every delivery traced to its process').toBe(changes);
    expect(Object.values(sentBy).every((n) => n > 0), JSON.stringify(sentBy)).toBe(true);
    const eventIds = deliveries.map((delivery) => delivery.webhookId);
    const rows = await deliveryRows(eventIds);
    expect(rows).toHaveLength(changes);
    expect(rows.filter((row) => row.state !== 'DELIVERED' || row.attempt_count !== 1)).toEqual([]);
    const attempts = await sql<{ n: number }>`
      select count(*)::int as n from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
      where d.event_id = any(${eventIds}::text[])`.execute(direct!.db);
    expect(attempts.rows[0]!.n).toBe(changes);

    const lastArrival = Math.max(...deliveries.map((d) => d.at));
    const lag = Math.max(...deliveries.map((d) => d.at - Date.parse(d.event.timestamp)));
    log(
      `${changes} changes answered in ${requestsDoneAt - startedAt} ms; all delivered ${Math.max(0, lastArrival - requestsDoneAt)} ms after the last answer ` +
        `(longest change-to-delivery ${lag} ms, all of them ${allDeliveredAt - requestsDoneAt} ms after the last answer); sent by ${JSON.stringify(sentBy)}`,
    );
    servers.forEach(quietOutput);
  }, testMs);

  it('a process killed (SIGKILL) with deliveries in flight loses none: another sends them, same webhook-id, once its lease ran out', async () => {
    const survivors = running();
    expect(survivors).toHaveLength(2);
    const victim = await start('server C', { WEBHOOKS_LEASE_MS: String(leaseMs) });
    const before = receiver!.deliveries.length;
    // What the victim sends is held unanswered, and it is killed once a burst of changes has been
    // answered: it dies with deliveries in flight and their lease, taken just before it sent, still running.
    // What it sent while dying can no longer be traced to it: whatever no survivor sent is its.
    const survivorNames = survivors.map((server) => server.name);
    const fromVictim = (delivery: Delivery) => !survivorNames.includes(delivery.from!);
    receiver!.holdIf = fromVictim;
    onTestFinished(() => {
      receiver!.holdIf = undefined;
      for (const delivery of receiver!.deliveries.slice(before)) delivery.release(204);
    });
    const held = () => receiver!.deliveries.slice(before).filter(fromVictim);

    // Bursts of changes made through the victim: its own commit wakes its fan-out within a few
    // milliseconds and it claims at once, where the survivors only poll (made through the survivors,
    // their own wake-ups won every claim of 300 changes on a busy machine). Every worker still claims
    // from the one database: a survivor's poll may take some.
    const taskIds: string[] = [];
    for (let burst = 0; burst < 20 && held().length === 0; burst += 1) {
      taskIds.push(...(await createTasks(15, [victim], 15)));
      await waitFor('the burst to arrive', () => held().length > 0 || byTask(receiver!.deliveries.slice(before)).size >= taskIds.length, testMs);
    }
    expect(held().length, `${victim.name} claimed none of ${taskIds.length} deliveries`).toBeGreaterThan(0);
    const killedAt = Date.now();
    expect(await killServerProcess(victim)).toEqual({ code: null, signal: 'SIGKILL' });
    const victims = held();

    // It took the lease it was told to take (WEBHOOKS_LEASE_MS), else waiting it out makes no sense.
    const leases = await deliveryRows(victims.map((d) => d.webhookId));
    const longest = Math.max(...leases.map((row) => (row.lease_until ? row.lease_until.getTime() - Date.now() : 0)));
    if (longest > leaseMs + 1_000) {
      throw new Error(
        `${victim.name} leased deliveries for about ${Math.round(longest / 1000)} s, not the ${leaseMs} ms of WEBHOOKS_LEASE_MS: ` +
          'the server does not pass the setting to its delivery worker',
      );
    }

    await waitFor('the killed process’s connections to close', () => victims.every((d) => d.dropped), testMs);
    await waitFor(
      `every change of the bursts delivered (${victims.length} of them held by the killed process)`,
      () => [...byTask(receiver!.deliveries.slice(before)).values()].filter((list) => list.some(delivered)).length >= taskIds.length,
      testMs,
    );
    const allBackAt = Date.now();
    // Long enough for a second delivery of anything to show (too short only hides one; it never fails a sound server).
    await new Promise((wait) => setTimeout(wait, 1_500));

    const deliveries = receiver!.deliveries.slice(before);
    const tasks = byTask(deliveries);
    expect([...tasks.keys()].sort()).toEqual([...taskIds].sort());
    // Exactly once each: one 2xx per change, and no request but the dropped ones of the killed process besides.
    for (const list of tasks.values()) {
      expect(list.filter(delivered)).toHaveLength(1);
      expect(list.filter((d) => !delivered(d)).every((d) => d.dropped && fromVictim(d))).toBe(true);
    }
    for (const delivery of victims) {
      const [again, ...more] = deliveries.filter((d) => d.webhookId === delivery.webhookId && d !== delivery);
      expect(more).toEqual([]);
      expect(again).toMatchObject({ status: 204, raw: delivery.raw });
      expect(survivorNames).toContain(again!.from);
      expect(verified(again!)).toEqual(delivery.event);
      // Not before the lease the killed process took had run out (taken just before it sent).
      expect(again!.at - delivery.at).toBeGreaterThanOrEqual(leaseMs - 1_000);
    }
    // One attempt recorded each: the killed process recorded none of what it held.
    const rows = await deliveryRows([...new Set(deliveries.map((d) => d.webhookId))]);
    expect(rows).toHaveLength(taskIds.length);
    expect(rows.filter((row) => row.state !== 'DELIVERED' || row.attempt_count !== 1)).toEqual([]);
    const redelivered = victims.map((d) => deliveries.find((again) => again.webhookId === d.webhookId && again !== d)!.at - killedAt);
    log(
      `${victim.name} (lease ${leaseMs} ms) killed holding ${victims.length} of ${taskIds.length} deliveries; ` +
        `${survivorNames.join(' and ')} sent them again ${Math.min(...redelivered)}–${Math.max(...redelivered)} ms after the kill ` +
        `(everything delivered ${allBackAt - killedAt} ms after it)`,
    );
    survivors.forEach(quietOutput);
  }, testMs);

  it('a process stopped (SIGTERM) with deliveries pending sends them after its restart, with the same webhook-id', async () => {
    // One process left; stop any other.
    const [server, ...others] = running();
    expect(server).toBeDefined();
    await Promise.all(others.map((other) => stopServerProcess(other)));
    const pending = 8;
    const before = receiver!.deliveries.length;
    receiver!.status = 503;
    onTestFinished(() => void (receiver!.status = 204));
    const taskIds = await createTasks(pending, [server!], pending);
    await waitFor(`${pending} first attempts answered 503`, () => byTask(receiver!.deliveries.slice(before)).size >= pending, testMs);
    const first = [...byTask(receiver!.deliveries.slice(before)).values()].map((list) => list[0]!);
    expect(new Set(first.map((d) => d.event.data.object.id))).toEqual(new Set(taskIds));
    expect(first.map((d) => d.status)).toEqual(first.map(() => 503));
    const eventIds = first.map((d) => d.webhookId);
    await waitFor(
      'the 503s to be recorded',
      async () => (await deliveryRows(eventIds)).every((row) => row.state === 'PENDING' && row.attempt_count >= 1 && row.lease_until === null),
      testMs,
    );

    const stoppingAt = Date.now();
    expect(await stopServerProcess(server!), server!.output()).toEqual({ code: 0, signal: null });
    const stoppedMs = Date.now() - stoppingAt;
    quietOutput(server!);
    const waiting = await deliveryRows(eventIds);
    expect(waiting.every((row) => row.state === 'PENDING' && row.next_attempt_at !== null)).toBe(true);
    const dueAt = new Map(waiting.map((row) => [row.event_id, row.next_attempt_at!.getTime()]));

    receiver!.status = 204;
    const restartingAt = Date.now();
    const restarted = await start(`${server!.name} (restarted)`);
    const restartMs = Date.now() - restartingAt;
    const again = (delivery: Delivery) => receiver!.deliveries.find((d) => d !== delivery && d.webhookId === delivery.webhookId && delivered(d));
    await waitFor(`the ${pending} pending deliveries after the restart`, () => first.every(again), testMs);
    // Long enough for a second delivery of anything to show (too short only hides one; it never fails a sound server).
    await new Promise((wait) => setTimeout(wait, 1_000));

    const rows = await deliveryRows(eventIds);
    const attempts = new Map(rows.map((row) => [row.event_id, row.attempt_count]));
    for (const delivery of first) {
      // Answered 503 until the stop (a slow machine may reach a retry before it), then 204 once, after the restart.
      const all = receiver!.deliveries.slice(before).filter((d) => d.webhookId === delivery.webhookId);
      const last = all.at(-1)!;
      expect(all.map((d) => d.status)).toEqual([...all.slice(0, -1).map(() => 503), 204]);
      expect(all.slice(0, -1).every((d) => d.from === server!.name)).toBe(true);
      expect(last).toMatchObject({ from: restarted.name, raw: delivery.raw });
      expect(verified(last)).toEqual(delivery.event);
      expect(attempts.get(delivery.webhookId)).toBe(all.length);
      // On the retry schedule, not early.
      expect(last.at).toBeGreaterThanOrEqual(dueAt.get(delivery.webhookId)! - 50);
    }
    expect(rows.map((row) => row.state)).toEqual(rows.map(() => 'DELIVERED'));
    log(
      `SIGTERM stopped ${server!.name} in ${stoppedMs} ms (exit 0) with ${pending} deliveries pending; restarted in ${restartMs} ms; ` +
        `all delivered ${Math.max(...first.map((d) => again(d)!.at)) - restartingAt} ms after the restart began ` +
        `(their retries were due ${Math.max(...dueAt.values()) - restartingAt} ms after it)`,
    );
    quietOutput(restarted);
  }, testMs);
});

/**
 * The takeover after a hard kill, on two server processes that both take a short lease
 * (WEBHOOKS_LEASE_MS), renewed while a delivery is sent. The receiver holds the first request of
 * every event unanswered, so the process that sent it (found from its connection) is mid-delivery
 * for as long as the test wants: it is the holder, the other one the bystander.
 *
 * Nothing here is timed against the machine. A renewal that never came shows as a second request
 * while the first is still open (the bystander, and the holder itself, claim a delivery whose lease
 * ran out within a poll); a lease that outlived its process beyond one lease shows in the row the
 * process died with; the takeover is only held to come no sooner than that lease's end.
 */
describe.skipIf(!postgresUrl)('a process killed mid-delivery: its claim is free again within one renewed lease, and the log says what it cut (PostgreSQL only: PGlite allows one process)', () => {
  /** Renewed every 2 s: a renewal may come 4 s late before the lease is lost. */
  const renewedLeaseMs = 6_000;
  /** The worker's timeout for an answer (src/webhooks/worker.ts), which the contract promises. */
  const answerTimeoutMs = 15_000;
  const outcomeUnknown = 'outcome unknown: the sending server stopped before it recorded the answer';
  const listDeliveries = operations.find((op) => op.operationId === 'listWebhookDeliveries')!;
  let database: { url: string; drop(): Promise<void> } | undefined;
  let direct: OpenDatabase | undefined;
  let receiver: ProcessReceiver | undefined;
  const started: ServerProcess[] = [];
  let secret: string;
  let key: string;
  let ownerId: string;
  let teamId: string;
  let webhookId: string;

  const quietOutput = (server: ServerProcess) => expect(server.output(), server.name).not.toMatch(/could not|uncaught|unhandled|fatal/i);
  const requestsFor = (webhookId: string) => receiver!.deliveries.filter((delivery) => delivery.webhookId === webhookId);

  async function createTask(server: ServerProcess): Promise<string> {
    const response = await fetch(`${server.url}/v1/teams/${teamId}/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Held delivery', ownerId, dueDate: '2026-12-01' }),
    });
    const body = await response.json();
    expect(response.status, JSON.stringify(body)).toBe(201);
    return body.id as string;
  }

  /** A change made through one process and the first request of its event, held; who sent it holds the delivery. */
  async function heldChange() {
    const taskId = await createTask(started[0]!);
    let first: Delivery | undefined;
    await waitFor('the first request of the change’s event', () => {
      first = receiver!.deliveries.find((delivery) => delivery.event.type === 'task.created' && delivery.event.data.object.id === taskId);
      return first !== undefined;
    }, testMs);
    const holder = started.find((server) => server.name === first!.from);
    const bystander = started.find((server) => server !== holder && server.running());
    expect(holder, `the first request came from ${first!.from}`).toBeDefined();
    return { first: first!, holder: holder!, bystander: bystander! };
  }

  async function deliveryRow(eventId: string) {
    return direct!.db
      .selectFrom('webhook_deliveries')
      .select(['state', 'attempt_count', 'lease_until', 'lease_token'])
      .where('event_id', '=', eventId)
      .executeTakeFirstOrThrow();
  }

  /** The event's delivery as GET /webhooks/{webhookId}/deliveries lists it through `server`, checked against the contract. */
  async function listed(server: ServerProcess, eventId: string) {
    const response = await fetch(`${server.url}/v1/webhooks/${webhookId}/deliveries?limit=200`, { headers: { authorization: `Bearer ${key}` } });
    const body = await response.json();
    const check = checkResponse(listDeliveries, response.status, response.headers.get('content-type'), body);
    expect(check.problems).toEqual([]);
    expect(response.status).toBe(200);
    return (body.data as { eventId: string; state: string; attempts: Record<string, unknown>[] }[]).find((delivery) => delivery.eventId === eventId)!;
  }

  beforeAll(async () => {
    database = await createPostgresDatabase('teamos_webhook_takeover');
    direct = await openPostgres(database.url);
    await migrateToLatest(direct.db);
    const world = await createTeamWorld(direct.db);
    const owner = await world.person('OWNER', 'ADMIN');
    key = owner.key;
    ownerId = owner.user.id;
    teamId = world.team.id;
    const env = {
      DATABASE_URL: database.url,
      SECRETS_KEY: randomBytes(32).toString('hex'),
      WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOKS_LEASE_MS: String(renewedLeaseMs),
    };
    const [p] = await Promise.all(
      ['server P', 'server Q'].map((name) => startServerProcess(name, env, { onSpawn: (server) => started.push(server) })),
    );
    receiver = await startProcessReceiver(() => started);
    // The first request of each event is held; any later one is answered 204 at once.
    receiver.holdIf = (delivery) => delivery.event.type === 'task.created' && requestsFor(delivery.webhookId).length === 1;
    const created = await fetch(`${p!.url}/v1/orgs/${world.org.id}/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, events: ['task.created'] }),
    });
    const subscription = await created.json();
    expect(created.status, JSON.stringify(subscription)).toBe(201);
    ({ id: webhookId, secret } = subscription);
    await waitFor('the webhook.ping', () => receiver!.deliveries.some((delivery) => delivery.event.type === 'webhook.ping' && delivered(delivery)), testMs);
  }, testMs);

  afterAll(async () => {
    for (const delivery of receiver?.deliveries ?? []) delivery.release(204);
    await Promise.all(started.map((server) => stopServerProcess(server, 5_000)));
    for (const server of started) signalGroup(server, 'SIGKILL');
    await receiver?.close();
    await direct?.close();
    await database?.drop();
  }, 30_000);

  it('a process whose endpoint never answers keeps the delivery until its 15 s timeout: it renews the lease, and no process sends it meanwhile', async () => {
    const { first, holder, bystander } = await heldChange();
    const claimed = await deliveryRow(first.webhookId);
    // Being sent: not listed among the attempts yet.
    expect(await listed(bystander, first.webhookId)).toMatchObject({ state: 'PENDING', attempts: [] });

    await waitFor('the lease first taken to run out', () => Date.now() > claimed.lease_until!.getTime(), testMs);
    const renewed = await deliveryRow(first.webhookId);
    expect(renewed.lease_token, 'still the first claim').toBe(claimed.lease_token);
    expect(renewed.lease_until!.getTime()).toBeGreaterThan(claimed.lease_until!.getTime());

    await waitFor('the timed-out attempt and its retry', async () => (await deliveryRow(first.webhookId)).state === 'DELIVERED', testMs);
    const requests = requestsFor(first.webhookId);
    // One request until the holder gave up on it, then the retry of the schedule: nobody took it over.
    expect(requests.map((request) => request.status)).toEqual([undefined, 204]);
    expect(requests[1]!.raw).toBe(first.raw);
    expect((await deliveryRow(first.webhookId)).attempt_count).toBe(2);
    const { attempts } = await listed(bystander, first.webhookId);
    expect(attempts).toMatchObject([
      { statusCode: null, error: `timeout after ${answerTimeoutMs / 1000} s`, responseBody: null },
      { statusCode: 204, error: null },
    ]);
    expect(requests[1]!.at).toBeGreaterThanOrEqual(Date.parse(String(attempts[0]!.attemptedAt)) + answerTimeoutMs);
    // The one attempt lasted longer than two leases.
    expect(attempts[0]!.latencyMs).toBeGreaterThan(2 * renewedLeaseMs);
    log(`${holder.name} (lease ${renewedLeaseMs} ms) held a delivery ${requests[1]!.at - first.at} ms until its timeout and retry; nobody took it over`);
    started.forEach(quietOutput);
  }, testMs);

  it('a process killed (SIGKILL) mid-delivery frees it within one lease: the other sends it again, same webhook-id, and the log shows the cut attempt as outcome unknown', async () => {
    const { first, holder: victim, bystander: survivor } = await heldChange();
    const claimed = await deliveryRow(first.webhookId);
    // Killed once it has renewed its claim: it dies holding a lease it renewed, not the first one.
    await waitFor('the lease to be renewed', async () => (await deliveryRow(first.webhookId)).lease_until!.getTime() > claimed.lease_until!.getTime(), testMs);
    expect(await killServerProcess(victim)).toEqual({ code: null, signal: 'SIGKILL' });
    const killedAt = Date.now();
    const atDeath = await deliveryRow(first.webhookId);
    expect(atDeath.lease_token).toBe(claimed.lease_token);
    // The claim outlives its process by one lease at most, however long the delivery had been running.
    const freeAt = atDeath.lease_until!.getTime();
    expect(freeAt).toBeLessThanOrEqual(killedAt + renewedLeaseMs);

    await waitFor('the killed process’s connection to close', () => first.dropped, testMs);
    await waitFor('the survivor to deliver the event', () => requestsFor(first.webhookId).some(delivered), testMs);
    const [, again, ...more] = requestsFor(first.webhookId);
    expect(more).toEqual([]);
    expect(again).toMatchObject({ from: survivor.name, status: 204, raw: first.raw });
    expect(new Webhook(secret).verify(again!.raw, again!.headers as Record<string, string>)).toEqual(first.event);
    // Not while the lease the killed process renewed still held.
    expect(again!.at).toBeGreaterThanOrEqual(freeAt);

    await waitFor('the survivor’s attempt to be recorded', async () => (await deliveryRow(first.webhookId)).state === 'DELIVERED', testMs);
    const listing = await listed(survivor, first.webhookId);
    expect(listing.attempts).toMatchObject([
      { statusCode: null, latencyMs: 0, error: outcomeUnknown, responseBody: null },
      { statusCode: 204, error: null },
    ]);
    expect(Date.parse(String(listing.attempts[0]!.attemptedAt))).toBeLessThanOrEqual(first.at);
    expect(Date.parse(String(listing.attempts[1]!.attemptedAt))).toBeGreaterThanOrEqual(freeAt);
    log(
      `${victim.name} (lease ${renewedLeaseMs} ms, renewed) killed ${killedAt - first.at} ms into a delivery; its claim was free ${freeAt - killedAt} ms ` +
        `after the kill and ${survivor.name} sent the event again ${again!.at - killedAt} ms after it`,
    );
    quietOutput(survivor);
  }, testMs);
});

/**
 * The event log fanned out by two real server processes (src/server.ts, each in a process group of
 * its own) on one PostgreSQL database: with several subscriptions and a burst of changes made through
 * both, each subscription gets each event it asked for exactly once, counted by `webhook-id` at
 * receivers that deduplicate nothing. PostgreSQL only (TEST_DATABASE_URL): the embedded database
 * allows one process.
 *
 * Nothing waits a fixed time: the test waits until every event came, then stops both processes
 * (SIGTERM: a worker sends what it holds before it exits), after which nothing more can come, and
 * counts.
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, type OpenDatabase } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { deliveryBody } from '../src/events/outbox.js';
import { createPostgresDatabase, postgresUrl } from './support/database.js';
import { createTeamWorld } from './support/factories.js';
import { waitFor } from './support/processes.js';
import { startReceiver, type Received, type Receiver } from './support/receiver.js';
import { signalGroup, startServerProcess, stopServerProcess, type ServerProcess } from './support/serverProcess.js';

const tasks = 200;
const parallelRequests = 12;
/** The test's own limit, which is also how long any of its waits may last. */
const testMs = 120_000;

/** What each subscription asks for: every event, or some types. */
const subscribedTo = [['*'], ['task.created'], ['task.created', 'task.updated'], ['task.updated']];

const log = (message: string) => console.info(`[eventLog.processes] ${message}`);

describe.skipIf(!postgresUrl)('the event log fanned out by two server processes on one PostgreSQL (PostgreSQL only: PGlite allows one process)', () => {
  let database: { url: string; drop(): Promise<void> } | undefined;
  let direct: OpenDatabase | undefined;
  const started: ServerProcess[] = [];
  const subscribers: { events: string[]; receiver: Receiver; id: string; secret: string }[] = [];
  let key: string;
  let ownerId: string;
  let orgId: string;
  let teamId: string;

  async function call(server: ServerProcess, method: string, path: string, body: unknown) {
    const response = await fetch(`${server.url}/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const answer = await response.json();
    if (response.status >= 300) throw new Error(`${server.name} answered ${method} ${path} with ${response.status}: ${JSON.stringify(answer)}`);
    return answer;
  }

  beforeAll(async () => {
    database = await createPostgresDatabase('teamos_event_log_processes');
    direct = await openPostgres(database.url);
    await migrateToLatest(direct.db);
    const world = await createTeamWorld(direct.db);
    const owner = await world.person('OWNER', 'ADMIN');
    key = owner.key;
    ownerId = owner.user.id;
    orgId = world.org.id;
    teamId = world.team.id;

    const env = { DATABASE_URL: database.url, SECRETS_KEY: randomBytes(32).toString('hex'), WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' };
    const start = (name: string) => startServerProcess(name, env, { onSpawn: (server) => started.push(server) });
    const servers = await Promise.all([start('server A'), start('server B')]);

    for (const [n, events] of subscribedTo.entries()) {
      const receiver = await startReceiver();
      const created = await call(servers[n % servers.length]!, 'POST', `/orgs/${orgId}/webhooks`, { url: receiver.url, events });
      subscribers.push({ events, receiver, id: created.id, secret: created.secret });
    }
    await waitFor(
      'every subscription’s webhook.ping',
      () => subscribers.every(({ receiver }) => receiver.received.some((received) => received.event.type === 'webhook.ping')),
      testMs,
    );
  }, testMs);

  afterAll(async () => {
    await Promise.all(started.map((server) => stopServerProcess(server, 5_000)));
    for (const server of started) signalGroup(server, 'SIGKILL');
    await Promise.all(subscribers.map(({ receiver }) => receiver.close()));
    await direct?.close();
    await database?.drop();
  }, 30_000);

  it('with four subscriptions and a burst of changes through both processes, each subscription gets each of its events exactly once', async () => {
    const servers = started.filter((server) => server.running());
    expect(servers.map((server) => server.name).sort()).toEqual(['server A', 'server B']);

    // Each of the parallel callers creates a task and changes it, through one process and then the other.
    const startedAt = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: parallelRequests }, async () => {
        while (next < tasks) {
          const n = next++;
          const task = await call(servers[n % 2]!, 'POST', `/teams/${teamId}/tasks`, { title: `Burst ${n}`, ownerId, dueDate: '2026-12-01' });
          await call(servers[(n + 1) % 2]!, 'PATCH', `/tasks/${task.id}`, { completed: true });
        }
      }),
    );
    const answeredAt = Date.now();

    const events = await direct!.db
      .selectFrom('webhook_events')
      .select(['id', 'type', 'event'])
      .where('org_id', '=', orgId)
      .where('type', '<>', 'webhook.ping')
      .execute();
    expect(events.filter((event) => event.type === 'task.created')).toHaveLength(tasks);
    expect(events.filter((event) => event.type === 'task.updated')).toHaveLength(tasks);
    const wanted = (events: string[]) => (type: string) => events.includes('*') || events.includes(type);
    const changesOf = (received: Received[]) => received.filter((delivery) => delivery.event.type !== 'webhook.ping');
    const expected = subscribers.map(({ events: types }) => new Set(events.filter((event) => wanted(types)(event.type)).map((event) => event.id)));

    await waitFor(
      'every subscription to receive each of its events',
      () => subscribers.every(({ receiver }, n) => new Set(changesOf(receiver.received).map((d) => d.headers['webhook-id'])).size >= expected[n]!.size),
      testMs,
    ).catch((error: Error) => {
      throw new Error(`${error.message}: ${subscribers.map(({ receiver }, n) => `${changesOf(receiver.received).length} of ${expected[n]!.size}`).join(', ')}`);
    });
    const deliveredAt = Date.now();
    // Stopped, a worker has sent whatever it held: nothing more can come.
    for (const server of servers) expect(await stopServerProcess(server), server.output()).toEqual({ code: 0, signal: null });

    const bodies = new Map(events.map((event) => [event.id, deliveryBody(event.id, event.event)]));
    for (const [n, { receiver, secret, events: types }] of subscribers.entries()) {
      const received = changesOf(receiver.received);
      const ids = received.map((delivery) => String(delivery.headers['webhook-id']));
      const repeated = ids.filter((id, index) => ids.indexOf(id) !== index);
      expect(repeated, `${JSON.stringify(types)}: webhook-ids received more than once`).toEqual([]);
      expect(new Set(ids), JSON.stringify(types)).toEqual(expected[n]);
      for (const delivery of received) {
        expect(delivery.raw).toBe(bodies.get(String(delivery.headers['webhook-id'])));
        expect(new Webhook(secret).verify(delivery.raw, delivery.headers as Record<string, string>)).toEqual(delivery.event);
      }
    }
    const rows = await direct!.db
      .selectFrom('webhook_deliveries')
      .innerJoin('webhook_events', 'webhook_events.id', 'webhook_deliveries.event_id')
      .select(['webhook_deliveries.state', 'webhook_deliveries.attempt_count'])
      .where('webhook_events.org_id', '=', orgId)
      .where('webhook_events.type', '<>', 'webhook.ping')
      .execute();
    expect(rows).toHaveLength(expected.reduce((sum, ids) => sum + ids.size, 0));
    expect(rows.filter((row) => row.state !== 'DELIVERED' || row.attempt_count !== 1)).toEqual([]);
    log(
      `${tasks * 2} changes answered in ${answeredAt - startedAt} ms; ${rows.length} deliveries to ${subscribers.length} subscriptions, ` +
        `all received ${deliveredAt - answeredAt} ms after the last answer`,
    );
  }, testMs);
});

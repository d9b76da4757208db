/**
 * Outgoing webhooks end to end: subscriptions over HTTP, every changing operation's events arriving at
 * a real receiver, signed as Standard Webhooks says (checked with the `standardwebhooks` package) and
 * shaped as the contract's `webhooks` section says, the outbox's all-or-nothing with its change, and
 * delivery: retries on the schedule (a set clock), Retry-After, 410, rotation and redelivery.
 *
 * No test waits a fixed time for the worker: it waits until the database says every due delivery of
 * the subscription was sent and its answer recorded (`sent`), and the app's clock moves only when a
 * test moves it, so no retry comes due because the machine was slow.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { sql } from 'kysely';
import { createTask as createTaskHandler } from '../src/handlers/tasks.js';
import type { Handler } from '../src/handlers/types.js';
import { claimDue } from '../src/db/queries/webhooks.js';
import { toWebhook, toWebhookDelivery } from '../src/records/webhooks.js';
import { retryDelaysMs } from '../src/rules/webhookDelivery.js';
import { defaultLeaseMs } from '../src/webhooks/worker.js';
import { matrixRows } from './permissions/rows.js';
import { allowedCaller, createWorld, type World } from './permissions/world.js';
import { createDelivery, createWebhook } from './support/areaFactories.js';
import { addOrganizationMember, createCaller, createOrganization } from './support/factories.js';
import { expectPagesAsMapped, trickyInstants, trickyTexts } from './support/jsonBodies.js';
import { createMeetingIn, createMessage } from './support/meetingFactories.js';
import { checkWebhookEvent, operations } from './support/contract.js';
import { createTestDatabase, databaseLabel, type TestDatabase } from './support/database.js';
import { eventObjectOf, eventOf, eventsOf, fannedOut, whereEventsAreDeclared } from './support/eventLog.js';
import { waitFor } from './support/processes.js';
import { startReceiver, type Received, type Receiver } from './support/receiver.js';
import { startTestApp, type TestApp } from './support/testApp.js';


/** Every address a name resolves to here, in the forms Node gives them. */
const addressesOf = async (hostname: string) => (await dnsLookup(hostname, { all: true, verbatim: true })).map(({ address }) => address);

const organizationEvents = /^(organization|organization_member)\./;

const clock = { at: Date.now() };
const now = () => new Date(clock.at);

let database: TestDatabase;
let app: TestApp;
let receiver: Receiver;
let world: World;
let secret: string;
let webhookId: string;

const methodOf = (operationId: string) => operations.find((op) => op.operationId === operationId)!.method.toUpperCase();

/** The suite's limit for a test (vitest.config.ts): a wait for the worker ends with the test, not before. */
const testMs = 30_000;

/**
 * Resolves once the worker has fanned every committed event of the log out into deliveries (a change
 * already answered has its events committed) and no delivery of the subscription is due: each was
 * sent and its answer recorded (the receiver keeps a delivery before it answers), so the receiver has
 * everything it will get until the clock moves.
 */
async function sent(subscriptionId: string) {
  await waitFor('every event fanned out, every due delivery sent and its answer recorded', async () => {
    if (!(await fannedOut(app.db))) return false;
    const due = await app.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('subscription_id', '=', subscriptionId)
      .where('state', '=', 'PENDING')
      .where('next_attempt_at', '<=', now())
      .executeTakeFirst();
    return due === undefined;
  }, testMs);
}

/** Verifies a delivery's signature with the secret, as a receiver would: on the raw body. */
function verified(received: Received, withSecret = secret) {
  return new Webhook(withSecret).verify(received.raw, received.headers as Record<string, string>);
}

async function subscribe(key: string, orgId: string, url: string, events: string[] = ['*']) {
  const response = await app.request('POST', `/v1/orgs/${orgId}/webhooks`, { key, body: { url, events } });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body as { id: string; secret: string };
}

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startTestApp({ database, now, webhooks: { allowPrivateTargets: true, deliver: { listen: database.listen, pollMs: 50 } } });
  receiver = await startReceiver();
  world = await createWorld(app);
  ({ id: webhookId, secret } = await subscribe(world.keys.orgOwner!, world.org.id, receiver.url));
  await sent(webhookId);
});

afterAll(async () => {
  await app.close();
  await receiver.close();
  await database.close();
});

describe(`subscriptions (${databaseLabel})`, () => {
  it('a new subscription answers its whsec_ secret once and gets a signed webhook.ping at once', async () => {
    const [ping] = receiver.received;
    expect(verified(ping!)).toEqual(ping!.event);
    expect(ping!.event).toMatchObject({ type: 'webhook.ping', data: { orgId: world.org.id, teamId: null, object: { webhookId } } });
    expect(checkWebhookEvent(ping!.event).problems).toEqual([]);
    expect(secret).toMatch(/^whsec_/);
    const read = await app.request('GET', `/v1/webhooks/${webhookId}`, { key: world.keys.orgAdmin });
    expect(read.body).not.toHaveProperty('secret');
    const stored = await app.db.selectFrom('webhook_subscriptions').select('secret').where('id', '=', webhookId).executeTakeFirstOrThrow();
    expect(stored.secret).not.toContain(secret.slice(6));
  });
});

describe(`every changing operation's events (${databaseLabel})`, () => {
  const rows = matrixRows.filter((row) => row.variant === undefined && eventOf(row.operationId) !== undefined);
  it.each(rows.map((row) => [row.operationId, row] as const))('%s sends exactly its event, signed, with the resource as the change answered it', async (operationId, row) => {
    const caller = allowedCaller(row);
    const target = row.prepare ? await row.prepare(world) : undefined;
    const { path, body } = row.request(world, target);
    const before = receiver.received.length;
    const response = await app.request(methodOf(operationId), path, { key: world.keys[caller], body });
    expect(response.status, JSON.stringify(response.body)).toBeLessThan(300);

    await sent(webhookId);
    const events = receiver.received.slice(before);
    const where = whereEventsAreDeclared(operationId, eventOf(operationId));
    // Deliveries of one change may arrive in any order.
    expect(events.map((received) => received.event.type).sort(), where).toEqual(eventsOf(operationId).sort());
    const received = events.find((delivered) => delivered.event.type === eventOf(operationId));
    const { event } = received!;
    expect(verified(received!)).toEqual(event);
    expect(received!.headers['webhook-id']).toBeTruthy();
    expect(checkWebhookEvent(event).problems, where).toEqual([]);
    expect(event.data.orgId).toBe(world.org.id);
    if (organizationEvents.test(event.type)) expect(event.data.teamId).toBeNull();
    else expect(event.data.teamId).toEqual(expect.any(String));
    if (response.status !== 204 && !event.type.startsWith('meeting_rating.')) expect(event.data.object).toEqual(eventObjectOf(operationId, response.body));
  });

  it('a rating set to 0 sends meeting_rating.deleted with who and which meeting, never the value', async () => {
    const meeting = await createMeetingIn(app.db, world.team.id, world.users.teamAdmin.id, { status: 'IN_PROGRESS', startedAt: new Date() });
    const before = receiver.received.length;
    const path = `/v1/meetings/${meeting.id}/ratings/${world.users.teamMember.id}`;
    await app.request('PUT', path, { key: world.keys.teamAdmin, body: { rating: 8 } });
    // Sent before the next change, so the two arrive in order (deliveries of one claim go out at once).
    await sent(webhookId);
    expect((await app.request('PUT', path, { key: world.keys.teamAdmin, body: { rating: 0 } })).status).toBe(204);
    await sent(webhookId);
    const events = receiver.received.slice(before).map((received) => received.event);
    expect(events.filter((event) => event.type.startsWith('meeting_rating.')).map((event) => [event.type, event.data.object])).toEqual([
      ['meeting_rating.set', { meetingId: meeting.id, userId: world.users.teamMember.id, revision: expect.any(Number) }],
      ['meeting_rating.deleted', { meetingId: meeting.id, userId: world.users.teamMember.id, revision: expect.any(Number) }],
    ]);
    // Each also changes the meeting's rating summary: its meeting.updated shows no rating while they are hidden.
    const meetings = events.filter((event) => event.type === 'meeting.updated').map((event) => event.data.object);
    expect(meetings.map((object) => [object.rating, object.ratings])).toEqual([
      [{ average: null, ratedCount: 1, absentCount: 0 }, []],
      [{ average: null, ratedCount: 0, absentCount: 0 }, []],
    ]);
  });

  it('a change that changes nothing sends nothing: acknowledging again, creating a vision that exists', async () => {
    const meeting = await createMeetingIn(app.db, world.team.id, world.users.teamAdmin.id, { status: 'IN_PROGRESS' });
    const message = await createMessage(app.db, { id: meeting.id, orgId: world.org.id }, world.users.teamMember.id);
    const before = receiver.received.length;
    const acknowledge = () => app.request('POST', '/v1/messages/acknowledge', { key: world.keys.teamMember, body: { ids: [message.id] } });
    await acknowledge();
    await acknowledge();
    await app.request('POST', `/v1/teams/${world.team.id}/vision`, { key: world.keys.teamAdmin });
    await app.request('POST', `/v1/teams/${world.team.id}/vision`, { key: world.keys.teamAdmin });
    await sent(webhookId);
    const types = receiver.received.slice(before).map((received) => received.event.type);
    expect(types.filter((type) => type === 'cascading_message.acknowledged')).toHaveLength(1);
    expect(types.filter((type) => type === 'vision.created').length).toBeLessThanOrEqual(1);
  });

  it('a refused change sends nothing', async () => {
    const before = receiver.received.length;
    const refused = await app.request('POST', `/v1/teams/${world.team.id}/tasks`, {
      key: world.keys.teamMember,
      body: { title: 'Call Baltic Trade', ownerId: world.users.outsider.id, dueDate: '2026-12-01' },
    });
    expect(refused.status).toBe(422);
    await sent(webhookId);
    expect(receiver.received.length).toBe(before);
  });

  it('a change rolled back after its write emits nothing: no event, no delivery, no task', async () => {
    const failing: Handler<'createTask'> = async (request, context) => {
      await createTaskHandler(request, context);
      throw new Error('failure after the write');
    };
    const broken = await startTestApp({ database, handlers: { createTask: failing } });
    try {
      const count = async () => (await sql<{ n: number }>`select (select count(*) from webhook_events)::int + (select count(*) from tasks)::int as n`.execute(app.db)).rows[0]!.n;
      const before = await count();
      const answer = await broken.request('POST', `/v1/teams/${world.team.id}/tasks`, {
        key: world.keys.teamMember,
        body: { title: 'Never stored', ownerId: world.users.teamMember.id, dueDate: '2026-12-01' },
      });
      expect(answer.status).toBe(500);
      expect(await count()).toBe(before);
    } finally {
      await broken.close();
    }
  });
});

describe(`no server-side request forgery (${databaseLabel})`, () => {
  it('without WEBHOOKS_ALLOW_PRIVATE_TARGETS, a subscription to http or to a loopback, private or link-local target is refused', async () => {
    const strict = await startTestApp({ database, webhooks: { allowPrivateTargets: false } });
    try {
      const refused = ['http://93.184.216.34/hooks', 'https://127.0.0.1/hooks', 'https://10.0.0.1/hooks', 'https://169.254.169.254/latest/meta-data',
        'https://[::1]/hooks', 'https://localhost/hooks'];
      for (const url of refused) {
        const answer = await strict.request('POST', `/v1/orgs/${world.org.id}/webhooks`, { key: world.keys.orgOwner, body: { url, events: ['*'] } });
        expect([url, answer.status, answer.body.error.issues]).toEqual([url, 422, undefined]);
      }
      const changed = await strict.request('PATCH', `/v1/webhooks/${webhookId}`, { key: world.keys.orgOwner, body: { url: 'https://192.168.0.10/hooks' } });
      expect(changed.status).toBe(422);
    } finally {
      await strict.close();
    }
  });

  it('a subscription to a name that resolves to a non-public address is refused without saying the address, created or changed', async () => {
    const strict = await startTestApp({ database, webhooks: { allowPrivateTargets: false } });
    try {
      const created = await strict.request('POST', `/v1/orgs/${world.org.id}/webhooks`, { key: world.keys.orgOwner, body: { url: 'https://localhost/hooks', events: ['*'] } });
      const changed = await strict.request('PATCH', `/v1/webhooks/${webhookId}`, { key: world.keys.orgOwner, body: { url: 'https://localhost/hooks' } });
      for (const answer of [created, changed]) {
        expect(answer.status).toBe(422);
        expect(answer.body.error.message).toBe('The host localhost does not resolve to a public address.');
        for (const address of await addressesOf('localhost')) expect(answer.text).not.toContain(address);
      }
    } finally {
      await strict.close();
    }
  });

  it('a subscription to a name that does not resolve is refused in the same words as one that resolves to a non-public address', async () => {
    const strict = await startTestApp({ database, webhooks: { allowPrivateTargets: false } });
    try {
      // `.invalid` never resolves (RFC 6761); `localhost` always resolves to a loopback address.
      const refusals = [];
      for (const host of ['localhost', 'hooks.invalid']) {
        const answer = await strict.request('POST', `/v1/orgs/${world.org.id}/webhooks`, { key: world.keys.orgOwner, body: { url: `https://${host}/hooks`, events: ['*'] } });
        refusals.push([answer.status, answer.body.error.code, answer.body.error.message.replace(host, '{host}')]);
      }
      expect(refusals[1]).toEqual(refusals[0]);
    } finally {
      await strict.close();
    }
  });
});

describe(`delivery (${databaseLabel})`, () => {
  /** A world of its own, subscribed to task.created at a receiver of its own. */
  async function subscribedWorld() {
    const own = await createWorld(app);
    const ownReceiver = await startReceiver();
    const subscription = await subscribe(own.keys.orgOwner!, own.org.id, ownReceiver.url, ['task.created']);
    await sent(subscription.id);
    ownReceiver.received.length = 0;
    const createTask = () =>
      app.request('POST', `/v1/teams/${own.team.id}/tasks`, {
        key: own.keys.teamMember,
        body: { title: 'Confirm the Gdańsk pickup window', ownerId: own.users.teamMember.id, dueDate: '2026-12-01' },
      });
    // The ping's delivery was made at the same instant of the still clock: only the tasks' are listed.
    const deliveries = async () =>
      (await app.request('GET', `/v1/webhooks/${subscription.id}/deliveries`, { key: own.keys.orgOwner })).body.data.filter(
        (delivery: { eventType: string }) => delivery.eventType === 'task.created',
      );
    return { own, ownReceiver, subscription, createTask, deliveries, sent: () => sent(subscription.id) };
  }

  /** Moves the app's clock and lets the worker look for what came due. */
  async function advance(ms: number) {
    clock.at += ms;
    app.worker!.wake();
  }

  it('a receiver that fails gets the delivery again after 5 s (±10 %), with the same webhook-id, until it answers 2xx', async () => {
    const { ownReceiver, createTask, deliveries, sent } = await subscribedWorld();
    try {
      ownReceiver.answer = () => ({ status: 500, body: 'database is down' });
      await createTask();
      await sent();
      const [first] = ownReceiver.received;
      const [pending] = await deliveries();
      expect(pending).toMatchObject({ state: 'PENDING', eventType: 'task.created' });
      expect(pending.attempts).toMatchObject([{ statusCode: 500, error: null, responseBody: 'database is down' }]);
      const wait = Date.parse(pending.nextAttemptAt) - Date.parse(pending.attempts[0].attemptedAt);
      expect(wait).toBeGreaterThanOrEqual(retryDelaysMs[0] * 0.9);
      expect(wait).toBeLessThanOrEqual(retryDelaysMs[0] * 1.1);

      expect(ownReceiver.received).toHaveLength(1);
      ownReceiver.answer = () => ({ status: 200 });
      await advance(retryDelaysMs[0] * 1.1 + 1000);
      await sent();
      const [, second] = ownReceiver.received;
      expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
      expect(second!.raw).toBe(first!.raw);
      const [delivered] = await deliveries();
      expect(delivered).toMatchObject({ state: 'DELIVERED', nextAttemptAt: null });
      expect(delivered.attempts.map((attempt: { statusCode: number }) => attempt.statusCode)).toEqual([500, 200]);
    } finally {
      await ownReceiver.close();
    }
  });

  it('a retry waits as long as a 429 or 503 asks in Retry-After, when that is longer than the schedule', async () => {
    const { ownReceiver, createTask, deliveries, sent } = await subscribedWorld();
    try {
      ownReceiver.answer = () => ({ status: 429, headers: { 'retry-after': '120' } });
      await createTask();
      await sent();
      const [pending] = await deliveries();
      const wait = Date.parse(pending.nextAttemptAt) - Date.parse(pending.attempts[0].attemptedAt);
      expect(wait).toBeGreaterThanOrEqual(120_000);
      expect(wait).toBeLessThan(121_000);
    } finally {
      await ownReceiver.close();
    }
  });

  it('410 Gone disables the subscription and says why; it then gets no more deliveries', async () => {
    const { own, ownReceiver, subscription, createTask, deliveries, sent } = await subscribedWorld();
    try {
      ownReceiver.answer = () => ({ status: 410 });
      await createTask();
      await sent();
      expect(ownReceiver.received).toHaveLength(1);
      const read = await app.request('GET', `/v1/webhooks/${subscription.id}`, { key: own.keys.orgOwner });
      expect(read.body).toMatchObject({ isActive: false, disabledReason: expect.stringContaining('410') });
      expect((await deliveries())[0]).toMatchObject({ state: 'FAILED', nextAttemptAt: null });
      await createTask();
      await sent();
      expect(await deliveries()).toHaveLength(1);
      expect(ownReceiver.received).toHaveLength(1);
    } finally {
      await ownReceiver.close();
    }
  });

  it('a redirect is not followed and counts as a failure', async () => {
    const { ownReceiver, createTask, deliveries, sent } = await subscribedWorld();
    try {
      ownReceiver.answer = () => ({ status: 307, headers: { location: 'http://127.0.0.1:1/elsewhere' } });
      await createTask();
      await sent();
      expect((await deliveries())[0]).toMatchObject({ state: 'PENDING', attempts: [{ statusCode: 307, error: 'redirect not followed' }] });
    } finally {
      await ownReceiver.close();
    }
  });

  it('after a rotation every delivery is signed with the new and, for 24 hours, the previous secret', async () => {
    const { own, ownReceiver, subscription, createTask, sent } = await subscribedWorld();
    try {
      const rotated = await app.request('POST', `/v1/webhooks/${subscription.id}/rotate-secret`, { key: own.keys.orgOwner });
      expect(rotated.body.secret).not.toBe(subscription.secret);
      await createTask();
      await sent();
      const [received] = ownReceiver.received;
      expect(String(received!.headers['webhook-signature']).split(' ')).toHaveLength(2);
      expect(verified(received!, rotated.body.secret)).toEqual(received!.event);
      expect(verified(received!, subscription.secret)).toEqual(received!.event);

      await advance(24 * 60 * 60 * 1000 + 1000);
      await createTask();
      await sent();
      const [, later] = ownReceiver.received;
      expect(String(later!.headers['webhook-signature']).split(' ')).toHaveLength(1);
      expect(() => verified(later!, subscription.secret)).toThrow();
    } finally {
      await ownReceiver.close();
    }
  });

  it('a redelivery sends the same event again at once, with the same webhook-id', async () => {
    const { own, ownReceiver, subscription, createTask, deliveries, sent } = await subscribedWorld();
    try {
      await createTask();
      await sent();
      const [first] = ownReceiver.received;
      const [delivered] = await deliveries();
      const redelivered = await app.request('POST', `/v1/webhooks/${subscription.id}/deliveries/${delivered.id}/redeliver`, { key: own.keys.orgOwner });
      expect(redelivered.status).toBe(202);
      await sent();
      expect(ownReceiver.received).toHaveLength(2);
      const [, again] = ownReceiver.received;
      expect(again!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
      expect(again!.raw).toBe(first!.raw);
    } finally {
      await ownReceiver.close();
    }
  });

  // Last: it stops the app's worker.
  it('an attempt whose worker died before recording the answer is listed as outcome unknown once another worker takes the delivery over', async () => {
    // A database of its own, so that the worker that dies (this test, claiming) takes this delivery and nothing else.
    const own = await createTestDatabase();
    const ownClock = { at: clock.at };
    const ownReceiver = await startReceiver();
    let survivor: TestApp | undefined;
    try {
      survivor = await startTestApp({
        database: own,
        now: () => new Date(ownClock.at),
        webhooks: { allowPrivateTargets: true, deliver: { listen: own.listen, pollMs: 50 } },
      });
      const org = await createOrganization(own.db);
      const owner = await createCaller(own.db);
      await addOrganizationMember(own.db, org.id, owner.user.id, 'OWNER');
      const subscription = await survivor.request('POST', `/v1/orgs/${org.id}/webhooks`, { key: owner.key, body: { url: ownReceiver.url, events: ['task.created'] } });
      expect(subscription.status).toBe(201);
      const listed = async () =>
        (await survivor!.request('GET', `/v1/webhooks/${subscription.body.id}/deliveries`, { key: owner.key })).body.data as {
          id: string;
          state: string;
          attempts: unknown[];
        }[];
      await waitFor('the ping delivered', async () => (await listed()).some((delivery) => delivery.state === 'DELIVERED'));
      const hour = 60 * 60 * 1000;
      const deliveryId = await createDelivery(own.db, { id: subscription.body.id, org_id: org.id }, { nextAttemptAt: new Date(ownClock.at + hour) });
      const delivery = async () => (await listed()).find((listing) => listing.id === deliveryId)!;

      // A worker claims it an hour ahead and dies before sending: its attempt is written, its answer never.
      const claimedAt = new Date(ownClock.at + hour);
      expect((await claimDue(own.db, { now: claimedAt, leaseMs: defaultLeaseMs, limit: 10 })).map((claimed) => claimed.id)).toEqual([deliveryId]);
      expect(await delivery()).toMatchObject({ state: 'PENDING', attempts: [] });

      ownClock.at += hour + defaultLeaseMs;
      survivor.worker!.wake();
      await waitFor('the delivery taken over, sent and recorded', async () => (await delivery()).state === 'DELIVERED');
      expect(ownReceiver.received).toHaveLength(2);
      expect((await delivery()).attempts).toEqual([
        {
          attemptedAt: claimedAt.toISOString(),
          statusCode: null,
          latencyMs: 0,
          error: 'outcome unknown: the sending server stopped before it recorded the answer',
          responseBody: null,
        },
        { attemptedAt: new Date(ownClock.at).toISOString(), statusCode: 204, latencyMs: expect.any(Number), error: null, responseBody: '' },
      ]);
    } finally {
      await survivor?.close();
      await ownReceiver.close();
      await own.close();
    }
  });

  it('deliveries left when the worker stopped are sent when a server with a worker starts again', async () => {
    const { own, ownReceiver, sent } = await subscribedWorld();
    const quiet = await startTestApp({ database });
    const restarted = { app: undefined as TestApp | undefined };
    try {
      // Closed, it has sent what it had in flight; no other app on the database has a worker.
      await app.worker!.close();
      const made = await quiet.request('POST', `/v1/teams/${own.team.id}/tasks`, {
        key: own.keys.teamMember,
        body: { title: 'Made while no worker ran', ownerId: own.users.teamMember.id, dueDate: '2026-12-01' },
      });
      expect(ownReceiver.received).toHaveLength(0);
      restarted.app = await startTestApp({ database, now, secrets: app.secrets, webhooks: { allowPrivateTargets: true, deliver: { listen: database.listen, pollMs: 50 } } });
      await sent();
      const [received] = ownReceiver.received;
      expect(received!.event.data.object).toEqual(made.body);
    } finally {
      await quiet.close();
      await restarted.app?.close();
      await ownReceiver.close();
    }
  });
});

const tricky = (index: number) => trickyTexts[index % trickyTexts.length]!;

/** An organization of its own, so that its lists hold only what the test made, and its Owner. */
async function ownedOrganization() {
  const org = await createOrganization(app.db);
  const owner = await createCaller(app.db);
  await addOrganizationMember(app.db, org.id, owner.user.id, 'OWNER');
  return { org, owner };
}

describe(`lists written by PostgreSQL (${databaseLabel})`, () => {
  it('GET /orgs/{orgId}/webhooks answers byte for byte what toWebhook writes', async () => {
    const { org, owner } = await ownedOrganization();
    // Each nullable free-text column holds every tricky text in turn.
    const texts = { description: 0, disabledReason: 0 };
    for (let index = 0; index < 12; index += 1) {
      await createWebhook(app.db, org.id, {
        // The contract allows no white space in a URL and only known event types.
        url: `https://hooks.northwind.example/${tricky(index).replace(/\s/g, '')}`,
        events: [['*'], ['task.created'], ['issue.updated', 'task.deleted', '*']][index % 3]!,
        description: index % 4 === 1 ? null : tricky(texts.description++),
        disabledReason: index % 4 === 2 ? null : tricky(texts.disabledReason++),
        // Inactive: the worker delivers nothing of them.
        isActive: false,
        createdAt: trickyInstants[index % trickyInstants.length]!,
        updatedAt: trickyInstants[(index + 2) % trickyInstants.length]!,
      });
    }
    await app.db.updateTable('webhook_subscriptions').set({ is_active: true }).where('org_id', '=', org.id).where('description', 'is', null).execute();
    const rows = await app.db.selectFrom('webhook_subscriptions').selectAll().where('org_id', '=', org.id).orderBy('created_at').orderBy('id').execute();
    expect(new Set(rows.map((row) => row.is_active))).toEqual(new Set([true, false]));
    await expectPagesAsMapped(app, { path: `/v1/orgs/${org.id}/webhooks`, key: owner.key, rows, map: toWebhook, cursorOf: (row) => [row.created_at, row.id] }, 3);
  });

  it('GET /webhooks/{webhookId}/deliveries answers byte for byte what toWebhookDelivery writes, unfiltered and by state', async () => {
    const { org, owner } = await ownedOrganization();
    // Inactive: the worker claims none of its deliveries, so they stay as made.
    const webhook = await createWebhook(app.db, org.id, { isActive: false });
    const states = ['PENDING', 'DELIVERED', 'FAILED'] as const;
    // Each free-text column of the attempts holds every tricky text in turn.
    const texts = { error: 0, responseBody: 0 };
    for (let index = 0; index < 10; index += 1) {
      await createDelivery(app.db, webhook, {
        type: index % 2 ? 'webhook.ping' : 'task.created',
        state: states[index % states.length],
        createdAt: trickyInstants[index % trickyInstants.length]!,
        nextAttemptAt: index % 2 ? null : trickyInstants[(index + 1) % trickyInstants.length]!,
        attempts: Array.from({ length: index % 4 }, (_, n) => ({
          attemptedAt: trickyInstants[(index + n) % trickyInstants.length]!,
          statusCode: n % 2 ? 503 : null,
          latencyMs: 100 * n + index,
          error: n % 2 ? null : tricky(texts.error++),
          responseBody: n === 0 ? null : tricky(texts.responseBody++),
        })),
      });
    }
    expect(Math.min(texts.error, texts.responseBody)).toBeGreaterThanOrEqual(trickyTexts.length);
    const deliveries = await app.db
      .selectFrom('webhook_deliveries')
      .innerJoin('webhook_events', 'webhook_events.id', 'webhook_deliveries.event_id')
      .select([
        'webhook_deliveries.id',
        'webhook_deliveries.subscription_id',
        'webhook_deliveries.event_id',
        'webhook_events.type as event_type',
        'webhook_deliveries.state',
        'webhook_deliveries.created_at',
        'webhook_deliveries.next_attempt_at',
      ])
      .where('webhook_deliveries.subscription_id', '=', webhook.id)
      .orderBy('webhook_deliveries.created_at', 'desc')
      .orderBy('webhook_deliveries.id', 'desc')
      .execute();
    const attempts = await app.db
      .selectFrom('webhook_attempts')
      .selectAll()
      .where('delivery_id', 'in', deliveries.map((row) => row.id))
      .orderBy('attempted_at')
      .orderBy('id')
      .execute();
    const rows = deliveries.map((row) => ({
      ...row,
      attempts: attempts
        .filter((attempt) => attempt.delivery_id === row.id)
        .map((attempt) => ({
          attemptedAt: attempt.attempted_at.toISOString(),
          statusCode: attempt.status_code,
          latencyMs: attempt.latency_ms,
          error: attempt.error,
          responseBody: attempt.response_body,
        })),
    }));
    const list = { key: owner.key, map: toWebhookDelivery, cursorOf: (row: (typeof rows)[number]) => [row.created_at, row.id] };
    await expectPagesAsMapped(app, { ...list, path: `/v1/webhooks/${webhook.id}/deliveries`, rows }, 4);
    await expectPagesAsMapped(app, { ...list, path: `/v1/webhooks/${webhook.id}/deliveries?state=FAILED`, rows: rows.filter((row) => row.state === 'FAILED') }, 2);
  });
});

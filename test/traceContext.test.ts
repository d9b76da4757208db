/**
 * W3C Trace Context: a valid `traceparent` is continued (same trace id, a new span id for this
 * server's span, the same flags), anything else starts a new trace and is never refused; the trace
 * comes back in `traceresponse`, is on the request's log line, and travels with the webhook
 * deliveries of the change the request made.
 */
import { Webhook } from 'standardwebhooks';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseLabel } from './support/database.js';
import { createCaller, createTeamWorld } from './support/factories.js';
import { startReceiver, type Receiver } from './support/receiver.js';
import { send, startTestApp, type TestApp } from './support/testApp.js';
import { capturedLog } from './support/logLines.js';

const { sink, lineWhere } = capturedLog();

const traceresponse = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The trace id, span id and flags of an answer's `traceresponse`. */
function traceOf(headers: Headers) {
  const match = traceresponse.exec(headers.get('traceresponse') ?? '');
  expect(match, `traceresponse: ${headers.get('traceresponse')}`).not.toBeNull();
  return { traceId: match![1]!, spanId: match![2]!, flags: match![3]! };
}

const parent = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' };

/**
 * Headers the recommendation says to ignore, each for its own reason; none may cost the request
 * anything. (fetch refuses control characters, so those cannot be sent.)
 */
const malformed = [
  '',
  'garbage',
  `00-${parent.traceId.toUpperCase()}-${parent.spanId}-01`,
  `00-${'0'.repeat(32)}-${parent.spanId}-01`,
  `00-${parent.traceId}-${'0'.repeat(16)}-01`,
  `ff-${parent.traceId}-${parent.spanId}-01`,
  `00-${parent.traceId}-${parent.spanId}-01-extra`,
  `00-${parent.traceId.slice(1)}-${parent.spanId}-01`,
  `00-${parent.traceId}-${parent.spanId}-1`,
  `00_${parent.traceId}_${parent.spanId}_01`,
  `00-${parent.traceId}-${parent.spanId}-01, 00-${parent.traceId}-${parent.spanId}-01`,
  `0-${parent.traceId}-${parent.spanId}-01`,
  `00-${parent.traceId}-${parent.spanId}-0g`,
  `00-${parent.traceId}-${parent.spanId}-01`.repeat(20),
  'ak_' + 'k'.repeat(43),
  'ÿé',
];

let app: TestApp;
let key: string;
beforeAll(async () => {
  app = await startTestApp({ logger: pino({ level: 'info' }, sink) });
  ({ key } = await createCaller(app.db));
});
afterAll(() => app?.close());

describe(`W3C Trace Context (${databaseLabel})`, () => {
  it('continues the trace of a valid traceparent: the same trace id and flags, a span of its own', async () => {
    for (const flags of ['01', '00']) {
      const response = await app.request('GET', '/v1/me', { key, headers: { traceparent: `00-${parent.traceId}-${parent.spanId}-${flags}` } });
      expect(response.status).toBe(200);
      const trace = traceOf(response.headers);
      expect(trace).toMatchObject({ traceId: parent.traceId, flags });
      expect(trace.spanId).not.toBe(parent.spanId);
      expect(trace.spanId).not.toBe('0'.repeat(16));
    }
  });

  it('reads a later version by its first four fields, keeping only the sampled flag', async () => {
    const response = await app.request('GET', '/v1/me', { key, headers: { traceparent: `01-${parent.traceId}-${parent.spanId}-03-what-comes-next` } });
    expect(response.status).toBe(200);
    expect(traceOf(response.headers)).toMatchObject({ traceId: parent.traceId, flags: '01' });
  });

  it('starts a new trace for a request without traceparent, another for each request, not sampled', async () => {
    const first = traceOf((await app.request('GET', '/v1/me', { key })).headers);
    const second = traceOf((await app.request('GET', '/v1/me', { key })).headers);
    expect(first.traceId).not.toBe(second.traceId);
    expect(first.traceId).not.toBe('0'.repeat(32));
    expect([first.flags, second.flags]).toEqual(['00', '00']);
  });

  it('ignores a malformed traceparent: a new trace, and the answer the request gets without one', async () => {
    const without = await app.request('GET', '/v1/me', { key });
    const unauthenticated = await app.request('GET', '/v1/me');
    for (const traceparent of malformed) {
      const response = await app.request('GET', '/v1/me', { key, headers: { traceparent } });
      expect([response.status, response.text], traceparent).toEqual([without.status, without.text]);
      expect(traceOf(response.headers).traceId, traceparent).not.toBe(parent.traceId);
      const refused = await app.request('GET', '/v1/me', { headers: { traceparent } });
      expect([refused.status, refused.text], traceparent).toEqual([unauthenticated.status, unauthenticated.text]);
    }
  });

  it('answers traceresponse on errors and outside the contract too', async () => {
    for (const [method, path] of [['GET', '/v1/nowhere'], ['DELETE', '/v1/me'], ['GET', '/healthz']] as const) {
      const response = await send(app.url, method, path, { key, headers: { traceparent: `00-${parent.traceId}-${parent.spanId}-01` } });
      expect(traceOf(response.headers).traceId, `${method} ${path}`).toBe(parent.traceId);
    }
  });

  it("puts the trace id on the request's log line: the continued one, or the one it started", async () => {
    await app.request('GET', '/v1/me', { key, headers: { 'x-request-id': 'trace-log-1', traceparent: `00-${parent.traceId}-${parent.spanId}-01` } });
    expect(await lineWhere((line) => line.requestId === 'trace-log-1')).toMatchObject({ msg: 'request', traceId: parent.traceId });

    const started = await app.request('GET', '/v1/me', { key, headers: { 'x-request-id': 'trace-log-2', traceparent: 'malformed' } });
    expect(await lineWhere((line) => line.requestId === 'trace-log-2')).toMatchObject({ msg: 'request', traceId: traceOf(started.headers).traceId });
  });
});

describe(`the trace of a change on its webhook deliveries (${databaseLabel})`, () => {
  let hooked: TestApp;
  let receiver: Receiver;
  beforeAll(async () => {
    hooked = await startTestApp({ database: app.database, webhooks: { allowPrivateTargets: true, deliver: { listen: app.database.listen, pollMs: 50 } } });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await hooked?.close();
    await receiver?.close();
  });

  /** The delivery of `team.created` for the team named `name`, once it has come (the subscription's ping comes too). */
  async function deliveryOfTeam(name: string) {
    for (let count = 1; ; count += 1) {
      const received = await receiver.waitFor(count, 110_000);
      const delivery = received.find((candidate) => candidate.event.type === 'team.created' && candidate.event.data.object.name === name);
      if (delivery) return delivery;
    }
  }

  /** A subscription to `team.created` of a new organization, and its Owner's key. */
  async function subscribed() {
    const world = await createTeamWorld(hooked.db);
    const owner = await world.person('OWNER');
    const created = await hooked.request('POST', `/v1/orgs/${world.org.id}/webhooks`, { key: owner.key, body: { url: receiver.url, events: ['team.created'] } });
    expect(created.status).toBe(201);
    return { orgId: world.org.id, key: owner.key, secret: (created.body as { secret: string }).secret };
  }

  it("sends the change's traceparent with the delivery (this server's span as the parent), the signed body unchanged", { timeout: 120_000 }, async () => {
    const { orgId, key: ownerKey, secret } = await subscribed();
    const change = await hooked.request('POST', `/v1/orgs/${orgId}/teams`, {
      key: ownerKey,
      body: { name: 'Traced team' },
      headers: { traceparent: `00-${parent.traceId}-${parent.spanId}-01` },
    });
    expect(change.status).toBe(201);

    const delivery = await deliveryOfTeam('Traced team');
    expect(delivery.headers.traceparent).toBe(change.headers.get('traceresponse'));
    expect(delivery.headers.traceparent).toMatch(new RegExp(`^00-${parent.traceId}-[0-9a-f]{16}-01$`));
    expect(() => new Webhook(secret).verify(delivery.raw, delivery.headers as Record<string, string>)).not.toThrow();
  });

  it('sends the trace a change without traceparent started', { timeout: 120_000 }, async () => {
    const { orgId, key: ownerKey } = await subscribed();
    const change = await hooked.request('POST', `/v1/orgs/${orgId}/teams`, { key: ownerKey, body: { name: 'Untraced team' } });
    expect(change.status).toBe(201);

    const delivery = await deliveryOfTeam('Untraced team');
    expect(delivery.headers.traceparent).toBe(change.headers.get('traceresponse'));
    expect(traceOf(change.headers).flags).toBe('00');
  });
});

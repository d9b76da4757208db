/**
 * OpenTelemetry tracing, received as a collector receives it: a server on loopback takes the OTLP/HTTP
 * exports (JSON) and keeps their spans. With tracing on, a request is one server span named by its
 * operation id with exactly the request's W3C trace context, each database statement a client span
 * under it (the statement's text, never a value), and each webhook delivery attempt a client span in
 * the trace of the change that caused it. Off, nothing is sent.
 *
 * No test waits for a time: closing an app sends every span it has not sent yet, and the tests read
 * what the collector got once the close is over.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { createSecretBox } from '../src/auth/secrets.js';
import { readConfig } from '../src/config.js';
import type { HandlerMap } from '../src/handlers/types.js';
import { createHttpServer } from '../src/http/httpServer.js';
import { startTracing } from '../src/observability/tracing.js';
import { createPostgresDatabase, createTestDatabase, databaseLabel, postgresUrl, type TestDatabase } from './support/database.js';
import { createTeamWorld } from './support/factories.js';
import { startReceiver, type Received, type Receiver } from './support/receiver.js';
import { startServerProcess, stopServerProcess } from './support/serverProcess.js';
import { assertMatchesContract, send, type ApiResponse, type RequestOptions } from './support/testApp.js';

type AttributeValue = string | number | boolean;

interface ExportedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 2 server, 3 client. */
  kind: number;
  attributes: Record<string, AttributeValue>;
  /** OTLP's status code: 0 unset, 2 error. */
  statusCode: number;
  resource: Record<string, AttributeValue>;
}

const SERVER = 2;
const CLIENT = 3;

interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };
}

const attributesOf = (list: OtlpAttribute[] = []): Record<string, AttributeValue> =>
  Object.fromEntries(
    list.map(({ key, value }) => [key, value.stringValue ?? (value.intValue === undefined ? undefined : Number(value.intValue)) ?? value.boolValue ?? value.doubleValue ?? '']),
  );

interface Collector {
  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT names it. */
  url: string;
  /** The paths exports were sent to. */
  paths: string[];
  spans: ExportedSpan[];
  close(): Promise<void>;
}

/** An OTLP/HTTP collector on loopback keeping the spans of every JSON export; on `port` when given. */
async function startCollector(port = 0): Promise<Collector> {
  const collector = { paths: [] as string[], spans: [] as ExportedSpan[] } as Collector;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      collector.paths.push(req.url ?? '');
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans?: { resource?: { attributes?: OtlpAttribute[] }; scopeSpans?: { spans?: Record<string, unknown>[] }[] }[];
      };
      for (const { resource, scopeSpans = [] } of body.resourceSpans ?? []) {
        for (const { spans = [] } of scopeSpans) {
          for (const span of spans) {
            collector.spans.push({
              traceId: span.traceId as string,
              spanId: span.spanId as string,
              parentSpanId: (span.parentSpanId as string | undefined) ?? '',
              name: span.name as string,
              kind: span.kind as number,
              attributes: attributesOf(span.attributes as OtlpAttribute[]),
              statusCode: (span.status as { code?: number } | undefined)?.code ?? 0,
              resource: attributesOf(resource?.attributes),
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((listening, failed) => {
    server.once('error', failed);
    server.listen(port, '127.0.0.1', listening);
  });
  collector.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  collector.close = async () => {
    server.closeAllConnections();
    await new Promise((closed) => server.close(closed));
  };
  return collector;
}

const traceresponse = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

function traceOf(response: ApiResponse) {
  const match = traceresponse.exec(response.headers.get('traceresponse') ?? '');
  expect(match, `traceresponse: ${response.headers.get('traceresponse')}`).not.toBeNull();
  return { traceId: match![1]!, spanId: match![2]!, flags: match![3]! };
}

/** An app listening on loopback, with a client that checks every answer against the contract. */
async function listening(options: Parameters<typeof createApp>[0]) {
  const created = await createApp(options);
  const server: Server = await new Promise((ready) => {
    const started = createHttpServer(created.app).listen(0, '127.0.0.1', () => ready(started));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    request: async (method: string, path: string, requestOptions?: RequestOptions) => {
      const response = await send(url, method, path, requestOptions);
      assertMatchesContract(method, path, response);
      return response;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((closed) => server.close(closed));
      await created.close();
    },
  };
}

const caller = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' };
const changer = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331' };
const unsampled = { traceId: '5a3c1e0b9f8d7c6b5a4e3d2c1b0a9f8e', spanId: '1122334455667788' };
const untraced = { traceId: 'c0ffee00c0ffee00c0ffee00c0ffee00', spanId: '8877665544332211' };

describe(`OpenTelemetry tracing on (${databaseLabel})`, () => {
  let collector: Collector;
  let database: TestDatabase;
  let offDatabase: TestDatabase;
  let receiver: Receiver;
  /** What the requests answered and what the receiver got, read once the apps have closed. */
  const seen = {} as {
    me: ApiResponse;
    started: ApiResponse;
    notSampled: ApiResponse;
    failed: ApiResponse;
    change: ApiResponse;
    delivery: Received;
    offDelivery: Received;
    offChange: ApiResponse;
    values: string[];
  };

  beforeAll(async () => {
    collector = await startCollector();
    const tracing = await startTracing({ url: `${collector.url}/v1/traces` }, pino({ level: 'silent' }));
    database = await createTestDatabase({ onStatement: tracing.statement });
    // Beside it in the same process, on a database of its own: an app with tracing off.
    offDatabase = await createTestDatabase();
    receiver = await startReceiver();
    const common = { config: { rateLimitPerMinute: 10_000, redisUrl: undefined }, logger: pino({ level: 'silent' }), secrets: createSecretBox(randomBytes(32)) };
    const failing: Partial<HandlerMap> = {
      getOrganization: async () => {
        throw new Error('a fault of the handler');
      },
    };
    const traced = await listening({ ...common, db: database.db, tracing, handlers: failing, webhooks: { allowPrivateTargets: true, deliver: { listen: database.listen, pollMs: 50 } } });
    const off = await listening({ ...common, db: offDatabase.db, webhooks: { allowPrivateTargets: true, deliver: { listen: offDatabase.listen, pollMs: 50 } } });

    const world = await createTeamWorld(database.db);
    const owner = await world.person('OWNER');
    seen.values = [owner.key, owner.user.id, owner.user.email, world.org.id, 'Traced team'];
    const offWorld = await createTeamWorld(offDatabase.db);
    const offOwner = await offWorld.person('OWNER');
    for (const [app, orgId, key] of [[traced, world.org.id, owner.key], [off, offWorld.org.id, offOwner.key]] as const) {
      const subscribed = await app.request('POST', `/v1/orgs/${orgId}/webhooks`, { key, body: { url: receiver.url, events: ['team.created'] } });
      expect(subscribed.status).toBe(201);
    }

    seen.me = await traced.request('GET', '/v1/me', { key: owner.key, headers: { traceparent: `00-${caller.traceId}-${caller.spanId}-01` } });
    seen.started = await traced.request('GET', '/v1/me', { key: owner.key });
    seen.failed = await traced.request('GET', `/v1/orgs/${world.org.id}`, { key: owner.key });
    expect(seen.failed.status).toBe(500);
    seen.notSampled = await traced.request('GET', '/v1/me', { key: owner.key, headers: { traceparent: `00-${unsampled.traceId}-${unsampled.spanId}-00` } });
    seen.change = await traced.request('POST', `/v1/orgs/${world.org.id}/teams`, {
      key: owner.key,
      body: { name: 'Traced team' },
      headers: { traceparent: `00-${changer.traceId}-${changer.spanId}-01` },
    });
    seen.offChange = await off.request('POST', `/v1/orgs/${offWorld.org.id}/teams`, {
      key: offOwner.key,
      body: { name: 'Untraced team' },
      headers: { traceparent: `00-${untraced.traceId}-${untraced.spanId}-01` },
    });
    for (const response of [seen.me, seen.started, seen.notSampled]) expect(response.status).toBe(200);
    for (const response of [seen.change, seen.offChange]) expect(response.status).toBe(201);
    seen.delivery = await deliveryOfTeam('Traced team');
    seen.offDelivery = await deliveryOfTeam('Untraced team');
    await off.close();
    // Closing sends every span not sent yet.
    await traced.close();
    // Two new databases and a delivery each: as long as a busy machine may take.
  }, 240_000);

  afterAll(async () => {
    await receiver?.close();
    await database?.close();
    await offDatabase?.close();
    await collector?.close();
  });

  /** The delivery of `team.created` for the team named `name`, once it has come (whichever worker sent it). */
  async function deliveryOfTeam(name: string): Promise<Received> {
    for (let count = 1; ; count += 1) {
      const received = await receiver.waitFor(count, 60_000);
      const delivery = received.find((candidate) => candidate.event.type === 'team.created' && candidate.event.data.object.name === name);
      if (delivery) return delivery;
    }
  }

  const spanOf = (spanId: string) => collector.spans.find((span) => span.spanId === spanId);
  const childrenOf = (spanId: string) => collector.spans.filter((span) => span.parentSpanId === spanId);

  it('sends the spans to the traces path, as the service teamos-api', () => {
    expect(collector.paths.length).toBeGreaterThan(0);
    expect(new Set(collector.paths)).toEqual(new Set(['/v1/traces']));
    expect(collector.spans[0]!.resource).toMatchObject({ 'service.name': 'teamos-api' });
  });

  it("makes a request one server span named by its operation id, with the request's trace id and span id (traceresponse) and the caller's span as parent", () => {
    const { traceId, spanId, flags } = traceOf(seen.me);
    expect([traceId, flags]).toEqual([caller.traceId, '01']);
    const span = spanOf(spanId);
    expect(span).toMatchObject({
      traceId: caller.traceId,
      parentSpanId: caller.spanId,
      name: 'getMe',
      kind: SERVER,
      attributes: { 'http.request.method': 'GET', 'http.route': '/v1/me', 'http.response.status_code': 200, 'url.path': '/v1/me' },
    });
    expect(collector.spans.filter((other) => other.traceId === caller.traceId && other.kind === SERVER)).toHaveLength(1);
  });

  it('makes each database statement of a request a client span under it, with db.system and its text', () => {
    const statements = childrenOf(traceOf(seen.me).spanId);
    for (const statement of statements) {
      expect(statement).toMatchObject({ traceId: caller.traceId, kind: CLIENT, attributes: { 'db.system': 'postgresql', 'db.system.name': 'postgresql' } });
    }
    // Authentication looks the key up.
    expect(statements.map((span) => span.attributes['db.query.text'])).toEqual(expect.arrayContaining([expect.stringContaining('from "api_keys"')]));
    // The change runs in a transaction: its begin and commit are statements too.
    const changeTexts = childrenOf(traceOf(seen.change).spanId).map((span) => span.attributes['db.query.text']);
    expect(changeTexts).toEqual(expect.arrayContaining(['begin', 'commit']));
    expect(changeTexts.some((text) => /^\s*insert into\b/i.test(String(text)))).toBe(true);
  });

  it("puts no value of a statement in its span: the key, the caller's id and email, the organization and the new team's name are parameters", () => {
    const statements = collector.spans.filter((span) => span.attributes['db.query.text'] !== undefined);
    expect(statements.some((span) => String(span.attributes['db.query.text']).includes('$1'))).toBe(true);
    const attributes = JSON.stringify(statements.map((span) => span.attributes));
    for (const value of seen.values) expect(attributes, value).not.toContain(value);
  });

  it("keeps the webhook worker's own statements out of every trace, even when a change's notification wakes it", () => {
    expect(collector.spans.filter((span) => /skip locked/i.test(String(span.attributes['db.query.text'] ?? '')))).toEqual([]);
  });

  it("makes a webhook delivery a client span in the change's trace, under the change's span, and sends that span as the delivery's traceparent", () => {
    const change = traceOf(seen.change);
    const delivery = collector.spans.find((span) => span.attributes['webhook.event_id'] === seen.delivery.headers['webhook-id']);
    expect(delivery).toMatchObject({
      traceId: changer.traceId,
      parentSpanId: change.spanId,
      name: 'POST',
      kind: CLIENT,
      attributes: { 'http.request.method': 'POST', 'server.address': '127.0.0.1', 'http.response.status_code': 204, 'webhook.attempt': 1 },
    });
    expect(spanOf(change.spanId)).toMatchObject({ name: 'createTeam', parentSpanId: changer.spanId });
    expect(seen.delivery.headers.traceparent).toBe(`00-${changer.traceId}-${delivery!.spanId}-01`);
  });

  it('marks the span of a request answered 5xx as an error, its status code the error type', () => {
    expect(collector.spans.find((span) => span.spanId === traceOf(seen.failed).spanId)).toMatchObject({
      name: 'getOrganization',
      statusCode: 2,
      attributes: { 'http.response.status_code': 500, 'error.type': '500' },
    });
  });

  it('records a trace a request without traceparent starts: a root span, answered as sampled', () => {
    const { traceId, spanId, flags } = traceOf(seen.started);
    expect(flags).toBe('01');
    expect(spanOf(spanId)).toMatchObject({ traceId, parentSpanId: '', name: 'getMe' });
  });

  it('continues a traceparent not sampled without recording it: nothing of its trace is sent', () => {
    expect(traceOf(seen.notSampled)).toMatchObject({ traceId: unsampled.traceId, flags: '00' });
    expect(collector.spans.filter((span) => span.traceId === unsampled.traceId)).toEqual([]);
  });

  it('sends nothing for an app with tracing off beside a traced one: its change and delivery keep the plain trace context', () => {
    expect(collector.spans.filter((span) => span.traceId === untraced.traceId)).toEqual([]);
    expect(seen.offDelivery.headers.traceparent).toBe(seen.offChange.headers.get('traceresponse'));
  });
});

describe('a collector that does not answer', () => {
  it('costs the spans, with a warning, never the close', async () => {
    const gone = await startCollector();
    await gone.close();
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const tracing = await startTracing({ url: `${gone.url}/v1/traces` }, logger);
    const sent = await tracing.delivery({ traceparent: null, url: new URL('http://127.0.0.1:1/hooks'), eventId: 'e', deliveryId: 'd', attempt: 1 }, async (traceparent) => ({
      statusCode: 204,
      error: null,
      traceparent,
    }));
    expect(sent.traceparent).toMatch(traceresponse);
    await tracing.close();
    expect(lines.filter((line) => line.level === 40)).toEqual([expect.objectContaining({ msg: expect.stringContaining('could not send trace spans') })]);
  });
});

describe('OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  it('turns tracing on: the traces path under it, or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is; off when unset or OTEL_SDK_DISABLED=true', () => {
    expect(readConfig({}).otlpTracesUrl).toBeUndefined();
    expect(readConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: '' }).otlpTracesUrl).toBeUndefined();
    expect(readConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).otlpTracesUrl).toBe('http://collector:4318/v1/traces');
    expect(readConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector/otlp/' }).otlpTracesUrl).toBe('https://collector/otlp/v1/traces');
    expect(readConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/traces' }).otlpTracesUrl).toBe('http://b:4318/traces');
    expect(readConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_SDK_DISABLED: 'TRUE' }).otlpTracesUrl).toBeUndefined();
    expect(() => readConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT must be an http/);
  });
});

describe(`the server process with OTEL_EXPORTER_OTLP_ENDPOINT (${databaseLabel})`, () => {
  /** The environment of a server on a database of its own; `cleanup` removes it. */
  async function serverDatabase(): Promise<{ env: Record<string, string>; cleanup(): Promise<void> }> {
    const secrets = { SECRETS_KEY: randomBytes(32).toString('hex') };
    if (postgresUrl) {
      const created = await createPostgresDatabase('teamos_tracing');
      return { env: { DATABASE_URL: created.url, ...secrets }, cleanup: created.drop };
    }
    const dataDir = await mkdtemp(join(tmpdir(), 'teamos-tracing-'));
    return { env: { DATABASE_URL: '', DATA_DIR: dataDir, ...secrets }, cleanup: () => rm(dataDir, { recursive: true, force: true }) };
  }
  const otelUnset = { OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '', OTEL_SDK_DISABLED: '', OTEL_TRACES_SAMPLER: '' };

  it('traces a server started with it: its spans are sent by the time it has stopped on SIGTERM', { timeout: 120_000 }, async () => {
    const collector = await startCollector();
    const { env, cleanup } = await serverDatabase();
    try {
      const server = await startServerProcess('traced', { ...env, ...otelUnset, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url }, { timeoutMs: 90_000 });
      const refused = await send(server.url, 'GET', '/v1/me', { headers: { traceparent: `00-${caller.traceId}-${caller.spanId}-01` } });
      expect(refused.status).toBe(401);
      expect(await stopServerProcess(server, 60_000)).toEqual({ code: 0, signal: null });
      expect(collector.spans.find((span) => span.spanId === traceOf(refused).spanId)).toMatchObject({
        traceId: caller.traceId,
        parentSpanId: caller.spanId,
        name: 'getMe',
        attributes: { 'http.response.status_code': 401 },
      });
    } finally {
      await cleanup();
      await collector.close();
    }
  });

  it("sends nothing from a server started without it, not even to OTLP's default endpoint (localhost:4318)", { timeout: 120_000 }, async (context) => {
    const collector = await startCollector(4318).catch(() => undefined);
    if (!collector) return context.skip('127.0.0.1:4318, where an SDK left to its defaults would send, is taken on this machine');
    const { env, cleanup } = await serverDatabase();
    try {
      const server = await startServerProcess('untraced', { ...env, ...otelUnset }, { timeoutMs: 90_000 });
      const refused = await send(server.url, 'GET', '/v1/me', { headers: { traceparent: `00-${caller.traceId}-${caller.spanId}-01` } });
      expect(refused.status).toBe(401);
      expect(await stopServerProcess(server, 60_000)).toEqual({ code: 0, signal: null });
      expect(collector.paths).toEqual([]);
    } finally {
      await cleanup();
      await collector.close();
    }
  });
});

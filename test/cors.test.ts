/**
 * CORS: a browser page on an origin of CORS_ORIGINS may call the API, its preflights are answered
 * without a key and without counting against a rate limit, and it can read every answer (errors
 * included) and the headers a client needs; any other origin gets no CORS header, and with no origin
 * listed nothing changes. Every answer but a preflight's 204 is checked against the contract by the
 * test client; a preflight (OPTIONS is no operation of the contract) by `preflight` below.
 */
import type { OpenAPIV3_1 } from 'openapi-types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseLabel } from './support/database.js';
import { deref, operations } from './support/contract.js';
import { createTask } from './support/executionFactories.js';
import { createCaller, createTeamWorld } from './support/factories.js';
import { send, startTestApp, type ApiResponse, type TestApp } from './support/testApp.js';

const allowed = 'http://localhost:5173';
const allowedToo = 'https://app.example.com';

/** The apps' clock stands still (as in rateLimit.test.ts): a key's budget never renews during a test. */
const frozenAt = new Date((Math.floor(Date.now() / 60_000) - 7 * 24 * 60) * 60_000 + 17_000);
const now = () => frozenAt;
const rateLimitPerMinute = 3;

/** The request headers the contract's operations take, by the name they are sent with. */
const contractRequestHeaders = [
  ...new Set(
    operations.flatMap((op) =>
      [...(op.pathItem.parameters ?? []), ...(op.operation.parameters ?? [])]
        .map((parameter) => deref<OpenAPIV3_1.ParameterObject>(parameter, '').value)
        .filter((parameter) => parameter.in === 'header')
        .map((parameter) => parameter.name),
    ),
  ),
];

/** The response headers the contract declares on any answer of any operation. */
const contractResponseHeaders = [
  ...new Set(
    operations.flatMap((op) =>
      Object.values(op.operation.responses ?? {}).flatMap((response) =>
        Object.keys(deref<OpenAPIV3_1.ResponseObject>(response, '').value.headers ?? {}),
      ),
    ),
  ),
];

const contractMethods = [...new Set(operations.map((op) => op.method.toUpperCase()))];

const listOf = (value: string | null) => (value ?? '').split(',').map((item) => item.trim().toLowerCase()).filter(Boolean);

function corsHeaders(response: ApiResponse): Record<string, string> {
  return Object.fromEntries([...response.headers].filter(([name]) => name.startsWith('access-control-')));
}

/** A browser's preflight: OPTIONS with Origin and the method and headers the real request will have. */
async function preflight(url: string, path: string, origin: string, method: string, headers: string[], extra: Record<string, string> = {}) {
  const response = await send(url, 'OPTIONS', path, {
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers.join(','), ...extra },
  });
  // Not an operation of the contract: its answer is a bare 204 with the request id every answer has.
  expect(response.headers.get('x-request-id'), `OPTIONS ${path}: X-Request-Id`).toBeTruthy();
  return response;
}

function expectReadableBy(origin: string, response: ApiResponse) {
  expect(response.headers.get('access-control-allow-origin')).toBe(origin);
  expect(listOf(response.headers.get('access-control-expose-headers'))).toEqual(
    expect.arrayContaining(contractResponseHeaders.map((name) => name.toLowerCase())),
  );
  expect(response.headers.has('access-control-allow-credentials')).toBe(false);
  expect(listOf(response.headers.get('vary'))).toContain('origin');
}

describe(`CORS for pages on the allowed origins (${databaseLabel})`, () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      corsOrigins: [allowed, allowedToo],
      rateLimitPerMinute,
      now,
      handlers: {
        listOrganizations: async () => {
          throw new Error('unexpected');
        },
      },
    });
  });
  afterAll(() => app.close());

  it('answers a preflight without a key with 204: the origin, the methods and request headers of the contract, and a max-age', async () => {
    const response = await preflight(app.url, '/v1/me', allowed, 'GET', ['authorization']);

    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    expect(response.headers.get('access-control-allow-origin')).toBe(allowed);
    expect(listOf(response.headers.get('access-control-allow-methods'))).toEqual(
      expect.arrayContaining(contractMethods.map((method) => method.toLowerCase())),
    );
    expect(listOf(response.headers.get('access-control-allow-headers'))).toEqual(
      // X-Request-Id: a page may name its requests, as the contract lets any caller do.
      expect.arrayContaining(['authorization', 'content-type', 'x-request-id', ...contractRequestHeaders.map((name) => name.toLowerCase())]),
    );
    expect(contractRequestHeaders).toEqual(expect.arrayContaining(['Idempotency-Key', 'If-Match', 'If-None-Match']));
    expect(response.headers.get('access-control-max-age')).toBe('7200');
    expect(response.headers.has('access-control-allow-credentials')).toBe(false);
    expect(listOf(response.headers.get('vary'))).toContain('origin');
  });

  it('answers the preflight of a change with a body, a key and If-Match for each allowed origin', async () => {
    for (const origin of [allowed, allowedToo]) {
      const response = await preflight(app.url, '/v1/tasks/0d0d0000-0000-4000-8000-000000000001', origin, 'PATCH', [
        'authorization',
        'content-type',
        'idempotency-key',
        'if-match',
      ]);
      expect(response.status).toBe(204);
      expect(response.headers.get('access-control-allow-origin')).toBe(origin);
    }
  });

  it('answers a preflight on an unknown path too, so that the page reads the 404 of the request that follows', async () => {
    const { key } = await createCaller(app.db);

    const answered = await preflight(app.url, '/v1/no-such-path', allowed, 'GET', ['authorization']);
    const notFound = await app.request('GET', '/v1/no-such-path', { key, headers: { origin: allowed } });

    expect(answered.status).toBe(204);
    expect(notFound.status).toBe(404);
    expectReadableBy(allowed, notFound);
  });

  it('lets an allowed origin read a success: Access-Control-Allow-Origin names it, the contract’s response headers are exposed', async () => {
    const { key } = await createCaller(app.db);

    const response = await app.request('GET', '/v1/me', { key, headers: { origin: allowedToo } });

    expect(response.status).toBe(200);
    expectReadableBy(allowedToo, response);
    expect(contractResponseHeaders).toEqual(expect.arrayContaining(['ETag', 'X-Request-Id', 'RateLimit', 'RateLimit-Policy', 'Retry-After', 'Idempotent-Replayed']));
    // Cross-Origin-Resource-Policy governs no-cors loads only: it stays same-origin (see securityHeaders.ts).
    expect(response.headers.get('cross-origin-resource-policy')).toBe('same-origin');
  });

  it.each<[string, (app: TestApp) => Promise<ApiResponse>]>([
    ['401 without a key', (app) => app.request('GET', '/v1/me', { headers: { origin: allowed } })],
    [
      '405 for a method the path does not have',
      async (app) => app.request('PUT', '/v1/me', { key: (await createCaller(app.db)).key, headers: { origin: allowed } }),
    ],
    [
      '412 for a stale If-Match',
      async (app) => {
        const { team, person } = await createTeamWorld(app.db);
        const member = await person('MEMBER', 'MEMBER');
        const task = await createTask(app.db, team.id, member.user.id);
        return app.request('PATCH', `/v1/tasks/${task.id}`, {
          key: member.key,
          headers: { origin: allowed, 'if-match': '"not-the-current-tag"' },
          body: { completed: true },
        });
      },
    ],
    [
      '429 over the rate limit',
      async (app) => {
        const { key } = await createCaller(app.db);
        for (let i = 0; i < rateLimitPerMinute; i += 1) expect((await app.request('GET', '/v1/me', { key })).status).toBe(200);
        return app.request('GET', '/v1/me', { key, headers: { origin: allowed } });
      },
    ],
    ['500 for an unexpected error', async (app) => app.request('GET', '/v1/orgs', { key: (await createCaller(app.db)).key, headers: { origin: allowed } })],
  ])('lets an allowed origin read an error: %s', async (name, answer) => {
    const response = await answer(app);

    expect(response.status).toBe(Number(name.slice(0, 3)));
    expectReadableBy(allowed, response);
  });

  it('lets an allowed origin read the contract, the docs page and the health check, which need no key', async () => {
    for (const path of ['/v1/openapi.json', '/v1/docs', '/healthz']) {
      const response = await send(app.url, 'GET', path, { headers: { origin: allowed } });
      expect(response.status, path).toBe(200);
      expect(response.headers.get('x-request-id'), path).toBeTruthy();
      expectReadableBy(allowed, response);
    }
  });

  it('does not count preflights against the rate limit, even one that carries a key', async () => {
    const { key } = await createCaller(app.db);
    for (let i = 0; i < rateLimitPerMinute + 2; i += 1) {
      const answered = await preflight(app.url, '/v1/me', allowed, 'GET', ['authorization'], { authorization: `Bearer ${key}` });
      expect(answered.status).toBe(204);
    }

    const first = await app.request('GET', '/v1/me', { key, headers: { origin: allowed } });

    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit')).toMatch(new RegExp(`^limit=${rateLimitPerMinute}, remaining=${rateLimitPerMinute - 1}, `));
  });

  it.each([
    ['another origin', 'https://evil.example'],
    ['an allowed host on another port', 'http://localhost:5174'],
    ['an allowed host with another scheme', 'https://localhost:5173'],
    ['a subdomain of an allowed origin', 'https://eu.app.example.com'],
    ['an allowed origin with a trailing slash', `${allowed}/`],
    ['the opaque origin of a sandboxed page or file', 'null'],
    // Lookalikes: each one passes a match by prefix, by suffix or without case, and no browser sends
    // an allowed page's origin in any of these forms, so refusing them costs no page anything.
    ['another host that starts with an allowed origin', `${allowed}.evil.example`],
    ['a port that starts with an allowed port', 'http://localhost:51730'],
    ['an allowed origin with a path', `${allowed}/app`],
    ['an allowed origin with userinfo', 'http://user@localhost:5173'],
    ['a host that ends with an allowed host', 'https://evilapp.example.com'],
    ['an allowed origin in capitals (a browser sends the host in lowercase)', 'http://LOCALHOST:5173'],
    ['two origins in one header', `${allowed} ${allowedToo}`],
  ])('gives %s no CORS header: a success has none, its preflight gets the 401 of any request without a key', async (_name, origin) => {
    const { key } = await createCaller(app.db);

    const success = await app.request('GET', '/v1/me', { key, headers: { origin } });
    const refused = await app.request('OPTIONS', '/v1/me', {
      headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    });

    expect(success.status).toBe(200);
    expect(corsHeaders(success)).toEqual({});
    expect(listOf(success.headers.get('vary'))).toContain('origin');
    expect(refused.status).toBe(401);
    expect(corsHeaders(refused)).toEqual({});
  });

  it('adds no CORS header to a request without Origin (a server or a script, not a page)', async () => {
    const { key } = await createCaller(app.db);

    const response = await app.request('GET', '/v1/me', { key });

    expect(response.status).toBe(200);
    expect(corsHeaders(response)).toEqual({});
  });
});

describe(`CORS without CORS_ORIGINS, the default (${databaseLabel})`, () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('opens nothing: a preflight gets 401 like any request without a key, a success no CORS header', async () => {
    const { key } = await createCaller(app.db);

    const refused = await app.request('OPTIONS', '/v1/me', {
      headers: { origin: allowed, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    });
    const success = await app.request('GET', '/v1/me', { key, headers: { origin: allowed } });

    expect(refused.status).toBe(401);
    expect(corsHeaders(refused)).toEqual({});
    expect(success.status).toBe(200);
    expect(corsHeaders(success)).toEqual({});
    expect(success.headers.has('vary')).toBe(false);
  });
});

/**
 * The contract's "Errors": a missing, malformed, unknown, expired or revoked key gets one and the
 * same 401 — byte-identical body, identical headers apart from X-Request-Id and Date — so that a
 * prober learns nothing about which keys exist or once worked.
 */
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseLabel } from './support/database.js';
import { createKey, createUser } from './support/factories.js';
import { assertMatchesContract, send, startTestApp, type ApiResponse, type TestApp } from './support/testApp.js';

let app: TestApp;
let expiredKey: string;
let revokedKey: string;
let wornOutKey: string;
let validKey: string;

beforeAll(async () => {
  app = await startTestApp();
  const user = await createUser(app.db);
  expiredKey = (await createKey(app.db, user.id, { expiresAt: new Date(Date.now() - 60_000) })).key;
  revokedKey = (await createKey(app.db, user.id, { revoked: true })).key;
  const wornOut = await createKey(app.db, user.id);
  wornOutKey = wornOut.key;
  validKey = (await createKey(app.db, user.id)).key;
  // A key that worked once and was revoked afterwards.
  expect((await app.request('GET', '/v1/me', { key: wornOutKey })).status).toBe(200);
  await app.db.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', wornOut.row.id).execute();
});
afterAll(() => app.close());

const unknownKey = () => `ak_${randomBytes(32).toString('base64url')}`;

/** Each way of failing authentication, as request headers. */
function attempts(): Record<string, Record<string, string>> {
  return {
    missing: {},
    'empty header': { authorization: '' },
    'another scheme': { authorization: `Basic ${Buffer.from('user:password').toString('base64')}` },
    'bearer without a key': { authorization: 'Bearer ' },
    'malformed key': { authorization: 'Bearer not-a-key' },
    'key of the wrong length': { authorization: 'Bearer ak_short' },
    'key with a space after it': { authorization: `Bearer ${unknownKey()} extra` },
    unknown: { authorization: `Bearer ${unknownKey()}` },
    expired: { authorization: `Bearer ${expiredKey}` },
    revoked: { authorization: `Bearer ${revokedKey}` },
    'revoked after use': { authorization: `Bearer ${wornOutKey}` },
  };
}

/** The response's headers without those that differ on every response. */
function stableHeaders(response: ApiResponse): [string, string][] {
  return [...response.headers.entries()].filter(([name]) => name !== 'x-request-id' && name !== 'date' && name !== 'traceresponse').sort(([a], [b]) => a.localeCompare(b));
}

async function answers(method: string, path: string, body?: unknown): Promise<Map<string, ApiResponse>> {
  const results = new Map<string, ApiResponse>();
  for (const [name, headers] of Object.entries(attempts())) {
    results.set(name, await app.request(method, path, { headers, body }));
  }
  return results;
}

function expectOneAnswer(results: Map<string, ApiResponse>) {
  const [first, ...others] = [...results];
  const [, reference] = first!;
  expect(reference.status).toBe(401);
  expect(reference.text).toBe('{"error":{"code":"unauthenticated","message":"A valid API key is required."}}');
  expect(reference.headers.get('www-authenticate')).toBe('Bearer');
  for (const [name, response] of others) {
    expect(response.status, name).toBe(401);
    expect(response.text, name).toBe(reference.text);
    expect(stableHeaders(response), name).toEqual(stableHeaders(reference));
    expect(response.headers.get('x-request-id'), name).toBeTruthy();
  }
}

describe(`one 401 for every unusable key (${databaseLabel})`, () => {
  it('a missing, malformed, unknown, expired or revoked key gets byte-identical bodies and identical headers', async () => {
    expectOneAnswer(await answers('GET', '/v1/me'));
  });

  it('the same on a write with a body, on a path that does not exist and on a platform operation', async () => {
    expectOneAnswer(await answers('POST', '/v1/teams/00000000-0000-4000-8000-000000000001/tasks', { title: 'x' }));
    expectOneAnswer(await answers('GET', '/v1/no-such-path'));
    expectOneAnswer(await answers('GET', '/v1/platform/orgs'));
  });

  it('a request id sent by the client is echoed, and it is the only difference', async () => {
    const first = await send(app.url, 'GET', '/v1/me', { headers: { 'x-request-id': 'probe-1' } });
    const second = await send(app.url, 'GET', '/v1/me', { key: expiredKey, headers: { 'x-request-id': 'probe-2' } });
    expect([first.headers.get('x-request-id'), second.headers.get('x-request-id')]).toEqual(['probe-1', 'probe-2']);
    expect(second.text).toBe(first.text);
    expect(stableHeaders(second)).toEqual(stableHeaders(first));
  });
});

/** A request with the Authorization field sent once per value (fetch would join them into one field). */
function sendAuthorizationFields(path: string, values: string[]): Promise<ApiResponse> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${app.url}${path}`, { headers: { authorization: values as never } }, (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      response.on('end', () => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(response.headers)) if (typeof value === 'string') headers.set(name, value);
        resolve({ status: response.statusCode!, headers, text, body: JSON.parse(text) });
      });
    });
    request.on('error', reject).end();
  });
}

describe(`the Authorization field is a singleton (${databaseLabel})`, () => {
  it('two Authorization fields answer 400 badRequest, even when both hold the same valid key', async () => {
    for (const values of [
      [`Bearer ${validKey}`, `Bearer ${validKey}`],
      [`Bearer ${validKey}`, `Bearer ${unknownKey()}`],
      [`Bearer ${unknownKey()}`, `Bearer ${validKey}`],
      ['', `Bearer ${validKey}`],
    ]) {
      const response = await sendAuthorizationFields('/v1/me', values);
      assertMatchesContract('GET', '/v1/me', response);
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ error: { code: 'badRequest', message: 'Send exactly one Authorization header.' } });
      expect(response.headers.get('www-authenticate')).toBeNull();
    }
  });

  it('one Authorization field with the valid key still answers 200', async () => {
    const response = await sendAuthorizationFields('/v1/me', [`Bearer ${validKey}`]);
    assertMatchesContract('GET', '/v1/me', response);
    expect(response.status).toBe(200);
  });

  it('two keys joined into one field are a malformed key: the one 401', async () => {
    const response = await app.request('GET', '/v1/me', { headers: { authorization: `Bearer ${validKey}, Bearer ${validKey}` } });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
  });
});

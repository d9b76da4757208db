import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenAPIV3_1 } from 'openapi-types';
import { startMock, type MockServer } from '../scripts/mock.js';
import { checkResponse, deref, operations, successStatuses, type ContractOperation } from './support/contract.js';
import { createCaller } from './support/factories.js';
import { databaseLabel } from './support/database.js';
import { freePort } from './support/ports.js';
import { startTestApp, type TestApp } from './support/testApp.js';

const allowed = 'http://localhost:5173';
const allowedToo = 'https://app.example.com';

let mock: MockServer;

beforeAll(async () => {
  mock = await startMock(await freePort(), await freePort(), { corsOrigins: [allowed, allowedToo] });
}, 90_000);

afterAll(async () => {
  await mock?.stop();
});

/** A value for a path parameter, taken from the contract: its example, else its schema's. */
function parameterValue(parameter: OpenAPIV3_1.ParameterObject): string {
  if (parameter.example !== undefined) return String(parameter.example);
  const schema = deref<OpenAPIV3_1.SchemaObject>(parameter.schema!, '').value;
  const candidate = schema.examples?.[0] ?? schema.enum?.[0];
  if (candidate === undefined) throw new Error(`no example for path parameter ${parameter.name}`);
  return String(candidate);
}

function requestFor(op: ContractOperation): { url: string; init: RequestInit } {
  const parameters = [...(op.pathItem.parameters ?? []), ...(op.operation.parameters ?? [])].map(
    (parameter) => deref<OpenAPIV3_1.ParameterObject>(parameter, '').value,
  );
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const parameter = parameters.find((candidate) => candidate.in === 'path' && candidate.name === name);
    if (!parameter) throw new Error(`${op.operationId}: path parameter ${name} is not declared`);
    return encodeURIComponent(parameterValue(parameter));
  });
  const headers: Record<string, string> = { authorization: 'Bearer ak_mock_client_developer_key' };
  const init: RequestInit = { method: op.method.toUpperCase(), headers };
  const requestBody = op.operation.requestBody as OpenAPIV3_1.RequestBodyObject | undefined;
  if (requestBody) {
    // A CSV import sends its file's text as it is.
    const mediaType = requestBody.content['application/json'] ? 'application/json' : 'text/csv';
    const [example] = Object.values(requestBody.content[mediaType]?.examples ?? {});
    const value = deref<OpenAPIV3_1.ExampleObject>(example!, '').value.value as unknown;
    headers['content-type'] = mediaType;
    init.body = mediaType === 'text/csv' ? String(value) : JSON.stringify(value);
  }
  return { url: `${mock.url}${path}`, init };
}

describe('the mock server', () => {
  it.each(operations.map((op) => [op.operationId, op] as const))(
    'answers %s with its documented success status, its required headers and a body the contract accepts',
    async (_, op) => {
      const { url, init } = requestFor(op);
      const response = await fetch(url, init);
      const text = await response.text();
      const contentType = response.headers.get('content-type');
      const body = text && contentType?.includes('json') ? JSON.parse(text) : text || undefined;
      expect(response.status, text).toBe(successStatuses(op)[0]);
      expect(checkResponse(op, response.status, contentType, body, response.headers).problems).toEqual([]);
    },
  );

  it('serves the API only under /v1, as the contract\'s server URL says', async () => {
    const response = await fetch(mock.url.replace(/\/v1$/, '/me'), { headers: { authorization: 'Bearer ak_x' } });
    expect(response.status).toBe(404);
  });
});

describe('the mock replays nothing', () => {
  const replayable = operations.filter((op) =>
    Object.values(op.operation.responses ?? {}).some((response) => deref<OpenAPIV3_1.ResponseObject>(response, '').value.headers?.['Idempotent-Replayed']),
  );

  it.each(replayable.map((op) => [op.operationId, op] as const))('answers %s as a first answer: no Idempotent-Replayed header', async (_, op) => {
    const { url, init } = requestFor(op);
    const response = await fetch(url, init);
    await response.arrayBuffer();

    expect(response.status).toBe(successStatuses(op)[0]);
    expect(response.headers.get('idempotent-replayed')).toBeNull();
  });
});

/** The CORS headers of an answer, and whether it varies by Origin: what a browser decides by. */
function corsOf(response: Response) {
  return {
    status: response.status,
    cors: Object.fromEntries([...response.headers].filter(([name]) => name.startsWith('access-control-'))),
    variesByOrigin: (response.headers.get('vary') ?? '').toLowerCase().split(',').map((item) => item.trim()).includes('origin'),
  };
}

describe(`the mock applies the server's CORS rule (${databaseLabel})`, () => {
  let server: TestApp;
  let key: string;
  beforeAll(async () => {
    server = await startTestApp({ corsOrigins: [allowed, allowedToo] });
    key = (await createCaller(server.db)).key;
  });
  afterAll(() => server?.close());

  const serverUrl = () => `${server.url}/v1`;
  const simple = (base: string, origin: string) => fetch(`${base}/me`, { headers: { origin, authorization: `Bearer ${key}` } });
  const preflight = (base: string, origin: string) =>
    fetch(`${base}/tasks/0d0d0000-0000-4000-8000-000000000001`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'PATCH', 'access-control-request-headers': 'authorization,content-type,idempotency-key,if-match' },
    });

  it.each([
    ['a simple request', simple],
    ['a preflight', preflight],
  ])('gives an allowed origin the server’s CORS headers on %s, and allows Prism’s Prefer besides', async (_, ask) => {
    for (const origin of [allowed, allowedToo]) {
      const fromServer = corsOf(await ask(serverUrl(), origin));
      const fromMock = corsOf(await ask(mock.url, origin));

      expect(fromServer.cors['access-control-allow-origin'], origin).toBe(origin);
      const allowedHeaders = fromServer.cors['access-control-allow-headers'];
      const expected = allowedHeaders === undefined ? fromServer : { ...fromServer, cors: { ...fromServer.cors, 'access-control-allow-headers': `${allowedHeaders},Prefer` } };
      expect(fromMock, origin).toEqual(expected);
    }
  });

  it.each([
    ['another origin', 'https://evil.example'],
    ['a lookalike that starts with an allowed origin', `${allowed}.evil.example`],
    ['an allowed host on another port', 'http://localhost:51730'],
    ['the opaque origin of a sandboxed page', 'null'],
  ])('gives %s no CORS header, like the server, on a simple request and a preflight', async (_, origin) => {
    for (const ask of [simple, preflight]) {
      const fromServer = corsOf(await ask(serverUrl(), origin));
      const fromMock = corsOf(await ask(mock.url, origin));

      expect(fromMock.cors).toEqual({});
      expect(fromMock).toEqual(fromServer);
    }
  });

  it('never lets a page send credentials, as Prism’s own CORS did', async () => {
    const response = await simple(mock.url, allowed);

    expect(response.headers.get('access-control-allow-origin')).toBe(allowed);
    expect(response.headers.has('access-control-allow-credentials')).toBe(false);
  });
});

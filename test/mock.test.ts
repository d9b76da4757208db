import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenAPIV3_1 } from 'openapi-types';
import { startMock, type MockServer } from '../scripts/mock.js';
import { checkResponse, deref, operations, successStatuses, type ContractOperation } from './support/contract.js';
import { freePort } from './support/ports.js';

let mock: MockServer;

beforeAll(async () => {
  mock = await startMock(await freePort(), await freePort());
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
    const [example] = Object.values(requestBody.content['application/json']?.examples ?? {});
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(deref<OpenAPIV3_1.ExampleObject>(example!, '').value.value);
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

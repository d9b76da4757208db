/**
 * The permission matrix: every operation × every kind of caller → the status the reference gives.
 * Rows live in test/permissions/*.rows.ts, one file per area, gathered in test/permissions/rows.ts;
 * every operation with a key must have exactly one. Every response is checked against the contract.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationId } from '../src/api/operations.js';
import { databaseLabel } from './support/database.js';
import { operations } from './support/contract.js';
import { operationFor, startTestApp, type TestApp } from './support/testApp.js';
import { matrixRows as rows } from './permissions/rows.js';
import { callerNames, createWorld, type CallerName, type Expected, type MatrixRow, type World } from './permissions/world.js';

/** Operations anyone may call without a key. */
const publicOperations: OperationId[] = ['getOpenApiDocument', 'getApiDocs'];

const errorCodes: Record<number, string> = { 401: 'unauthenticated', 403: 'forbidden', 404: 'notFound', 409: 'orgSuspended' };

let app: TestApp;
let world: World;
let suspendedWorld: World;
beforeAll(async () => {
  app = await startTestApp();
  world = await createWorld(app.db);
  suspendedWorld = await createWorld(app.db, { suspended: true });
});
afterAll(() => app.close());

const methodOf = (operationId: OperationId) => operations.find((op) => op.operationId === operationId)!.method.toUpperCase();

async function call(row: MatrixRow, inWorld: World, caller: CallerName, headers?: Record<string, string>, times = 1) {
  const target = row.prepare ? await row.prepare(inWorld) : undefined;
  const { path, body } = row.request(inWorld, target);
  const method = methodOf(row.operationId);
  expect(operationFor(method, path)?.operationId, `${path} reaches ${row.operationId}`).toBe(row.operationId);
  const answers = [];
  for (let time = 0; time < times; time += 1) answers.push(await app.request(method, path, { key: inWorld.keys[caller], body, headers }));
  return answers;
}

function expectAnswer(response: { status: number; body: any }, expected: Expected) {
  if (expected === 'scope') {
    expect([response.status, response.body?.error?.code]).toEqual([403, 'insufficientScope']);
  } else if (expected >= 400 && errorCodes[expected]) {
    expect([response.status, response.body?.error?.code]).toEqual([expected, errorCodes[expected]]);
  } else {
    expect(response.status, JSON.stringify(response.body)).toBe(expected);
  }
}

describe(`the permission matrix (${databaseLabel})`, () => {
  it('has exactly one row for every operation with a key', () => {
    const covered = rows.map((row) => row.operationId);
    expect(new Set(covered).size, 'no operation has two rows').toBe(covered.length);
    const all = operations.map((op) => op.operationId as OperationId).sort();
    expect([...covered, ...publicOperations].sort()).toEqual(all);
  });

  describe.each(rows.map((row) => [row.operationId, row] as const))('%s', (_id, row) => {
    it.each(callerNames.map((caller, index) => [caller, row.expect[index]!] as const))('%s gets %s', async (caller, expected) => {
      expectAnswer((await call(row, world, caller))[0]!, expected);
    });
  });
});

const allowedCaller = (row: MatrixRow) => callerNames[row.expect.findIndex((expected) => typeof expected === 'number' && expected < 300)]!;

describe(`every change with an Idempotency-Key (${databaseLabel})`, () => {
  it.each(rows.filter((row) => methodOf(row.operationId) !== 'GET').map((row) => [row.operationId, row] as const))(
    '%s answers as without the key, and its retry replays that answer',
    async (_id, row) => {
      const caller = allowedCaller(row);
      const [first, retry] = await call(row, world, caller, { 'idempotency-key': `matrix-${row.operationId}` }, 2);
      expectAnswer(first!, row.expect[callerNames.indexOf(caller)]!);
      expect([retry!.status, retry!.text, retry!.headers.get('idempotent-replayed')]).toEqual([first!.status, first!.text, 'true']);
    },
  );
});

describe(`a suspended organization (${databaseLabel})`, () => {
  const organizationRows = rows.filter((row) => !row.operationId.toLowerCase().includes('platform'));

  it.each(organizationRows.filter((row) => methodOf(row.operationId) !== 'GET').map((row) => [row.operationId, row] as const))(
    '%s is refused with 409 orgSuspended for a caller it allows',
    async (_id, row) => {
      expectAnswer((await call(row, suspendedWorld, allowedCaller(row)))[0]!, 409);
    },
  );

  it.each(organizationRows.filter((row) => methodOf(row.operationId) === 'GET').map((row) => [row.operationId, row] as const))(
    '%s still reads',
    async (_id, row) => {
      const caller = allowedCaller(row);
      expectAnswer((await call(row, suspendedWorld, caller))[0]!, row.expect[callerNames.indexOf(caller)]!);
    },
  );
});

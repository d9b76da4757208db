/**
 * The permission matrix: every operation × every kind of caller → the status the reference gives.
 * Rows live in test/permissions/*.rows.ts, one file per area, gathered in test/permissions/rows.ts;
 * every operation with a key has exactly one main row (`tsc` names a missing one in its area's file),
 * and may have variants of it (such as `target absent`: the person the path names is not a member).
 * Every response is checked against the contract. `-t '\bgetTask\b'` runs one operation's rows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationId } from '../src/api/operations.js';
import { databaseLabel } from './support/database.js';
import { expectReplayOf } from './support/expectations.js';
import { operations } from './support/contract.js';
import { operationFor, startTestApp, type TestApp } from './support/testApp.js';
import { administrationRows, matrixRows as rows } from './permissions/rows.js';
import { allowedCaller, callerNames, createWorld, type CallerName, type Expected, type MatrixRow, type World } from './permissions/world.js';

/** Operations anyone may call without a key. */
const publicOperations: OperationId[] = ['getOpenApiDocument', 'getApiDocs', 'getChangelog'];

const errorCodes: Record<number, string> = { 401: 'unauthenticated', 403: 'forbidden', 404: 'notFound', 409: 'orgSuspended' };

let app: TestApp;
let world: World;
let suspendedWorld: World;
beforeAll(async () => {
  app = await startTestApp();
  world = await createWorld(app);
  suspendedWorld = await createWorld(app, { suspended: true });
});
afterAll(() => app.close());

/** The rows that name an operation's statuses; variants add cases to it and are left out of the suspended organization's checks. */
const mainRows = rows.filter((row) => row.variant === undefined);
const rowName = (row: MatrixRow) => (row.variant === undefined ? row.operationId : `${row.operationId} (${row.variant})`);

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

function expectAnswer(row: MatrixRow, response: { status: number; body: any }, expected: Expected) {
  if (expected === '?') {
    expect.fail(`${row.operationId}: fill in the ? cells of its row in ${row.file} (the answer ${response.status} was given)`);
  } else if (expected === 'scope') {
    expect([response.status, response.body?.error?.code]).toEqual([403, 'insufficientScope']);
  } else if (expected >= 400 && errorCodes[expected]) {
    expect([response.status, response.body?.error?.code]).toEqual([expected, errorCodes[expected]]);
  } else {
    expect(response.status, JSON.stringify(response.body)).toBe(expected);
  }
}

describe(`the permission matrix (${databaseLabel})`, () => {
  it('has exactly one main row for every operation with a key, and variants only of operations with one', () => {
    const covered = mainRows.map((row) => row.operationId);
    expect(new Set(covered).size, 'no operation has two main rows').toBe(covered.length);
    const all = operations.map((op) => op.operationId as OperationId).sort();
    expect([...covered, ...publicOperations].sort(), 'each area types its rows with its tags in test/permissions/<area>.rows.ts, gathered in test/permissions/rows.ts').toEqual(all);
    const variants = rows.filter((row) => row.variant !== undefined).map(rowName);
    expect(new Set(variants).size, 'no variant twice').toBe(variants.length);
    expect(rows.filter((row) => row.variant !== undefined && !covered.includes(row.operationId)).map((row) => `${rowName(row)} in ${row.file}`)).toEqual([]);
  });

  describe.each(rows.map((row) => [rowName(row), row] as const))('%s', (_name, row) => {
    it.each(callerNames.map((caller, index) => [caller, row.expect[index]!] as const))('%s gets %s', async (caller, expected) => {
      expectAnswer(row, (await call(row, world, caller))[0]!, expected);
    });
  });
});

describe(`every change with an Idempotency-Key (${databaseLabel})`, () => {
  it.each(mainRows.filter((row) => methodOf(row.operationId) !== 'GET').map((row) => [row.operationId, row] as const))(
    '%s answers as without the key, and its retry replays that answer',
    async (_id, row) => {
      const caller = allowedCaller(row);
      const [first, retry] = await call(row, world, caller, { 'idempotency-key': `matrix-${row.operationId}` }, 2);
      expectAnswer(row, first!, row.expect[callerNames.indexOf(caller)]!);
      expectReplayOf(retry!, first!);
    },
  );
});

describe(`a suspended organization (${databaseLabel})`, () => {
  const organizationRows = mainRows.filter((row) => !row.operationId.toLowerCase().includes('platform'));

  it.each(organizationRows.filter((row) => methodOf(row.operationId) !== 'GET').map((row) => [row.operationId, row] as const))(
    '%s is refused with 409 orgSuspended for a caller it allows',
    async (_id, row) => {
      expectAnswer(row, (await call(row, suspendedWorld, allowedCaller(row)))[0]!, 409);
    },
  );

  // Administration is decided with visibility, before suspension: a caller it refuses learns nothing more.
  it.each(administrationRows.filter((row) => methodOf(row.operationId) !== 'GET').map((row) => [rowName(row), row] as const))(
    '%s still refuses with 403 every caller it refuses in an active organization',
    async (_name, row) => {
      const refused = callerNames.filter((_caller, index) => row.expect[index] === 403);
      for (const caller of refused) {
        const [response] = await call(row, suspendedWorld, caller);
        expect([caller, response!.status, response!.body?.error?.code]).toEqual([caller, 403, 'forbidden']);
      }
    },
  );

  it.each(organizationRows.filter((row) => methodOf(row.operationId) === 'GET').map((row) => [row.operationId, row] as const))(
    '%s still reads',
    async (_id, row) => {
      const caller = allowedCaller(row);
      expectAnswer(row, (await call(row, suspendedWorld, caller))[0]!, row.expect[callerNames.indexOf(caller)]!);
    },
  );
});

/**
 * The code samples of the docs page (`x-codeSamples` of generated/openapi.json, written by
 * scripts/codeSamples.ts) work: every operation has a `curl` sample and a `@team-os/client` sample,
 * and each one, run as its text stands, gets the operation's documented success and an answer the
 * contract accepts — from the mock for every operation, and from the server on the demo data for
 * every operation that can run there (see `cannotRunOnDemo`). CODE_SAMPLES_OF=<operationId> runs only
 * that operation's samples, on a demo of their own (`make check-op` does so); the full run runs all
 * of them in turn on one demo each.
 */
import { randomBytes } from 'node:crypto';
import type { OpenAPIV3_1 } from 'openapi-types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT, CURL, type CodeSample } from '../scripts/codeSamples.js';
import { startMock, type MockServer } from '../scripts/mock.js';
import { createSecretBox } from '../src/auth/secrets.js';
import { seedDemo } from '../src/cli/demo.js';
import { runClientSamples, runCurlSamples, type SampleOutcome, type SampleRun } from './support/codeSamples.js';
import { checkResponse, operations, successStatuses, type ContractOperation } from './support/contract.js';
import { createTestDatabase, databaseLabel, type TestDatabase } from './support/database.js';
import { createKey } from './support/factories.js';
import { freePort } from './support/ports.js';
import { startTestApp, type TestApp } from './support/testApp.js';

const MOCK_KEY = 'ak_mock_client_developer_key';

/** The operations whose samples run: every one, or the one CODE_SAMPLES_OF names. */
const sampled = (() => {
  const only = process.env.CODE_SAMPLES_OF;
  if (!only) return operations;
  const found = operations.filter((op) => op.operationId === only);
  if (found.length === 0) throw new Error(`CODE_SAMPLES_OF=${only} is not an operationId of generated/openapi.json`);
  return found;
})();

function sampleOf(op: ContractOperation, label: string): string {
  const samples = (op.operation as OpenAPIV3_1.OperationObject & { 'x-codeSamples'?: CodeSample[] })['x-codeSamples'] ?? [];
  const sample = samples.find((candidate) => candidate.label === label);
  if (!sample) throw new Error(`${op.operationId} has no ${label} sample in generated/openapi.json: run \`npm run generate\``);
  return sample.source;
}

/** Why an outcome is not the operation's documented success with an answer the contract accepts; [] when it is. */
function problemsOf(op: ContractOperation, outcome: SampleOutcome | undefined): string[] {
  if (!outcome) return ['the sample did not run'];
  if (outcome.failure) return [outcome.failure];
  const { answer } = outcome;
  if (!answer) return ['no answer'];
  const expected = successStatuses(op);
  const problems = expected.includes(answer.status) ? [] : [`status ${answer.status}, not ${expected.join(' or ')}: ${JSON.stringify(answer.body)?.slice(0, 300)}`];
  return [...problems, ...checkResponse(op, answer.status, answer.headers.get('content-type'), answer.body, answer.headers).problems];
}

describe('every operation has its code samples', () => {
  it.each(operations.map((op) => [op.operationId, op] as const))('%s has a curl sample and a client sample, and says in both when it changes data', (_, op) => {
    const changes = op.method !== 'get';
    expect(sampleOf(op, CURL)).toMatch(changes ? /^# Changes data: .+\.\ncurl / : /^curl /);
    expect(sampleOf(op, CLIENT)).toContain("from '@team-os/client'");
    expect(sampleOf(op, CLIENT).includes('\n// Changes data: ')).toBe(changes);
  });
});

describe('the code samples against the mock', () => {
  let mock: MockServer;
  const outcomes = { curl: new Map<string, SampleOutcome>(), client: new Map<string, SampleOutcome>() };

  beforeAll(async () => {
    mock = await startMock(await freePort(), await freePort());
    const env = { TEAM_OS_URL: mock.url, TEAM_OS_API_KEY: MOCK_KEY };
    const runs = (label: string): SampleRun[] => sampled.map((op) => ({ name: op.operationId, source: sampleOf(op, label), env }));
    [outcomes.curl, outcomes.client] = await Promise.all([runCurlSamples(runs(CURL)), runClientSamples(runs(CLIENT))]);
  }, 300_000);
  afterAll(() => mock?.stop());

  it.each(sampled.map((op) => [op.operationId, op] as const))('%s: both samples get its documented success, valid against the contract', (_, op) => {
    expect({ curl: problemsOf(op, outcomes.curl.get(op.operationId)), client: problemsOf(op, outcomes.client.get(op.operationId)) }).toEqual({ curl: [], client: [] });
  });
});

// ---------------------------------------------------------------------------------------------------
// On the demo data, as `make run` seeds it

/** The demo is seeded at, and the server's clock set to, a day the contract's examples fit (a due date of 2026-11-27, the week of 2026-11-16). */
const DEMO_NOW = new Date('2026-11-19T09:00:00.000Z');

/** The operations whose samples do not run on the demo data, and why. */
const cannotRunOnDemo: Record<string, string> = {
  streamEvents: 'a stream never ends: its samples read until the reader stops them',
};

/** The tables whose ids a sample may name: every record a sample reads, changes or deletes. */
const RECORD_TABLES = [
  'users',
  'organizations',
  'teams',
  'tasks',
  'issues',
  'goals',
  'milestones',
  'metrics',
  'meetings',
  'cascading_messages',
  'seats',
  'documents',
  'api_keys',
  'webhook_subscriptions',
  'webhook_deliveries',
  'webhook_events',
  'org_exports',
] as const;

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** The ids the samples of `label` name that no record of the database has. */
async function unknownIds(db: TestDatabase['db'], label: string): Promise<string[]> {
  const named = [...new Set(operations.flatMap((op) => sampleOf(op, label).match(UUID) ?? []))];
  const known = new Set<string>();
  for (const table of RECORD_TABLES) {
    for (const row of await db.selectFrom(table).select('id').where('id', 'in', named).execute()) known.add(row.id);
  }
  return named.filter((id) => !known.has(id)).sort();
}

/**
 * The demo organization as `make run` seeds it (a database of its own: the samples change it) with
 * the server on it, and the key each operation's samples run with: the Owner's demo key, the
 * platform operator's for /platform, as `make run` prints them.
 */
async function demoServer(): Promise<{ app: TestApp; database: TestDatabase; envOf: (op: ContractOperation) => Record<string, string> }> {
  const database = await createTestDatabase();
  const db = database.db;
  const secrets = createSecretBox(randomBytes(32));
  const demo = await db.transaction().execute((trx) => seedDemo(trx, DEMO_NOW, secrets));
  const keyOf = async (role: string) => {
    const person = demo.people.find((candidate) => candidate.role === role)!;
    return (await createKey(db, person.userId, { scopes: [person.superadmin ? 'platform' : 'write'], expiresAt: new Date(Date.now() + 86_400_000) })).key;
  };
  const keys = { owner: await keyOf('ORG_OWNER'), operator: await keyOf('SUPERADMIN') };
  const app = await startTestApp({ database, now: () => DEMO_NOW, secrets });
  return {
    app,
    database,
    envOf: (op) => ({ TEAM_OS_URL: `${app.url}/v1`, TEAM_OS_API_KEY: op.path.startsWith('/platform/') ? keys.operator : keys.owner }),
  };
}

/**
 * The order the samples run in on one demo, so that none spoils a later one (docs/testing.md): the
 * reads first, on the demo as seeded; then the other changes, in the contract's order or in reverse
 * (the curl samples one way, the client's the other: no change needs another made before it); the
 * deletions last and in reverse, so that an item goes before what holds it (a milestone before its
 * goal, everything before its team, the team's member before the organization's).
 */
function demoOrder(ops: ContractOperation[], changes: 'forward' | 'reversed'): ContractOperation[] {
  const of = (kind: 'read' | 'change' | 'delete') => ops.filter((op) => (op.method === 'get' ? 'read' : op.method === 'delete' ? 'delete' : 'change') === kind);
  return [...of('read'), ...(changes === 'forward' ? of('change') : of('change').reverse()), ...of('delete').reverse()];
}

describe(`the code samples on the demo data, run as they stand (${databaseLabel})`, () => {
  const runnable = sampled.filter((op) => !(op.operationId in cannotRunOnDemo));
  const servers: { app: TestApp; database: TestDatabase }[] = [];
  const outcomes = { curl: new Map<string, SampleOutcome>(), client: new Map<string, SampleOutcome>() };
  const unknown = { curl: [] as string[], client: [] as string[] };

  beforeAll(async () => {
    // Each kind of sample changes the demo in turn: each gets a demo of its own.
    const runs = async (label: string): Promise<SampleRun[]> => {
      const { app, database, envOf } = await demoServer();
      servers.push({ app, database });
      unknown[label === CURL ? 'curl' : 'client'] = await unknownIds(database.db, label);
      return demoOrder(runnable, label === CURL ? 'forward' : 'reversed').map((op) => ({ name: op.operationId, source: sampleOf(op, label), env: envOf(op) }));
    };
    const [curlRuns, clientRuns] = [await runs(CURL), await runs(CLIENT)];
    [outcomes.curl, outcomes.client] = await Promise.all([runCurlSamples(curlRuns), runClientSamples(clientRuns)]);
  }, 300_000);
  afterAll(async () => {
    for (const { app, database } of servers) {
      await app.close();
      await database.close();
    }
  });

  it('every id a sample names is a record of the demo as seeded', () => {
    expect(unknown).toEqual({ curl: [], client: [] });
  });

  it.each(runnable.map((op) => [op.operationId, op] as const))('%s: both samples get its documented success, valid against the contract', (_, op) => {
    expect({ curl: problemsOf(op, outcomes.curl.get(op.operationId)), client: problemsOf(op, outcomes.client.get(op.operationId)) }).toEqual({ curl: [], client: [] });
  });
});

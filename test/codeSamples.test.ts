/**
 * The code samples of the docs page (`x-codeSamples` of generated/openapi.json, written by
 * scripts/codeSamples.ts) work: every operation has a `curl` sample and a `@team-os/client` sample,
 * and each one, run as its text stands, gets the operation's documented success and an answer the
 * contract accepts — from the mock for every operation, and from the server on the demo data for
 * every operation that can run there (see `cannotRunOnDemo`).
 */
import type { OpenAPIV3_1 } from 'openapi-types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT, CURL, type CodeSample } from '../scripts/codeSamples.js';
import { startMock, type MockServer } from '../scripts/mock.js';
import { seedDemo } from '../src/cli/demo.js';
import { runClientSamples, runCurlSamples, type SampleOutcome, type SampleRun } from './support/codeSamples.js';
import { checkResponse, operations, successStatuses, type ContractOperation } from './support/contract.js';
import { createTestDatabase, databaseLabel, type TestDatabase } from './support/database.js';
import { createDelivery, createWebhook } from './support/areaFactories.js';
import { createEvents } from './support/eventFactories.js';
import { createKey, createOrganization, createUser } from './support/factories.js';
import { freePort } from './support/ports.js';
import { startTestApp, type TestApp } from './support/testApp.js';

const MOCK_KEY = 'ak_mock_client_developer_key';

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
  it.each(operations.map((op) => [op.operationId, op] as const))('%s has a curl sample and a client sample', (_, op) => {
    expect(sampleOf(op, CURL)).toMatch(/^curl /);
    expect(sampleOf(op, CLIENT)).toContain("from '@team-os/client'");
  });
});

describe('the code samples against the mock', () => {
  let mock: MockServer;
  const outcomes = { curl: new Map<string, SampleOutcome>(), client: new Map<string, SampleOutcome>() };

  beforeAll(async () => {
    mock = await startMock(await freePort(), await freePort());
    const env = { TEAM_OS_URL: mock.url, TEAM_OS_API_KEY: MOCK_KEY };
    const runs = (label: string): SampleRun[] => operations.map((op) => ({ name: op.operationId, source: sampleOf(op, label), env }));
    [outcomes.curl, outcomes.client] = await Promise.all([runCurlSamples(runs(CURL)), runClientSamples(runs(CLIENT))]);
  }, 300_000);
  afterAll(() => mock?.stop());

  it.each(operations.map((op) => [op.operationId, op] as const))('%s: both samples get its documented success, valid against the contract', (_, op) => {
    expect({ curl: problemsOf(op, outcomes.curl.get(op.operationId)), client: problemsOf(op, outcomes.client.get(op.operationId)) }).toEqual({ curl: [], client: [] });
  });
});

// ---------------------------------------------------------------------------------------------------
// On the demo data

/** The demo is seeded at, and the server's clock set to, a day the contract's examples fit (a due date of 2026-11-27, the week of 2026-11-16). */
const DEMO_NOW = new Date('2026-11-19T09:00:00.000Z');

/** The operations whose samples do not run on the demo data, and why. */
const cannotRunOnDemo: Record<string, string> = {
  streamEvents: 'a stream never ends: its samples read until the reader stops them',
};

/** Where a sample runs on the demo data: the key it is given and the example ids replaced by the demo's. */
interface DemoRun {
  env: Record<string, string>;
  ids: Record<string, string>;
}

const example = (prefix: string, n = 1) => `${prefix}0000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/**
 * A demo organization of its own (the samples change it) with the server on it, and how each
 * operation's samples run there: as the organization's Owner (platform operations as the platform
 * operator), on the Sales team and its records. What the demo lacks and an example names is made
 * first: the accounts the examples add by e-mail, a webhook with a delivery, an event, a second
 * organization, a key to revoke.
 */
async function demoServer(): Promise<{ app: TestApp; database: TestDatabase; runOf: (op: ContractOperation) => DemoRun }> {
  const database = await createTestDatabase();
  const db = database.db;
  const demo = await db.transaction().execute((trx) => seedDemo(trx, DEMO_NOW));
  const person = (role: string) => demo.people.find((candidate) => candidate.role === role)!;
  const keyOf = async (role: string) =>
    (await createKey(db, person(role).userId, { scopes: [person(role).superadmin ? 'platform' : 'write'], expiresAt: new Date(Date.now() + 86_400_000) })).key;
  const keys = { owner: await keyOf('ORG_OWNER'), member: await keyOf('TEAM_MEMBER'), operator: await keyOf('SUPERADMIN') };

  const team = async (slug: string) => (await db.selectFrom('teams').select(['id', 'org_id']).where('slug', '=', slug).executeTakeFirstOrThrow());
  const sales = await team('sales');
  const first = async (table: 'tasks' | 'issues' | 'goals' | 'metrics' | 'seats' | 'documents') =>
    (await db.selectFrom(table).select('id').where('team_id', '=', sales.id).orderBy('created_at').orderBy('id').executeTakeFirstOrThrow()).id;
  const meeting = async (status: 'SCHEDULED' | 'COMPLETED') =>
    (await db.selectFrom('meetings').select('id').where('team_id', '=', sales.id).where('status', '=', status).orderBy('date', 'desc').executeTakeFirstOrThrow()).id;
  const goal = await first('goals');
  const lastMeeting = await meeting('COMPLETED');
  const message = await db
    .selectFrom('cascading_messages')
    .innerJoin('meetings', 'meetings.id', 'cascading_messages.meeting_id')
    .select('cascading_messages.id')
    .where('meetings.team_id', '=', sales.id)
    .orderBy('cascading_messages.created_at')
    .executeTakeFirstOrThrow();
  const outsider = await db
    .selectFrom('organization_members')
    .select('user_id')
    .where('org_id', '=', sales.org_id)
    .where('user_id', 'not in', db.selectFrom('team_members').select('user_id').where('team_id', '=', sales.id))
    .orderBy('user_id')
    .executeTakeFirstOrThrow();
  const withVision = await db.selectFrom('visions').select('team_id').orderBy('team_id').executeTakeFirstOrThrow();

  // The examples named `existingAccount` and `existingOwner` add accounts that exist.
  for (const email of ['tomas.varga@consultants.example', 'marek.kral@tatra.example']) await createUser(db, { email });
  const webhook = await createWebhook(db, sales.org_id);
  const delivery = await createDelivery(db, webhook, { state: 'FAILED', nextAttemptAt: null });
  const [event] = await createEvents(db, sales);
  const otherOrganization = await createOrganization(db);
  const keyToRevoke = await createKey(db, person('TEAM_VIEWER').userId);

  const ids: Record<string, string> = {
    [example('0a0a')]: sales.org_id,
    [example('0a0a', 2)]: otherOrganization.id,
    [example('0b0b', 1)]: person('ORG_OWNER').userId,
    [example('0b0b', 3)]: person('TEAM_MEMBER').userId,
    [example('0b0b', 4)]: person('TEAM_ADMIN').userId,
    [example('0b0b', 6)]: outsider.user_id,
    [example('0c0c')]: sales.id,
    [example('0d0d')]: await first('tasks'),
    [example('0e0e')]: await first('issues'),
    [example('0f0f')]: goal,
    [example('1a1a', 3)]: (await db.selectFrom('milestones').select('id').where('goal_id', '=', goal).orderBy('id').executeTakeFirstOrThrow()).id,
    [example('1b1b')]: await first('metrics'),
    [example('1c1c', 1)]: lastMeeting,
    [example('1c1c', 2)]: lastMeeting,
    [example('1d1d')]: message.id,
    [example('1e1e')]: await first('seats'),
    [example('1f1f', 2)]: await first('documents'),
    [example('2a2a', 3)]: keyToRevoke.row.id,
    [example('4a4a')]: webhook.id,
    [example('4b4b', 3)]: delivery,
    [example('4c4c')]: event!,
  };
  /** Where an operation needs another record than the others of its kind. */
  const instead: Record<string, Record<string, string>> = {
    // Starting a meeting: the one scheduled next.
    updateMeeting: { [example('1c1c')]: await meeting('SCHEDULED') },
    // Sales has no vision yet (createTeamVision makes it): another team's.
    getTeamVision: { [example('0c0c')]: withVision.team_id },
  };
  /** Who calls, when not the organization's Owner: a meeting is rated by one who took part. */
  const callers: Record<string, string> = { rateMeetingAsMe: keys.member };

  const app = await startTestApp({ database, now: () => DEMO_NOW });
  return {
    app,
    database,
    runOf: (op) => ({
      env: { TEAM_OS_URL: `${app.url}/v1`, TEAM_OS_API_KEY: callers[op.operationId] ?? (op.path.startsWith('/platform/') ? keys.operator : keys.owner) },
      ids: { ...ids, ...instead[op.operationId] },
    }),
  };
}

/** Changes run before deletions, which run last and in reverse, so that an item goes before what holds it (a milestone before its goal, everything before its team). */
function demoOrder(ops: ContractOperation[]): ContractOperation[] {
  const deletions = ops.filter((op) => op.method === 'delete');
  return [...ops.filter((op) => op.method !== 'delete'), ...deletions.reverse()];
}

const substituted = (source: string, ids: Record<string, string>) =>
  Object.entries(ids).reduce((text, [exampleId, demoId]) => text.replaceAll(exampleId, demoId), source);

describe(`the code samples on the demo data (${databaseLabel})`, () => {
  const runnable = demoOrder(operations.filter((op) => !(op.operationId in cannotRunOnDemo)));
  const servers: { app: TestApp; database: TestDatabase }[] = [];
  const outcomes = { curl: new Map<string, SampleOutcome>(), client: new Map<string, SampleOutcome>() };

  beforeAll(async () => {
    // Each kind of sample changes the demo in turn: each gets a demo of its own.
    const runs = async (label: string): Promise<SampleRun[]> => {
      const { app, database, runOf } = await demoServer();
      servers.push({ app, database });
      return runnable.map((op) => {
        const { env, ids } = runOf(op);
        return { name: op.operationId, source: substituted(sampleOf(op, label), ids), env };
      });
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

  it.each(runnable.map((op) => [op.operationId, op] as const))('%s: both samples get its documented success, valid against the contract', (_, op) => {
    expect({ curl: problemsOf(op, outcomes.curl.get(op.operationId)), client: problemsOf(op, outcomes.client.get(op.operationId)) }).toEqual({ curl: [], client: [] });
  });
});

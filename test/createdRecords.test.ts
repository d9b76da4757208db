/**
 * The contract's "Responses": a 201 of a record with a `GET` of its own carries `Location`, the URL of
 * that read, and `ETag`, the tag that read answers right after — also where the create answers another
 * shape than the read (a meeting, a webhook subscription) — so `If-Match` with it guards the next
 * change. A replay under the same `Idempotency-Key` answers the same headers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseLabel } from './support/database.js';
import { operations } from './support/contract.js';
import { createTeamWorld } from './support/factories.js';
import { startTestApp, type ApiResponse, type TestApp } from './support/testApp.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

type World = Awaited<ReturnType<typeof setup>>;

async function setup() {
  const world = await createTeamWorld(app.db, { isLeadership: true });
  return { ...world, admin: await world.person('ADMIN', 'ADMIN') };
}

interface Create {
  operationId: string;
  /** The create: its path and body. */
  create: (world: World) => { path: string; body?: unknown };
  /** A change of the created record through its own path, with a body. */
  change: (id: string, world: World) => { path: string; body: unknown };
}

const creates: Create[] = [
  {
    operationId: 'createTeam',
    create: ({ org }) => ({ path: `/v1/orgs/${org.id}/teams`, body: { name: 'Customs and Brokerage' } }),
    change: (id) => ({ path: `/v1/teams/${id}`, body: { name: 'Customs' } }),
  },
  {
    operationId: 'createTask',
    create: ({ team, admin }) => ({ path: `/v1/teams/${team.id}/tasks`, body: { title: 'Renew the customs bond', ownerId: admin.user.id, dueDate: '2026-12-04' } }),
    change: (id) => ({ path: `/v1/tasks/${id}`, body: { completed: true } }),
  },
  {
    operationId: 'createIssue',
    create: ({ team }) => ({ path: `/v1/teams/${team.id}/issues`, body: { title: 'Pallet shortage in Žilina' } }),
    change: (id) => ({ path: `/v1/issues/${id}`, body: { status: 'SOLVING' } }),
  },
  {
    operationId: 'createGoal',
    create: ({ team, admin }) => ({ path: `/v1/teams/${team.id}/goals`, body: { title: 'Open the Brno depot', ownerId: admin.user.id, quarter: '2026-Q4' } }),
    change: (id) => ({ path: `/v1/goals/${id}`, body: { status: 'OFF_TRACK' } }),
  },
  {
    operationId: 'createMeeting',
    create: ({ team }) => ({ path: `/v1/teams/${team.id}/meetings`, body: { date: '2026-12-07' } }),
    change: (id) => ({ path: `/v1/meetings/${id}`, body: { notes: 'Carriers first.' } }),
  },
  {
    operationId: 'createTeamVision',
    create: ({ team }) => ({ path: `/v1/teams/${team.id}/vision` }),
    change: (_, { team }) => ({ path: `/v1/teams/${team.id}/vision`, body: { field: 'tenYearTarget', value: 'The first carrier of Central Europe.' } }),
  },
  {
    operationId: 'createWebhook',
    create: ({ org }) => ({ path: `/v1/orgs/${org.id}/webhooks`, body: { url: 'https://127.0.0.1:9/hooks', events: ['task.created'] } }),
    change: (id) => ({ path: `/v1/webhooks/${id}`, body: { description: 'The warehouse screen' } }),
  },
];

async function created(scenario: Create) {
  const world = await setup();
  const { path, body } = scenario.create(world);
  const response = await app.request('POST', path, { key: world.admin.key, body });
  expect(response.status, response.text).toBe(201);
  return { world, response, id: (response.body as { id: string }).id };
}

const etagOf = (response: ApiResponse) => response.headers.get('etag');

describe(`the 201 of a record with a read of its own (${databaseLabel})`, () => {
  it('covers every create whose answer the contract gives a Location', () => {
    const declaring = operations.filter((op) => {
      const answer = op.operation.responses?.['201'] as { headers?: Record<string, unknown> } | undefined;
      return answer?.headers?.Location !== undefined;
    });
    expect(declaring.map((op) => op.operationId).sort()).toEqual(creates.map((scenario) => scenario.operationId).sort());
  });

  it.each(creates.map((scenario) => [scenario.operationId, scenario] as const))('%s answers a Location that a GET answers with the same record', async (_, scenario) => {
    const { world, response, id } = await created(scenario);
    const location = response.headers.get('location');
    expect(location).toMatch(/^\/v1\//);
    const read = await app.request('GET', location!, { key: world.admin.key });
    expect(read.status, read.text).toBe(200);
    expect((read.body as { id: string }).id).toBe(id);
  });

  it.each(creates.map((scenario) => [scenario.operationId, scenario] as const))('%s answers the ETag that a GET of its Location answers right after', async (_, scenario) => {
    const { world, response } = await created(scenario);
    const read = await app.request('GET', response.headers.get('location')!, { key: world.admin.key });
    expect(etagOf(response)).toMatch(/^"[\w-]+"$/);
    expect(etagOf(response)).toBe(etagOf(read));
  });

  it.each(creates.map((scenario) => [scenario.operationId, scenario] as const))('%s answers an ETag with which If-Match lets the next change through, and only once', async (_, scenario) => {
    const { world, response, id } = await created(scenario);
    const tag = etagOf(response)!;
    const { path, body } = scenario.change(id, world);
    const guarded = await app.request('PATCH', path, { key: world.admin.key, body, headers: { 'if-match': tag } });
    expect(guarded.status, guarded.text).toBe(200);
    const stale = await app.request('PATCH', path, { key: world.admin.key, body, headers: { 'if-match': tag } });
    expect([stale.status, stale.body?.error?.code]).toEqual([412, 'preconditionFailed']);
  });

  it.each(creates.map((scenario) => [scenario.operationId, scenario] as const))('%s replays the same Location and ETag under the same Idempotency-Key', async (_, scenario) => {
    const world = await setup();
    const { path, body } = scenario.create(world);
    const headers = { 'idempotency-key': `create-${scenario.operationId}` };
    const first = await app.request('POST', path, { key: world.admin.key, body, headers });
    const replay = await app.request('POST', path, { key: world.admin.key, body, headers });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect([replay.status, replay.headers.get('location'), etagOf(replay)]).toEqual([201, first.headers.get('location'), etagOf(first)]);
    expect(first.headers.get('location')).toMatch(/^\/v1\//);
    expect(etagOf(first)).toMatch(/^"[\w-]+"$/);
  });

  it('answers a created record that has no read of its own without Location and ETag', async () => {
    const { team, admin } = await setup();
    const metric = await app.request('POST', `/v1/teams/${team.id}/metrics`, { key: admin.key, body: { title: 'On-time deliveries', goal: '>= 95', ownerId: admin.user.id } });
    expect(metric.status, metric.text).toBe(201);
    expect([metric.headers.get('location'), etagOf(metric)]).toEqual([null, null]);
  });
});

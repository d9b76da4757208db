/**
 * `client.sync` (issue 44, item 4) against the real app over HTTP: a team loaded from its snapshot
 * and kept by its live stream, the reader's own changes shown at once, a cut snapshot loaded again
 * without a half ever shown, a server that fails the load retried, a 410 loaded again, a team lost
 * dropped and taken back, and a reload from IndexedDB (fake-indexeddb) that catches up with one
 * request. Every answer the client gets passes the contract-checking proxy.
 */
import 'fake-indexeddb/auto';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTeamOsClient, indexedDbStorage, type SyncStore } from '../client/src/index.js';
import { databaseLabel } from './support/database.js';
import { createTeamWorld } from './support/factories.js';
import { waitFor } from './support/processes.js';
import { startProxy, type Proxy } from './support/proxy.js';
import { cuttableFetch, expectConverged } from './support/sync.js';
import { startTestApp, type TestApp } from './support/testApp.js';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '..');

let app: TestApp;
let proxy: Proxy;
beforeAll(async () => {
  app = await startTestApp();
  proxy = await startProxy(app.url);
});
afterAll(async () => {
  await proxy.close();
  await app.close();
});

const fast = { baseDelayMs: 20, maxDelayMs: 200, reconnect: { baseDelayMs: 20, maxDelayMs: 200 } };
const stores: SyncStore[] = [];
afterAll(async () => {
  for (const store of stores) await store.close();
});

async function world() {
  const { org, team, person } = await createTeamWorld(app.db);
  const admin = await person('MEMBER', 'ADMIN');
  const reader = await person('MEMBER', 'MEMBER');
  const owner = await person('OWNER');
  const createTask = async (key: string, title: string) => {
    const response = await app.request('POST', `/v1/teams/${team.id}/tasks`, { key, body: { title, ownerId: admin.user.id, dueDate: '2026-12-18' } });
    expect(response.status).toBe(201);
    return response.body as { id: string; title: string };
  };
  return { org, team, admin, reader, owner, createTask };
}

function sync(key: string, teamId: string, options: { storage?: ReturnType<typeof indexedDbStorage> } = {}) {
  const network = cuttableFetch();
  const client = createTeamOsClient({ baseUrl: `${proxy.url}/v1`, apiKey: key, fetch: network.fetch, retry: { baseDelayMs: 20 } });
  const changes: number[] = [];
  const store = client.sync({ teamIds: [teamId], ...fast, ...options, onChange: () => changes.push(store.openTasks(teamId).length) });
  stores.push(store);
  return { client, store, network, changes };
}

describe(`client.sync (${databaseLabel})`, () => {
  it('loads a team from its snapshot and then shows what others change, as the reader’s own reads answer', async () => {
    const { team, admin, reader, createTask } = await world();
    await createTask(admin.key, 'Send the revised freight quote');
    const { store, network } = sync(reader.key, team.id);
    await store.ready;
    expect(store.openTasks(team.id).map((task) => task.title)).toEqual(['Send the revised freight quote']);
    await createTask(admin.key, 'Book the Rotterdam slot');
    await expectConverged(app, store, team.id, reader.key);
    expect(network.sent.filter((request) => request.path.endsWith('/snapshot'))).toHaveLength(1);
    expect(proxy.violations).toEqual([]);
  });

  it('shows the reader’s own change as soon as its answer arrives, and its event changes nothing', async () => {
    const { team, admin, reader, createTask } = await world();
    const task = await createTask(admin.key, 'Update the pricing sheet');
    const { client, store } = sync(reader.key, team.id);
    await store.ready;
    let told = 0;
    store.subscribe(() => (told += 1));
    const answer = await client.PATCH('/tasks/{id}', { params: { path: { id: task.id } }, body: { completed: true } });
    expect(store.get('task', task.id)).toEqual(answer.data);
    expect(told).toBe(1);
    await expectConverged(app, store, team.id, reader.key);
    expect(told).toBe(1);
  });

  it('loads again when a snapshot is cut mid-way, and never shows half of it', async () => {
    const { team, admin, reader, createTask } = await world();
    for (const title of ['First', 'Second', 'Third', 'Fourth']) await createTask(admin.key, title);
    const network = cuttableFetch();
    network.cutNextSnapshot();
    const client = createTeamOsClient({ baseUrl: `${proxy.url}/v1`, apiKey: reader.key, fetch: network.fetch });
    const seen: number[] = [];
    const errors: unknown[] = [];
    const store = client.sync({ teamIds: [team.id], ...fast, onChange: () => seen.push(store.openTasks(team.id).length), onError: (error) => errors.push(error) });
    stores.push(store);
    await store.ready;
    expect([seen, errors.length]).toEqual([[4], 1]);
    expect(network.sent.filter((request) => request.path.endsWith('/snapshot'))).toHaveLength(2);
  });

  it('retries a load the server fails (a database restarting under it) and then shows it whole', async () => {
    const { team, admin, reader, createTask } = await world();
    await createTask(admin.key, 'Survives a restart');
    let failures = 2;
    const fetch = async (request: Request) => {
      if (new URL(request.url).pathname.endsWith('/snapshot') && failures-- > 0) {
        return new Response(JSON.stringify({ error: { code: 'internal', message: 'Something went wrong on our side.' } }), { status: 500, headers: { 'content-type': 'application/json' } });
      }
      return globalThis.fetch(request);
    };
    const client = createTeamOsClient({ baseUrl: `${proxy.url}/v1`, apiKey: reader.key, fetch });
    const errors: unknown[] = [];
    const store = client.sync({ teamIds: [team.id], ...fast, onError: (error) => errors.push(error) });
    stores.push(store);
    await store.ready;
    expect([store.openTasks(team.id).map((task) => task.title), errors.length]).toEqual([['Survives a restart'], 2]);
  });

  it('loads again when the log no longer reaches back to its position (410)', async () => {
    const { org, team, admin, reader, createTask } = await world();
    const { store, network } = sync(reader.key, team.id);
    await store.ready;
    await waitFor('the stream open', () => store.state(team.id) === 'following');
    await createTask(admin.key, 'Seen live');
    await expectConverged(app, store, team.id, reader.key);
    // The retention deletes the log up to now, while the reader is away; their next connection gets 410.
    await network.offline();
    await app.db.deleteFrom('webhook_events').where('org_id', '=', org.id).execute();
    await createTask(admin.key, 'Made while the log was cut');
    network.online();
    await expectConverged(app, store, team.id, reader.key);
    expect(network.sent.filter((request) => request.path.endsWith('/snapshot'))).toHaveLength(2);
  });

  it('drops the team when the reader is removed from it, and takes it back when they are added again', async () => {
    const { team, owner, reader, admin, createTask } = await world();
    await createTask(admin.key, 'Before the removal');
    const { store } = sync(reader.key, team.id);
    await store.ready;
    expect((await app.request('DELETE', `/v1/teams/${team.id}/members/${reader.user.id}`, { key: owner.key })).status).toBe(204);
    await waitFor('the team dropped', () => store.state(team.id) === 'noAccess', 30_000);
    expect(store.openTasks(team.id)).toEqual([]);
    await createTask(admin.key, 'While the reader was away');
    expect((await app.request('POST', `/v1/teams/${team.id}/members`, { key: owner.key, body: { userId: reader.user.id, role: 'MEMBER' } })).status).toBe(201);
    await waitFor('the team back', () => store.state(team.id) === 'following', 30_000);
    await expectConverged(app, store, team.id, reader.key);
  });

  it('loads the team again when the reader’s organization role changes: an Admin made Member keeps only the people reviews a Member reads', async () => {
    const { org, team, person } = await createTeamWorld(app.db);
    const owner = await person('OWNER');
    const colleague = await person('MEMBER', 'MEMBER');
    const reader = await person('ADMIN', 'MEMBER');
    const scores = { 'Help first': true };
    const review = { userId: colleague.user.id, quarter: '2026-Q4', coreValuesScores: scores, gwc: { getsIt: true, wantsIt: true, capacityToDoIt: true } };
    expect((await app.request('PUT', `/v1/teams/${team.id}/people-reviews`, { key: owner.key, body: review })).status).toBeLessThan(300);
    const { store, network } = sync(reader.key, team.id);
    await store.ready;
    await expectConverged(app, store, team.id, reader.key);
    expect(store.list('peopleReview', team.id)).toHaveLength(1);

    expect((await app.request('PATCH', `/v1/orgs/${org.id}/members/${reader.user.id}`, { key: owner.key, body: { role: 'MEMBER' } })).status).toBe(200);
    await waitFor('the review out of the copy', () => store.list('peopleReview', team.id).length === 0, 30_000);
    await expectConverged(app, store, team.id, reader.key);
    expect(network.sent.filter((request) => request.path.endsWith('/snapshot'))).toHaveLength(2);
  });

  it('starts a reload from IndexedDB and catches up with one request', async () => {
    const { team, admin, reader, createTask } = await world();
    const storage = indexedDbStorage(`team-os-sync-${randomUUID()}`);
    const first = sync(reader.key, team.id, { storage });
    await first.store.ready;
    await createTask(admin.key, 'Seen before the reload');
    await expectConverged(app, first.store, team.id, reader.key);
    await first.store.close();
    await createTask(admin.key, 'Made while the page was closed');

    const second = sync(reader.key, team.id, { storage });
    await second.store.ready;
    expect(second.store.openTasks(team.id).map((task) => task.title)).toEqual(['Seen before the reload']);
    await expectConverged(app, second.store, team.id, reader.key);
    // The stored copy names its reader: the stream alone brings what was missed.
    expect(second.network.sent.map((request) => request.path)).toEqual(['/v1/events/stream']);
  });

  it('runs client/examples/sync.ts unchanged: the open tasks, the oldest completed and shown at once, then reopened', async () => {
    const { team, admin, createTask } = await world();
    await createTask(admin.key, 'The oldest open task');
    await createTask(admin.key, 'A newer one');
    const env = { ...process.env, TEAM_OS_URL: `${proxy.url}/v1`, TEAM_OS_API_KEY: admin.key, TEAM_OS_TEAM_ID: team.id };

    const { stdout } = await run(resolve(root, 'node_modules/.bin/tsx'), [resolve(root, 'client/examples/sync.ts')], { cwd: root, env, timeout: 60_000 });

    expect(stdout).toContain(`${team.name}: 2 open tasks`);
    expect(stdout).toContain('completed "The oldest open task": the copy shows it already');
    expect(stdout).toContain(`${team.name}: 1 open tasks`);
    const tasks = await app.db.selectFrom('tasks').select(['title', 'completed']).where('team_id', '=', team.id).orderBy('title').execute();
    expect(tasks).toEqual([
      { title: 'A newer one', completed: false },
      { title: 'The oldest open task', completed: false },
    ]);
  });
});

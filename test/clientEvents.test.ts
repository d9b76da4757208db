/**
 * The typed client's event feed, `client.events()`, against the live server on a fresh database and
 * against the Prism mock. Changes are made with the client itself, so their events are written as in
 * production. Every answer passes through a proxy that checks it against the contract; each test
 * ends with no violation. Nothing waits on time: a read that expects some events first waits until
 * the server shows them (an event appears once every change that began before it has ended), and a
 * follower's waits are its own backoff, awaited as events, not as durations.
 */
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startMock, type MockServer } from '../scripts/mock.js';
import { createTeamOsClient, TeamOsError, unwrap, type FeedEvent, type TeamOsClient } from '../client/src/index.js';
import { databaseLabel } from './support/database.js';
import { addTeamMember, createTeam, createTeamWorld } from './support/factories.js';
import { freePort } from './support/ports.js';
import { waitFor } from './support/processes.js';
import { startProxy, useProxiedApp, type Proxy } from './support/proxy.js';
import type { TestApp } from './support/testApp.js';

const collect = async <T>(items: AsyncIterable<T>): Promise<T[]> => {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
};

/** What a test compares of an event: its type and the id of its record (`userId` for memberships). */
const summary = (event: FeedEvent) => {
  const object = event.data.object as { id?: string; userId?: string };
  return `${event.type} ${object.id ?? object.userId}`;
};

// A wait for events to show lasts as long as the test may: on PostgreSQL, any transaction of the cluster can hold them back.
describe(`the typed client reading the event feed (${databaseLabel})`, { timeout: 60_000 }, () => {
  const started = useProxiedApp();
  let app: TestApp;
  let proxy: Proxy;
  beforeAll(() => {
    ({ app, proxy } = started);
  });
  afterEach(() => {
    expect(proxy.violations).toEqual([]);
    proxy.passed.length = 0;
  });

  /** A new organization with a team, whose Owner (a member of the team) reads the feed and makes the changes. */
  async function organization() {
    const { org, team, person } = await createTeamWorld(app.db);
    const owner = await person('OWNER', 'MEMBER');
    const client = createTeamOsClient({ baseUrl: `${proxy.url}/v1`, apiKey: owner.key });
    const createTask = async (title: string, teamId = team.id) =>
      unwrap(await client.POST('/teams/{teamId}/tasks', { params: { path: { teamId } }, body: { title, ownerId: owner.user.id, dueDate: '2026-12-04' } }));
    /** Resolves once the feed shows `count` events of the organization. */
    const shows = (count: number) =>
      waitFor(`${count} events in the feed`, async () => unwrap(await client.GET('/orgs/{orgId}/events', { params: { path: { orgId: org.id }, query: { limit: 200 } } })).data.length >= count, 50_000);
    return { org, team, owner, client, createTask, shows };
  }

  const feedRequests = (orgId: string) => proxy.passed.filter((request) => request.method === 'GET' && request.path.startsWith(`/v1/orgs/${orgId}/events`));

  it("gives the organization's events oldest first, page after page, typed by the event union, and ends at the end of the log", async () => {
    const { org, client, createTask, shows } = await organization();
    const task = await createTask('Book the Rotterdam slot');
    unwrap(await client.PATCH('/tasks/{id}', { params: { path: { id: task.id } }, body: { completed: true } }));
    const issue = unwrap(await client.POST('/teams/{teamId}/issues', { params: { path: { teamId: task.teamId } }, body: { title: 'Quotes to Baltic Trade go out late', priority: 'MEDIUM' } }));
    unwrap(await client.DELETE('/tasks/{id}', { params: { path: { id: task.id } } }));
    await shows(4);
    proxy.passed.length = 0;

    const events = await collect(client.events(org.id, { limit: 2 }));

    expect(events.map(summary)).toEqual([`task.created ${task.id}`, `task.updated ${task.id}`, `issue.created ${issue.id}`, `task.deleted ${task.id}`]);
    const created = events[0]!;
    expect(created.type === 'task.created' && created.data.object.title).toBe('Book the Rotterdam slot');
    const updated = events[1]!;
    expect(updated.type === 'task.updated' && updated.data.object.completed).toBe(true);
    const pages = feedRequests(org.id);
    expect(pages.map((request) => request.status)).toEqual([200, 200]);
    expect(pages[1]!.path).toMatch(/[?&]cursor=/);
  });

  it('resumes right after a remembered event id, with only the events of the changes made since', async () => {
    const { org, createTask, client, shows } = await organization();
    await createTask('Renew the customs bond');
    await createTask('Check the Hamburg manifest');
    await shows(2);
    const remembered = (await collect(client.events(org.id))).at(-1)!.id;
    const later = [await createTask('Call the Žilina warehouse'), await createTask('Send the revised freight quote')];
    await shows(4);

    const events = await collect(client.events(org.id, { after: remembered }));

    expect(events.map(summary)).toEqual(later.map((task) => `task.created ${task.id}`));
    expect(feedRequests(org.id).at(-1)!.path).toContain(`after=${remembered}`);
  });

  it('reads only the events of the given types, sent comma separated, and types them as those', async () => {
    const { org, team, client, createTask, shows } = await organization();
    const task = await createTask('Renew the customs bond');
    unwrap(await client.PATCH('/tasks/{id}', { params: { path: { id: task.id } }, body: { dueDate: '2026-12-11' } }));
    const issue = unwrap(await client.POST('/teams/{teamId}/issues', { params: { path: { teamId: team.id } }, body: { title: 'Late quotes', priority: 'HIGH' } }));
    await shows(3);

    const events = await collect(client.events(org.id, { types: ['task.created', 'issue.created'] }));

    expect(events.map(summary)).toEqual([`task.created ${task.id}`, `issue.created ${issue.id}`]);
    // Compiles only because the events are typed as of these two types, whose records both have a title.
    expect(events.map((event) => event.data.object.title)).toEqual(['Renew the customs bond', 'Late quotes']);
    expect(feedRequests(org.id).at(-1)!.path).toContain('types=task.created,issue.created');
  });

  it("reads only one team's events, without the organization's own", async () => {
    const { org, team, owner, client, createTask, shows } = await organization();
    const other = await createTeam(app.db, org.id, { name: 'Warehouse' });
    await addTeamMember(app.db, other.id, owner.user.id, 'MEMBER');
    const mine = await createTask('Renew the customs bond');
    await createTask('Count the pallets', other.id);
    unwrap(await client.PATCH('/orgs/{orgId}', { params: { path: { orgId: org.id } }, body: { name: 'Northwind Freight Europe' } }));
    await shows(3);

    const events = await collect(client.events(org.id, { teamId: team.id }));

    expect(events.map(summary)).toEqual([`task.created ${mine.id}`]);
  });

  it('with follow, gives the events of changes made after it started, and stops on abort', async () => {
    const { org, client, createTask } = await organization();
    const controller = new AbortController();
    const feed = client.events(org.id, { follow: { initialDelayMs: 20, maxDelayMs: 200 }, signal: controller.signal });
    const first = feed.next();
    await waitFor('the follower at the end of the empty log', () => feedRequests(org.id).length >= 1, 50_000);

    const task = await createTask('Book the Rotterdam slot');
    const arrived = await first;

    expect(arrived.done).toBe(false);
    expect(arrived.value && summary(arrived.value)).toBe(`task.created ${task.id}`);
    const waiting = feed.next();
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError' });
    expect(await feed.next()).toEqual({ done: true, value: undefined });
  });

  it('throws TeamOsError eventsExpired (410) for an after the log no longer keeps, so the integrator resyncs', async () => {
    const { org, client, createTask, shows } = await organization();
    await createTask('Renew the customs bond');
    await shows(1);
    const [gone] = await collect(client.events(org.id));
    await sql`delete from webhook_events where id = ${gone!.id}`.execute(app.db);

    const reading = collect(client.events(org.id, { after: gone!.id }));

    await expect(reading).rejects.toBeInstanceOf(TeamOsError);
    await expect(reading).rejects.toMatchObject({ status: 410, code: 'eventsExpired' });
  });
});

describe('the typed client reading the event feed of the Prism mock', () => {
  const orgId = '0a0a0000-0000-4000-8000-000000000001';
  let mock: MockServer;
  let proxy: Proxy;
  let client: TeamOsClient;
  beforeAll(async () => {
    mock = await startMock(await freePort(), await freePort());
    proxy = await startProxy(mock.url.replace(/\/v1$/, ''));
    client = createTeamOsClient({ baseUrl: `${proxy.url}/v1`, apiKey: 'ak_mock_key_for_the_example_0000000000' });
  }, 90_000);
  afterAll(async () => {
    await proxy?.close();
    await mock?.stop();
  });
  afterEach(() => {
    expect(proxy.violations).toEqual([]);
    proxy.passed.length = 0;
  });

  it("gives the example's events, typed, after a remembered id and with types, and ends with its last page", async () => {
    const events = await collect(client.events(orgId, { after: '4c4c0000-0000-4000-8000-000000000002', types: ['task.deleted', 'organization_member.added'] }));

    expect(events.map((event) => event.id)).toEqual(['4c4c0000-0000-4000-8000-000000000003', '4c4c0000-0000-4000-8000-000000000004']);
    const added = events[1]!;
    expect(added.type === 'organization_member.added' && added.data.object.email).toBe('eva.szaboova@northwind.example');
    expect(proxy.passed.map((request) => request.status)).toEqual([200]);
  });

  it('surfaces the example 410 as TeamOsError eventsExpired', async () => {
    const expired = createTeamOsClient({ baseUrl: `${proxy.url}/v1`, apiKey: 'ak_mock_key_for_the_example_0000000000', headers: { Prefer: 'code=410' } });

    await expect(collect(expired.events(orgId, { after: '4c4c0000-0000-4000-8000-000000000001' }))).rejects.toMatchObject({ status: 410, code: 'eventsExpired' });
  });
});

/**
 * The live stream (issue 38): `GET /v1/events/stream` over real HTTP on a real database. Changes are
 * made over HTTP (their events written as in production) or written into the log by `createEvents`;
 * the webhook worker runs, as in the server, so its fan-out wakes the streams. Nothing waits on time:
 * a test waits until a condition holds, with a generous upper bound that only names what never came.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertEvents, logChannel } from '../src/db/queries/events.js';
import { eventText } from '../src/events/outbox.js';
import { databaseLabel } from './support/database.js';
import { createEvents, feedShowsAll } from './support/eventFactories.js';
import { openStream, streamsOf, type OpenedStream } from './support/eventStream.js';
import { createTeam, createTeamWorld } from './support/factories.js';
import { waitFor } from './support/processes.js';
import { send, startTestApp, type TestApp } from './support/testApp.js';

const bufferBytes = 256 * 1024;

let app: TestApp;
const liveStreams = streamsOf(() => app);
const open = liveStreams.open;
beforeAll(async () => {
  app = await startTestApp({ webhooks: { allowPrivateTargets: true, deliver: { pollMs: 100 } }, live: { bufferBytes } });
});
afterAll(async () => {
  liveStreams.closeAll();
  await app.close();
});

async function newTeam() {
  const { org, team, person } = await createTeamWorld(app.db);
  const owner = await person('OWNER', 'MEMBER');
  return { org, team, person, owner };
}

const createTask = (teamId: string, key: string, ownerId: string, title: string) =>
  app.request('POST', `/v1/teams/${teamId}/tasks`, { key, body: { title, ownerId, dueDate: '2026-11-27' } });

/** The organization's events as the feed answers them, oldest first. */
async function feedOf(orgId: string, key: string) {
  await feedShowsAll(app);
  return (await app.request('GET', `/v1/orgs/${orgId}/events?limit=200`, { key })).body.data as { id: string; type: string }[];
}

describe(`the live event stream (${databaseLabel})`, () => {
  it('sends each change as a message with the event id, its type and the event as the feed answers it, in log order', async () => {
    const { org, team, owner } = await newTeam();
    const stream = await open(`/v1/events/stream?teamId=${team.id}`, owner.key);
    expect([stream.status, stream.headers.get('content-type')]).toEqual([200, 'text/event-stream']);

    for (const title of ['First', 'Second', 'Third']) expect((await createTask(team.id, owner.key, owner.user.id, title)).status).toBe(201);

    const messages = await stream.waitForMessages(3);
    const feed = await feedOf(org.id, owner.key);
    expect(messages.map((message) => [message.id, message.event, JSON.parse(message.data)])).toEqual(feed.map((event) => [event.id, event.type, event]));
    expect(stream.raw()).toMatch(/^retry:2000\n\n/);
  });

  it("leaves the organization's own events out of a stream that names teams, though its reader reads them", async () => {
    const { org, team, owner } = await newTeam();
    const stream = await open(`/v1/events/stream?teamId=${team.id}`, owner.key);
    expect((await app.request('PATCH', `/v1/orgs/${org.id}`, { key: owner.key, body: { name: `Renamed ${randomUUID()}` } })).status).toBe(200);
    // After the organization's event in the log: once it came, the organization's would have.
    expect((await createTask(team.id, owner.key, owner.user.id, 'After the renaming')).status).toBe(201);

    await stream.waitForMessages(1);
    expect(stream.messages.map((message) => message.event)).toEqual(['task.created']);
  });

  it("sends a stream that names teams its reader's own change of organization role, which decides what they see of the teams, but no one else's", async () => {
    const { org, team, owner, person } = await newTeam();
    const reader = await person('ADMIN', 'MEMBER');
    const colleague = await person('MEMBER', 'MEMBER');
    const stream = await open(`/v1/events/stream?teamId=${team.id}`, reader.key);
    // An organization Admin reads every membership event, but this stream follows the team.
    expect((await app.request('PATCH', `/v1/orgs/${org.id}/members/${colleague.user.id}`, { key: owner.key, body: { role: 'IMPLEMENTER' } })).status).toBe(200);
    expect((await app.request('PATCH', `/v1/orgs/${org.id}/members/${reader.user.id}`, { key: owner.key, body: { role: 'MEMBER' } })).status).toBe(200);
    // After both in the log: once it came, they would have.
    expect((await createTask(team.id, owner.key, owner.user.id, 'After the new roles')).status).toBe(201);

    await stream.waitForMessages(2);
    expect(stream.messages.map((message) => [message.event, JSON.parse(message.data).data.object.userId ?? null])).toEqual([
      ['organization_member.updated', reader.user.id],
      ['task.created', null],
    ]);
    expect(JSON.parse(stream.messages[0]!.data).data.object.role).toBe('MEMBER');
  });

  it("sends each reader only the events they may read: organization members' changes to its Owners, a team's events to its Implementers too", async () => {
    const { org, team, owner, person } = await newTeam();
    const member = await person('MEMBER', 'MEMBER');
    const implementer = await person('IMPLEMENTER');
    const streams = await Promise.all([owner, member, implementer].map((caller) => open('/v1/events/stream', caller.key)));
    await waitFor('the streams open', async () => (await app.metrics.live.streams.get()).values[0]!.value >= 3);

    const at = new Date();
    const events = [
      { id: randomUUID(), orgId: org.id, teamId: null, type: 'organization_member.added', object: { userId: randomUUID(), email: 'eva@northwind.example', name: 'Eva', role: 'MEMBER', joinedAt: at.toISOString(), created: true } },
      { id: randomUUID(), orgId: org.id, teamId: team.id, type: 'task.deleted', object: { id: randomUUID(), revision: 1 } },
    ];
    for (const event of events) {
      const text = eventText(event.id, event.type, at, { orgId: org.id, teamId: event.teamId, object: event.object });
      await app.db.transaction().execute((trx) => insertEvents(trx, [{ id: event.id, orgId: org.id, teamId: event.teamId, type: event.type, event: text }], at));
    }

    await streams[0]!.waitForMessages(2);
    await streams[1]!.waitForMessages(1);
    await streams[2]!.waitForMessages(1);
    expect(streams.map((stream) => stream.messages.map((message) => message.event))).toEqual([
      ['organization_member.added', 'task.deleted'],
      ['task.deleted'],
      ['task.deleted'],
    ]);
  });

  it('resumes right after Last-Event-ID with every later event once, and then goes on live', async () => {
    const { team, owner } = await newTeam();
    const ids = await createEvents(app, team, 4);

    const stream = await open(`/v1/events/stream?teamId=${team.id}`, owner.key, { 'last-event-id': ids[1]! });
    const later = await createEvents(app, team, 1);

    const messages = await stream.waitForMessages(3);
    expect(messages.map((message) => message.id)).toEqual([ids[2], ids[3], later[0]]);
    await createEvents(app, team, 1);
    await stream.waitForMessages(4);
    expect(new Set(stream.messages.map((message) => message.id)).size).toBe(stream.messages.length);
  });

  it('resumes after `after` as after Last-Event-ID', async () => {
    const { team, owner } = await newTeam();
    const ids = await createEvents(app, team, 2);
    const stream = await open(`/v1/events/stream?after=${ids[0]}`, owner.key);
    expect((await stream.waitForMessages(1))[0]!.id).toBe(ids[1]);
  });

  it('resumes after Last-Event-ID when `after` is sent too: the header wins', async () => {
    const { team, owner } = await newTeam();
    const ids = await createEvents(app, team, 3);
    const stream = await open(`/v1/events/stream?after=${ids[0]}`, owner.key, { 'last-event-id': ids[1]! });
    expect((await stream.waitForMessages(1))[0]!.id).toBe(ids[2]);
  });

  it('answers 410 eventsExpired before the stream starts when the log no longer keeps Last-Event-ID', async () => {
    const { owner } = await newTeam();
    const stream = await open('/v1/events/stream', owner.key, { 'last-event-id': randomUUID() });
    expect([stream.status, stream.body.error.code]).toEqual([410, 'eventsExpired']);
  });

  it('ends a stream whose place the log was purged past, rather than skip what it lost, and its resume from the last event it sent answers 410', async () => {
    const { team, owner } = await newTeam();
    const [kept] = await createEvents(app, team, 1);
    const stream = await open(`/v1/events/stream?teamId=${team.id}`, owner.key, { 'last-event-id': kept! });
    expect(stream.status).toBe(200);

    // An event the stream has not read yet, deleted as the retention's purge deletes (0013 records the cut).
    const id = randomUUID();
    const at = new Date();
    await app.db.transaction().execute(async (trx) => {
      const event = eventText(id, 'task.deleted', at, { orgId: team.org_id, teamId: team.id, object: { id: randomUUID(), revision: 1 } });
      await insertEvents(trx, [{ id, orgId: team.org_id, teamId: team.id, type: 'task.deleted', event }], at);
      await sql`delete from webhook_events where id = ${id}`.execute(trx);
    });

    await Promise.race([stream.ended, new Promise((resolve) => setTimeout(resolve, 5000))]);
    expect(stream.isEnded(), 'the stream ends').toBe(true);
    expect(stream.messages).toEqual([]);
    const resumed = await open(`/v1/events/stream?teamId=${team.id}`, owner.key, { 'last-event-id': kept! });
    expect([resumed.status, resumed.body.error?.code]).toEqual([410, 'eventsExpired']);
    expect((await app.request('GET', `/v1/teams/${team.id}/events?after=${kept}`, { key: owner.key })).status).toBe(410);
  });

  it('answers 410 for the id of an event of another organization, as for one it never kept', async () => {
    const { team } = await newTeam();
    const [otherId] = await createEvents(app, team, 1);
    const { owner } = await newTeam();
    const stream = await open('/v1/events/stream', owner.key, { 'last-event-id': otherId! });
    expect(stream.status).toBe(410);
  });

  it('answers 422 for a Last-Event-ID that is no id at all', async () => {
    const { owner } = await newTeam();
    const stream = await open('/v1/events/stream', owner.key, { 'last-event-id': 'x'.repeat(201) });
    expect([stream.status, stream.body.error.code]).toEqual([422, 'invalid']);
  });

  it('answers 403 for a team of the organization the caller may not read, and 404 for an unknown team', async () => {
    const { org, owner, person } = await newTeam();
    const otherTeam = await createTeam(app.db, org.id);
    const member = await person('MEMBER', 'MEMBER');
    const refused = await open(`/v1/events/stream?teamId=${otherTeam.id}`, member.key);
    const unknown = await open(`/v1/events/stream?teamId=${randomUUID()}`, owner.key);
    expect([refused.status, refused.body.error.code, unknown.status, unknown.body.error.code]).toEqual([403, 'forbidden', 404, 'notFound']);
  });

  it('refuses a sixth open stream of one key with 429 rateLimited, and opens one again once another closed', async () => {
    const { owner } = await newTeam();
    const five = await Promise.all([1, 2, 3, 4, 5].map(() => open('/v1/events/stream', owner.key)));
    expect(five.map((stream) => stream.status)).toEqual([200, 200, 200, 200, 200]);

    const sixth = await open('/v1/events/stream', owner.key);
    expect([sixth.status, sixth.body.error.code, sixth.headers.get('retry-after')]).toEqual([429, 'rateLimited', '10']);

    five[0]!.close();
    await waitFor('a stream open again after one closed', async () => {
      const again = await open('/v1/events/stream', owner.key);
      again.close();
      return again.status === 200;
    });
  });

  it('answers HEAD at once with the head of a stream and no body, holding none of the key\'s five streams', async () => {
    const { team, owner } = await newTeam();
    const heads = [];
    for (let index = 0; index < 5; index += 1) heads.push(await send(app.url, 'HEAD', `/v1/events/stream?teamId=${team.id}`, { key: owner.key }));
    expect(heads.map((head) => [head.status, head.headers.get('content-type'), head.text])).toEqual(Array(5).fill([200, 'text/event-stream', '']));

    const five = await Promise.all([1, 2, 3, 4, 5].map(() => open('/v1/events/stream', owner.key)));
    expect(five.map((stream) => stream.status)).toEqual([200, 200, 200, 200, 200]);
  });

  it('answers HEAD with the refusal GET would get, before anything is opened: 404 for an unknown team, 410 for an event the log does not keep', async () => {
    const { owner } = await newTeam();
    const unknownTeam = await send(app.url, 'HEAD', `/v1/events/stream?teamId=${randomUUID()}`, { key: owner.key });
    const expired = await send(app.url, 'HEAD', '/v1/events/stream', { key: owner.key, headers: { 'last-event-id': randomUUID() } });
    expect([unknownTeam.status, expired.status]).toEqual([404, 410]);
  });

  it('sends a team Viewer their own removal and nothing of the team after it, and ends a stream that followed only that team', async () => {
    const { org, team, owner, person } = await newTeam();
    const viewer = await person('MEMBER', 'VIEWER');
    const following = await open(`/v1/events/stream?teamId=${team.id}`, viewer.key);
    const everything = await open('/v1/events/stream', viewer.key);
    expect((await createTask(team.id, owner.key, owner.user.id, 'Seen by the Viewer')).status).toBe(201);
    await following.waitForMessages(1);
    await everything.waitForMessages(1);

    expect((await app.request('DELETE', `/v1/teams/${team.id}/members/${viewer.user.id}`, { key: owner.key })).status).toBe(204);
    await following.ended;
    expect((await createTask(team.id, owner.key, owner.user.id, 'Not for the former Viewer')).status).toBe(201);
    // An event of the organization itself, which the former Viewer still reads: it comes, the task before it does not.
    expect((await app.request('PATCH', `/v1/orgs/${org.id}`, { key: owner.key, body: { name: `Renamed ${randomUUID()}` } })).status).toBe(200);

    await waitFor('the organization event on the stream', () => everything.messages.some((message) => message.event === 'organization.updated'));
    expect(everything.messages.map((message) => message.event)).toEqual(['task.created', 'team_member.removed', 'organization.updated']);
    expect(JSON.parse(everything.messages[1]!.data).data).toMatchObject({ teamId: team.id, object: { userId: viewer.user.id } });
  });

  it('tells a stream naming several teams of its reader’s removal from one, and goes on with the others', async () => {
    const { org, team, owner, person } = await newTeam();
    const other = await createTeam(app.db, org.id);
    const member = await person('MEMBER', 'MEMBER');
    const colleague = await person('MEMBER', 'MEMBER');
    for (const userId of [member.user.id, colleague.user.id, owner.user.id]) {
      expect((await app.request('POST', `/v1/teams/${other.id}/members`, { key: owner.key, body: { userId, role: 'MEMBER' } })).status).toBe(201);
    }
    const stream = await open(`/v1/events/stream?teamId=${team.id},${other.id}`, member.key);
    // Someone else's removal is the team's event, as before; the reader's own is told them though they lose the team.
    expect((await app.request('DELETE', `/v1/teams/${team.id}/members/${colleague.user.id}`, { key: owner.key })).status).toBe(204);
    // Sent before the reader's own removal: an event is judged as it is sent, and after it the team is no longer theirs.
    await stream.waitForMessages(1);
    expect((await app.request('DELETE', `/v1/teams/${team.id}/members/${member.user.id}`, { key: owner.key })).status).toBe(204);
    expect((await createTask(team.id, owner.key, owner.user.id, 'Not for the former member')).status).toBe(201);
    expect((await createTask(other.id, owner.key, owner.user.id, 'Still for them')).status).toBe(201);

    await stream.waitForMessages(3);
    expect(stream.messages.map((message) => [message.event, JSON.parse(message.data).data.teamId, JSON.parse(message.data).data.object.userId ?? null])).toEqual([
      ['team_member.removed', team.id, colleague.user.id],
      ['team_member.removed', team.id, member.user.id],
      ['task.created', other.id, null],
    ]);
  });

  it("sends an Implementer's open stream the events of a team created after it opened, from the team's creation on", async () => {
    const { org, owner, person } = await newTeam();
    const implementer = await person('IMPLEMENTER');
    const stream = await open('/v1/events/stream', implementer.key);

    const created = await app.request('POST', `/v1/orgs/${org.id}/teams`, { key: owner.key, body: { name: `Created later ${randomUUID()}` } });
    expect(created.status).toBe(201);
    expect((await app.request('PATCH', `/v1/teams/${created.body.id}`, { key: owner.key, body: { name: `Renamed ${randomUUID()}` } })).status).toBe(200);
    // An event the Implementer reads in any case, after the team's: once it came, the team's would have.
    expect((await app.request('PATCH', `/v1/orgs/${org.id}`, { key: owner.key, body: { name: `Renamed ${randomUUID()}` } })).status).toBe(200);

    await waitFor('the organization event on the stream', () => stream.messages.some((message) => message.event === 'organization.updated'));
    expect(stream.messages.map((message) => [message.event, JSON.parse(message.data).data.teamId])).toEqual([
      ['team.created', created.body.id],
      ['team.updated', created.body.id],
      ['organization.updated', null],
    ]);
  });

  it('ends the stream of a key that is revoked', async () => {
    const { team, owner, person } = await newTeam();
    const member = await person('MEMBER', 'MEMBER');
    const stream = await open(`/v1/events/stream?teamId=${team.id}`, member.key);
    await sql`update api_keys set revoked_at = now() where user_id = ${member.user.id}`.execute(app.db);
    await createTask(team.id, owner.key, owner.user.id, 'After the revocation');
    await stream.ended;
    expect(stream.messages).toEqual([]);
    expect(await app.metrics.registry.getSingleMetricAsString('live_streams_dropped_total')).toMatch(/reason="revoked"} [1-9]/);
  });

  it('drops a reader that stopped reading once more than the bound waits for it, and counts it', async () => {
    const { org, team, owner } = await newTeam();
    const response = await fetch(`${app.url}/v1/events/stream?teamId=${team.id}`, { headers: { authorization: `Bearer ${owner.key}` } });
    expect(response.status).toBe(200);
    // The body is never read: what the server writes fills the sockets' buffers, then its own.
    // Events as large as the log keeps them (64 KB): 500 of them, eight times the bound.
    const padding = 'x'.repeat(60 * 1024);
    for (let index = 0; index < 500; index += 1) {
      const id = randomUUID();
      const at = new Date();
      const event = eventText(id, 'task.deleted', at, { orgId: org.id, teamId: team.id, object: { id: randomUUID(), revision: 1, padding } });
      await app.db.transaction().execute((trx) => insertEvents(trx, [{ id, orgId: org.id, teamId: team.id, type: 'task.deleted', event }], at));
    }
    await waitFor(
      'the slow reader dropped',
      async () => /reason="slow"} [1-9]/.test(await app.metrics.registry.getSingleMetricAsString('live_streams_dropped_total')),
      60_000,
    );
    await response.body?.cancel().catch(() => undefined);
  });
});

describe(`an idle stream (${databaseLabel})`, () => {
  it('gets a comment line every keep-alive period, each stream of the process alike, under a head no cache keeps and no proxy buffers', async () => {
    // An app of its own: the suite's sends its comment lines every 10 s.
    const chatty = await startTestApp({ live: { keepAliveMs: 200 } });
    try {
      const { team, person } = await createTeamWorld(chatty.db);
      const owner = await person('OWNER', 'MEMBER');
      const streams = await Promise.all([`/v1/events/stream?teamId=${team.id}`, '/v1/events/stream'].map((path) => openStream(chatty.url, path, owner.key)));
      liveStreams.keep(...streams);
      const comments = (stream: OpenedStream) => stream.raw().split('\n\n').filter((block) => block === ':').length;
      await waitFor('three comment lines on each stream', () => streams.every((stream) => comments(stream) >= 3), 60_000);
      expect(streams.map((stream) => [stream.messages, stream.raw().startsWith('retry:2000\n\n:\n\n')])).toEqual([
        [[], true],
        [[], true],
      ]);
      expect(['cache-control', 'x-accel-buffering', 'x-request-id'].map((name) => [name, streams[0]!.headers.has(name)])).toEqual([
        ['cache-control', true],
        ['x-accel-buffering', true],
        ['x-request-id', true],
      ]);
      expect(streams[0]!.headers.get('cache-control')).toMatch(/no-store/);
      for (const stream of streams) stream.close();
    } finally {
      await chatty.close();
    }
  });
});

describe(`a change's event on the stream without waiting for a poll (${databaseLabel})`, () => {
  it("arrives although the worker and the streams poll once an hour: the change's process wakes the fan-out, whose notification wakes the streams", async () => {
    // An app of its own: the suite's app, on the same database, would fan out within its 100 ms poll.
    const hourly = await startTestApp({ webhooks: { allowPrivateTargets: true, deliver: { pollMs: 3_600_000 } }, live: { pollMs: 3_600_000 } });
    try {
      const { team, person } = await createTeamWorld(hourly.db);
      const owner = await person('OWNER', 'MEMBER');
      const stream = await openStream(hourly.url, `/v1/events/stream?teamId=${team.id}`, owner.key);
      liveStreams.keep(stream);
      const created = await hourly.request('POST', `/v1/teams/${team.id}/tasks`, { key: owner.key, body: { title: 'Seen at once', ownerId: owner.user.id, dueDate: '2026-11-27' } });
      expect(created.status).toBe(201);
      const [message] = await stream.waitForMessages(1, 60_000);
      expect([message!.event, JSON.parse(message!.data).data.object.title]).toEqual(['task.created', 'Seen at once']);
      stream.close();
    } finally {
      await hourly.close();
    }
  });
});

describe(`a stream that resumes while the shared read of the log is behind it (${databaseLabel})`, () => {
  it('sends the events it caught up on alone never again when the shared read comes to them', async () => {
    // An app of its own whose streams read the log only when the test notifies: no worker, no poll within the test.
    const still = await startTestApp({ live: { pollMs: 3_600_000 } });
    const wake = () => sql`select pg_notify(${logChannel}, '')`.execute(still.db);
    try {
      const { team, person } = await createTeamWorld(still.db);
      const owner = await person('OWNER', 'MEMBER');
      // Opened at the log's end: the shared read starts there, before the events below.
      const first = await openStream(still.url, `/v1/events/stream?teamId=${team.id}`, owner.key);
      liveStreams.keep(first);
      const ids = await createEvents(still, team, 3);
      const resumed = await openStream(still.url, `/v1/events/stream?teamId=${team.id}`, owner.key, { 'last-event-id': ids[1]! });
      liveStreams.keep(resumed);
      await resumed.waitForMessages(1);

      await wake();
      await first.waitForMessages(3);
      const [later] = await createEvents(still, team, 1);
      await wake();
      await waitFor('the later event on the resumed stream', () => resumed.messages.some((message) => message.id === later));

      expect(first.messages.map((message) => message.id)).toEqual([...ids, later]);
      expect(resumed.messages.map((message) => message.id)).toEqual([ids[2], later]);
    } finally {
      await still.close();
    }
  });
});

/**
 * Log positions (issue 44, "Positions everywhere"): every read of an organization's records states the
 * log position it reflects (`Log-Position`), and the feeds and the live stream take it as `after`, so a
 * screen built on the lists starts the log exactly there. Over real HTTP on a real database, with the
 * webhook worker running as in the server (its fan-out wakes the streams and refreshes the log's end).
 * Nothing waits on time: a test waits until a condition holds, with a generous upper bound.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationId } from '../src/api/operations.js';
import { createSecretBox } from '../src/auth/secrets.js';
import { purgeEvents } from '../src/db/queries/webhooks.js';
import { logPositions } from '../src/events/positions.js';
import { operations } from './support/contract.js';
import { createTestDatabase, databaseLabel } from './support/database.js';
import { createEvents, feedShowsAll } from './support/eventFactories.js';
import { streamsOf } from './support/eventStream.js';
import { addOrganizationMember, createTeamWorld } from './support/factories.js';
import { waitFor } from './support/processes.js';
import { startTestApp, type TestApp } from './support/testApp.js';
import { allowedCaller, callerNames, createWorld, type World } from './permissions/world.js';
import { matrixRows } from './permissions/rows.js';

const day = 24 * 60 * 60 * 1000;

let app: TestApp;
const liveStreams = streamsOf(() => app);
beforeAll(async () => {
  app = await startTestApp({ webhooks: { allowPrivateTargets: true, deliver: { pollMs: 100 } }, logPositions: { refreshMs: 20 } });
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

const positionOf = (response: { headers: Headers }) => response.headers.get('log-position')!;

/** A team's task list and the position it states, once that position lies after every event the log holds now: the log's end moved past them. */
async function listAfterTheLog(teamId: string, key: string) {
  await feedShowsAll(app);
  let list: Awaited<ReturnType<typeof app.request<any>>> | undefined;
  await waitFor("a list's position past every event written so far", async () => {
    list = await app.request('GET', `/v1/teams/${teamId}/tasks?limit=200`, { key });
    const feed = await app.request('GET', `/v1/teams/${teamId}/events?after=${positionOf(list)}`, { key });
    return feed.status === 200 && feed.body.data.length === 0;
  });
  return list!;
}

/** Makes these events older than the retention, as the clock would, and lets the worker's purge remove them. */
async function purge(ids: string[], db = app.db) {
  await db.updateTable('webhook_events').set({ created_at: new Date(Date.now() - 40 * day) }).where('id', 'in', ids).execute();
  await purgeEvents(db, new Date(Date.now() - 30 * day), 500);
}

describe(`a read's log position (${databaseLabel})`, () => {
  it('starts the live stream exactly where a list left off: every change the list does not show comes, made before or after it', async () => {
    const { team, owner } = await newTeam();
    // Changes racing with the list: each is in the list, or comes on the stream.
    const racing = Array.from({ length: 4 }, (_, index) => createTask(team.id, owner.key, owner.user.id, `Racing ${index}`));
    const list = await app.request('GET', `/v1/teams/${team.id}/tasks?limit=200`, { key: owner.key });
    const raced = (await Promise.all(racing)).map((created) => created.body.id as string);
    const stream = await liveStreams.open(`/v1/events/stream?teamId=${team.id}&types=task.created&after=${positionOf(list)}`, owner.key);
    const later = (await createTask(team.id, owner.key, owner.user.id, 'After the list')).body.id as string;

    const listed = new Set((list.body.data as { id: string }[]).map((task) => task.id));
    const expected = [...raced.filter((id) => !listed.has(id)), later];
    await waitFor('every task the list does not show on the stream', async () => {
      const streamed = new Set(stream.messages.map((message) => JSON.parse(message.data).data.object.id as string));
      return expected.every((id) => streamed.has(id));
    });
    expect(stream.status).toBe(200);
  });

  it('starts the feeds right after what the read reflects: once the log ends there, only later changes follow', async () => {
    const { org, team, owner } = await newTeam();
    expect((await createTask(team.id, owner.key, owner.user.id, 'Before')).status).toBe(201);
    const list = await listAfterTheLog(team.id, owner.key);
    expect((list.body.data as { title: string }[]).map((task) => task.title)).toEqual(['Before']);
    const after = (await createTask(team.id, owner.key, owner.user.id, 'After')).body.id as string;
    await feedShowsAll(app);

    const teamFeed = await app.request('GET', `/v1/teams/${team.id}/events?after=${positionOf(list)}`, { key: owner.key });
    const orgFeed = await app.request('GET', `/v1/orgs/${org.id}/events?after=${positionOf(list)}`, { key: owner.key });

    for (const feed of [teamFeed, orgFeed]) {
      expect(feed.status).toBe(200);
      expect(feed.body.data.map((event: { type: string; data: { object: { id: string } } }) => [event.type, event.data.object.id])).toEqual([['task.created', after]]);
    }
  });

  it('is taken as the stream\'s Last-Event-ID as well as its `after`', async () => {
    const { team, owner } = await newTeam();
    const list = await listAfterTheLog(team.id, owner.key);
    const later = (await createTask(team.id, owner.key, owner.user.id, 'After the list')).body.id as string;

    const stream = await liveStreams.open(`/v1/events/stream?teamId=${team.id}`, owner.key, { 'last-event-id': positionOf(list) });

    const [message] = await stream.waitForMessages(1);
    expect(JSON.parse(message!.data).data.object.id).toBe(later);
  });

  it('differs each time and names nothing: a sealed `lp_` text of the organization', async () => {
    const { org, team, owner } = await newTeam();
    const first = positionOf(await app.request('GET', `/v1/teams/${team.id}`, { key: owner.key }));
    const second = positionOf(await app.request('GET', `/v1/teams/${team.id}`, { key: owner.key }));

    expect(first).toMatch(/^lp_[A-Za-z0-9_-]+$/);
    expect(first).not.toBe(second);
    expect(first).not.toContain(org.id);
    expect(logPositions(app.secrets).read(first, { origin: 'query', name: 'after' }).orgId).toBe(org.id);
  });

  it('comes with a 304 too: the answer the client holds is as new as the position', async () => {
    const { team, owner } = await newTeam();
    const first = await app.request('GET', `/v1/teams/${team.id}`, { key: owner.key });

    const again = await app.request('GET', `/v1/teams/${team.id}`, { key: owner.key, headers: { 'if-none-match': first.headers.get('etag')! } });

    expect(again.status).toBe(304);
    expect(logPositions(app.secrets).read(positionOf(again), { origin: 'query', name: 'after' }).orgId).toBe(first.body.orgId);
  });
});

describe(`a log position the feeds and the stream refuse (${databaseLabel})`, () => {
  it("refuses another organization's position with 403 forbidden: the feeds and the stream alike", async () => {
    const { org, team, owner } = await newTeam();
    const elsewhere = await newTeam();
    const foreign = positionOf(await app.request('GET', `/v1/teams/${elsewhere.team.id}/tasks`, { key: elsewhere.owner.key }));

    const answers = [
      await app.request('GET', `/v1/orgs/${org.id}/events?after=${foreign}`, { key: owner.key }),
      await app.request('GET', `/v1/teams/${team.id}/events?after=${foreign}`, { key: owner.key }),
      await liveStreams.open(`/v1/events/stream?after=${foreign}`, owner.key),
    ];

    expect(answers.map((answer) => [answer.status, answer.body.error.code])).toEqual(Array(3).fill([403, 'forbidden']));
  });

  it('refuses on the stream a position of an organization of the caller that the stream does not follow (403)', async () => {
    const { team, owner } = await newTeam();
    const other = await newTeam();
    await addOrganizationMember(app.db, other.org.id, owner.user.id, 'OWNER');
    const theirs = positionOf(await app.request('GET', `/v1/orgs/${other.org.id}`, { key: owner.key }));

    const stream = await liveStreams.open(`/v1/events/stream?teamId=${team.id}&after=${theirs}`, owner.key);
    const everything = await liveStreams.open(`/v1/events/stream?after=${theirs}`, owner.key);

    expect([stream.status, stream.body.error.code]).toEqual([403, 'forbidden']);
    expect(everything.status).toBe(200);
  });

  it('answers a changed, cut or foreign-keyed position with 422, naming `after` or Last-Event-ID', async () => {
    const { org, team, owner } = await newTeam();
    const position = positionOf(await app.request('GET', `/v1/orgs/${org.id}`, { key: owner.key }));
    const changed = `${position.slice(0, 20)}${position[20] === 'A' ? 'B' : 'A'}${position.slice(21)}`;
    const otherKey = logPositions(createSecretBox(Buffer.alloc(32, 9))).seal(org.id, { txid: '1', position: '0' });

    for (const text of [changed, position.slice(0, 40), otherKey, 'lp_']) {
      const feed = await app.request('GET', `/v1/teams/${team.id}/events?after=${text}`, { key: owner.key });
      expect([feed.status, feed.body.error.code, feed.body.error.issues?.[0]?.path], text).toEqual([422, 'invalid', ['after']]);
    }
    const stream = await liveStreams.open('/v1/events/stream', owner.key, { 'last-event-id': changed });
    expect([stream.status, stream.body.error.issues?.[0]?.path, stream.body.error.issues?.[0]?.origin]).toEqual([422, ['Last-Event-ID'], 'header']);
  });

  it('answers 410 eventsExpired when the log no longer keeps events after the position, and 200 when only events before it went', async () => {
    const { org, team, owner } = await newTeam();
    const before = await createEvents(app, team, 1);
    const list = await listAfterTheLog(team.id, owner.key);
    await purge(before);

    const kept = await app.request('GET', `/v1/teams/${team.id}/events?after=${positionOf(list)}`, { key: owner.key });
    expect(kept.status).toBe(200);

    const after = await createEvents(app, team, 2);
    await purge(after.slice(0, 1));
    const answers = [
      await app.request('GET', `/v1/orgs/${org.id}/events?after=${positionOf(list)}`, { key: owner.key }),
      await app.request('GET', `/v1/teams/${team.id}/events?after=${positionOf(list)}`, { key: owner.key }),
      await liveStreams.open(`/v1/events/stream?after=${positionOf(list)}`, owner.key),
    ];
    expect(answers.map((answer) => [answer.status, answer.body.error.code])).toEqual(Array(3).fill([410, 'eventsExpired']));
  });

  it('answers 410 for a position stated while the log was empty once events after it were purged', async () => {
    const database = await createTestDatabase();
    const own = await startTestApp({ database, logPositions: { refreshMs: 20 } });
    try {
      const { org, team, person } = await createTeamWorld(own.db);
      const owner = await person('OWNER', 'MEMBER');
      expect(await own.db.selectFrom('webhook_events').select('id').execute()).toEqual([]);
      const empty = positionOf(await own.request('GET', `/v1/orgs/${org.id}`, { key: owner.key }));

      const fresh = await own.request('GET', `/v1/teams/${team.id}/events?after=${empty}`, { key: owner.key });
      expect([fresh.status, fresh.body.data]).toEqual([200, []]);

      const events = await createEvents(own, team, 2);
      await purge(events, own.db);
      const answers = [
        await own.request('GET', `/v1/orgs/${org.id}/events?after=${empty}`, { key: owner.key }),
        await own.request('GET', `/v1/teams/${team.id}/events?after=${empty}`, { key: owner.key }),
      ];
      const stream = await streamsOf(() => own).open(`/v1/events/stream?after=${empty}`, owner.key);
      expect([...answers, stream].map((answer) => [answer.status, answer.body.error.code])).toEqual(Array(3).fill([410, 'eventsExpired']));
    } finally {
      await own.close();
      await database.close();
    }
  });

  it('takes an id as before: an event id is no position, whatever it looks like', async () => {
    const { team, owner } = await newTeam();
    const ids = await createEvents(app, team, 2);

    const feed = await app.request('GET', `/v1/teams/${team.id}/events?after=${ids[0]}`, { key: owner.key });
    const unknown = await app.request('GET', `/v1/teams/${team.id}/events?after=${randomUUID()}`, { key: owner.key });

    expect(feed.body.data.map((event: { id: string }) => event.id)).toEqual([ids[1]]);
    expect(unknown.status).toBe(410);
  });
});

/**
 * The reads that state no position, each with why: everything else the contract reads (every GET) is
 * an organization's read and must declare `Log-Position`, so a new read without it fails here.
 */
const statesNoPosition: Partial<Record<OperationId, string>> = {
  getOpenApiDocument: 'the contract, no organization',
  getApiDocs: 'the docs page, no organization',
  getChangelog: 'the changelog, no organization',
  getMe: 'the caller, of every organization at once',
  listOrganizations: "the caller's organizations, several logs",
  listPlatformOrganizations: 'platform administration, no organization of the caller',
  listPlatformUsers: 'platform administration',
  listPlatformUserApiKeys: 'platform administration',
  getPlatformAiConfig: 'platform administration',
  listOrganizationEvents: 'the log itself: its own page and cursor say where it is',
  listTeamEvents: 'the log itself',
  getEvent: 'an event of the log',
  streamEvents: 'the log itself, live',
  listWebhooks: 'subscriptions: their changes send no event',
  getWebhook: 'a subscription: its changes send no event',
  listWebhookDeliveries: 'deliveries: no record of the log',
  getTeamSnapshot: 'its body states `position`, taken in the transaction that read it, exactly',
  exportTeamTasks: 'a CSV file read in batches of many statements as it is sent: no one position holds for it',
  exportTeamIssues: 'a CSV file read in batches, no one position',
  exportTeamGoals: 'a CSV file read in batches, no one position',
  exportTeamScorecard: 'a CSV file read in batches, no one position',
  getOrgExport: "an export job: its progress moves with no event; export.completed tells it's done",
  downloadOrgExport: 'an archive read from its own recorded place in the organization, not now',
};

const gets = operations.filter((operation) => operation.method === 'get');
const declares = (operationId: string) => {
  const ok = operations.find((operation) => operation.operationId === operationId)!.operation.responses?.['200'] as { headers?: Record<string, unknown> } | undefined;
  return ok?.headers?.['Log-Position'] !== undefined;
};

describe('which reads state a position: every read of an organization, by the contract', () => {
  it.each(gets.map((operation) => [operation.operationId!] as const))('%s declares Log-Position on its 200 unless it is no organization\'s read', (operationId) => {
    expect(declares(operationId), statesNoPosition[operationId as OperationId] ?? 'an organization read').toBe(statesNoPosition[operationId as OperationId] === undefined);
  });
});

describe(`every organization read answers its Log-Position, a position of its organization (${databaseLabel})`, () => {
  let world: World;
  beforeAll(async () => {
    world = await createWorld(app);
  });

  const stating = matrixRows.filter((row) => row.variant === undefined && declares(row.operationId));
  it('covers every read the contract declares it on', () => {
    expect(stating.map((row) => row.operationId).sort()).toEqual(gets.filter((operation) => declares(operation.operationId!)).map((operation) => operation.operationId).sort());
  });

  it.each(stating.map((row) => [row.operationId, row] as const))('%s', async (_operationId, row) => {
    const caller = allowedCaller(row);
    const target = row.prepare ? await row.prepare(world) : undefined;
    const { path } = row.request(world, target);

    const response = await app.request('GET', path, { key: world.keys[caller] });

    expect(response.status, JSON.stringify(response.body)).toBe(row.expect[callerNames.indexOf(caller)]);
    expect(logPositions(app.secrets).read(positionOf(response), { origin: 'query', name: 'after' }).orgId).toBe(world.org.id);
  });
});

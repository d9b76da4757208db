/**
 * The event feed (issue 29): an organization's log read by its Owners and Admins over HTTP, oldest
 * first, resumed after a remembered event, paged and filtered, each event the body of its webhook
 * deliveries with its id in front, byte for byte; an `after` the log no longer keeps is a 410 that
 * tells the consumer to resync, never a shorter page. Every answer is checked against the contract.
 *
 * Changes are made over HTTP (their events written by the outbox, as in production) or written into
 * the log by `createEvents`. Nothing waits on time: before reading, a test waits until every event lies
 * below the log's end the app knows, up to which its feeds always read (`feedShowsAll`).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecretBox } from '../src/auth/secrets.js';
import { encodeCursor } from '../src/db/pagination.js';
import { purgeEvents } from '../src/db/queries/webhooks.js';
import { deliveryBody, eventText } from '../src/events/outbox.js';
import { contract } from './support/contract.js';
import { createTestDatabase, databaseLabel, postgresUrl, type TestDatabase } from './support/database.js';
import { createEvents, feedShowsAll } from './support/eventFactories.js';
import { createTeam, createTeamWorld } from './support/factories.js';
import { expectPagesAsMapped, trickyTexts } from './support/jsonBodies.js';
import { startTestApp, type TestApp } from './support/testApp.js';

const day = 24 * 60 * 60 * 1000;

let database: TestDatabase;
let app: TestApp;
beforeAll(async () => {
  database = await createTestDatabase();
  app = await startTestApp({ database });
});
afterAll(async () => {
  await app.close();
  await database.close();
});

interface LogRow {
  id: string;
  event: string;
  txid: string;
  position: string;
}

/** The organization's log as the feed shows it, in log order, pings aside. */
async function logOf(orgId: string): Promise<LogRow[]> {
  const { rows } = await sql<LogRow>`
    select id, event, txid::text as txid, position::text as position from webhook_events
    where org_id = ${orgId} and type <> 'webhook.ping' order by txid, position
  `.execute(app.db);
  return rows;
}

/** An event as the feed lists it: the body of its deliveries with the id in front. */
const asEvent = (row: LogRow) => ({ id: row.id, ...(JSON.parse(deliveryBody(row.id, row.event)) as object) });

/** An organization with a team and an Owner who is in the team, so that the Owner can make every change. */
async function newOrganization() {
  const { org, team, person } = await createTeamWorld(app.db);
  const owner = await person('OWNER', 'MEMBER');
  return { org, team, person, owner, key: owner.key };
}

type Organization = Awaited<ReturnType<typeof newOrganization>>;

async function createTask(o: Organization, title = 'Book the Rotterdam slot', teamId = o.team.id) {
  const response = await app.request('POST', `/v1/teams/${teamId}/tasks`, { key: o.key, body: { title, ownerId: o.owner.user.id, dueDate: '2026-12-02' } });
  expect(response.status, response.text).toBe(201);
  return response.body as { id: string };
}

async function createIssue(o: Organization, teamId = o.team.id) {
  const response = await app.request('POST', `/v1/teams/${teamId}/issues`, { key: o.key, body: { title: 'Customs bond expires in March' } });
  expect(response.status, response.text).toBe(201);
}

async function feed(o: Pick<Organization, 'org' | 'key'>, query = '') {
  return app.request('GET', `/v1/orgs/${o.org.id}/events${query}`, { key: o.key });
}

/** The ids of every event of a walk through the feed's pages from `query`, keeping the query on every page. */
async function walk(o: Organization, query: string): Promise<{ ids: string[]; requests: number }> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let requests = 0;
  do {
    const response = await feed(o, `${query}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
    expect(response.status, response.text).toBe(200);
    requests += 1;
    ids.push(...response.body.data.map((event: { id: string }) => event.id));
    cursor = response.body.nextCursor;
  } while (cursor !== null);
  return { ids, requests };
}

/** Makes the organization's events older than the retention, as the clock would, and lets the worker's purge remove them. */
async function purge(ids: string[]) {
  await app.db.updateTable('webhook_events').set({ created_at: new Date(Date.now() - 40 * day) }).where('id', 'in', ids).execute();
  await purgeEvents(app.db, new Date(Date.now() - 30 * day), 500);
}

describe(`the event feed (${databaseLabel})`, () => {
  it('lists every change of the organization once, oldest first, each as the body of its deliveries with its id in front', async () => {
    const o = await newOrganization();
    const task = await createTask(o);
    expect((await app.request('PATCH', `/v1/tasks/${task.id}`, { key: o.key, body: { completed: true } })).status).toBe(200);
    await createIssue(o);
    expect((await app.request('DELETE', `/v1/tasks/${task.id}`, { key: o.key })).status).toBe(204);
    await feedShowsAll(app);

    const response = await feed(o);

    expect(response.status).toBe(200);
    expect(response.body.data.map((event: { type: string }) => event.type)).toEqual(['task.created', 'task.updated', 'issue.created', 'task.deleted']);
    expect(Object.keys(response.body.data[0])).toEqual(['id', 'type', 'timestamp', 'data']);
    expect(response.body.data[0].data).toMatchObject({ orgId: o.org.id, teamId: o.team.id, object: { id: task.id } });
    expect(response.text).toBe(JSON.stringify({ data: (await logOf(o.org.id)).map(asEvent), nextCursor: null }));
  });

  it('writes every page byte for byte as the log rows mapped, whatever text the records hold', async () => {
    const o = await newOrganization();
    for (const title of trickyTexts) await createTask(o, title);
    await feedShowsAll(app);
    const rows = await logOf(o.org.id);
    expect(rows).toHaveLength(trickyTexts.length);

    const cursors = app.secrets.tokens('feed cursor');
    const openCursor = (cursor: string) => {
      const place = cursors.open(cursor)!;
      return [place.readBigUInt64BE(0).toString(), place.readBigUInt64BE(8).toString()];
    };
    await expectPagesAsMapped(app, { path: `/v1/orgs/${o.org.id}/events`, key: o.key, rows, map: asEvent, cursorOf: (row) => [row.txid, row.position], openCursor }, 2);
  });

  it('resumes exactly after the event `after` names', async () => {
    const o = await newOrganization();
    const ids = await createEvents(app, o.team, 5);

    for (const [index, id] of ids.entries()) {
      const response = await feed(o, `?after=${id}`);
      expect(response.status).toBe(200);
      expect(response.body.data.map((event: { id: string }) => event.id)).toEqual(ids.slice(index + 1));
      expect(response.body.nextCursor).toBeNull();
    }
  });

  it('gives every event once, in order, one page per event at limit 1', async () => {
    const o = await newOrganization();
    const ids = await createEvents(app, o.team, 4);

    const { ids: walked, requests } = await walk(o, '?limit=1');

    expect(walked).toEqual(ids);
    expect(requests).toBe(ids.length);
  });

  it('continues from the cursor, not from `after`, when a client keeps `after` in the query of every page', async () => {
    const o = await newOrganization();
    const ids = await createEvents(app, o.team, 5);

    const { ids: walked } = await walk(o, `?after=${ids[1]}&limit=1`);

    expect(walked).toEqual(ids.slice(2));
  });

  it('gives only the events of the types asked for, comma separated', async () => {
    const o = await newOrganization();
    const task = await createTask(o);
    await createIssue(o);
    expect((await app.request('PATCH', `/v1/tasks/${task.id}`, { key: o.key, body: { completed: true } })).status).toBe(200);
    await feedShowsAll(app);

    const tasks = await feed(o, '?types=task.created,task.updated');
    const issues = await feed(o, '?types=issue.created');

    expect(tasks.body.data.map((event: { type: string }) => event.type)).toEqual(['task.created', 'task.updated']);
    expect(issues.body.data.map((event: { type: string }) => event.type)).toEqual(['issue.created']);
  });

  it('refuses webhook.ping as a type of the feed (422)', async () => {
    const o = await newOrganization();

    const response = await feed(o, '?types=task.created,webhook.ping');

    expect(response.status).toBe(422);
    expect(response.body.error.issues).toMatchObject([{ origin: 'query', code: 'invalid_value', path: ['types', '1'] }]);
  });

  it('takes at most as many types as there are event types: one more is a too_big issue with maximum 45', async () => {
    const o = await newOrganization();
    const eventTypes = (contract.components!.schemas!.EventType as { enum: string[] }).enum;

    const every = await feed(o, `?types=${eventTypes.join(',')}`);
    const oneMore = await feed(o, `?types=${[...eventTypes, eventTypes[0]].join(',')}`);

    expect(every.status).toBe(200);
    expect(oneMore.status).toBe(422);
    expect(oneMore.body.error.issues).toMatchObject([{ origin: 'query', code: 'too_big', path: ['types'], maximum: eventTypes.length, inclusive: true }]);
  });

  it("gives only a team's events with teamId, and the organization's own events belong to no team", async () => {
    const o = await newOrganization();
    const other = await createTeam(app.db, o.org.id);
    await app.db.insertInto('team_members').values({ team_id: other.id, user_id: o.owner.user.id, role: 'MEMBER' }).execute();
    await createTask(o);
    await createTask(o, 'Elsewhere', other.id);
    expect((await app.request('PATCH', `/v1/orgs/${o.org.id}`, { key: o.key, body: { name: 'Northwind Logistics' } })).status).toBe(200);
    await createIssue(o);
    await feedShowsAll(app);

    const team = await feed(o, `?teamId=${o.team.id}`);
    const otherTeam = await feed(o, `?teamId=${other.id}&types=task.created`);

    expect(team.body.data.map((event: { type: string }) => event.type)).toEqual(['task.created', 'issue.created']);
    expect(team.body.data.every((event: { data: { teamId: string } }) => event.data.teamId === o.team.id)).toBe(true);
    expect(otherTeam.body.data.map((event: { data: { object: { title: string } } }) => event.data.object.title)).toEqual(['Elsewhere']);
  });

  it('answers 410 eventsExpired for an `after` the retention removed from the log, never a shorter page', async () => {
    const o = await newOrganization();
    const ids = await createEvents(app, o.team, 3);
    await purge(ids.slice(0, 1));

    const expired = await feed(o, `?after=${ids[0]}`);
    const kept = await feed(o, `?after=${ids[1]}`);

    expect([expired.status, expired.body.error.code]).toEqual([410, 'eventsExpired']);
    expect(kept.body.data.map((event: { id: string }) => event.id)).toEqual(ids.slice(2));
  });

  it("answers 410 eventsExpired for an `after` that was never an event of the organization's log", async () => {
    const o = await newOrganization();
    const elsewhere = await newOrganization();
    await createEvents(app, o.team, 1);
    const [foreign] = await createEvents(app, elsewhere.team, 1);

    for (const after of [randomUUID(), foreign!, 'not-an-event']) {
      const response = await feed(o, `?after=${after}`);
      expect([response.status, response.body.error.code], after).toEqual([410, 'eventsExpired']);
    }
  });

  it('answers 410 eventsExpired for a cursor whose event the retention removed meanwhile', async () => {
    const o = await newOrganization();
    const ids = await createEvents(app, o.team, 3);
    const first = await feed(o, '?limit=1');
    await purge(ids.slice(0, 1));

    const next = await feed(o, `?limit=1&cursor=${encodeURIComponent(first.body.nextCursor)}`);

    expect([next.status, next.body.error.code]).toEqual([410, 'eventsExpired']);
  });

  it('reads a cursor of the earlier form (an event id) as `after` it, and one sealed with another key as no cursor (422)', async () => {
    const o = await newOrganization();
    const ids = await createEvents(app, o.team, 3);
    const earlier = encodeCursor([ids[0]!]);
    const foreign = createSecretBox(randomBytes(32)).tokens('feed cursor').seal(Buffer.alloc(16));

    const resumed = await feed(o, `?cursor=${earlier}`);
    const refused = await feed(o, `?cursor=${foreign}`);

    expect([resumed.status, resumed.body.data.map((event: { id: string }) => event.id)]).toEqual([200, ids.slice(1)]);
    expect([refused.status, refused.body.error.code]).toEqual([422, 'invalid']);
  });

  it("never shows another organization's events", async () => {
    const o = await newOrganization();
    const elsewhere = await newOrganization();
    await createTask(elsewhere);
    await createTask(o);
    await createEvents(app, elsewhere.team, 2);
    await feedShowsAll(app);

    const response = await feed(o);

    expect(response.body.data.map((event: { id: string }) => event.id)).toEqual((await logOf(o.org.id)).map((row) => row.id));
    expect(response.body.data.every((event: { data: { orgId: string } }) => event.data.orgId === o.org.id)).toBe(true);
    expect((await feed({ org: elsewhere.org, key: o.key })).status).toBe(403);
  });

  it('leaves pings out: no change, not in the feed, not found by id, and no place to resume from', async () => {
    const o = await newOrganization();
    const created = await app.request('POST', `/v1/orgs/${o.org.id}/webhooks`, { key: o.key, body: { url: 'https://hooks.northwind.example/teamos', events: ['*'] } });
    expect(created.status).toBe(201);
    await createTask(o);
    await feedShowsAll(app);
    const pings = await app.db.selectFrom('webhook_events').select('id').where('org_id', '=', o.org.id).where('type', '=', 'webhook.ping').execute();
    expect(pings).toHaveLength(1);
    const pingId = pings[0]!.id;

    const listed = await feed(o);
    const byId = await app.request('GET', `/v1/events/${pingId}`, { key: o.key });
    const after = await feed(o, `?after=${pingId}`);

    expect(listed.body.data.map((event: { type: string }) => event.type)).toEqual(['task.created']);
    expect(byId.status).toBe(404);
    expect([after.status, after.body.error.code]).toEqual([410, 'eventsExpired']);
  });

  it('answers one event by id exactly as the feed lists it', async () => {
    const o = await newOrganization();
    await createTask(o, trickyTexts[0]);
    await feedShowsAll(app);
    const [row] = await logOf(o.org.id);

    const response = await app.request('GET', `/v1/events/${row!.id}`, { key: o.key });

    expect(response.status).toBe(200);
    expect(response.text).toBe(JSON.stringify(asEvent(row!)));
  });

  it("hides an event (404) from everyone but its organization's Owners and Admins", async () => {
    const o = await newOrganization();
    const elsewhere = await newOrganization();
    const [id] = await createEvents(app, o.team, 1);
    const admin = await o.person('ADMIN');
    const teamOwner = await o.person('MEMBER', 'OWNER');
    const implementer = await o.person('IMPLEMENTER');

    const statuses = [];
    for (const key of [o.key, admin.key, teamOwner.key, implementer.key, elsewhere.key]) {
      statuses.push((await app.request('GET', `/v1/events/${id}`, { key })).status);
    }

    expect(statuses).toEqual([200, 200, 404, 404, 404]);
  });

  it('filters on the feed types of the contract: every webhook event type but webhook.ping', () => {
    const schemas = contract.components!.schemas! as Record<string, { enum?: string[] }>;

    expect(schemas.EventType!.enum).toEqual(schemas.WebhookEventType!.enum!.filter((type) => type !== 'webhook.ping'));
  });
});

describe.runIf(postgresUrl)(`the event feed while changes overlap (PostgreSQL only: PGlite runs one transaction at a time)`, () => {
  /** A change that began first and commits last: its event written in a transaction of its own session, not yet committed. */
  async function runningChange(o: Organization) {
    const session = new pg.Client({ connectionString: database.url });
    await session.connect();
    await session.query('begin');
    const id = randomUUID();
    const event = eventText(id, 'task.deleted', new Date(), { orgId: o.org.id, teamId: o.team.id, object: { id: randomUUID(), revision: 1 } });
    await session.query(`insert into webhook_events (id, org_id, team_id, type, event) values ($1, $2, $3, 'task.deleted', $4)`, [id, o.org.id, o.team.id, event]);
    return { id, commit: () => session.query('commit'), end: () => session.end() };
  }

  it('shows no event behind a change still running, and shows it in its place once that change commits', async () => {
    const o = await newOrganization();
    const [seen] = await createEvents(app, o.team, 1);
    const running = await runningChange(o);
    try {
      const later = await createEventBesides(o);

      const meanwhile = await feed(o, `?after=${seen}`);
      await running.commit();
      await feedShowsAll(app);
      const after = await feed(o, `?after=${seen}`);

      expect(meanwhile.body.data.map((event: { id: string }) => event.id)).toEqual([]);
      expect(after.body.data.map((event: { id: string }) => event.id)).toEqual([running.id, later]);
    } finally {
      await running.end();
    }
  });

  it('answers an event by id only once the feed shows it, so that no id resumes the feed past a change still running', async () => {
    const o = await newOrganization();
    const running = await runningChange(o);
    try {
      const later = await createEventBesides(o);

      const meanwhile = await app.request('GET', `/v1/events/${later}`, { key: o.key });
      await running.commit();
      await feedShowsAll(app);
      const after = await app.request('GET', `/v1/events/${later}`, { key: o.key });

      expect([meanwhile.status, after.status]).toEqual([404, 200]);
    } finally {
      await running.end();
    }
  });
});

/** Writes one event of the organization (a statement of its own, committed at once), without waiting for the feed to show it: its id. */
async function createEventBesides(o: Organization): Promise<string> {
  const id = randomUUID();
  const event = eventText(id, 'task.deleted', new Date(), { orgId: o.org.id, teamId: o.team.id, object: { id: randomUUID(), revision: 1 } });
  await app.db.insertInto('webhook_events').values({ id, org_id: o.org.id, team_id: o.team.id, type: 'task.deleted', event }).execute();
  return id;
}

describe(`a meeting in an event (${databaseLabel})`, () => {
  /** A meeting in progress that its team Admin rated, with a message the Admin acknowledged. */
  async function ratedByItsAdmin() {
    const o = await newOrganization();
    const admin = await o.person('MEMBER', 'ADMIN');
    const as = (method: string, path: string, body?: object) => app.request(method, `/v1${path}`, { key: admin.key, body });
    const meeting = (await as('POST', `/teams/${o.team.id}/meetings`, { date: '2026-11-30' })).body as { id: string };
    expect((await as('PATCH', `/meetings/${meeting.id}`, { status: 'IN_PROGRESS' })).status).toBe(200);
    expect((await as('PUT', `/meetings/${meeting.id}/ratings/me`, { rating: 9 })).status).toBe(200);
    const message = (await as('POST', `/meetings/${meeting.id}/messages`, { content: 'Quotes within one working day.' })).body as { id: string };
    expect((await as('POST', '/messages/acknowledge', { ids: [message.id] })).status).toBe(204);
    return { o, admin, meeting, as };
  }

  async function meetingEvents(o: Organization, type: string) {
    await feedShowsAll(app);
    const page = await feed(o, `?types=${type}&limit=200`);
    expect(page.status, page.text).toBe(200);
    return page.body.data as { data: { object: Record<string, unknown> } }[];
  }

  it("carries no hidden rating, not even the writer's own: meeting.updated shows the meeting as the Owner's GET does", async () => {
    const { o, admin, meeting, as } = await ratedByItsAdmin();
    const written = await as('PATCH', `/meetings/${meeting.id}`, { notes: 'The pallet shortage is covered until January.' });
    expect(written.body).toMatchObject({ ratingsHidden: true, ratings: [{ userId: admin.user.id, rating: 9 }] });

    // The last: the rating and the message given before it sent their own meeting.updated.
    const event = (await meetingEvents(o, 'meeting.updated')).at(-1);
    const asOwner = await app.request('GET', `/v1/meetings/${meeting.id}`, { key: o.key });

    expect(asOwner.body).toMatchObject({ ratingsHidden: true, ratings: [] });
    expect(event!.data.object).toEqual(asOwner.body);
  });

  it('carries every rating once they are revealed, in meeting.ratings_revealed', async () => {
    const { o, admin, meeting, as } = await ratedByItsAdmin();
    expect((await as('POST', `/meetings/${meeting.id}/reveal-ratings`)).status).toBe(200);

    const [event] = await meetingEvents(o, 'meeting.ratings_revealed');

    expect(event!.data.object).toMatchObject({ ratingsHidden: false, ratings: [{ userId: admin.user.id, rating: 9, absent: false }] });
  });

  it("tells no reader's own acknowledgement: every message in a meeting event is unacknowledged", async () => {
    const { o, meeting, as } = await ratedByItsAdmin();
    expect((await as('PATCH', `/meetings/${meeting.id}`, { status: 'COMPLETED' })).status).toBe(200);

    const events = await meetingEvents(o, 'meeting.status_changed');
    const completed = events.find((e) => e.data.object.status === 'COMPLETED')!;

    expect(completed.data.object).toMatchObject({ ratingsHidden: false, messages: [{ acknowledged: false }] });
  });
});

/**
 * A team's feed (issue 38): the organization's log narrowed to one team and to one reader, over HTTP.
 * Each reader gets exactly the events they may read, in the log's order, each byte for byte as the
 * organization's feed shows it; events they may not read are skipped while the cursor moves on; the
 * same `after`, cursor, `types` and 410 as the organization's feed; and who may read is judged on
 * every request. Changes are made over HTTP, their events written by the outbox as in production;
 * before reading, a test waits until every event lies below the log's end the app knows (`feedShowsAll`).
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeEvents } from '../src/db/queries/webhooks.js';
import { databaseLabel } from './support/database.js';
import { createEvents, feedShowsAll } from './support/eventFactories.js';
import { addTeamMember, createCaller, createTeam, createTeamWorld } from './support/factories.js';
import { createMeetingIn } from './support/meetingFactories.js';
import { startTestApp, type TestApp } from './support/testApp.js';

const day = 24 * 60 * 60 * 1000;

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

interface Shown {
  id: string;
  type: string;
}

async function teamFeed(teamId: string, key: string, query = '') {
  return app.request('GET', `/v1/teams/${teamId}/events${query}`, { key });
}

/** The events of a walk through the team's feed from `query`, page by page, and how many pages it took. */
async function walk(teamId: string, key: string, query = '?limit=200'): Promise<{ shown: Shown[]; pages: number }> {
  const shown: Shown[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const response = await teamFeed(teamId, key, `${query}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
    expect(response.status, response.text).toBe(200);
    pages += 1;
    shown.push(...response.body.data.map((event: Shown) => ({ id: event.id, type: event.type })));
    cursor = response.body.nextCursor;
  } while (cursor !== null);
  return { shown, pages };
}

/**
 * A team with one person of every kind that reads it differently, and a change of every kind whose
 * readers differ: a task (every reader of the team), a review the Member wrote of the Viewer, a review
 * the team Admin wrote of the Member, and the Member's acknowledgement of a cascading message.
 */
async function teamWithEvents() {
  const { org, team, person } = await createTeamWorld(app.db);
  const owner = await person('OWNER', 'MEMBER');
  const orgAdmin = await person('ADMIN');
  const implementer = await person('IMPLEMENTER');
  const teamAdmin = await person('MEMBER', 'ADMIN');
  const member = await person('MEMBER', 'MEMBER');
  const viewer = await person('MEMBER', 'VIEWER');
  const otherTeam = await createTeam(app.db, org.id);
  const elsewhere = await person('MEMBER');
  await addTeamMember(app.db, otherTeam.id, elsewhere.user.id, 'OWNER');
  const outsider = await createCaller(app.db);

  const ids: Record<string, string> = {};
  const change = async (name: string, key: string, method: string, path: string, body: unknown) => {
    const response = await app.request(method, path, { key, body });
    expect(response.status, `${name}: ${response.text}`).toBeLessThan(300);
  };
  const review = (userId: string) => ({ userId, quarter: '2026-Q4', coreValuesScores: { 'Customer first': true }, gwc: { getsIt: true, wantsIt: true, capacityToDoIt: false } });
  await change('task', owner.key, 'POST', `/v1/teams/${team.id}/tasks`, { title: 'Book the Rotterdam slot', ownerId: member.user.id, dueDate: '2026-12-02' });
  await change('review of the Viewer', member.key, 'PUT', `/v1/teams/${team.id}/people-reviews`, review(viewer.user.id));
  await change('review of the Member', teamAdmin.key, 'PUT', `/v1/teams/${team.id}/people-reviews`, review(member.user.id));
  const meeting = await createMeetingIn(app.db, team.id, owner.user.id, { status: 'IN_PROGRESS' });
  const message = await app.request('POST', `/v1/meetings/${meeting.id}/messages`, { key: teamAdmin.key, body: { content: 'Prices go up on 1 January.' } });
  expect(message.status, message.text).toBe(201);
  await change('acknowledgement', member.key, 'POST', '/v1/messages/acknowledge', { ids: [message.body.id] });
  await feedShowsAll(app);
  const { rows } = await sql<{ id: string; type: string; event: string }>`
    select id, type, event from webhook_events where team_id = ${team.id} order by txid, position
  `.execute(app.db);
  for (const row of rows) ids[row.type === 'people_review.set' ? `review of ${JSON.parse(row.event).data.object.userId}` : row.type] = row.id;
  return { org, team, owner, orgAdmin, implementer, teamAdmin, member, viewer, elsewhere, outsider, log: rows, ids };
}

type TeamWithEvents = Awaited<ReturnType<typeof teamWithEvents>>;

const idsOf = (t: TeamWithEvents, names: string[]) => names.map((name) => t.ids[name]);

describe(`a team's feed (${databaseLabel})`, () => {
  it('gives each reader exactly the events they may read, in log order', async () => {
    const t = await teamWithEvents();
    const every = t.log.map((row) => row.id);
    const reviewOfViewer = `review of ${t.viewer.user.id}`;
    const reviewOfMember = `review of ${t.member.user.id}`;
    const expected: [string, string, (string | undefined)[]][] = [
      ['organization Owner', t.owner.key, every],
      ['organization Admin', t.orgAdmin.key, every],
      ['Implementer', t.implementer.key, every.filter((id) => id !== t.ids['cascading_message.acknowledged'])],
      ['team Admin', t.teamAdmin.key, every.filter((id) => id !== t.ids['cascading_message.acknowledged'])],
      ['team Member', t.member.key, idsOf(t, ['task.created', reviewOfViewer, reviewOfMember, 'cascading_message.created', 'meeting.updated', 'cascading_message.acknowledged'])],
      ['team Viewer', t.viewer.key, idsOf(t, ['task.created', reviewOfViewer, 'cascading_message.created', 'meeting.updated'])],
    ];
    // The message's meeting shows it: its meeting.updated follows.
    expect(t.log.map((row) => row.type)).toEqual(['task.created', 'people_review.set', 'people_review.set', 'cascading_message.created', 'meeting.updated', 'cascading_message.acknowledged']);

    for (const [reader, key, ids] of expected) {
      const { shown } = await walk(t.team.id, key);
      expect(shown.map((event) => event.id), reader).toEqual(ids);
    }
  });

  it("shows every event byte for byte as the organization's feed does", async () => {
    const t = await teamWithEvents();

    const team = await teamFeed(t.team.id, t.member.key);
    const organization = await app.request('GET', `/v1/orgs/${t.org.id}/events?teamId=${t.team.id}`, { key: t.owner.key });

    const shown = new Set(team.body.data.map((event: Shown) => event.id));
    const expected = organization.body.data.filter((event: Shown) => shown.has(event.id));
    expect(shown.size).toBeGreaterThan(0);
    expect(team.text).toBe(JSON.stringify({ data: expected, nextCursor: null }));
  });

  it("gives the organization's Owners the organization's feed narrowed to the team, byte for byte", async () => {
    const t = await teamWithEvents();

    const team = await teamFeed(t.team.id, t.orgAdmin.key);
    const organization = await app.request('GET', `/v1/orgs/${t.org.id}/events?teamId=${t.team.id}`, { key: t.owner.key });

    expect(team.text).toBe(organization.text);
  });

  it('reads on past the events a reader may not read: each page holds `limit` events they may read, the last one what is left', async () => {
    const t = await teamWithEvents();

    const second = await teamFeed(t.team.id, t.viewer.key, `?limit=1&after=${t.ids['task.created']}`);
    const third = await teamFeed(t.team.id, t.viewer.key, `?limit=1&cursor=${encodeURIComponent(second.body.nextCursor)}`);
    const { shown, pages } = await walk(t.team.id, t.viewer.key, '?limit=1');

    expect(second.body.data.map((event: Shown) => event.id)).toEqual(idsOf(t, [`review of ${t.viewer.user.id}`]));
    expect(third.body.data.map((event: Shown) => event.id)).toEqual(idsOf(t, ['cascading_message.created']));
    const last = await teamFeed(t.team.id, t.viewer.key, `?limit=1&cursor=${encodeURIComponent(third.body.nextCursor)}`);
    expect([last.body.data.map((event: Shown) => event.id), last.body.nextCursor]).toEqual([idsOf(t, ['meeting.updated']), null]);
    expect(shown.map((event) => event.id)).toEqual(idsOf(t, ['task.created', `review of ${t.viewer.user.id}`, 'cascading_message.created', 'meeting.updated']));
    expect(pages).toBe(4);
  });

  it('tells a Viewer paging people reviews one by one neither the ids nor the number of the reviews hidden from them', async () => {
    /** A team whose Viewer may read two reviews (of themselves), with `hidden` reviews of a Member around them; the Viewer's walk, one review a page. */
    const viewersWalk = async (hidden: number) => {
      const { team, person } = await createTeamWorld(app.db);
      const teamAdmin = await person('MEMBER', 'ADMIN');
      const member = await person('MEMBER', 'MEMBER');
      const viewer = await person('MEMBER', 'VIEWER');
      let quarter = 0;
      const review = async (key: string, userId: string) => {
        quarter += 1;
        const body = { userId, quarter: `20${20 + Math.floor(quarter / 4)}-Q${(quarter % 4) + 1}`, coreValuesScores: { 'Customer first': true }, gwc: { getsIt: true, wantsIt: true, capacityToDoIt: true } };
        const response = await app.request('PUT', `/v1/teams/${team.id}/people-reviews`, { key, body });
        expect(response.status, response.text).toBeLessThan(300);
      };
      const hide = async (count: number) => {
        for (let made = 0; made < count; made += 1) await review(teamAdmin.key, member.user.id);
      };
      await hide(hidden / 3);
      await review(member.key, viewer.user.id);
      await hide(hidden / 3);
      await review(member.key, viewer.user.id);
      await hide(hidden / 3);
      await feedShowsAll(app);
      const { rows } = await sql<{ id: string }>`select id from webhook_events where team_id = ${team.id}`.execute(app.db);
      const answers: { shown: number; cursor: string | null }[] = [];
      let cursor: string | null = null;
      do {
        const query: string = `?types=people_review.set&limit=1${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
        const page = await teamFeed(team.id, viewer.key, query);
        expect(page.status, page.text).toBe(200);
        for (const { id } of rows) expect(page.text.includes(id) && !page.body.data.some((event: Shown) => event.id === id), id).toBe(false);
        cursor = page.body.nextCursor;
        answers.push({ shown: page.body.data.length, cursor: cursor === null ? null : cursor.replace(/[A-Za-z0-9_-]/g, 'x') });
      } while (cursor !== null);
      expect(rows).toHaveLength(2 + hidden);
      return answers;
    };

    const [none, three, nine] = [await viewersWalk(0), await viewersWalk(3), await viewersWalk(9)];

    expect(none).toEqual([{ shown: 1, cursor: expect.stringMatching(/^x{20,}$/) }, { shown: 1, cursor: null }]);
    expect(three).toEqual(none);
    expect(nine).toEqual(none);
  });

  it('resumes exactly after the event `after` names', async () => {
    const { team, person } = await createTeamWorld(app.db);
    const member = await person('MEMBER', 'MEMBER');
    const ids = await createEvents(app, team, 4);

    for (const [index, id] of ids.entries()) {
      const response = await teamFeed(team.id, member.key, `?after=${id}`);
      expect(response.body.data.map((event: Shown) => event.id)).toEqual(ids.slice(index + 1));
    }
  });

  it('resumes from the cursor, not from `after`, when a client keeps `after` in the query of every page', async () => {
    const { team, person } = await createTeamWorld(app.db);
    const member = await person('MEMBER', 'MEMBER');
    const ids = await createEvents(app, team, 5);

    const { shown, pages } = await walk(team.id, member.key, `?after=${ids[1]}&limit=1`);

    expect(shown.map((event) => event.id)).toEqual(ids.slice(2));
    expect(pages).toBe(3);
  });

  it('gives only the events of the types asked for', async () => {
    const t = await teamWithEvents();

    const reviews = await teamFeed(t.team.id, t.teamAdmin.key, '?types=people_review.set,task.created');
    const messages = await teamFeed(t.team.id, t.member.key, '?types=cascading_message.acknowledged');

    expect(reviews.body.data.map((event: Shown) => event.type)).toEqual(['task.created', 'people_review.set', 'people_review.set']);
    expect(messages.body.data.map((event: Shown) => event.id)).toEqual(idsOf(t, ['cascading_message.acknowledged']));
  });

  it("leaves out other teams' events and the organization's own", async () => {
    const t = await teamWithEvents();
    const other = await createTeam(app.db, t.org.id);
    await createEvents(app, other, 2);
    expect((await app.request('PATCH', `/v1/orgs/${t.org.id}`, { key: t.owner.key, body: { name: 'Northwind Logistics' } })).status).toBe(200);
    await feedShowsAll(app);

    const { shown } = await walk(t.team.id, t.owner.key);

    expect(shown.map((event) => event.id)).toEqual(t.log.map((row) => row.id));
  });

  it('answers 410 eventsExpired for an `after` the retention removed from the log, never a shorter page', async () => {
    const { team, person } = await createTeamWorld(app.db);
    const member = await person('MEMBER', 'MEMBER');
    const ids = await createEvents(app, team, 3);
    await app.db.updateTable('webhook_events').set({ created_at: new Date(Date.now() - 40 * day) }).where('id', '=', ids[0]!).execute();
    await purgeEvents(app.db, new Date(Date.now() - 30 * day), 500);

    const expired = await teamFeed(team.id, member.key, `?after=${ids[0]}`);
    const kept = await teamFeed(team.id, member.key, `?after=${ids[1]}`);

    expect([expired.status, expired.body.error.code]).toEqual([410, 'eventsExpired']);
    expect(kept.body.data.map((event: Shown) => event.id)).toEqual(ids.slice(2));
  });

  it('refuses a person removed from the team with 403 on their next request, for its old events too', async () => {
    const t = await teamWithEvents();
    expect((await teamFeed(t.team.id, t.member.key)).status).toBe(200);

    const removed = await app.request('DELETE', `/v1/teams/${t.team.id}/members/${t.member.user.id}`, { key: t.owner.key });
    const next = await teamFeed(t.team.id, t.member.key);

    expect(removed.status).toBe(204);
    expect([next.status, next.body.error.code]).toEqual([403, 'forbidden']);
  });

  it('refuses a member of another team (403) and answers 404 for an unknown team', async () => {
    const t = await teamWithEvents();

    const otherTeamMember = await teamFeed(t.team.id, t.elsewhere.key);
    const unknown = await teamFeed('0e0e0000-0000-4000-8000-000000000000', t.owner.key);

    expect([otherTeamMember.status, otherTeamMember.body.error.code]).toEqual([403, 'forbidden']);
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'notFound']);
  });
});

/**
 * Side effects (docs/decisions.md, "Side effects"): a change that alters what the GET of another record
 * answers gives that record a greater revision and sends its event (the catalog's `alsoSends`), whose
 * object is what a reader's GET of it answers right after — read here from the team's feed as that
 * reader sees it, over HTTP. Hidden ratings stay hidden in it; an acknowledgement, the reader's own
 * state, moves no other reader's revision. Members carry revisions too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseLabel } from './support/database.js';
import { createGoal } from './support/executionFactories.js';
import { createTeamWorld } from './support/factories.js';
import { createMeetingIn, createMeetingWorld, createMessage } from './support/meetingFactories.js';
import { createOperator } from './support/platformFactories.js';
import { startTestApp, type TestApp } from './support/testApp.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

interface FeedEvent {
  type: string;
  data: { object: { id?: string; userId?: string; revision?: number } & Record<string, unknown> };
}

/** The events of the team's feed as `key`'s holder reads them, oldest first. */
async function feed(teamId: string, key: string): Promise<FeedEvent[]> {
  const events: FeedEvent[] = [];
  let cursor: string | null = null;
  do {
    const page: { status: number; body: { data: FeedEvent[]; nextCursor: string | null } } = await app.request('GET', `/v1/teams/${teamId}/events?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { key });
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    events.push(...page.body.data);
    cursor = page.body.nextCursor;
  } while (cursor);
  return events;
}

/** The objects of the events of `type` about the record `id` in the team's feed, as `key`'s holder reads them. */
async function objectsOf(teamId: string, key: string, type: string, id: string) {
  return (await feed(teamId, key)).filter((event) => event.type === type && event.data.object.id === id).map((event) => event.data.object);
}

describe(`a goal's milestones (${databaseLabel})`, () => {
  it('a milestone added, changed or deleted sends goal.updated after its own event, with the goal as its GET answers it and a greater revision', async () => {
    const { org, team, person } = await createTeamWorld(app.db);
    const admin = await person('MEMBER', 'ADMIN');
    const reader = await person('MEMBER', 'VIEWER');
    const goal = await createGoal(app.db, { id: team.id, org_id: org.id }, admin.user.id);
    const read = async () => (await app.request('GET', `/v1/goals/${goal.id}`, { key: reader.key })).body;

    const first = await read();
    const milestone = await app.request('POST', `/v1/goals/${goal.id}/milestones`, { key: admin.key, body: { title: 'Sign the lease' } });
    const added = await read();
    await app.request('PATCH', `/v1/milestones/${milestone.body.id}`, { key: admin.key, body: { completed: true } });
    const changed = await read();
    await app.request('DELETE', `/v1/milestones/${milestone.body.id}`, { key: admin.key });
    const deleted = await read();

    expect(await objectsOf(team.id, reader.key, 'goal.updated', goal.id)).toEqual([added, changed, deleted]);
    expect([first.revision, added.revision, changed.revision, deleted.revision]).toEqual([...new Set([first.revision, added.revision, changed.revision, deleted.revision])].sort((a, b) => a - b));
    const types = (await feed(team.id, reader.key)).map((event) => event.type);
    expect(types).toEqual(['milestone.created', 'goal.updated', 'milestone.updated', 'goal.updated', 'milestone.deleted', 'goal.updated']);
  });
});

describe(`a meeting's content (${databaseLabel})`, () => {
  it('a segue, headline or message added, and a message deleted, each send meeting.updated with the meeting as a reader\'s GET answers it', async () => {
    const { team, admin, viewer } = await createMeetingWorld(app.db);
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id, { status: 'IN_PROGRESS', startedAt: new Date() });
    const read = async () => (await app.request('GET', `/v1/meetings/${meeting.id}`, { key: viewer.key })).body;

    const reads = [await read()];
    await app.request('POST', `/v1/meetings/${meeting.id}/segues`, { key: admin.key, body: { content: 'A new client in Brno.' } });
    reads.push(await read());
    await app.request('POST', `/v1/meetings/${meeting.id}/headlines`, { key: admin.key, body: { type: 'CUSTOMER', content: 'Baltic Trade signed.' } });
    reads.push(await read());
    const message = await app.request('POST', `/v1/meetings/${meeting.id}/messages`, { key: admin.key, body: { content: 'The warehouse closes on Friday.' } });
    reads.push(await read());
    await app.request('DELETE', `/v1/messages/${message.body.id}`, { key: admin.key });
    reads.push(await read());

    expect(await objectsOf(team.id, viewer.key, 'meeting.updated', meeting.id)).toEqual(reads.slice(1));
    const revisions = reads.map((detail) => detail.revision);
    expect(revisions).toEqual([...new Set(revisions)].sort((a, b) => a - b));
  });

  it('a rating given while the ratings are hidden sends meeting.updated with its rating summary and no rating, as a reader who has not rated sees it', async () => {
    const { team, admin, member, viewer } = await createMeetingWorld(app.db);
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id, { status: 'IN_PROGRESS', startedAt: new Date() });
    const before = (await app.request('GET', `/v1/meetings/${meeting.id}`, { key: viewer.key })).body;

    expect((await app.request('PUT', `/v1/meetings/${meeting.id}/ratings/me`, { key: member.key, body: { rating: 9 } })).status).toBe(200);
    const seen = (await app.request('GET', `/v1/meetings/${meeting.id}`, { key: viewer.key })).body;
    const own = (await app.request('GET', `/v1/meetings/${meeting.id}`, { key: member.key })).body;

    expect(seen.revision).toBeGreaterThan(before.revision);
    expect(seen.rating).toEqual({ average: null, ratedCount: 1, absentCount: 0 });
    const [event] = await objectsOf(team.id, viewer.key, 'meeting.updated', meeting.id);
    expect(event).toEqual(seen);
    // The rater's own rating, which only their GET shows while hidden, is in no event: not even in theirs.
    expect(own.ratings).toEqual([{ userId: member.user.id, rating: 9, absent: false }]);
    expect(await objectsOf(team.id, member.key, 'meeting.updated', meeting.id)).toEqual([{ ...own, ratings: [] }]);
  });

  it('revealing the ratings sends meeting.ratings_revealed with the average, as every reader\'s GET answers it', async () => {
    const { team, admin, member, viewer } = await createMeetingWorld(app.db);
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id, { status: 'IN_PROGRESS', startedAt: new Date() });
    await app.request('PUT', `/v1/meetings/${meeting.id}/ratings/me`, { key: member.key, body: { rating: 9 } });
    await app.request('PUT', `/v1/meetings/${meeting.id}/ratings/me`, { key: admin.key, body: { rating: 8 } });

    expect((await app.request('POST', `/v1/meetings/${meeting.id}/reveal-ratings`, { key: admin.key })).status).toBe(200);
    const seen = (await app.request('GET', `/v1/meetings/${meeting.id}`, { key: viewer.key })).body;

    expect(seen.rating.average).toBe(8.5);
    expect(await objectsOf(team.id, viewer.key, 'meeting.ratings_revealed', meeting.id)).toEqual([seen]);
    const updates = await objectsOf(team.id, viewer.key, 'meeting.updated', meeting.id);
    expect(Math.max(...updates.map((object) => object.revision!))).toBeLessThan(seen.revision);
  });

  it("an acknowledgement moves neither the message's nor the meeting's revision, and sends no meeting.updated", async () => {
    const { org, team, admin, member, viewer } = await createMeetingWorld(app.db);
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id, { status: 'IN_PROGRESS', startedAt: new Date() });
    const message = await createMessage(app.db, { id: meeting.id, orgId: org.id }, admin.user.id);
    const before = (await app.request('GET', `/v1/meetings/${meeting.id}`, { key: viewer.key })).body;

    expect((await app.request('POST', '/v1/messages/acknowledge', { key: member.key, body: { ids: [message.id] } })).status).toBe(204);
    const after = (await app.request('GET', `/v1/meetings/${meeting.id}`, { key: viewer.key })).body;
    const acknowledger = (await app.request('GET', `/v1/meetings/${meeting.id}`, { key: member.key })).body;

    expect(after).toEqual(before);
    expect(acknowledger.messages.map((shown: { acknowledged: boolean }) => shown.acknowledged)).toEqual([true]);
    expect((await feed(team.id, viewer.key)).map((event) => event.type)).not.toContain('meeting.updated');
    expect((await feed(team.id, member.key)).map((event) => [event.type, event.data.object])).toEqual([
      ['cascading_message.acknowledged', { id: message.id, userId: member.user.id, revision: expect.any(Number) }],
    ]);
  });
});

describe(`members' revisions (${databaseLabel})`, () => {
  it("a team member's change of role gives the membership a greater revision, which its answer, its event and the list carry", async () => {
    const { team, person } = await createTeamWorld(app.db);
    const owner = await person('OWNER', 'OWNER');
    const member = await person('MEMBER', 'MEMBER');
    const listed = async () =>
      ((await app.request('GET', `/v1/teams/${team.id}/members`, { key: owner.key })).body.data as { userId: string; revision: number }[]).find(
        (shown) => shown.userId === member.user.id,
      )!;

    const before = await listed();
    const changed = await app.request('PATCH', `/v1/teams/${team.id}/members/${member.user.id}`, { key: owner.key, body: { role: 'ADMIN' } });

    expect(changed.status).toBe(200);
    expect(changed.body.revision).toBeGreaterThan(before.revision);
    expect(await listed()).toEqual(changed.body);
    const events = (await feed(team.id, owner.key)).filter((event) => event.type === 'team_member.updated').map((event) => event.data.object);
    expect(events).toEqual([changed.body]);
  });

  it('a removal carries the log position of its change as revision: above the membership it ends, below the one that comes back', async () => {
    const { team, person } = await createTeamWorld(app.db);
    const owner = await person('OWNER', 'OWNER');
    const member = await person('MEMBER', 'MEMBER');
    const listed = async () => ((await app.request('GET', `/v1/teams/${team.id}/members`, { key: owner.key })).body.data as { userId: string; revision: number }[]).find((shown) => shown.userId === member.user.id);
    const before = (await listed())!;

    expect((await app.request('DELETE', `/v1/teams/${team.id}/members/${member.user.id}`, { key: owner.key })).status).toBe(204);
    const back = await app.request('POST', `/v1/teams/${team.id}/members`, { key: owner.key, body: { userId: member.user.id, role: 'VIEWER' } });
    expect(back.status).toBe(201);

    const [removal] = (await feed(team.id, owner.key)).filter((event) => event.type === 'team_member.removed').map((event) => event.data.object);
    expect(removal).toEqual({ userId: member.user.id, revision: expect.any(Number) });
    expect(removal!.revision).toBeGreaterThan(before.revision);
    expect(back.body.revision).toBeGreaterThan(removal!.revision!);
    expect(await listed()).toEqual(back.body);
  });

  it('a deletion, a rating and an acknowledgement carry the log position of their change as revision, greater than the last revision of what they concern', async () => {
    const { org, team, admin, member } = await createMeetingWorld(app.db);
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id, { status: 'IN_PROGRESS', startedAt: new Date() });
    const message = await createMessage(app.db, { id: meeting.id, orgId: org.id }, admin.user.id);
    const shown = (await app.request('GET', `/v1/meetings/${meeting.id}`, { key: admin.key })).body;

    await app.request('PUT', `/v1/meetings/${meeting.id}/ratings/me`, { key: member.key, body: { rating: 9 } });
    await app.request('POST', '/v1/messages/acknowledge', { key: member.key, body: { ids: [message.id] } });
    expect((await app.request('DELETE', `/v1/messages/${message.id}`, { key: admin.key })).status).toBe(204);

    const events = (await feed(team.id, admin.key)).filter((event) => ['meeting_rating.set', 'cascading_message.acknowledged', 'cascading_message.deleted'].includes(event.type));
    expect(events.map((event) => event.type)).toEqual(['meeting_rating.set', 'cascading_message.deleted']);
    const acknowledged = (await feed(team.id, member.key)).find((event) => event.type === 'cascading_message.acknowledged')!;
    const revisions = [events[0]!.data.object.revision!, acknowledged.data.object.revision!, events[1]!.data.object.revision!];
    expect(revisions[0]).toBeGreaterThan(shown.revision);
    expect(revisions).toEqual([...revisions].sort((a, b) => a - b));
    expect(events[1]!.data.object).toEqual({ id: message.id, revision: revisions[2] });
  });

  it("an organization's change of settings gives it a greater revision, which its GET answers", async () => {
    const { org, person } = await createTeamWorld(app.db);
    const owner = await person('OWNER');
    const before = (await app.request('GET', `/v1/orgs/${org.id}`, { key: owner.key })).body;

    const changed = await app.request('PATCH', `/v1/orgs/${org.id}`, { key: owner.key, body: { name: 'Northwind Freight' } });
    const after = (await app.request('GET', `/v1/orgs/${org.id}`, { key: owner.key })).body;

    expect(changed.body.revision).toBeGreaterThan(before.revision);
    expect(after).toEqual(changed.body);
  });
});

describe(`records a change shifts or takes with it (${databaseLabel})`, () => {
  it("moving a metric sends metric.updated for the neighbour it swapped places with, and deleting one for each metric below, as the list then answers them", async () => {
    const { team, person } = await createTeamWorld(app.db);
    const admin = await person('MEMBER', 'ADMIN');
    const reader = await person('MEMBER', 'VIEWER');
    const ids: string[] = [];
    for (const title of ['Revenue', 'New clients', 'Open tickets', 'Churn']) {
      ids.push((await app.request('POST', `/v1/teams/${team.id}/metrics`, { key: admin.key, body: { title, goal: '>= 1', ownerId: admin.user.id } })).body.id);
    }
    const listed = async () => (await app.request('GET', `/v1/teams/${team.id}/metrics`, { key: reader.key })).body.data as { id: string; revision: number; position: number }[];
    const updatesOf = async () => (await feed(team.id, reader.key)).filter((event) => event.type === 'metric.updated').map((event) => event.data.object);

    const before = await listed();
    expect((await app.request('PATCH', `/v1/metrics/${ids[0]}`, { key: admin.key, body: { direction: 'down' } })).status).toBe(200);
    const moved = await listed();
    expect(moved.map((metric) => metric.id)).toEqual([ids[1], ids[0], ids[2], ids[3]]);
    expect(moved[0]!.revision).toBeGreaterThan(before[1]!.revision);
    // The neighbour's event comes with the move, before the moved metric's own.
    expect(await updatesOf()).toEqual([moved[0], moved[1]]);

    expect((await app.request('DELETE', `/v1/metrics/${ids[1]}`, { key: admin.key })).status).toBe(204);
    const after = await listed();
    expect(after.map((metric) => [metric.id, metric.position])).toEqual([[ids[0], 1], [ids[2], 2], [ids[3], 3]]);
    expect((await updatesOf()).slice(2)).toEqual(after);
    expect((await feed(team.id, reader.key)).map((event) => event.type).slice(4)).toEqual([...Array(5).fill('metric.updated'), 'metric.deleted']);
  });
});

describe(`records a change takes with it or alters for its members (${databaseLabel})`, () => {
  it('deleting a seat sends seat.deleted for each seat below it, deleted with it, then for the seat itself', async () => {
    const { team, person } = await createTeamWorld(app.db);
    const admin = await person('MEMBER', 'ADMIN');
    const reader = await person('MEMBER', 'VIEWER');
    const seat = async (title: string, parentId?: string) =>
      (await app.request('POST', `/v1/teams/${team.id}/org-chart/seats`, { key: admin.key, body: { title, ...(parentId ? { parentId } : {}) } })).body.id as string;
    const top = await seat('Visionary');
    const integrator = await seat('Integrator', top);
    const sales = await seat('Sales', integrator);
    const operations = await seat('Operations', integrator);
    const kept = await seat('Finance');

    expect((await app.request('DELETE', `/v1/org-chart/seats/${integrator}`, { key: admin.key })).status).toBe(204);

    const deletions = (await feed(team.id, reader.key)).filter((event) => event.type === 'seat.deleted').map((event) => event.data.object.id);
    expect(deletions.slice(0, -1).sort()).toEqual([sales, operations].sort());
    expect(deletions.at(-1)).toBe(integrator);
    const listed = (await app.request('GET', `/v1/teams/${team.id}/org-chart`, { key: reader.key })).body.data.map((shown: { id: string }) => shown.id);
    expect(listed.sort()).toEqual([top, kept].sort());
  });

  it('removing a member from the organization sends team_member.removed for each of its teams they were in, then organization_member.removed', async () => {
    const { org, team, person } = await createTeamWorld(app.db);
    const owner = await person('OWNER', 'OWNER');
    const leaving = await person('MEMBER', 'MEMBER');
    const second = (await app.request('POST', `/v1/orgs/${org.id}/teams`, { key: owner.key, body: { name: 'Sales' } })).body.id as string;
    expect((await app.request('POST', `/v1/teams/${second}/members`, { key: owner.key, body: { userId: leaving.user.id, role: 'VIEWER' } })).status).toBe(201);

    expect((await app.request('DELETE', `/v1/orgs/${org.id}/members/${leaving.user.id}`, { key: owner.key })).status).toBe(204);

    for (const teamId of [team.id, second]) {
      const removals = (await feed(teamId, owner.key)).filter((event) => event.type === 'team_member.removed');
      expect(removals.map((event) => [event.data.object, (event.data as { teamId?: string }).teamId])).toEqual([[{ userId: leaving.user.id, revision: expect.any(Number) }, teamId]]);
    }
    const all = (await app.request('GET', `/v1/orgs/${org.id}/events?limit=100`, { key: owner.key })).body.data as FeedEvent[];
    expect(all.map((event) => event.type).slice(-3)).toEqual(['team_member.removed', 'team_member.removed', 'organization_member.removed']);
  });

  it("the platform's change of an organization's status sends organization.updated with the organization as its members' GET answers it", async () => {
    const { org, person } = await createTeamWorld(app.db);
    const owner = await person('OWNER', 'OWNER');
    const member = await person('MEMBER', 'MEMBER');
    const operator = await createOperator(app.db);
    const before = (await app.request('GET', `/v1/orgs/${org.id}`, { key: member.key })).body;

    expect((await app.request('PATCH', `/v1/platform/orgs/${org.id}`, { key: operator.key, body: { status: 'SUSPENDED' } })).status).toBe(200);
    expect((await app.request('PATCH', `/v1/platform/orgs/${org.id}`, { key: operator.key, body: { status: 'SUSPENDED' } })).status).toBe(200);
    const seen = (await app.request('GET', `/v1/orgs/${org.id}`, { key: member.key })).body;

    expect(seen.status).toBe('SUSPENDED');
    expect(seen.revision).toBeGreaterThan(before.revision);
    // Setting the status it has changes nothing and sends nothing; the event is the GET's answer but for the reader's own role.
    const logged = ((await app.request('GET', `/v1/orgs/${org.id}/events?limit=100`, { key: owner.key })).body.data as FeedEvent[]).filter(
      (event) => event.type === 'organization.updated',
    );
    expect(logged.map((event) => [event.data.object, (event.data as { teamId?: string | null }).teamId])).toEqual([[{ ...seen, role: 'OWNER' }, null]]);
  });
});

/**
 * Simultaneous requests over real HTTP: the promises integrators rely on when they retry or a
 * frontend double-submits. README.md "Concurrency" lists each operation with the mechanism that
 * keeps the promise. Promises tested next to their area:
 * - simultaneous PUTs of one metric week → one row: test/metrics.test.ts;
 * - simultaneous ratings → one rating per person: test/meetingRatings.test.ts;
 * - simultaneous PUTs of one people review → one row: test/peopleReviews.test.ts;
 * - simultaneous status moves of one meeting → one wins: test/meetings.test.ts;
 * - simultaneous additions of seats and metrics → distinct positions: test/orgChart.test.ts, test/metrics.test.ts;
 * - simultaneous first PATCHes of a vision → one vision: test/vision.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSeat } from './support/areaFactories.js';
import { databaseLabel } from './support/database.js';
import { createGoal, createTask } from './support/executionFactories.js';
import { addOrganizationMember, createCaller, createOrganization, createTeamWorld } from './support/factories.js';
import { createMeetingIn, createMeetingWorld, createMessage } from './support/meetingFactories.js';
import { startTestApp, type TestApp } from './support/testApp.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

/** How many requests each test sends at once: more than one pool's worth of connections would queue, not race. */
const parallel = 8;
const indexes = Array.from({ length: parallel }, (_, index) => index);

async function teamWithPeople() {
  const world = await createTeamWorld(app.db);
  const admin = await world.person('MEMBER', 'ADMIN');
  const people = await Promise.all(indexes.map(() => world.person('MEMBER', 'MEMBER')));
  return { ...world, admin, people };
}

const day = (index: number) => `2026-12-${String(index + 1).padStart(2, '0')}`;

describe(`simultaneous PATCHes of one item: the final state is one of the requests, never a mix (${databaseLabel})`, () => {
  it('PATCH /tasks/{id}: title, owner and due day all come from the same request', async () => {
    const { team, admin, people } = await teamWithPeople();
    const task = await createTask(app.db, team.id, admin.user.id);
    const bodies = indexes.map((index) => ({ title: `Version ${index}`, ownerId: people[index]!.user.id, dueDate: day(index) }));

    const answers = await Promise.all(bodies.map((body) => app.request('PATCH', `/v1/tasks/${task.id}`, { key: admin.key, body })));

    expect(answers.map((answer) => answer.status)).toEqual(indexes.map(() => 200));
    const stored = await app.db.selectFrom('tasks').selectAll().where('id', '=', task.id).executeTakeFirstOrThrow();
    expect(bodies).toContainEqual({ title: stored.title, ownerId: stored.owner_id, dueDate: stored.due_date });
  });

  it('PATCH /goals/{id}: title, description, owner and quarter all come from the same request', async () => {
    const { team, org, admin, people } = await teamWithPeople();
    const goal = await createGoal(app.db, { id: team.id, org_id: org.id }, admin.user.id);
    const bodies = indexes.map((index) => ({
      title: `Goal version ${index}`,
      description: `Description ${index}`,
      ownerId: people[index]!.user.id,
      quarter: `${2027 + index}-Q${(index % 4) + 1}`,
    }));

    const answers = await Promise.all(bodies.map((body) => app.request('PATCH', `/v1/goals/${goal.id}`, { key: admin.key, body })));

    expect(answers.map((answer) => answer.status)).toEqual(indexes.map(() => 200));
    const stored = await app.db.selectFrom('goals').selectAll().where('id', '=', goal.id).executeTakeFirstOrThrow();
    expect(bodies).toContainEqual({ title: stored.title, description: stored.description, ownerId: stored.owner_id, quarter: stored.quarter });
  });

  it('PATCH /org-chart/seats/{id}: title, holder and responsibilities all come from the same request', async () => {
    const { team, admin, people } = await teamWithPeople();
    const seat = await createSeat(app.db, team.id);
    const bodies = indexes.map((index) => ({ title: `Seat ${index}`, userId: people[index]!.user.id, responsibilities: `Duty ${index}` }));

    const answers = await Promise.all(bodies.map((body) => app.request('PATCH', `/v1/org-chart/seats/${seat.id}`, { key: admin.key, body })));

    expect(answers.map((answer) => answer.status)).toEqual(indexes.map(() => 200));
    const stored = await app.db.selectFrom('seats').selectAll().where('id', '=', seat.id).executeTakeFirstOrThrow();
    expect(bodies).toContainEqual({ title: stored.title, userId: stored.user_id, responsibilities: stored.responsibilities });
  });

  it('PATCH /meetings/{id} with notes: the stored notes are those of one request', async () => {
    const { team, admin } = await createMeetingWorld(app.db);
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id, { status: 'COMPLETED' });
    const notes = indexes.map((index) => `Notes, version ${index}`);

    const answers = await Promise.all(notes.map((text) => app.request('PATCH', `/v1/meetings/${meeting.id}`, { key: admin.key, body: { notes: text } })));

    expect(answers.map((answer) => answer.status)).toEqual(indexes.map(() => 200));
    const stored = await app.db.selectFrom('meetings').select('notes').where('id', '=', meeting.id).executeTakeFirstOrThrow();
    expect(notes).toContain(stored.notes);
  });

  it('time corrections of a COMPLETED meeting: start, duration and end all come from the same request', async () => {
    const { team, admin } = await createMeetingWorld(app.db);
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id, { status: 'COMPLETED', startedAt: new Date('2026-11-16T08:00:00.000Z') });
    const bodies = indexes.map((index) => ({ startedAt: `2026-11-${String(index + 2).padStart(2, '0')}T09:00:00.000Z`, durationMin: 30 + index }));

    const answers = await Promise.all(bodies.map((body) => app.request('PATCH', `/v1/meetings/${meeting.id}`, { key: admin.key, body })));

    expect(answers.map((answer) => answer.status)).toEqual(indexes.map(() => 200));
    const stored = await app.db.selectFrom('meetings').selectAll().where('id', '=', meeting.id).executeTakeFirstOrThrow();
    const index = bodies.findIndex((body) => body.startedAt === stored.started_at!.toISOString());
    expect(index).toBeGreaterThanOrEqual(0);
    expect(stored.duration_min).toBe(bodies[index]!.durationMin);
    expect(stored.ended_at!.getTime() - stored.started_at!.getTime()).toBe(stored.duration_min! * 60_000);
    expect(stored.date).toBe(bodies[index]!.startedAt.slice(0, 10));
  });

  it('a correction of only the start and one of only the duration, sent at once, both hold: neither is lost', async () => {
    const { team, admin } = await createMeetingWorld(app.db, { timezone: 'UTC' });
    const starts = indexes.map((index) => `2026-11-${String(index + 2).padStart(2, '0')}T09:00:00.000Z`);
    const durations = indexes.map((index) => 30 + index);
    const bodies = indexes.flatMap((index) => [{ startedAt: starts[index] }, { durationMin: durations[index] }]);

    // A lost update needs an unlucky interleaving: three rounds make one likely if the meeting were not locked.
    for (const round of [1, 2, 3]) {
      const startedAt = new Date(`2026-11-1${round}T08:00:00.000Z`);
      const meeting = await createMeetingIn(app.db, team.id, admin.user.id, { status: 'COMPLETED', startedAt, durationMin: 88 });

      const answers = await Promise.all(bodies.map((body) => app.request('PATCH', `/v1/meetings/${meeting.id}`, { key: admin.key, body })));

      expect(answers.every((answer) => answer.status === 200)).toBe(true);
      const stored = await app.db.selectFrom('meetings').selectAll().where('id', '=', meeting.id).executeTakeFirstOrThrow();
      expect(starts).toContain(stored.started_at!.toISOString());
      expect(durations).toContain(stored.duration_min);
      expect(stored.ended_at!.getTime() - stored.started_at!.getTime()).toBe(stored.duration_min! * 60_000);
    }
  });
});

describe(`simultaneous rule-guarded changes (${databaseLabel})`, () => {
  it('the last two Owners demoting each other at once: one succeeds, the other is refused, one Owner remains', async () => {
    const org = await createOrganization(app.db);
    const [first, second] = [await createCaller(app.db), await createCaller(app.db)];
    await addOrganizationMember(app.db, org.id, first.user.id, 'OWNER');
    await addOrganizationMember(app.db, org.id, second.user.id, 'OWNER');

    const answers = await Promise.all([
      app.request('PATCH', `/v1/orgs/${org.id}/members/${second.user.id}`, { key: first.key, body: { role: 'ADMIN' } }),
      app.request('PATCH', `/v1/orgs/${org.id}/members/${first.user.id}`, { key: second.key, body: { role: 'ADMIN' } }),
    ]);

    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 422 || status === 403)).toHaveLength(1);
    const owners = await app.db.selectFrom('organization_members').select('user_id').where('org_id', '=', org.id).where('role', '=', 'OWNER').execute();
    expect(owners).toHaveLength(1);
  });

  it('every Owner of an organization demoting every other at once: exactly one Owner remains', async () => {
    const org = await createOrganization(app.db);
    const owners = await Promise.all([1, 2, 3, 4].map(() => createCaller(app.db)));
    for (const owner of owners) await addOrganizationMember(app.db, org.id, owner.user.id, 'OWNER');

    const answers = await Promise.all(
      owners.flatMap((caller) =>
        owners
          .filter((target) => target !== caller)
          .map((target) => app.request('PATCH', `/v1/orgs/${org.id}/members/${target.user.id}`, { key: caller.key, body: { role: 'MEMBER' } })),
      ),
    );

    expect(answers.every((answer) => [200, 403, 422].includes(answer.status))).toBe(true);
    const left = await app.db.selectFrom('organization_members').select('user_id').where('org_id', '=', org.id).where('role', '=', 'OWNER').execute();
    expect(left).toHaveLength(1);
  });

  it('the same person acknowledging the same messages many times at once: every request succeeds, one acknowledgement each', async () => {
    const { org, team, admin, viewer } = await createMeetingWorld(app.db);
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id, { status: 'COMPLETED' });
    const messages = await Promise.all([1, 2, 3].map(() => createMessage(app.db, { id: meeting.id, orgId: org.id }, admin.user.id)));
    const ids = messages.map((message) => message.id);

    const answers = await Promise.all(
      indexes.map((index) =>
        app.request('POST', '/v1/messages/acknowledge', { key: viewer.key, body: { ids: index % 2 ? ids : [...ids].reverse() } }),
      ),
    );

    expect(answers.map((answer) => answer.status)).toEqual(indexes.map(() => 204));
    const rows = await app.db.selectFrom('message_acknowledgements').select('message_id').where('user_id', '=', viewer.user.id).execute();
    expect(rows.map((row) => row.message_id).sort()).toEqual([...ids].sort());
  });

  it('different people acknowledging messages of two meetings at once, whose ids take the meetings in opposite orders: every request succeeds', async () => {
    const { org, team, admin, person } = await createMeetingWorld(app.db);
    const readers = await Promise.all(indexes.map(() => person('MEMBER', 'VIEWER')));
    const first = await createMeetingIn(app.db, team.id, admin.user.id, { status: 'COMPLETED' });
    const second = await createMeetingIn(app.db, team.id, admin.user.id, { status: 'COMPLETED', date: '2026-11-23' });
    // In id order, one set takes the first meeting's message first, the other the second meeting's.
    const prefix = randomUUID();
    const meetingOf = { a: first.id, b: second.id, c: second.id, d: first.id };
    await app.db
      .insertInto('cascading_messages')
      .values(Object.entries(meetingOf).map(([suffix, meetingId]) => ({ id: `${prefix}-${suffix}`, meeting_id: meetingId, org_id: org.id, user_id: admin.user.id, content: 'Quotes within one day' })))
      .execute();
    const sets = [[`${prefix}-a`, `${prefix}-b`], [`${prefix}-c`, `${prefix}-d`]];

    const answers = await Promise.all(readers.map((reader, index) => app.request('POST', '/v1/messages/acknowledge', { key: reader.key, body: { ids: sets[index % 2] } })));

    expect(answers.map((answer) => answer.status)).toEqual(indexes.map(() => 204));
    const rows = await app.db.selectFrom('message_acknowledgements').select('user_id').where('message_id', 'like', `${prefix}-%`).execute();
    expect(rows).toHaveLength(readers.length * 2);
  });

  it('deleting a seat branch and seats inside it at once: no server error, each answer 204 or 404, the branch is gone', async () => {
    const { team, admin } = await teamWithPeople();
    const top = await createSeat(app.db, team.id, { title: 'Integrator' });
    const middle = await Promise.all([1, 2].map((position) => createSeat(app.db, team.id, { title: `Lead ${position}`, parentId: top.id, position })));
    const leaves = await Promise.all(
      middle.flatMap((parent) => [1, 2].map((position) => createSeat(app.db, team.id, { title: `Seat ${position}`, parentId: parent.id, position }))),
    );
    const kept = await createSeat(app.db, team.id, { title: 'Visionary', position: 2 });
    const targets = [top, ...middle, ...leaves, top, ...leaves.reverse(), ...middle.reverse()];

    const answers = await Promise.all(targets.map((seat) => app.request('DELETE', `/v1/org-chart/seats/${seat.id}`, { key: admin.key })));

    expect(answers.every((answer) => answer.status === 204 || answer.status === 404), JSON.stringify(answers.map((a) => a.status))).toBe(true);
    const left = await app.db.selectFrom('seats').select('id').where('team_id', '=', team.id).execute();
    expect(left).toEqual([{ id: kept.id }]);
  });
});

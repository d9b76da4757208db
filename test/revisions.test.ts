/**
 * `revision` (docs/decisions.md, "Revisions"): every record carries the log position of its last
 * change, the same in its GET, its list, the change's answer and the change's event; a change made
 * to a record as a side effect of another (a goal's milestone, a meeting's segue or rating) gives it
 * a new one; and the state committed last has the greatest, even when its transaction began first.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseLabel, postgresUrl } from './support/database.js';
import { createGoal, createTask } from './support/executionFactories.js';
import { createTeamWorld } from './support/factories.js';
import { createMeetingIn, createMeetingWorld, createRating } from './support/meetingFactories.js';
import { startTestApp, type TestApp } from './support/testApp.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

/** The `object` of the one event of `type` about the record `id`, as the log keeps it. */
async function eventObject(type: string, id: string): Promise<{ id: string; revision: number }> {
  const { rows } = await sql<{ event: string }>`select event from webhook_events where type = ${type} order by txid, position`.execute(app.db);
  const objects = rows.map((row) => JSON.parse(row.event).data.object).filter((object) => object.id === id);
  expect(objects).toHaveLength(1);
  return objects[0];
}

describe(`revisions of records (${databaseLabel})`, () => {
  it('a created task carries one revision in its answer, its event, its GET and its list', async () => {
    const { team, person } = await createTeamWorld(app.db);
    const member = await person('MEMBER', 'MEMBER');

    const created = await app.request('POST', `/v1/teams/${team.id}/tasks`, { key: member.key, body: { title: 'Call Baltic Trade', ownerId: member.user.id, dueDate: '2026-12-04' } });
    const read = await app.request('GET', `/v1/tasks/${created.body.id}`, { key: member.key });
    const listed = await app.request('GET', `/v1/teams/${team.id}/tasks`, { key: member.key });

    expect(created.status).toBe(201);
    expect(Number.isSafeInteger(created.body.revision) && created.body.revision > 0).toBe(true);
    expect((await eventObject('task.created', created.body.id)).revision).toBe(created.body.revision);
    expect(read.body.revision).toBe(created.body.revision);
    expect(listed.body.data).toEqual([read.body]);
  });

  it('each change of a task gives it a greater revision, which its answer and its event carry', async () => {
    const { team, person } = await createTeamWorld(app.db);
    const member = await person('MEMBER', 'MEMBER');
    const task = await createTask(app.db, team.id, member.user.id);

    const first = await app.request('PATCH', `/v1/tasks/${task.id}`, { key: member.key, body: { title: 'First' } });
    const second = await app.request('PATCH', `/v1/tasks/${task.id}`, { key: member.key, body: { completed: true } });

    expect(first.body.revision).toBeGreaterThan(Number(task.revision));
    expect(second.body.revision).toBeGreaterThan(first.body.revision);
    const { rows } = await sql<{ event: string }>`select event from webhook_events where type = 'task.updated' order by txid, position`.execute(app.db);
    const revisions = rows.map((row) => JSON.parse(row.event).data.object).filter((object) => object.id === task.id).map((object) => object.revision);
    expect(revisions).toEqual([first.body.revision, second.body.revision]);
  });

  it('a milestone added, changed or deleted gives its goal a greater revision', async () => {
    const { org, team, person } = await createTeamWorld(app.db);
    const admin = await person('MEMBER', 'ADMIN');
    const goal = await createGoal(app.db, { id: team.id, org_id: org.id }, admin.user.id);
    const revisionOfGoal = async () => (await app.request('GET', `/v1/goals/${goal.id}`, { key: admin.key })).body.revision as number;

    const before = await revisionOfGoal();
    const milestone = await app.request('POST', `/v1/goals/${goal.id}/milestones`, { key: admin.key, body: { title: 'Sign the lease' } });
    const added = await revisionOfGoal();
    await app.request('PATCH', `/v1/milestones/${milestone.body.id}`, { key: admin.key, body: { completed: true } });
    const changed = await revisionOfGoal();
    await app.request('DELETE', `/v1/milestones/${milestone.body.id}`, { key: admin.key });
    const deleted = await revisionOfGoal();

    expect(milestone.status).toBe(201);
    expect((await eventObject('milestone.created', milestone.body.id)).revision).toBe(milestone.body.revision);
    expect(added).toBeGreaterThan(Math.max(before, milestone.body.revision - 1));
    expect(changed).toBeGreaterThan(added);
    expect(deleted).toBeGreaterThan(changed);
  });

  it('a segue added or a rating given gives the meeting a greater revision; revealing the ratings another, which its event carries', async () => {
    const { team, admin, member } = await createMeetingWorld(app.db);
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id, { status: 'IN_PROGRESS' });
    const revisionOfMeeting = async () => (await app.request('GET', `/v1/meetings/${meeting.id}`, { key: admin.key })).body.revision as number;

    const before = await revisionOfMeeting();
    const segue = await app.request('POST', `/v1/meetings/${meeting.id}/segues`, { key: member.key, body: { content: 'A new customer in Riga' } });
    const afterSegue = await revisionOfMeeting();
    await createRating(app.db, meeting.id, member.user.id, 9);
    const afterRating = await revisionOfMeeting();
    const revealed = await app.request('POST', `/v1/meetings/${meeting.id}/reveal-ratings`, { key: admin.key });
    const afterReveal = await revisionOfMeeting();

    expect([segue.status, revealed.status]).toEqual([201, 200]);
    expect(afterSegue).toBeGreaterThan(before);
    expect(afterRating).toBeGreaterThan(afterSegue);
    expect(afterReveal).toBeGreaterThan(afterRating);
    expect(revealed.body.revision).toBe(afterReveal);
    expect((await eventObject('meeting.ratings_revealed', meeting.id)).revision).toBe(afterReveal);
  });
});

describe.skipIf(!postgresUrl)('revisions under concurrent changes (PostgreSQL only: PGlite runs one transaction at a time)', () => {
  it('of two changes of one task, the one committed later has the greater revision, even when its transaction began first', async () => {
    const { team, person } = await createTeamWorld(app.db);
    const member = await person('MEMBER', 'MEMBER');
    const task = await createTask(app.db, team.id, member.user.id);
    let patched: { status: number; body: { revision: number } } | undefined;

    // The earlier transaction takes its id first, lets a PATCH begin, change and commit, then changes the task and commits last.
    const earlier = await app.db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ txid: string }>`select pg_current_xact_id()::text as txid`.execute(trx);
      patched = await app.request('PATCH', `/v1/tasks/${task.id}`, { key: member.key, body: { title: 'Committed first' } });
      await trx.updateTable('tasks').set({ title: 'Committed last' }).where('id', '=', task.id).execute();
      return rows[0]!.txid;
    });

    const { rows } = await sql<{ txid: string }>`select txid::text from webhook_events where type = 'task.updated' and event like ${`%${task.id}%`}`.execute(app.db);
    expect(patched!.status).toBe(200);
    expect(BigInt(rows[0]!.txid)).toBeGreaterThan(BigInt(earlier));
    const read = await app.request('GET', `/v1/tasks/${task.id}`, { key: member.key });
    expect(read.body.title).toBe('Committed last');
    expect(read.body.revision).toBeGreaterThan(patched!.body.revision);
  });
});

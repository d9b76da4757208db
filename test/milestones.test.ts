import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseLabel } from './support/database.js';
import { createGoal, createGoalCast, createMilestone } from './support/executionFactories.js';
import { startTestApp, type TestApp } from './support/testApp.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

/**
 * An organization with a leadership team, a department goal and a company goal owned by `owner` (a
 * team Member), and a caller of each kind: team Admin, another team Member, a team Viewer (all
 * organization Members), an organization Implementer and an organization Member in no team, and the
 * Owner of another organization.
 */
async function setUp(options: { suspended?: boolean } = {}) {
  const cast = await createGoalCast(app.db, { suspended: options.suspended, isLeadership: true });
  const { team, owner } = cast;
  const goal = await createGoal(app.db, team, owner.user.id);
  const companyGoal = await createGoal(app.db, team, owner.user.id, { level: 'COMPANY' });
  return { ...cast, goal, companyGoal };
}

const unknownId = '00000000-0000-4000-8000-000000000000';
const milestoneRow = (id: string) => app.db.selectFrom('milestones').selectAll().where('id', '=', id).executeTakeFirst();
const milestonesOf = (goalId: string) => app.db.selectFrom('milestones').selectAll().where('goal_id', '=', goalId).execute();

describe(`POST /goals/{id}/milestones (${databaseLabel})`, () => {
  it('lets the goal\'s owner add a milestone, not completed, at the end of the goal\'s milestones', async () => {
    const { goal, owner } = await setUp();
    const earlier = await createMilestone(app.db, goal.id, { createdAt: new Date('2026-10-01T08:00:00.000Z') });

    const response = await app.request('POST', `/v1/goals/${goal.id}/milestones`, {
      key: owner.key,
      body: { title: '  Close the fifth contract ', dueDate: '2026-12-18' },
    });

    expect(response.status).toBe(201);
    expect(response.body).toEqual({ id: expect.any(String), revision: expect.any(Number), goalId: goal.id, title: 'Close the fifth contract', dueDate: '2026-12-18', completed: false });
    const read = await app.request('GET', `/v1/goals/${goal.id}`, { key: owner.key });
    expect(read.body.milestones).toEqual([
      { id: earlier.id, revision: expect.any(Number), goalId: goal.id, title: 'Shortlist 20 target accounts', dueDate: '2026-10-16', completed: false },
      response.body,
    ]);
  });

  it('adds a milestone without a date when dueDate is omitted or null', async () => {
    const { goal, owner } = await setUp();

    for (const body of [{ title: 'Approve the 2027 price list' }, { title: 'Approve the 2027 price list', dueDate: null }]) {
      const response = await app.request('POST', `/v1/goals/${goal.id}/milestones`, { key: owner.key, body });
      expect(response.status).toBe(201);
      expect(response.body.dueDate).toBeNull();
      expect((await milestoneRow(response.body.id))!.due_date).toBeNull();
    }
  });

  it('lets team Admins and organization Implementers add milestones to anyone\'s goal, company goals included', async () => {
    const { goal, companyGoal, admin, implementer } = await setUp();

    for (const [caller, target] of [
      [admin, goal],
      [implementer, companyGoal],
    ] as const) {
      const response = await app.request('POST', `/v1/goals/${target.id}/milestones`, { key: caller.key, body: { title: 'Close the fifth contract' } });
      expect(response.status).toBe(201);
      expect(response.body.goalId).toBe(target.id);
    }
  });

  it('refuses other team Members, Viewers and organization members reading a company goal with 403', async () => {
    const { goal, companyGoal, member, viewer, orgMember } = await setUp();

    for (const [caller, target] of [
      [member, goal],
      [viewer, goal],
      [orgMember, companyGoal],
    ] as const) {
      const response = await app.request('POST', `/v1/goals/${target.id}/milestones`, { key: caller.key, body: { title: 'Close the fifth contract' } });
      expect([response.status, response.body.error.code]).toEqual([403, 'forbidden']);
    }
    expect(await milestonesOf(goal.id)).toEqual([]);
    expect(await milestonesOf(companyGoal.id)).toEqual([]);
  });

  it('answers 404 for a goal the caller cannot see and for an unknown goal', async () => {
    const { goal, companyGoal, owner, orgMember, outsider } = await setUp();

    for (const [caller, id] of [
      [orgMember, goal.id],
      [outsider, companyGoal.id],
      [owner, unknownId],
    ] as const) {
      const response = await app.request('POST', `/v1/goals/${id}/milestones`, { key: caller.key, body: { title: 'Close the fifth contract' } });
      expect([response.status, response.body.error.code]).toEqual([404, 'notFound']);
    }
    expect(await milestonesOf(goal.id)).toEqual([]);
  });

  it('answers 409 orgSuspended in a suspended organization', async () => {
    const { goal, owner } = await setUp({ suspended: true });

    const response = await app.request('POST', `/v1/goals/${goal.id}/milestones`, { key: owner.key, body: { title: 'Close the fifth contract' } });

    expect([response.status, response.body.error.code]).toEqual([409, 'orgSuspended']);
    expect(await milestonesOf(goal.id)).toEqual([]);
  });

  it('refuses a title empty after trimming or over 300 characters (no issues) and a malformed day (issues), adding nothing', async () => {
    const { goal, owner } = await setUp();

    for (const title of ['   ', 'x'.repeat(301)]) {
      const response = await app.request('POST', `/v1/goals/${goal.id}/milestones`, { key: owner.key, body: { title } });
      expect([response.status, response.body.error.code, response.body.error.issues]).toEqual([422, 'invalid', undefined]);
    }
    for (const body of [{ title: 'Close the fifth contract', dueDate: '2026-02-30' }, { title: 'Close the fifth contract', dueDate: '2026-12-18T10:00:00Z' }, { dueDate: '2026-12-18' }]) {
      const response = await app.request('POST', `/v1/goals/${goal.id}/milestones`, { key: owner.key, body });
      expect(response.status).toBe(422);
      expect(response.body.error.issues.length).toBeGreaterThan(0);
    }
    expect(await milestonesOf(goal.id)).toEqual([]);
  });
});

describe(`PATCH /milestones/{id} (${databaseLabel})`, () => {
  it('completes a milestone with completed true and reopens it with false', async () => {
    const { goal, owner } = await setUp();
    const milestone = await createMilestone(app.db, goal.id, { title: 'Close the fifth contract', dueDate: '2026-12-18' });

    for (const completed of [true, false, true]) {
      const response = await app.request('PATCH', `/v1/milestones/${milestone.id}`, { key: owner.key, body: { completed } });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ id: milestone.id, revision: expect.any(Number), goalId: goal.id, title: 'Close the fifth contract', dueDate: '2026-12-18', completed });
      expect((await milestoneRow(milestone.id))!.completed).toBe(completed);
    }
  });

  it('renames and moves the due date, keeping the fields not sent, and removes the date with null', async () => {
    const { goal, admin } = await setUp();
    const milestone = await createMilestone(app.db, goal.id, { completed: true });

    const moved = await app.request('PATCH', `/v1/milestones/${milestone.id}`, {
      key: admin.key,
      body: { title: ' Sign the fifth contract before the Christmas break ', dueDate: '2026-12-23' },
    });
    expect(moved.status).toBe(200);
    expect(moved.body).toEqual({ id: milestone.id, revision: expect.any(Number), goalId: goal.id, title: 'Sign the fifth contract before the Christmas break', dueDate: '2026-12-23', completed: true });

    const undated = await app.request('PATCH', `/v1/milestones/${milestone.id}`, { key: admin.key, body: { dueDate: null } });
    expect(undated.status).toBe(200);
    expect(undated.body).toEqual({ ...moved.body, revision: expect.any(Number), dueDate: null });
    expect((await milestoneRow(milestone.id))!.due_date).toBeNull();
  });

  it('refuses other team Members, Viewers and organization members reading a company goal with 403, changing nothing', async () => {
    const { goal, companyGoal, member, viewer, orgMember } = await setUp();
    const milestone = await createMilestone(app.db, goal.id);
    const companyMilestone = await createMilestone(app.db, companyGoal.id);

    for (const [caller, target] of [
      [member, milestone],
      [viewer, milestone],
      [orgMember, companyMilestone],
    ] as const) {
      const response = await app.request('PATCH', `/v1/milestones/${target.id}`, { key: caller.key, body: { completed: true } });
      expect([response.status, response.body.error.code]).toEqual([403, 'forbidden']);
      expect(await milestoneRow(target.id)).toEqual(target);
    }
  });

  it('answers 404 for a milestone of a goal the caller cannot see and for an unknown milestone', async () => {
    const { goal, companyGoal, owner, orgMember, outsider } = await setUp();
    const milestone = await createMilestone(app.db, goal.id);
    const companyMilestone = await createMilestone(app.db, companyGoal.id);

    for (const [caller, id] of [
      [orgMember, milestone.id],
      [outsider, companyMilestone.id],
      [owner, unknownId],
    ] as const) {
      const response = await app.request('PATCH', `/v1/milestones/${id}`, { key: caller.key, body: { completed: true } });
      expect([response.status, response.body.error.code]).toEqual([404, 'notFound']);
    }
    expect(await milestoneRow(milestone.id)).toEqual(milestone);
  });

  it('answers 409 orgSuspended in a suspended organization', async () => {
    const { goal, owner } = await setUp({ suspended: true });
    const milestone = await createMilestone(app.db, goal.id);

    const response = await app.request('PATCH', `/v1/milestones/${milestone.id}`, { key: owner.key, body: { completed: true } });

    expect([response.status, response.body.error.code]).toEqual([409, 'orgSuspended']);
    expect(await milestoneRow(milestone.id)).toEqual(milestone);
  });

  it('applies nothing when one field is invalid, and refuses an empty body or one of unknown fields with 422', async () => {
    const { goal, owner } = await setUp();
    const milestone = await createMilestone(app.db, goal.id);

    const blank = await app.request('PATCH', `/v1/milestones/${milestone.id}`, { key: owner.key, body: { title: '  ', completed: true } });
    expect([blank.status, blank.body.error.code, blank.body.error.issues]).toEqual([422, 'invalid', undefined]);
    const badDay = await app.request('PATCH', `/v1/milestones/${milestone.id}`, { key: owner.key, body: { dueDate: '2026-13-01', completed: true } });
    expect(badDay.status).toBe(422);
    expect(badDay.body.error.issues.length).toBeGreaterThan(0);
    for (const body of [{}, { done: true }]) {
      const response = await app.request('PATCH', `/v1/milestones/${milestone.id}`, { key: owner.key, body });
      expect(response.status).toBe(422);
      expect(response.body.error.issues.length).toBeGreaterThan(0);
    }
    expect(await milestoneRow(milestone.id)).toEqual(milestone);
  });
});

describe(`DELETE /milestones/{id} (${databaseLabel})`, () => {
  it('lets the goal\'s owner delete a milestone, leaving the goal and its other milestones', async () => {
    const { goal, owner } = await setUp();
    const kept = await createMilestone(app.db, goal.id, { title: 'Shortlist 20 target accounts' });
    const deleted = await createMilestone(app.db, goal.id, { title: 'Send proposals to 10 accounts' });

    const response = await app.request('DELETE', `/v1/milestones/${deleted.id}`, { key: owner.key });

    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    expect(await milestoneRow(deleted.id)).toBeUndefined();
    const read = await app.request('GET', `/v1/goals/${goal.id}`, { key: owner.key });
    expect(read.body.milestones.map((milestone: { id: string }) => milestone.id)).toEqual([kept.id]);
    expect(read.body).toMatchObject({ title: goal.title, status: goal.status });
  });

  it('lets a team Admin delete a milestone of someone else\'s goal', async () => {
    const { goal, admin } = await setUp();
    const milestone = await createMilestone(app.db, goal.id);

    expect((await app.request('DELETE', `/v1/milestones/${milestone.id}`, { key: admin.key })).status).toBe(204);
    expect(await milestoneRow(milestone.id)).toBeUndefined();
  });

  it('refuses other team Members, Viewers and organization members reading a company goal with 403, deleting nothing', async () => {
    const { goal, companyGoal, member, viewer, orgMember } = await setUp();
    const milestone = await createMilestone(app.db, goal.id);
    const companyMilestone = await createMilestone(app.db, companyGoal.id);

    for (const [caller, target] of [
      [member, milestone],
      [viewer, milestone],
      [orgMember, companyMilestone],
    ] as const) {
      const response = await app.request('DELETE', `/v1/milestones/${target.id}`, { key: caller.key });
      expect([response.status, response.body.error.code]).toEqual([403, 'forbidden']);
      expect(await milestoneRow(target.id)).toEqual(target);
    }
  });

  it('answers 404 for an invisible or unknown milestone and 409 in a suspended organization', async () => {
    const visible = await setUp();
    const milestone = await createMilestone(app.db, visible.goal.id);
    for (const [caller, id] of [
      [visible.orgMember, milestone.id],
      [visible.owner, unknownId],
    ] as const) {
      const response = await app.request('DELETE', `/v1/milestones/${id}`, { key: caller.key });
      expect([response.status, response.body.error.code]).toEqual([404, 'notFound']);
    }

    const suspended = await setUp({ suspended: true });
    const frozen = await createMilestone(app.db, suspended.goal.id);
    const response = await app.request('DELETE', `/v1/milestones/${frozen.id}`, { key: suspended.owner.key });
    expect([response.status, response.body.error.code]).toEqual([409, 'orgSuspended']);
    expect(await milestoneRow(milestone.id)).toEqual(milestone);
    expect(await milestoneRow(frozen.id)).toEqual(frozen);
  });
});

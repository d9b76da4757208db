import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GoalStatus, TeamRow } from '../src/db/database.js';
import { findGoal } from '../src/db/queries/goals.js';
import { toGoal } from '../src/records/goals.js';
import { databaseLabel } from './support/database.js';
import { createGoal, createGoalCast, createGoals, createMilestone } from './support/executionFactories.js';
import { walkPages } from './support/pages.js';
import { addOrganizationMember, addTeamMember, createCaller, createTeam } from './support/factories.js';
import { expectPagesAsMapped, trickyInstants, trickyTexts } from './support/jsonBodies.js';
import { startTestApp, type TestApp } from './support/testApp.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const at = (iso: string) => new Date(iso);

const setUp = (options: { isLeadership?: boolean; suspended?: boolean } = {}) => createGoalCast(app.db, options);

const goalRow = (id: string) => app.db.selectFrom('goals').selectAll().where('id', '=', id).executeTakeFirst();
const goalsOfTeam = (team: TeamRow) => app.db.selectFrom('goals').selectAll().where('team_id', '=', team.id).execute();

/**
 * Goals of every status, level and quarter, with tricky texts and nulls, each with none to three
 * milestones; returns the goals as the single read gives them to `toGoal`, oldest first.
 */
async function seedGoalsForJson(team: Pick<TeamRow, 'id' | 'org_id'>, ownerId: string, count: number) {
  const statuses: GoalStatus[] = ['ON_TRACK', 'OFF_TRACK', 'DONE'];
  const created = await createGoals(app.db, team, ownerId, count, (index) => ({
    title: trickyTexts[index % trickyTexts.length],
    description: index % 4 === 1 ? null : trickyTexts[(index + 2) % trickyTexts.length],
    quarter: index % 2 ? '2027-Q1' : '2026-Q4',
    level: index % 4 === 2 ? 'DEPARTMENT' : 'COMPANY',
    status: statuses[index % statuses.length],
    createdAt: trickyInstants[index % trickyInstants.length],
  }));
  for (const [index, goal] of created.entries()) {
    for (let number = 0; number < index % 4; number++) {
      await createMilestone(app.db, goal.id, {
        title: trickyTexts[(index + number) % trickyTexts.length],
        dueDate: number % 2 ? null : '2026-12-31',
        completed: number === 1,
        createdAt: trickyInstants[(index + number) % 4],
      });
    }
  }
  const ids = created.map((goal) => goal.id);
  const stored = await app.db.selectFrom('goals').select('id').where('id', 'in', ids).orderBy('created_at').orderBy('id').execute();
  return Promise.all(stored.map(async ({ id }) => (await findGoal(app.db, id, ownerId))!));
}

interface ListedGoal {
  id: string;
  milestones: { id: string }[];
}

describe(`GET /teams/{teamId}/goals (${databaseLabel})`, () => {
  it('lists the team\'s goals oldest first, each with all its milestones in the order they were added', async () => {
    const { team, owner, viewer } = await setUp();
    const later = await createGoal(app.db, team, owner.user.id, { title: 'Launch the partner referral programme', status: 'OFF_TRACK', createdAt: at('2026-10-02T09:40:05.127Z') });
    const first = await createGoal(app.db, team, owner.user.id, { description: 'Enterprise means 200 shipments a month.', createdAt: at('2026-10-01T07:15:22.318Z') });
    const send = await createMilestone(app.db, first.id, { title: 'Send proposals to 10 accounts', dueDate: '2026-11-13', completed: true, createdAt: at('2026-10-01T08:00:00.000Z') });
    const shortlist = await createMilestone(app.db, first.id, { title: 'Shortlist 20 target accounts', dueDate: null, createdAt: at('2026-10-01T07:30:00.000Z') });

    const response = await app.request('GET', `/v1/teams/${team.id}/goals`, { key: viewer.key });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: [
        {
          id: first.id,
          revision: expect.any(Number),
          teamId: team.id,
          title: 'Sign 5 new enterprise customers',
          description: 'Enterprise means 200 shipments a month.',
          ownerId: owner.user.id,
          quarter: '2026-Q4',
          level: 'DEPARTMENT',
          status: 'ON_TRACK',
          milestones: [
            { id: shortlist.id, revision: expect.any(Number), goalId: first.id, title: 'Shortlist 20 target accounts', dueDate: null, completed: false },
            { id: send.id, revision: expect.any(Number), goalId: first.id, title: 'Send proposals to 10 accounts', dueDate: '2026-11-13', completed: true },
          ],
          createdAt: '2026-10-01T07:15:22.318Z',
        },
        {
          id: later.id,
          revision: expect.any(Number),
          teamId: team.id,
          title: 'Launch the partner referral programme',
          description: null,
          ownerId: owner.user.id,
          quarter: '2026-Q4',
          level: 'DEPARTMENT',
          status: 'OFF_TRACK',
          milestones: [],
          createdAt: '2026-10-02T09:40:05.127Z',
        },
      ],
      nextCursor: null,
    });
  });

  it('GET /teams/{teamId}/goals answers byte for byte what toGoal writes', async () => {
    const { team, owner, viewer } = await setUp({ isLeadership: true });
    const rows = await seedGoalsForJson(team, owner.user.id, 13);
    const list = { key: viewer.key, map: toGoal, cursorOf: (row: (typeof rows)[number]) => [row.created_at, row.id] };
    const path = `/v1/teams/${team.id}/goals`;
    await expectPagesAsMapped(app, { ...list, path, rows }, 5);
    await expectPagesAsMapped(app, { ...list, path: `${path}?quarter=2026-Q4`, rows: rows.filter((row) => row.quarter === '2026-Q4') }, 3);
    await expectPagesAsMapped(app, { ...list, path: `${path}?status=OFF_TRACK`, rows: rows.filter((row) => row.status === 'OFF_TRACK') }, 2);
    await expectPagesAsMapped(app, { ...list, path: `${path}?level=DEPARTMENT`, rows: rows.filter((row) => row.level === 'DEPARTMENT') }, 2);
  });

  it('is open to organization Implementers outside the team and refused (403) to organization Members outside it and to outsiders', async () => {
    const { team, owner, implementer, orgMember, outsider } = await setUp();
    await createGoal(app.db, team, owner.user.id);

    expect((await app.request('GET', `/v1/teams/${team.id}/goals`, { key: implementer.key })).body.data).toHaveLength(1);
    for (const caller of [orgMember, outsider]) {
      const response = await app.request('GET', `/v1/teams/${team.id}/goals`, { key: caller.key });
      expect([response.status, response.body.error.code]).toEqual([403, 'forbidden']);
    }
  });

  it('answers 404 for a team that does not exist', async () => {
    const { admin } = await setUp();
    const response = await app.request('GET', '/v1/teams/00000000-0000-4000-8000-000000000000/goals', { key: admin.key });
    expect([response.status, response.body.error.code]).toEqual([404, 'notFound']);
  });

  it('filters by quarter, status and level, and the filters combine', async () => {
    const { team, owner, member } = await setUp({ isLeadership: true });
    const wanted = await createGoal(app.db, team, owner.user.id, { quarter: '2027-Q1', status: 'DONE', level: 'COMPANY' });
    await createGoal(app.db, team, owner.user.id, { quarter: '2027-Q1', status: 'DONE', level: 'DEPARTMENT' });
    await createGoal(app.db, team, owner.user.id, { quarter: '2027-Q1', status: 'ON_TRACK', level: 'COMPANY' });
    await createGoal(app.db, team, owner.user.id, { quarter: '2026-Q4', status: 'DONE', level: 'COMPANY' });

    const ids = async (query: string) =>
      (await app.request('GET', `/v1/teams/${team.id}/goals?${query}`, { key: member.key })).body.data.map((goal: { id: string }) => goal.id);

    expect(await ids('quarter=2027-Q1&status=DONE&level=COMPANY')).toEqual([wanted.id]);
    expect(await ids('quarter=2027-Q1')).toHaveLength(3);
    expect(await ids('status=DONE')).toHaveLength(3);
    expect(await ids('level=DEPARTMENT')).toHaveLength(1);
    expect(await ids('quarter=2030-Q2')).toEqual([]);
  });

  it('walks more than 200 goals page by page, returning each exactly once, with their milestones', async () => {
    const { team, owner, member } = await setUp();
    const created = await createGoals(app.db, team, owner.user.id, 230);
    const withMilestone = created[215]!;
    const milestone = await createMilestone(app.db, withMilestone.id);

    const { items: goals, sizes } = await walkPages<ListedGoal>(app, `/v1/teams/${team.id}/goals`, member.key, { limit: 200 });
    const ids = goals.map((goal) => goal.id);

    expect(sizes).toHaveLength(2);
    expect(ids).toHaveLength(230);
    expect(new Set(ids)).toEqual(new Set(created.map((goal) => goal.id)));
    for (const goal of goals) expect(goal.milestones.map((m) => m.id)).toEqual(goal.id === withMilestone.id ? [milestone.id] : []);
  });

  it('combines filters with pagination', async () => {
    const { team, owner, member } = await setUp();
    const created = await createGoals(app.db, team, owner.user.id, 240, (index) => ({
      status: index % 3 === 0 ? 'OFF_TRACK' : 'ON_TRACK',
      quarter: index % 2 === 0 ? '2026-Q4' : '2027-Q1',
    }));
    const expected = created.filter((goal) => goal.status === 'OFF_TRACK' && goal.quarter === '2026-Q4').map((goal) => goal.id);

    const { items, sizes } = await walkPages<ListedGoal>(app, `/v1/teams/${team.id}/goals?status=OFF_TRACK&quarter=2026-Q4`, member.key, { limit: 15 });
    const ids = items.map((goal) => goal.id);

    expect(expected).toHaveLength(40);
    expect(sizes).toHaveLength(3);
    expect(ids.sort()).toEqual(expected.sort());
  });

  it('refuses a malformed quarter, an unknown status or level, a bad limit or cursor with 422 and issues', async () => {
    const { team, member } = await setUp();
    for (const query of ['quarter=2026-Q5', 'quarter=1999-Q4', 'quarter=2026Q1', 'status=LATE', 'level=TEAM', 'limit=201', 'limit=0', 'cursor=not*a*cursor']) {
      const response = await app.request('GET', `/v1/teams/${team.id}/goals?${query}`, { key: member.key });
      expect([query, response.status, response.body.error.code]).toEqual([query, 422, 'invalid']);
      expect(response.body.error.issues.length, query).toBeGreaterThan(0);
    }
  });
});

describe(`GET /orgs/{orgId}/goals (${databaseLabel})`, () => {
  it('lists the company goals of every team of the organization to any of its members, oldest first, with milestones', async () => {
    const { org, team: leadership, owner, orgMember } = await setUp({ isLeadership: true });
    const otherTeam = await createTeam(app.db, org.id, { isLeadership: true });
    await addTeamMember(app.db, otherTeam.id, owner.user.id, 'MEMBER');
    const second = await createGoal(app.db, otherTeam, owner.user.id, { title: 'Open the Vienna depot', level: 'COMPANY', createdAt: at('2026-09-29T10:00:00.000Z') });
    const first = await createGoal(app.db, leadership, owner.user.id, { title: 'Reach €12M annual revenue', level: 'COMPANY', createdAt: at('2026-09-28T12:02:40.551Z') });
    await createGoal(app.db, leadership, owner.user.id, { level: 'DEPARTMENT' });
    const milestone = await createMilestone(app.db, first.id, { title: 'Approve the 2027 price list', dueDate: null });
    const elsewhere = await setUp({ isLeadership: true });
    await createGoal(app.db, elsewhere.team, elsewhere.owner.user.id, { level: 'COMPANY' });

    const response = await app.request('GET', `/v1/orgs/${org.id}/goals`, { key: orgMember.key });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: [
        {
          id: first.id,
          revision: expect.any(Number),
          teamId: leadership.id,
          title: 'Reach €12M annual revenue',
          description: null,
          ownerId: owner.user.id,
          quarter: '2026-Q4',
          level: 'COMPANY',
          status: 'ON_TRACK',
          milestones: [{ id: milestone.id, revision: expect.any(Number), goalId: first.id, title: 'Approve the 2027 price list', dueDate: null, completed: false }],
          createdAt: '2026-09-28T12:02:40.551Z',
        },
        {
          id: second.id,
          revision: expect.any(Number),
          teamId: otherTeam.id,
          title: 'Open the Vienna depot',
          description: null,
          ownerId: owner.user.id,
          quarter: '2026-Q4',
          level: 'COMPANY',
          status: 'ON_TRACK',
          milestones: [],
          createdAt: '2026-09-29T10:00:00.000Z',
        },
      ],
      nextCursor: null,
    });
  });

  it('GET /orgs/{orgId}/goals answers byte for byte what toGoal writes', async () => {
    const { org, team, owner, orgMember } = await setUp({ isLeadership: true });
    const rows = (await seedGoalsForJson(team, owner.user.id, 16)).filter((row) => row.level === 'COMPANY');
    const list = { key: orgMember.key, map: toGoal, cursorOf: (row: (typeof rows)[number]) => [row.created_at, row.id] };
    const path = `/v1/orgs/${org.id}/goals`;
    await expectPagesAsMapped(app, { ...list, path, rows }, 4);
    await expectPagesAsMapped(app, { ...list, path: `${path}?quarter=2027-Q1`, rows: rows.filter((row) => row.quarter === '2027-Q1') }, 2);
    await expectPagesAsMapped(app, { ...list, path: `${path}?status=DONE`, rows: rows.filter((row) => row.status === 'DONE') }, 2);
  });

  it('refuses callers outside the organization, platform operators included, with 403 and answers 404 for an unknown organization', async () => {
    const { org, outsider } = await setUp();
    const operator = await createCaller(app.db, { systemRole: 'SUPERADMIN', scopes: ['read'] });
    for (const caller of [outsider, operator]) {
      const response = await app.request('GET', `/v1/orgs/${org.id}/goals`, { key: caller.key });
      expect([response.status, response.body.error.code]).toEqual([403, 'forbidden']);
    }
    const unknown = await app.request('GET', '/v1/orgs/00000000-0000-4000-8000-000000000000/goals', { key: outsider.key });
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'notFound']);
  });

  it('filters by quarter and status, combined with each other and with pagination over more than 200 goals', async () => {
    const { org, team, owner, viewer } = await setUp({ isLeadership: true });
    const created = await createGoals(app.db, team, owner.user.id, 260, (index) => ({
      level: index % 10 === 9 ? 'DEPARTMENT' : 'COMPANY',
      status: index % 4 === 0 ? 'DONE' : 'ON_TRACK',
      quarter: index % 5 === 0 ? '2027-Q1' : '2026-Q4',
    }));
    const company = created.filter((goal) => goal.level === 'COMPANY');

    const everything = await walkPages<ListedGoal>(app, `/v1/orgs/${org.id}/goals`, viewer.key, { limit: 200 });
    const everyId = everything.items.map((goal) => goal.id);
    expect(everything.sizes).toHaveLength(2);
    expect(everyId).toHaveLength(company.length);
    expect(new Set(everyId)).toEqual(new Set(company.map((goal) => goal.id)));

    const expected = company.filter((goal) => goal.status === 'DONE' && goal.quarter === '2027-Q1').map((goal) => goal.id);
    const filtered = await walkPages<ListedGoal>(app, `/v1/orgs/${org.id}/goals?quarter=2027-Q1&status=DONE`, viewer.key, { limit: 4 });
    expect(expected).toHaveLength(13);
    expect(filtered.sizes).toHaveLength(4);
    expect(filtered.items.map((goal) => goal.id).sort()).toEqual(expected.sort());
  });

  it('refuses a malformed quarter, an unknown status and the team-only level filter with 422', async () => {
    const { org, orgMember } = await setUp();
    for (const query of ['quarter=2101-Q1', 'status=done', 'level=COMPANY']) {
      const response = await app.request('GET', `/v1/orgs/${org.id}/goals?${query}`, { key: orgMember.key });
      expect([query, response.status, response.body.error.code]).toEqual([query, 422, 'invalid']);
    }
  });
});

describe(`GET /goals/{id} (${databaseLabel})`, () => {
  it('returns a goal with all its milestones to a Viewer of its team', async () => {
    const { team, owner, viewer } = await setUp();
    const goal = await createGoal(app.db, team, owner.user.id, { quarter: '2027-Q2', status: 'OFF_TRACK', createdAt: at('2026-10-01T07:15:22.318Z') });
    const milestone = await createMilestone(app.db, goal.id, { dueDate: '2026-10-16', completed: true });

    const response = await app.request('GET', `/v1/goals/${goal.id}`, { key: viewer.key });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id: goal.id,
      revision: expect.any(Number),
      teamId: team.id,
      title: 'Sign 5 new enterprise customers',
      description: null,
      ownerId: owner.user.id,
      quarter: '2027-Q2',
      level: 'DEPARTMENT',
      status: 'OFF_TRACK',
      milestones: [{ id: milestone.id, revision: expect.any(Number), goalId: goal.id, title: 'Shortlist 20 target accounts', dueDate: '2026-10-16', completed: true }],
      createdAt: '2026-10-01T07:15:22.318Z',
    });
  });

  it('shows a company goal to every member of its organization, even outside its team', async () => {
    const { team, owner, orgMember } = await setUp({ isLeadership: true });
    const goal = await createGoal(app.db, team, owner.user.id, { level: 'COMPANY' });

    const response = await app.request('GET', `/v1/goals/${goal.id}`, { key: orgMember.key });

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: goal.id, level: 'COMPANY', milestones: [] });
  });

  it('answers 404 for a department goal the caller cannot see, for any goal of another organization, and for an unknown id', async () => {
    const { team, owner, orgMember, outsider } = await setUp({ isLeadership: true });
    const department = await createGoal(app.db, team, owner.user.id);
    const company = await createGoal(app.db, team, owner.user.id, { level: 'COMPANY' });

    for (const [caller, id] of [
      [orgMember, department.id],
      [outsider, department.id],
      [outsider, company.id],
      [orgMember, '00000000-0000-4000-8000-000000000000'],
    ] as const) {
      const response = await app.request('GET', `/v1/goals/${id}`, { key: caller.key });
      expect([response.status, response.body.error.code]).toEqual([404, 'notFound']);
    }
  });
});

describe(`POST /teams/{teamId}/goals (${databaseLabel})`, () => {
  it('lets a team Admin create a department goal: ON_TRACK, no milestones, text trimmed', async () => {
    const { org, team, admin, owner } = await setUp();

    const response = await app.request('POST', `/v1/teams/${team.id}/goals`, {
      key: admin.key,
      body: { title: '  Sign 5 new enterprise customers ', description: ' Enterprise means 200 shipments a month. ', ownerId: owner.user.id, quarter: '2026-Q4' },
    });

    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.any(String),
      revision: expect.any(Number),
      teamId: team.id,
      title: 'Sign 5 new enterprise customers',
      description: 'Enterprise means 200 shipments a month.',
      ownerId: owner.user.id,
      quarter: '2026-Q4',
      level: 'DEPARTMENT',
      status: 'ON_TRACK',
      milestones: [],
      createdAt: expect.any(String),
    });
    const stored = await goalRow(response.body.id);
    expect(stored).toMatchObject({ org_id: org.id, team_id: team.id });
    expect(stored!.created_at.toISOString()).toBe(response.body.createdAt);
  });

  it('creates a company goal in a leadership team, as an organization Implementer outside the team', async () => {
    const { team, implementer, owner } = await setUp({ isLeadership: true });

    const response = await app.request('POST', `/v1/teams/${team.id}/goals`, {
      key: implementer.key,
      body: { title: 'Reach €12M annual revenue', ownerId: owner.user.id, quarter: '2100-Q1', level: 'COMPANY', description: '' },
    });

    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ level: 'COMPANY', quarter: '2100-Q1', description: null, milestones: [] });
  });

  it('refuses a company goal outside a leadership team with 422 and no issues, creating nothing', async () => {
    const { team, admin, owner } = await setUp();

    const response = await app.request('POST', `/v1/teams/${team.id}/goals`, {
      key: admin.key,
      body: { title: 'Reach €12M annual revenue', ownerId: owner.user.id, quarter: '2026-Q4', level: 'COMPANY' },
    });

    expect([response.status, response.body.error.code, response.body.error.issues]).toEqual([422, 'invalid', undefined]);
    expect(await goalsOfTeam(team)).toEqual([]);
  });

  it('refuses an owner who is not in the team, even an organization Admin acting as team Admin, with 422', async () => {
    const { org, team, admin, orgMember } = await setUp();
    const orgAdmin = await createCaller(app.db);
    await addOrganizationMember(app.db, org.id, orgAdmin.user.id, 'ADMIN');

    for (const ownerId of [orgMember.user.id, orgAdmin.user.id, '00000000-0000-4000-8000-000000000000']) {
      const response = await app.request('POST', `/v1/teams/${team.id}/goals`, {
        key: admin.key,
        body: { title: 'Sign 5 new enterprise customers', ownerId, quarter: '2026-Q4' },
      });
      expect([response.status, response.body.error.code, response.body.error.issues]).toEqual([422, 'invalid', undefined]);
    }
    expect(await goalsOfTeam(team)).toEqual([]);
  });

  it('refuses team Members and Viewers (403), callers who cannot see the team (403) and answers 404 for an unknown team', async () => {
    const { team, owner, member, viewer, orgMember, outsider } = await setUp();
    const body = { title: 'Sign 5 new enterprise customers', ownerId: owner.user.id, quarter: '2026-Q4' };

    for (const caller of [owner, member, viewer, orgMember, outsider]) {
      const response = await app.request('POST', `/v1/teams/${team.id}/goals`, { key: caller.key, body });
      expect([response.status, response.body.error.code]).toEqual([403, 'forbidden']);
    }
    const unknown = await app.request('POST', '/v1/teams/00000000-0000-4000-8000-000000000000/goals', { key: member.key, body });
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'notFound']);
    expect(await goalsOfTeam(team)).toEqual([]);
  });

  it('answers 409 orgSuspended in a suspended organization', async () => {
    const { team, admin, owner } = await setUp({ suspended: true });

    const response = await app.request('POST', `/v1/teams/${team.id}/goals`, {
      key: admin.key,
      body: { title: 'Sign 5 new enterprise customers', ownerId: owner.user.id, quarter: '2026-Q4' },
    });

    expect([response.status, response.body.error.code]).toEqual([409, 'orgSuspended']);
    expect(await goalsOfTeam(team)).toEqual([]);
  });

  it('refuses a malformed quarter or a missing field as a format error with issues', async () => {
    const { team, admin, owner } = await setUp();
    const base = { title: 'Sign 5 new enterprise customers', ownerId: owner.user.id, quarter: '2026-Q4' };

    for (const [body, path] of [
      [{ ...base, quarter: '2026-Q5' }, ['quarter']],
      [{ ...base, quarter: '1999-Q4' }, ['quarter']],
      [{ ...base, quarter: '2101-Q1' }, ['quarter']],
      [{ ...base, level: 'TEAM' }, ['level']],
      [{ title: base.title, quarter: base.quarter }, ['ownerId']],
    ] as const) {
      const response = await app.request('POST', `/v1/teams/${team.id}/goals`, { key: admin.key, body });
      expect(response.status).toBe(422);
      expect(response.body.error.issues.map((issue: { path: string[] }) => issue.path)).toContainEqual(path);
    }
    expect(await goalsOfTeam(team)).toEqual([]);
  });

  it('refuses a title empty after trimming or over 300 characters, and a description over 5000, with 422 and no issues', async () => {
    const { team, admin, owner } = await setUp();
    const base = { title: 'Sign 5 new enterprise customers', ownerId: owner.user.id, quarter: '2026-Q4' };

    for (const body of [{ ...base, title: '   ' }, { ...base, title: 'x'.repeat(301) }, { ...base, description: 'x'.repeat(5001) }]) {
      const response = await app.request('POST', `/v1/teams/${team.id}/goals`, { key: admin.key, body });
      expect([response.status, response.body.error.code, response.body.error.issues]).toEqual([422, 'invalid', undefined]);
    }
    const longest = await app.request('POST', `/v1/teams/${team.id}/goals`, {
      key: admin.key,
      body: { ...base, title: ` ${'x'.repeat(300)} `, description: 'y'.repeat(5000) },
    });
    expect(longest.status).toBe(201);
    expect(await goalsOfTeam(team)).toHaveLength(1);
  });
});

describe(`PATCH /goals/{id} (${databaseLabel})`, () => {
  it('lets a team Admin change title, description, owner, quarter and level, keeping the milestones', async () => {
    const { team, admin, owner, member } = await setUp({ isLeadership: true });
    const goal = await createGoal(app.db, team, owner.user.id, { createdAt: at('2026-10-01T07:15:22.318Z') });
    const milestone = await createMilestone(app.db, goal.id);

    const response = await app.request('PATCH', `/v1/goals/${goal.id}`, {
      key: admin.key,
      body: { title: ' Reach €12M annual revenue ', description: 'Booked, not invoiced.', ownerId: member.user.id, quarter: '2027-Q1', level: 'COMPANY' },
    });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id: goal.id,
      revision: expect.any(Number),
      teamId: team.id,
      title: 'Reach €12M annual revenue',
      description: 'Booked, not invoiced.',
      ownerId: member.user.id,
      quarter: '2027-Q1',
      level: 'COMPANY',
      status: 'ON_TRACK',
      milestones: [{ id: milestone.id, revision: expect.any(Number), goalId: goal.id, title: 'Shortlist 20 target accounts', dueDate: '2026-10-16', completed: false }],
      createdAt: '2026-10-01T07:15:22.318Z',
    });
    expect(await goalRow(goal.id)).toMatchObject({ title: 'Reach €12M annual revenue', owner_id: member.user.id, level: 'COMPANY' });
  });

  it('lets the goal\'s owner (a team Member) report its status, in every direction', async () => {
    const { team, owner } = await setUp();
    const goal = await createGoal(app.db, team, owner.user.id);

    for (const status of ['OFF_TRACK', 'DONE', 'ON_TRACK', 'DONE', 'OFF_TRACK'] as const) {
      const response = await app.request('PATCH', `/v1/goals/${goal.id}`, { key: owner.key, body: { status } });
      expect(response.status).toBe(200);
      expect(response.body.status).toBe(status);
      expect((await goalRow(goal.id))!.status).toBe(status);
    }
  });

  it('refuses the owner who is not a team Admin any field besides status with 403, changing nothing', async () => {
    const { team, owner } = await setUp();
    const goal = await createGoal(app.db, team, owner.user.id);

    for (const body of [{ status: 'DONE', title: 'Sign 6 new enterprise customers' }, { quarter: '2027-Q1' }]) {
      const response = await app.request('PATCH', `/v1/goals/${goal.id}`, { key: owner.key, body });
      expect([response.status, response.body.error.code]).toEqual([403, 'forbidden']);
    }
    expect(await goalRow(goal.id)).toEqual(goal);
  });

  it('refuses status changes by other team Members, by an owner who is a Viewer, and by organization members outside the team of a company goal', async () => {
    const { team, member, viewer, orgMember } = await setUp({ isLeadership: true });
    const viewersGoal = await createGoal(app.db, team, viewer.user.id);
    const company = await createGoal(app.db, team, member.user.id, { level: 'COMPANY' });
    const othersGoal = await createGoal(app.db, team, viewer.user.id);

    for (const [caller, goal] of [
      [viewer, viewersGoal],
      [member, othersGoal],
      [orgMember, company],
    ] as const) {
      const response = await app.request('PATCH', `/v1/goals/${goal.id}`, { key: caller.key, body: { status: 'DONE' } });
      expect([response.status, response.body.error.code]).toEqual([403, 'forbidden']);
      expect((await goalRow(goal.id))!.status).toBe('ON_TRACK');
    }
  });

  it('answers 404 for a goal the caller cannot see and for an unknown id', async () => {
    const { team, owner, orgMember, outsider } = await setUp({ isLeadership: true });
    const department = await createGoal(app.db, team, owner.user.id);
    const company = await createGoal(app.db, team, owner.user.id, { level: 'COMPANY' });

    for (const [caller, id] of [
      [orgMember, department.id],
      [outsider, company.id],
      [owner, '00000000-0000-4000-8000-000000000000'],
    ] as const) {
      const response = await app.request('PATCH', `/v1/goals/${id}`, { key: caller.key, body: { status: 'DONE' } });
      expect([response.status, response.body.error.code]).toEqual([404, 'notFound']);
    }
  });

  it('takes the right to report away from an owner who left the team, while Admins can still edit the goal', async () => {
    const { team, owner, admin } = await setUp();
    const goal = await createGoal(app.db, team, owner.user.id);
    await app.db.deleteFrom('team_members').where('team_id', '=', team.id).where('user_id', '=', owner.user.id).execute();

    const refused = await app.request('PATCH', `/v1/goals/${goal.id}`, { key: owner.key, body: { status: 'DONE' } });
    expect([refused.status, refused.body.error.code]).toEqual([404, 'notFound']);

    const edited = await app.request('PATCH', `/v1/goals/${goal.id}`, { key: admin.key, body: { title: 'Sign 6 new enterprise customers', status: 'OFF_TRACK' } });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ title: 'Sign 6 new enterprise customers', status: 'OFF_TRACK', ownerId: owner.user.id });
  });

  it('clears the description with "" or null', async () => {
    const { team, owner, admin } = await setUp();
    const goal = await createGoal(app.db, team, owner.user.id, { description: 'Enterprise means 200 shipments a month.' });

    for (const description of ['  ', null]) {
      await app.db.updateTable('goals').set({ description: 'Enterprise means 200 shipments a month.' }).where('id', '=', goal.id).execute();
      const response = await app.request('PATCH', `/v1/goals/${goal.id}`, { key: admin.key, body: { description } });
      expect(response.status).toBe(200);
      expect(response.body.description).toBeNull();
      expect((await goalRow(goal.id))!.description).toBeNull();
    }
  });

  it('refuses level COMPANY outside a leadership team with 422, applying none of the other fields', async () => {
    const { team, owner, admin } = await setUp();
    const goal = await createGoal(app.db, team, owner.user.id);

    const response = await app.request('PATCH', `/v1/goals/${goal.id}`, { key: admin.key, body: { title: 'Reach €12M annual revenue', level: 'COMPANY' } });

    expect([response.status, response.body.error.code, response.body.error.issues]).toEqual([422, 'invalid', undefined]);
    expect(await goalRow(goal.id)).toEqual(goal);
  });

  it('refuses a new owner outside the team with 422, applying none of the other fields', async () => {
    const { team, owner, admin, orgMember } = await setUp();
    const goal = await createGoal(app.db, team, owner.user.id);

    const response = await app.request('PATCH', `/v1/goals/${goal.id}`, { key: admin.key, body: { status: 'DONE', ownerId: orgMember.user.id } });

    expect([response.status, response.body.error.code, response.body.error.issues]).toEqual([422, 'invalid', undefined]);
    expect(await goalRow(goal.id)).toEqual(goal);
  });

  it('refuses a title empty after trimming, an empty body and a body of unknown fields with 422, changing nothing', async () => {
    const { team, owner, admin } = await setUp();
    const goal = await createGoal(app.db, team, owner.user.id);

    const blank = await app.request('PATCH', `/v1/goals/${goal.id}`, { key: admin.key, body: { title: '  ', status: 'DONE' } });
    expect([blank.status, blank.body.error.issues]).toEqual([422, undefined]);
    for (const body of [{}, { colour: 'red' }]) {
      const response = await app.request('PATCH', `/v1/goals/${goal.id}`, { key: admin.key, body });
      expect(response.status).toBe(422);
      expect(response.body.error.issues.length).toBeGreaterThan(0);
    }
    expect(await goalRow(goal.id)).toEqual(goal);
  });

  it('answers 409 orgSuspended to the owner and to Admins in a suspended organization', async () => {
    const { team, owner, admin } = await setUp({ suspended: true });
    const goal = await createGoal(app.db, team, owner.user.id);

    for (const [caller, body] of [
      [owner, { status: 'DONE' }],
      [admin, { title: 'Sign 6 new enterprise customers' }],
    ] as const) {
      const response = await app.request('PATCH', `/v1/goals/${goal.id}`, { key: caller.key, body });
      expect([response.status, response.body.error.code]).toEqual([409, 'orgSuspended']);
    }
    expect(await goalRow(goal.id)).toEqual(goal);
  });
});

describe(`DELETE /goals/{id} (${databaseLabel})`, () => {
  it('lets a team Admin delete a goal together with its milestones', async () => {
    const { team, owner, admin } = await setUp();
    const goal = await createGoal(app.db, team, owner.user.id);
    await createMilestone(app.db, goal.id);
    await createMilestone(app.db, goal.id);

    const response = await app.request('DELETE', `/v1/goals/${goal.id}`, { key: admin.key });

    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    expect(await goalRow(goal.id)).toBeUndefined();
    expect(await app.db.selectFrom('milestones').select('id').where('goal_id', '=', goal.id).execute()).toEqual([]);
    expect((await app.request('GET', `/v1/goals/${goal.id}`, { key: admin.key })).status).toBe(404);
  });

  it('refuses the goal\'s owner, Viewers and organization members reading a company goal with 403', async () => {
    const { team, owner, viewer, orgMember } = await setUp({ isLeadership: true });
    const goal = await createGoal(app.db, team, owner.user.id, { level: 'COMPANY' });

    for (const caller of [owner, viewer, orgMember]) {
      const response = await app.request('DELETE', `/v1/goals/${goal.id}`, { key: caller.key });
      expect([response.status, response.body.error.code]).toEqual([403, 'forbidden']);
    }
    expect(await goalRow(goal.id)).toEqual(goal);
  });

  it('answers 404 for an invisible or unknown goal and 409 in a suspended organization', async () => {
    const visible = await setUp();
    const goal = await createGoal(app.db, visible.team, visible.owner.user.id);
    for (const [caller, id] of [
      [visible.orgMember, goal.id],
      [visible.admin, '00000000-0000-4000-8000-000000000000'],
    ] as const) {
      const response = await app.request('DELETE', `/v1/goals/${id}`, { key: caller.key });
      expect([response.status, response.body.error.code]).toEqual([404, 'notFound']);
    }

    const suspended = await setUp({ suspended: true });
    const frozen = await createGoal(app.db, suspended.team, suspended.owner.user.id);
    const response = await app.request('DELETE', `/v1/goals/${frozen.id}`, { key: suspended.admin.key });
    expect([response.status, response.body.error.code]).toEqual([409, 'orgSuspended']);
    expect(await goalRow(goal.id)).toEqual(goal);
    expect(await goalRow(frozen.id)).toEqual(frozen);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuePriority, IssueStatus } from '../src/db/database.js';
import { databaseLabel } from './support/database.js';
import { createIssue, createIssues, createMeeting } from './support/executionFactories.js';
import { expectNow } from './support/expectations.js';
import { createCaller, createTeam, createTeamWorld } from './support/factories.js';
import { toIssue } from '../src/records/issues.js';
import { expectPagesAsMapped, trickyInstants, trickyTexts } from './support/jsonBodies.js';
import { expectedOrder, walkPages } from './support/pages.js';
import { startTestApp, type TestApp } from './support/testApp.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const unknownId = '00000000-0000-4000-8000-000000000000';

/** An organization with one team and a team Member. */
async function setup(options: { suspended?: boolean } = {}) {
  const world = await createTeamWorld(app.db, options);
  return { ...world, member: await world.person('MEMBER', 'MEMBER') };
}

const issuesOf = (teamId: string) => app.db.selectFrom('issues').selectAll().where('team_id', '=', teamId).execute();
const storedIssue = (id: string) => app.db.selectFrom('issues').selectAll().where('id', '=', id).executeTakeFirstOrThrow();


describe(`creating issues (${databaseLabel})`, () => {
  it('POST /teams/{teamId}/issues creates an OPEN issue raised in a meeting of the team, created by the caller, text trimmed', async () => {
    const { team, member } = await setup();
    const meeting = await createMeeting(app.db, team.id, member.user.id);

    const response = await app.request('POST', `/v1/teams/${team.id}/issues`, {
      key: member.key,
      body: {
        title: ' Deliveries on the Košice route arrive a day late  ',
        description: '  Three of the last ten deliveries arrived a day late. ',
        priority: 'HIGH',
        meetingId: meeting.id,
      },
    });

    expect(response.status).toBe(201);
    const stored = await storedIssue(response.body.id);
    expect(response.body).toEqual({
      id: stored.id,
      revision: expect.any(Number),
      teamId: team.id,
      title: 'Deliveries on the Košice route arrive a day late',
      description: 'Three of the last ten deliveries arrived a day late.',
      priority: 'HIGH',
      status: 'OPEN',
      meetingId: meeting.id,
      createdById: member.user.id,
      resolvedAt: null,
      createdAt: stored.created_at.toISOString(),
    });
  });

  it('an issue with only a title has priority MEDIUM, no description and no meeting; an empty description is none', async () => {
    const { team, person } = await setup();
    const implementer = await person('IMPLEMENTER');

    const titleOnly = await app.request('POST', `/v1/teams/${team.id}/issues`, {
      key: implementer.key,
      body: { title: 'Sales and Operations quote different pallet rates' },
    });
    const emptyDescription = await app.request('POST', `/v1/teams/${team.id}/issues`, {
      key: implementer.key,
      body: { title: 'Sales and Operations quote different pallet rates', description: '   ', meetingId: null },
    });

    for (const response of [titleOnly, emptyDescription]) {
      expect(response.status).toBe(201);
      expect(response.body).toEqual({
        id: response.body.id,
        revision: expect.any(Number),
        teamId: team.id,
        title: 'Sales and Operations quote different pallet rates',
        description: null,
        priority: 'MEDIUM',
        status: 'OPEN',
        meetingId: null,
        createdById: implementer.user.id,
        resolvedAt: null,
        createdAt: (await storedIssue(response.body.id)).created_at.toISOString(),
      });
    }
  });

  it('a meeting of another team, or one that does not exist, is a rule violation (422 without issues) and nothing is stored', async () => {
    const { org, team, member } = await setup();
    const otherMeeting = await createMeeting(app.db, (await createTeam(app.db, org.id)).id, member.user.id);

    for (const meetingId of [otherMeeting.id, unknownId]) {
      const response = await app.request('POST', `/v1/teams/${team.id}/issues`, { key: member.key, body: { title: 'Late deliveries', meetingId } });
      expect(response.status).toBe(422);
      expect(response.body.error.code).toBe('invalid');
      expect(response.body.error.issues).toBeUndefined();
    }
    expect(await issuesOf(team.id)).toEqual([]);
  });

  it('text outside its limits is a rule violation; a missing title or an unknown priority is a format error; nothing is stored', async () => {
    const { team, member } = await setup();

    for (const body of [{ title: '  ' }, { title: 'x'.repeat(501) }, { title: 'Late deliveries', description: 'x'.repeat(5001) }]) {
      const response = await app.request('POST', `/v1/teams/${team.id}/issues`, { key: member.key, body });
      expect(response.status).toBe(422);
      expect(response.body.error.issues).toBeUndefined();
    }
    for (const [body, path] of [[{ description: 'No title' }, 'title'], [{ title: 'Late deliveries', priority: 'URGENT' }, 'priority']] as const) {
      const response = await app.request('POST', `/v1/teams/${team.id}/issues`, { key: member.key, body });
      expect(response.status).toBe(422);
      expect(response.body.error.issues.map((issue: { path: string[] }) => issue.path)).toEqual([[path]]);
    }
    expect(await issuesOf(team.id)).toEqual([]);

    const longest = await app.request('POST', `/v1/teams/${team.id}/issues`, {
      key: member.key,
      body: { title: 'x'.repeat(500), description: 'y'.repeat(5000) },
    });
    expect(longest.status).toBe(201);
  });

  it('team Viewers and organization Members outside the team get 403, people of other organizations 403, an unknown team 404', async () => {
    const { team, person, member } = await setup();
    const viewer = await person('MEMBER', 'VIEWER');
    const orgMember = await person('MEMBER');
    const outsider = await createCaller(app.db);

    for (const caller of [viewer, orgMember, outsider]) {
      const response = await app.request('POST', `/v1/teams/${team.id}/issues`, { key: caller.key, body: { title: 'Late deliveries' } });
      expect(response.status).toBe(403);
      expect(response.body.error.code).toBe('forbidden');
    }
    const unknown = await app.request('POST', `/v1/teams/${unknownId}/issues`, { key: member.key, body: { title: 'Late deliveries' } });
    expect(unknown.status).toBe(404);
    expect(await issuesOf(team.id)).toEqual([]);
  });

  it('in a suspended organization creating an issue gives 409 orgSuspended, before any rule is checked', async () => {
    const { team, member } = await setup({ suspended: true });

    for (const body of [{ title: 'Late deliveries' }, { title: 'Late deliveries', meetingId: unknownId }]) {
      const response = await app.request('POST', `/v1/teams/${team.id}/issues`, { key: member.key, body });
      expect(response.status).toBe(409);
      expect(response.body.error.code).toBe('orgSuspended');
    }
    expect(await issuesOf(team.id)).toEqual([]);
  });
});

describe(`reading an issue (${databaseLabel})`, () => {
  it('GET /issues/{id} returns the issue to team members, Viewers included, and to organization Implementers', async () => {
    const { team, member, person } = await setup();
    const viewer = await person('MEMBER', 'VIEWER');
    const implementer = await person('IMPLEMENTER');
    const meeting = await createMeeting(app.db, team.id, member.user.id);
    const issue = await createIssue(app.db, team.id, member.user.id, { status: 'SOLVED', priority: 'LOW', description: 'Reminders fail', meetingId: meeting.id });

    for (const caller of [member, viewer, implementer]) {
      const response = await app.request('GET', `/v1/issues/${issue.id}`, { key: caller.key });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        id: issue.id,
        revision: expect.any(Number),
        teamId: team.id,
        title: 'Deliveries on the Košice route arrive a day late',
        description: 'Reminders fail',
        priority: 'LOW',
        status: 'SOLVED',
        meetingId: meeting.id,
        createdById: member.user.id,
        resolvedAt: '2026-11-16T08:55:40.118Z',
        createdAt: issue.created_at.toISOString(),
      });
    }
  });

  it('an issue of a team the caller cannot see gives 404, exactly like an issue that does not exist', async () => {
    const { team, member, person } = await setup();
    const orgMember = await person('MEMBER');
    const outsider = await createCaller(app.db);
    const issue = await createIssue(app.db, team.id, member.user.id);

    for (const [key, id] of [[orgMember.key, issue.id], [outsider.key, issue.id], [member.key, unknownId]]) {
      const response = await app.request('GET', `/v1/issues/${id}`, { key });
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('notFound');
    }
  });
});

describe(`listing issues (${databaseLabel})`, () => {
  it('GET /teams/{teamId}/issues lists the team\'s issues oldest first, only that team\'s, to Viewers too', async () => {
    const { org, team, member, person } = await setup();
    const viewer = await person('MEMBER', 'VIEWER');
    const later = await createIssue(app.db, team.id, member.user.id, { title: 'Later', status: 'SOLVING', createdAt: new Date('2026-11-16T10:12:51.733Z') });
    const earlier = await createIssue(app.db, team.id, member.user.id, {
      title: 'Earlier',
      priority: 'HIGH',
      description: 'Details',
      createdAt: new Date('2026-11-16T08:34:18.406Z'),
    });
    await createIssue(app.db, (await createTeam(app.db, org.id)).id, member.user.id);

    const response = await app.request('GET', `/v1/teams/${team.id}/issues`, { key: viewer.key });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: [
        {
          id: earlier.id,
          revision: expect.any(Number),
          teamId: team.id,
          title: 'Earlier',
          description: 'Details',
          priority: 'HIGH',
          status: 'OPEN',
          meetingId: null,
          createdById: member.user.id,
          resolvedAt: null,
          createdAt: '2026-11-16T08:34:18.406Z',
        },
        {
          id: later.id,
          revision: expect.any(Number),
          teamId: team.id,
          title: 'Later',
          description: null,
          priority: 'MEDIUM',
          status: 'SOLVING',
          meetingId: null,
          createdById: member.user.id,
          resolvedAt: null,
          createdAt: '2026-11-16T10:12:51.733Z',
        },
      ],
      nextCursor: null,
    });
  });

  it('organization Members outside the team and people of other organizations get 403; an unknown team 404', async () => {
    const { team, person } = await setup();
    const orgMember = await person('MEMBER');
    const outsider = await createCaller(app.db);

    for (const caller of [orgMember, outsider]) {
      const response = await app.request('GET', `/v1/teams/${team.id}/issues`, { key: caller.key });
      expect(response.status).toBe(403);
      expect(response.body.error.code).toBe('forbidden');
    }
    expect((await app.request('GET', `/v1/teams/${unknownId}/issues`, { key: orgMember.key })).status).toBe(404);
  });

  it('a walk with limit 200 over 430 issues returns each exactly once, in order, also when many share a creation instant', async () => {
    const { team, member } = await setup();
    const start = Date.parse('2026-11-01T08:00:00.000Z');
    const created = await createIssues(app.db, team.id, member.user.id, 430, (index) => ({ createdAt: new Date(start + Math.floor(index / 7) * 1000) }));
    const expected = expectedOrder(created);

    const { items, sizes } = await walkPages<{ id: string }>(app, `/v1/teams/${team.id}/issues`, member.key, { limit: 200 });

    expect(sizes).toEqual([200, 200, 30]);
    expect(items.map((issue) => issue.id)).toEqual(expected);
  });

  it('filters status and priority combine with each other and with pagination', async () => {
    const { team, member } = await setup();
    const start = Date.parse('2026-11-01T08:00:00.000Z');
    const statuses: IssueStatus[] = ['OPEN', 'SOLVING', 'SOLVED'];
    const priorities: IssuePriority[] = ['HIGH', 'MEDIUM', 'LOW', 'HIGH'];
    const created = await createIssues(app.db, team.id, member.user.id, 24, (index) => ({
      createdAt: new Date(start + index * 1000),
      status: statuses[index % 3],
      priority: priorities[index % 4],
    }));

    const walk = async (filter: string) =>
      (await walkPages<{ id: string }>(app, `/v1/teams/${team.id}/issues?${filter}`, member.key, { limit: 2 })).items.map((issue) => issue.id);
    const matching = (status?: IssueStatus, priority?: IssuePriority) =>
      created.filter((issue) => (!status || issue.status === status) && (!priority || issue.priority === priority)).map((issue) => issue.id);

    expect(await walk('status=OPEN&priority=HIGH')).toEqual(matching('OPEN', 'HIGH'));
    expect(await walk('status=SOLVED&priority=LOW')).toEqual(matching('SOLVED', 'LOW'));
    expect(await walk('status=SOLVING')).toEqual(matching('SOLVING'));
    expect(await walk('priority=MEDIUM')).toEqual(matching(undefined, 'MEDIUM'));
    expect(matching('OPEN', 'HIGH').length).toBeGreaterThan(2);
  });

  it('an unknown filter value, a limit outside 1-200, an invalid cursor or an undeclared parameter is a format error', async () => {
    const { team, member } = await setup();

    for (const query of ['status=CLOSED', 'priority=high', 'limit=0', 'limit=201', 'cursor=WzFd', 'completed=true']) {
      const response = await app.request('GET', `/v1/teams/${team.id}/issues?${query}`, { key: member.key });
      expect(response.status, query).toBe(422);
      expect(response.body.error.issues, query).toHaveLength(1);
    }
  });

  it('GET /teams/{teamId}/issues answers byte for byte what toIssue writes', async () => {
    const { team, member } = await setup();
    const meeting = await createMeeting(app.db, team.id, member.user.id);
    const priorities: IssuePriority[] = ['HIGH', 'MEDIUM', 'LOW'];
    const statuses: IssueStatus[] = ['OPEN', 'SOLVING', 'SOLVED'];
    await createIssues(app.db, team.id, member.user.id, 14, (index) => ({
      title: trickyTexts[index % trickyTexts.length],
      description: index % 3 ? trickyTexts[(index + 1) % trickyTexts.length] : null,
      priority: priorities[index % priorities.length],
      status: statuses[index % statuses.length],
      resolvedAt: index % 3 === 2 ? trickyInstants[index % trickyInstants.length]! : null,
      meetingId: index % 2 ? null : meeting.id,
      createdAt: trickyInstants[index % trickyInstants.length]!,
    }));
    const rows = await app.db.selectFrom('issues').selectAll().where('team_id', '=', team.id).orderBy('created_at').orderBy('id').execute();
    const list = { key: member.key, map: toIssue, cursorOf: (row: (typeof rows)[number]) => [row.created_at, row.id] };
    await expectPagesAsMapped(app, { ...list, path: `/v1/teams/${team.id}/issues`, rows }, 5);
    await expectPagesAsMapped(app, { ...list, path: `/v1/teams/${team.id}/issues?status=SOLVED`, rows: rows.filter((row) => row.status === 'SOLVED') }, 2);
    await expectPagesAsMapped(app, { ...list, path: `/v1/teams/${team.id}/issues?priority=LOW`, rows: rows.filter((row) => row.priority === 'LOW') }, 2);
    await expectPagesAsMapped(
      app,
      { ...list, path: `/v1/teams/${team.id}/issues?status=OPEN&priority=HIGH`, rows: rows.filter((row) => row.status === 'OPEN' && row.priority === 'HIGH') },
      1,
    );
  });
});

describe(`changing issues (${databaseLabel})`, () => {
  it('PATCH /issues/{id} changes only the fields sent, for anyone\'s issue, and returns the whole issue', async () => {
    const { team, member, person } = await setup();
    const colleague = await person('MEMBER', 'MEMBER');
    const issue = await createIssue(app.db, team.id, colleague.user.id, { description: 'Old details', priority: 'HIGH' });

    const response = await app.request('PATCH', `/v1/issues/${issue.id}`, {
      key: member.key,
      body: { title: ' Košice deliveries late because of the Tuesday linehaul ', priority: 'LOW' },
    });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id: issue.id,
      revision: expect.any(Number),
      teamId: team.id,
      title: 'Košice deliveries late because of the Tuesday linehaul',
      description: 'Old details',
      priority: 'LOW',
      status: 'OPEN',
      meetingId: null,
      createdById: colleague.user.id,
      resolvedAt: null,
      createdAt: issue.created_at.toISOString(),
    });
    expect(await storedIssue(issue.id)).toMatchObject({ title: 'Košice deliveries late because of the Tuesday linehaul', priority: 'LOW' });
  });

  it('a description of "" or null clears it', async () => {
    const { team, member } = await setup();

    for (const description of ['', '   ', null]) {
      const issue = await createIssue(app.db, team.id, member.user.id, { description: 'Details' });
      const response = await app.request('PATCH', `/v1/issues/${issue.id}`, { key: member.key, body: { description } });
      expect(response.status).toBe(200);
      expect(response.body.description).toBeNull();
      expect((await storedIssue(issue.id)).description).toBeNull();
    }
  });

  it('status SOLVED sets resolvedAt to now; SOLVED again keeps the first resolvedAt', async () => {
    const { team, member } = await setup();
    const issue = await createIssue(app.db, team.id, member.user.id);

    const before = Date.now();
    const solved = await app.request('PATCH', `/v1/issues/${issue.id}`, { key: member.key, body: { status: 'SOLVED' } });
    const after = Date.now();
    expect(solved.status).toBe(200);
    expect(solved.body.status).toBe('SOLVED');
    expectNow(solved.body.resolvedAt, before, after);

    const again = await app.request('PATCH', `/v1/issues/${issue.id}`, { key: member.key, body: { status: 'SOLVED', priority: 'HIGH' } });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ status: 'SOLVED', priority: 'HIGH', resolvedAt: solved.body.resolvedAt });
  });

  it('any status step is allowed: OPEN and SOLVING clear resolvedAt, and SOLVED can follow either', async () => {
    const { team, member } = await setup();
    const issue = await createIssue(app.db, team.id, member.user.id, { status: 'SOLVED' });

    const steps: IssueStatus[] = ['SOLVING', 'OPEN', 'SOLVED', 'OPEN', 'SOLVING', 'SOLVED', 'SOLVING'];
    for (const status of steps) {
      const before = Date.now();
      const response = await app.request('PATCH', `/v1/issues/${issue.id}`, { key: member.key, body: { status } });
      expect(response.status).toBe(200);
      expect(response.body.status).toBe(status);
      if (status === 'SOLVED') expectNow(response.body.resolvedAt, before, Date.now());
      else expect(response.body.resolvedAt).toBeNull();
      expect(await storedIssue(issue.id)).toMatchObject({ status, resolved_at: status === 'SOLVED' ? new Date(response.body.resolvedAt) : null });
    }
  });

  it('a rule violation in one field changes none of the others', async () => {
    const { team, member } = await setup();
    const issue = await createIssue(app.db, team.id, member.user.id, { description: 'Details' });

    for (const body of [
      { status: 'SOLVED', title: '   ' },
      { priority: 'HIGH', description: 'x'.repeat(5001) },
      { status: 'SOLVING', title: 'x'.repeat(501) },
    ]) {
      const response = await app.request('PATCH', `/v1/issues/${issue.id}`, { key: member.key, body });
      expect(response.status).toBe(422);
      expect(response.body.error.issues).toBeUndefined();
    }
    expect(await storedIssue(issue.id)).toEqual(issue);
  });

  it('an empty body, a body of unknown fields only, or an unknown status is a format error and changes nothing', async () => {
    const { team, member } = await setup();
    const issue = await createIssue(app.db, team.id, member.user.id);

    for (const body of [{}, { meetingId: unknownId, createdById: member.user.id }, { status: 'CLOSED', title: 'Renamed' }]) {
      const response = await app.request('PATCH', `/v1/issues/${issue.id}`, { key: member.key, body });
      expect(response.status, JSON.stringify(body)).toBe(422);
      expect(response.body.error.issues.length).toBeGreaterThan(0);
    }
    expect(await storedIssue(issue.id)).toEqual(issue);
  });

  it('organization Implementers and Admins outside the team may change issues', async () => {
    const { team, member, person } = await setup();
    const issue = await createIssue(app.db, team.id, member.user.id);

    for (const caller of [await person('IMPLEMENTER'), await person('ADMIN')]) {
      const response = await app.request('PATCH', `/v1/issues/${issue.id}`, { key: caller.key, body: { status: 'SOLVING' } });
      expect(response.status).toBe(200);
    }
  });

  it('team Viewers get 403, callers who cannot see the issue and unknown ids 404, and nothing changes', async () => {
    const { team, member, person } = await setup();
    const viewer = await person('MEMBER', 'VIEWER');
    const orgMember = await person('MEMBER');
    const issue = await createIssue(app.db, team.id, member.user.id);

    const refused = await app.request('PATCH', `/v1/issues/${issue.id}`, { key: viewer.key, body: { status: 'SOLVED' } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('forbidden');
    for (const [key, id] of [[orgMember.key, issue.id], [member.key, unknownId]]) {
      const response = await app.request('PATCH', `/v1/issues/${id}`, { key, body: { status: 'SOLVED' } });
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('notFound');
    }
    expect(await storedIssue(issue.id)).toEqual(issue);
  });

  it('in a suspended organization a change gives 409 orgSuspended and nothing changes', async () => {
    const { team, member } = await setup({ suspended: true });
    const issue = await createIssue(app.db, team.id, member.user.id);

    const response = await app.request('PATCH', `/v1/issues/${issue.id}`, { key: member.key, body: { status: 'SOLVED' } });

    expect(response.status).toBe(409);
    expect(response.body.error.code).toBe('orgSuspended');
    expect(await storedIssue(issue.id)).toEqual(issue);
  });
});

describe(`deleting issues (${databaseLabel})`, () => {
  it('DELETE /issues/{id} deletes the issue for team Admins and Owners and for organization Owners, Admins and Implementers', async () => {
    const { team, member, person } = await setup();
    const callers = [
      await person('MEMBER', 'ADMIN'),
      await person('MEMBER', 'OWNER'),
      await person('OWNER'),
      await person('ADMIN'),
      await person('IMPLEMENTER'),
    ];

    for (const caller of callers) {
      const issue = await createIssue(app.db, team.id, member.user.id);
      const response = await app.request('DELETE', `/v1/issues/${issue.id}`, { key: caller.key });
      expect(response.status).toBe(204);
      expect(response.text).toBe('');
    }
    expect(await issuesOf(team.id)).toEqual([]);
  });

  it('team Members, the issue\'s creator included, and Viewers get 403; callers who cannot see the issue 404; the issue stays', async () => {
    const { team, member, person } = await setup();
    const viewer = await person('MEMBER', 'VIEWER');
    const orgMember = await person('MEMBER');
    const issue = await createIssue(app.db, team.id, member.user.id);

    for (const caller of [member, viewer]) {
      const response = await app.request('DELETE', `/v1/issues/${issue.id}`, { key: caller.key });
      expect(response.status).toBe(403);
      expect(response.body.error.code).toBe('forbidden');
    }
    expect((await app.request('DELETE', `/v1/issues/${issue.id}`, { key: orgMember.key })).status).toBe(404);
    expect((await app.request('DELETE', `/v1/issues/${unknownId}`, { key: member.key })).status).toBe(404);
    expect(await storedIssue(issue.id)).toEqual(issue);
  });

  it('in a suspended organization deleting gives 409 orgSuspended, even for team Admins, while reads still work', async () => {
    const { team, member, person } = await setup({ suspended: true });
    const admin = await person('MEMBER', 'ADMIN');
    const issue = await createIssue(app.db, team.id, member.user.id);

    const response = await app.request('DELETE', `/v1/issues/${issue.id}`, { key: admin.key });

    expect(response.status).toBe(409);
    expect(response.body.error.code).toBe('orgSuspended');
    expect(await storedIssue(issue.id)).toEqual(issue);
    expect((await app.request('GET', `/v1/issues/${issue.id}`, { key: member.key })).status).toBe(200);
    expect((await app.request('GET', `/v1/teams/${team.id}/issues`, { key: member.key })).body.data).toHaveLength(1);
  });
});

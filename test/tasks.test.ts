import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseLabel } from './support/database.js';
import { createMeeting, createTask, createTasks } from './support/executionFactories.js';
import { expectNow } from './support/expectations.js';
import { createCaller, createTeam, createTeamWorld } from './support/factories.js';
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

const tasksOf = (teamId: string) => app.db.selectFrom('tasks').selectAll().where('team_id', '=', teamId).execute();
const storedTask = (id: string) => app.db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();


describe(`creating tasks (${databaseLabel})`, () => {
  it('POST /teams/{teamId}/tasks creates an open task from a meeting of the team, title trimmed', async () => {
    const { team, member } = await setup();
    const meeting = await createMeeting(app.db, team.id, member.user.id);

    const response = await app.request('POST', `/v1/teams/${team.id}/tasks`, {
      key: member.key,
      body: { title: '  Send the revised freight quote to Baltic Trade ', ownerId: member.user.id, dueDate: '2026-11-27', meetingId: meeting.id },
    });

    expect(response.status).toBe(201);
    const stored = await storedTask(response.body.id);
    expect(response.body).toEqual({
      id: stored.id,
      revision: Number(stored.revision),
      teamId: team.id,
      title: 'Send the revised freight quote to Baltic Trade',
      ownerId: member.user.id,
      dueDate: '2026-11-27',
      completed: false,
      completedAt: null,
      meetingId: meeting.id,
      createdAt: stored.created_at.toISOString(),
    });
  });

  it('a task without a meeting, or with meetingId null, has meetingId null', async () => {
    const { team, member } = await setup();

    const omitted = await app.request('POST', `/v1/teams/${team.id}/tasks`, {
      key: member.key,
      body: { title: 'Call the Žilina warehouse', ownerId: member.user.id, dueDate: '2026-11-25' },
    });
    const explicit = await app.request('POST', `/v1/teams/${team.id}/tasks`, {
      key: member.key,
      body: { title: 'Call the Žilina warehouse', ownerId: member.user.id, dueDate: '2026-11-25', meetingId: null },
    });

    expect([omitted.status, explicit.status]).toEqual([201, 201]);
    expect([omitted.body.meetingId, explicit.body.meetingId]).toEqual([null, null]);
  });

  it('the owner may be any person in the team, a Viewer included, and the creator may be an organization Implementer outside the team', async () => {
    const { team, person } = await setup();
    const implementer = await person('IMPLEMENTER');
    const viewer = await person('MEMBER', 'VIEWER');

    const response = await app.request('POST', `/v1/teams/${team.id}/tasks`, {
      key: implementer.key,
      body: { title: 'Update the pricing sheet', ownerId: viewer.user.id, dueDate: '2026-11-20' },
    });

    expect(response.status).toBe(201);
    expect(response.body.ownerId).toBe(viewer.user.id);
  });

  it('an owner who is not in the team is a rule violation (422 without issues), organization Admins included, and nothing is stored', async () => {
    const { team, member, person } = await setup();
    const orgAdmin = await person('ADMIN');
    const orgMember = await person('MEMBER');

    for (const ownerId of [orgAdmin.user.id, orgMember.user.id, unknownId]) {
      const response = await app.request('POST', `/v1/teams/${team.id}/tasks`, {
        key: member.key,
        body: { title: 'Update the pricing sheet', ownerId, dueDate: '2026-11-20' },
      });
      expect(response.status).toBe(422);
      expect(response.body.error.code).toBe('invalid');
      expect(response.body.error.issues).toBeUndefined();
    }
    expect(await tasksOf(team.id)).toEqual([]);
  });

  it('a meeting of another team, or one that does not exist, is a rule violation (422) and nothing is stored', async () => {
    const { org, team, member } = await setup();
    const otherTeam = await createTeam(app.db, org.id);
    const otherMeeting = await createMeeting(app.db, otherTeam.id, member.user.id);

    for (const meetingId of [otherMeeting.id, unknownId]) {
      const response = await app.request('POST', `/v1/teams/${team.id}/tasks`, {
        key: member.key,
        body: { title: 'Update the pricing sheet', ownerId: member.user.id, dueDate: '2026-11-20', meetingId },
      });
      expect(response.status).toBe(422);
      expect(response.body.error.code).toBe('invalid');
      expect(response.body.error.issues).toBeUndefined();
    }
    expect(await tasksOf(team.id)).toEqual([]);
  });

  it('a title empty after trimming or longer than 500 characters is a rule violation; a missing field or a malformed day is a format error', async () => {
    const { team, member } = await setup();
    const base = { title: 'Update the pricing sheet', ownerId: member.user.id, dueDate: '2026-11-20' };

    for (const body of [{ ...base, title: '   ' }, { ...base, title: 'x'.repeat(501) }]) {
      const response = await app.request('POST', `/v1/teams/${team.id}/tasks`, { key: member.key, body });
      expect(response.status).toBe(422);
      expect(response.body.error.issues).toBeUndefined();
    }
    for (const body of [{ title: base.title, ownerId: base.ownerId }, { ...base, dueDate: '2026-02-30' }]) {
      const response = await app.request('POST', `/v1/teams/${team.id}/tasks`, { key: member.key, body });
      expect(response.status).toBe(422);
      expect(response.body.error.issues).toHaveLength(1);
      expect(response.body.error.issues[0].path).toEqual(['dueDate']);
    }
    const longest = await app.request('POST', `/v1/teams/${team.id}/tasks`, { key: member.key, body: { ...base, title: 'x'.repeat(500) } });
    expect(longest.status).toBe(201);
    expect((await tasksOf(team.id)).map((task) => task.id)).toEqual([longest.body.id]);
  });

  it('team Viewers and organization Members outside the team get 403, people of other organizations 403, an unknown team 404', async () => {
    const { team, member, person } = await setup();
    const viewer = await person('MEMBER', 'VIEWER');
    const orgMember = await person('MEMBER');
    const outsider = await createCaller(app.db);
    const body = { title: 'Update the pricing sheet', ownerId: member.user.id, dueDate: '2026-11-20' };

    for (const caller of [viewer, orgMember, outsider]) {
      const response = await app.request('POST', `/v1/teams/${team.id}/tasks`, { key: caller.key, body });
      expect(response.status).toBe(403);
      expect(response.body.error.code).toBe('forbidden');
    }
    const unknown = await app.request('POST', `/v1/teams/${unknownId}/tasks`, { key: member.key, body });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('notFound');
    expect(await tasksOf(team.id)).toEqual([]);
  });

  it('in a suspended organization creating a task gives 409 orgSuspended, before any rule is checked', async () => {
    const { team, member } = await setup({ suspended: true });

    for (const ownerId of [member.user.id, unknownId]) {
      const response = await app.request('POST', `/v1/teams/${team.id}/tasks`, {
        key: member.key,
        body: { title: 'Update the pricing sheet', ownerId, dueDate: '2026-11-20' },
      });
      expect(response.status).toBe(409);
      expect(response.body.error.code).toBe('orgSuspended');
    }
    expect(await tasksOf(team.id)).toEqual([]);
  });
});

describe(`reading a task (${databaseLabel})`, () => {
  it('GET /tasks/{id} returns the task to team members, Viewers included, and to organization Implementers', async () => {
    const { team, member, person } = await setup();
    const viewer = await person('MEMBER', 'VIEWER');
    const implementer = await person('IMPLEMENTER');
    const task = await createTask(app.db, team.id, member.user.id, { completedAt: new Date('2026-11-19T14:05:33.020Z') });

    for (const caller of [member, viewer, implementer]) {
      const response = await app.request('GET', `/v1/tasks/${task.id}`, { key: caller.key });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        id: task.id,
        revision: Number(task.revision),
        teamId: team.id,
        title: 'Send the revised freight quote',
        ownerId: member.user.id,
        dueDate: '2026-11-27',
        completed: true,
        completedAt: '2026-11-19T14:05:33.020Z',
        meetingId: null,
        createdAt: task.created_at.toISOString(),
      });
    }
  });

  it('a task of a team the caller cannot see gives 404, exactly like a task that does not exist', async () => {
    const { team, member, person } = await setup();
    const orgMember = await person('MEMBER');
    const outsider = await createCaller(app.db);
    const task = await createTask(app.db, team.id, member.user.id);

    for (const [key, id] of [[orgMember.key, task.id], [outsider.key, task.id], [member.key, unknownId], [member.key, 'not-an-id']]) {
      const response = await app.request('GET', `/v1/tasks/${id}`, { key });
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('notFound');
    }
  });
});

describe(`listing tasks (${databaseLabel})`, () => {
  it('GET /teams/{teamId}/tasks lists the team\'s tasks oldest first, only that team\'s', async () => {
    const { org, team, member } = await setup();
    const meeting = await createMeeting(app.db, team.id, member.user.id);
    const later = await createTask(app.db, team.id, member.user.id, { title: 'Later', createdAt: new Date('2026-11-16T09:51:47.208Z') });
    const earlier = await createTask(app.db, team.id, member.user.id, {
      title: 'Earlier',
      meetingId: meeting.id,
      createdAt: new Date('2026-11-16T09:42:10.512Z'),
    });
    await createTask(app.db, (await createTeam(app.db, org.id)).id, member.user.id);

    const response = await app.request('GET', `/v1/teams/${team.id}/tasks`, { key: member.key });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: [
        {
          id: earlier.id,
          revision: Number(earlier.revision),
          teamId: team.id,
          title: 'Earlier',
          ownerId: member.user.id,
          dueDate: '2026-11-27',
          completed: false,
          completedAt: null,
          meetingId: meeting.id,
          createdAt: '2026-11-16T09:42:10.512Z',
        },
        {
          id: later.id,
          revision: Number(later.revision),
          teamId: team.id,
          title: 'Later',
          ownerId: member.user.id,
          dueDate: '2026-11-27',
          completed: false,
          completedAt: null,
          meetingId: null,
          createdAt: '2026-11-16T09:51:47.208Z',
        },
      ],
      nextCursor: null,
    });
  });

  it.each([
    ['an empty team', 0],
    ['a team with tasks (the page and the access are read in one statement)', 2],
  ])('organization Members outside %s and people of other organizations get 403; an unknown team 404', async (_case, count) => {
    const { team, person, member } = await setup();
    if (count > 0) await createTasks(app.db, team.id, member.user.id, count);
    const orgMember = await person('MEMBER');
    const outsider = await createCaller(app.db);

    for (const caller of [orgMember, outsider]) {
      const response = await app.request('GET', `/v1/teams/${team.id}/tasks`, { key: caller.key });
      expect(response.status).toBe(403);
      expect(response.body.error.code).toBe('forbidden');
    }
    const unknown = await app.request('GET', `/v1/teams/${unknownId}/tasks`, { key: orgMember.key });
    expect(unknown.status).toBe(404);
  });

  it('a walk with limit 200 over 450 tasks returns each exactly once, in order, also when many share a creation instant', async () => {
    const { team, member } = await setup();
    const start = Date.parse('2026-11-01T08:00:00.000Z');
    // Groups of ten share an instant, so the order within a group comes from the id.
    const created = await createTasks(app.db, team.id, member.user.id, 450, (index) => ({ createdAt: new Date(start + Math.floor(index / 10) * 1000) }));
    const expected = expectedOrder(created);

    const { items, sizes } = await walkPages<{ id: string }>(app, `/v1/teams/${team.id}/tasks`, member.key, { limit: 200 });

    expect(sizes).toEqual([200, 200, 50]);
    expect(items.map((task) => task.id)).toEqual(expected);
  });

  it('filters completed and ownerId combine with each other and with pagination', async () => {
    const { team, member, person } = await setup();
    const colleague = await person('MEMBER', 'MEMBER');
    const start = Date.parse('2026-11-01T08:00:00.000Z');
    const mine = await createTasks(app.db, team.id, member.user.id, 9, (index) => ({
      createdAt: new Date(start + index * 1000),
      completedAt: index % 3 === 0 ? new Date(start + index * 1000 + 500) : null,
    }));
    await createTasks(app.db, team.id, colleague.user.id, 4, (index) => ({
      createdAt: new Date(start + index * 1000),
      completedAt: index % 2 === 0 ? new Date(start) : null,
    }));

    const walk = async (filter: string) =>
      (await walkPages<{ id: string }>(app, `/v1/teams/${team.id}/tasks?${filter}`, member.key, { limit: 2 })).items.map((task) => task.id);

    const openMine = mine.filter((_, index) => index % 3 !== 0).map((task) => task.id);
    const completedMine = mine.filter((_, index) => index % 3 === 0).map((task) => task.id);
    expect(await walk(`completed=false&ownerId=${member.user.id}`)).toEqual(openMine);
    expect(await walk(`completed=true&ownerId=${member.user.id}`)).toEqual(completedMine);
    expect(await walk(`ownerId=${member.user.id}`)).toEqual(mine.map((task) => task.id));
    expect(await walk('completed=true')).toHaveLength(completedMine.length + 2);
  });

  it('an unknown filter value, a limit outside 1-200, an invalid cursor or an undeclared parameter is a format error', async () => {
    const { team, member } = await setup();

    for (const query of ['completed=yes', 'limit=0', 'limit=201', 'cursor=not*a*cursor', 'cursor=WzFd', 'status=OPEN']) {
      const response = await app.request('GET', `/v1/teams/${team.id}/tasks?${query}`, { key: member.key });
      expect(response.status, query).toBe(422);
      expect(response.body.error.issues, query).toHaveLength(1);
    }
  });

  it('a cursor whose id holds the character NUL is a format error, not a failure of the database', async () => {
    const { team, member } = await setup();
    await createTasks(app.db, team.id, member.user.id, 3);
    const cursor = Buffer.from(JSON.stringify(['2026-11-16T09:00:00.000Z', 'a\u0000b'])).toString('base64url');

    const response = await app.request('GET', `/v1/teams/${team.id}/tasks?cursor=${cursor}`, { key: member.key });
    expect(response.status).toBe(422);
    expect(response.body.error.issues).toEqual([expect.objectContaining({ origin: 'query', code: 'invalid_format', path: ['cursor'], format: 'cursor' })]);
  });
});

describe(`changing tasks (${databaseLabel})`, () => {
  it('PATCH /tasks/{id} changes only the fields sent, for anyone\'s task, and returns the whole task', async () => {
    const { team, member, person } = await setup();
    const colleague = await person('MEMBER', 'MEMBER');
    const task = await createTask(app.db, team.id, colleague.user.id);

    const response = await app.request('PATCH', `/v1/tasks/${task.id}`, {
      key: member.key,
      body: { title: ' Update the pricing sheet for Q1 2027 ', ownerId: member.user.id, dueDate: '2026-12-04' },
    });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id: task.id,
      revision: Number((await storedTask(task.id)).revision),
      teamId: team.id,
      title: 'Update the pricing sheet for Q1 2027',
      ownerId: member.user.id,
      dueDate: '2026-12-04',
      completed: false,
      completedAt: null,
      meetingId: null,
      createdAt: task.created_at.toISOString(),
    });
    expect(await storedTask(task.id)).toMatchObject({ title: 'Update the pricing sheet for Q1 2027', owner_id: member.user.id, due_date: '2026-12-04' });
  });

  it('completed true completes the task and sets completedAt to now; sent again it keeps the first completedAt', async () => {
    const { team, member } = await setup();
    const task = await createTask(app.db, team.id, member.user.id);

    const before = Date.now();
    const completed = await app.request('PATCH', `/v1/tasks/${task.id}`, { key: member.key, body: { completed: true } });
    const after = Date.now();
    expect(completed.status).toBe(200);
    expect(completed.body.completed).toBe(true);
    expectNow(completed.body.completedAt, before, after);

    const again = await app.request('PATCH', `/v1/tasks/${task.id}`, { key: member.key, body: { completed: true, title: 'Renamed' } });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ completed: true, completedAt: completed.body.completedAt, title: 'Renamed' });
  });

  it('completed false reopens the task and clears completedAt; completing it again sets a new completedAt', async () => {
    const { team, member } = await setup();
    const task = await createTask(app.db, team.id, member.user.id, { completedAt: new Date('2026-11-19T14:05:33.020Z') });

    const reopened = await app.request('PATCH', `/v1/tasks/${task.id}`, { key: member.key, body: { completed: false } });
    expect(reopened.status).toBe(200);
    expect(reopened.body).toMatchObject({ completed: false, completedAt: null });
    expect(await storedTask(task.id)).toMatchObject({ completed: false, completed_at: null });

    const before = Date.now();
    const completed = await app.request('PATCH', `/v1/tasks/${task.id}`, { key: member.key, body: { completed: true } });
    expect(completed.body.completed).toBe(true);
    expectNow(completed.body.completedAt, before, Date.now());
  });

  it('other fields can be changed after the current owner has left the team', async () => {
    const { team, member, person } = await setup();
    const leaver = await person('MEMBER', 'MEMBER');
    const task = await createTask(app.db, team.id, leaver.user.id);
    await app.db.deleteFrom('team_members').where('team_id', '=', team.id).where('user_id', '=', leaver.user.id).execute();

    const response = await app.request('PATCH', `/v1/tasks/${task.id}`, { key: member.key, body: { dueDate: '2026-12-11', completed: true } });

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ ownerId: leaver.user.id, dueDate: '2026-12-11', completed: true });
  });

  it('a new owner outside the team is a rule violation (422) and none of the other fields sent is changed', async () => {
    const { team, member, person } = await setup();
    const orgOwner = await person('OWNER');
    const task = await createTask(app.db, team.id, member.user.id);

    const response = await app.request('PATCH', `/v1/tasks/${task.id}`, {
      key: member.key,
      body: { title: 'Renamed', completed: true, ownerId: orgOwner.user.id },
    });

    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe('invalid');
    expect(response.body.error.issues).toBeUndefined();
    expect(await storedTask(task.id)).toEqual(task);
  });

  it('an empty body, a body of unknown fields only, a wrong type or a title of spaces is refused with 422 and changes nothing', async () => {
    const { team, member } = await setup();
    const task = await createTask(app.db, team.id, member.user.id);

    for (const body of [{}, { meetingId: unknownId }, { completed: 'yes', title: 'Renamed' }, { title: '  ', dueDate: '2026-12-04' }]) {
      const response = await app.request('PATCH', `/v1/tasks/${task.id}`, { key: member.key, body });
      expect(response.status, JSON.stringify(body)).toBe(422);
      expect(response.body.error.code).toBe('invalid');
    }
    expect(await storedTask(task.id)).toEqual(task);
  });

  it('team Viewers get 403, callers who cannot see the task and unknown ids 404, and nothing changes', async () => {
    const { team, member, person } = await setup();
    const viewer = await person('MEMBER', 'VIEWER');
    const orgMember = await person('MEMBER');
    const task = await createTask(app.db, team.id, member.user.id);

    const refused = await app.request('PATCH', `/v1/tasks/${task.id}`, { key: viewer.key, body: { completed: true } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('forbidden');
    for (const [key, id] of [[orgMember.key, task.id], [member.key, unknownId]]) {
      const response = await app.request('PATCH', `/v1/tasks/${id}`, { key, body: { completed: true } });
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('notFound');
    }
    expect(await storedTask(task.id)).toEqual(task);
  });

  it('in a suspended organization a change gives 409 orgSuspended and nothing changes', async () => {
    const { team, member } = await setup({ suspended: true });
    const task = await createTask(app.db, team.id, member.user.id);

    const response = await app.request('PATCH', `/v1/tasks/${task.id}`, { key: member.key, body: { completed: true } });

    expect(response.status).toBe(409);
    expect(response.body.error.code).toBe('orgSuspended');
    expect(await storedTask(task.id)).toEqual(task);
  });
});

describe(`deleting tasks (${databaseLabel})`, () => {
  it('DELETE /tasks/{id} deletes the task for team Admins and Owners and for organization Owners, Admins and Implementers', async () => {
    const { team, member, person } = await setup();
    const callers = [
      await person('MEMBER', 'ADMIN'),
      await person('MEMBER', 'OWNER'),
      await person('OWNER'),
      await person('ADMIN'),
      await person('IMPLEMENTER'),
    ];

    for (const caller of callers) {
      const task = await createTask(app.db, team.id, member.user.id);
      const response = await app.request('DELETE', `/v1/tasks/${task.id}`, { key: caller.key });
      expect(response.status).toBe(204);
      expect(response.text).toBe('');
      expect((await app.request('GET', `/v1/tasks/${task.id}`, { key: member.key })).status).toBe(404);
    }
    expect(await tasksOf(team.id)).toEqual([]);
  });

  it('team Members and Viewers get 403, callers who cannot see the task 404, and the task stays', async () => {
    const { team, member, person } = await setup();
    const viewer = await person('MEMBER', 'VIEWER');
    const orgMember = await person('MEMBER');
    const task = await createTask(app.db, team.id, member.user.id);

    for (const caller of [member, viewer]) {
      const response = await app.request('DELETE', `/v1/tasks/${task.id}`, { key: caller.key });
      expect(response.status).toBe(403);
      expect(response.body.error.code).toBe('forbidden');
    }
    const invisible = await app.request('DELETE', `/v1/tasks/${task.id}`, { key: orgMember.key });
    expect(invisible.status).toBe(404);
    const unknown = await app.request('DELETE', `/v1/tasks/${unknownId}`, { key: member.key });
    expect(unknown.status).toBe(404);
    expect(await storedTask(task.id)).toEqual(task);
  });

  it('in a suspended organization deleting gives 409 orgSuspended, even for team Admins, and the task stays', async () => {
    const { team, member, person } = await setup({ suspended: true });
    const admin = await person('MEMBER', 'ADMIN');
    const task = await createTask(app.db, team.id, member.user.id);

    const response = await app.request('DELETE', `/v1/tasks/${task.id}`, { key: admin.key });

    expect(response.status).toBe(409);
    expect(response.body.error.code).toBe('orgSuspended');
    expect(await storedTask(task.id)).toEqual(task);
  });

  it('reads still work in a suspended organization', async () => {
    const { team, member } = await setup({ suspended: true });
    const task = await createTask(app.db, team.id, member.user.id);

    expect((await app.request('GET', `/v1/tasks/${task.id}`, { key: member.key })).status).toBe(200);
    expect((await app.request('GET', `/v1/teams/${team.id}/tasks`, { key: member.key })).body.data).toHaveLength(1);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSeat } from './support/areaFactories.js';
import { databaseLabel } from './support/database.js';
import { createCaller, createTeam, createTeamWorld } from './support/factories.js';
import { startTestApp, type TestApp } from './support/testApp.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const unknownId = '00000000-0000-4000-8000-000000000000';

/** An organization with one team, a team Admin and a team Member. */
async function setup(options: { suspended?: boolean } = {}) {
  const world = await createTeamWorld(app.db, options);
  return { ...world, admin: await world.person('MEMBER', 'ADMIN'), member: await world.person('MEMBER', 'MEMBER') };
}

const seatsOf = (teamId: string) => app.db.selectFrom('seats').selectAll().where('team_id', '=', teamId).orderBy('created_at').execute();
const storedSeat = (id: string) => app.db.selectFrom('seats').selectAll().where('id', '=', id).executeTakeFirst();

/** Adds a seat through the API as `key`; returns the created seat. */
async function addSeat(teamId: string, key: string, body: Record<string, unknown>) {
  const response = await app.request('POST', `/v1/teams/${teamId}/org-chart/seats`, { key, body });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body as { id: string; title: string; parentId: string | null; position: number };
}

const chartOf = async (teamId: string, key: string) => {
  const response = await app.request('GET', `/v1/teams/${teamId}/org-chart`, { key });
  expect(response.status).toBe(200);
  expect(response.body.nextCursor).toBeNull();
  return response.body.data as { id: string; title: string; parentId: string | null; position: number }[];
};

describe(`adding seats (${databaseLabel})`, () => {
  it('POST /teams/{teamId}/org-chart/seats adds a filled top-level seat, title and responsibilities trimmed', async () => {
    const { team, admin, member } = await setup();

    const response = await app.request('POST', `/v1/teams/${team.id}/org-chart/seats`, {
      key: admin.key,
      body: { title: '  Head of Sales ', userId: member.user.id, responsibilities: ' Hit the quarterly sales target. ' },
    });

    expect(response.status).toBe(201);
    const [stored] = await seatsOf(team.id);
    expect(response.body).toEqual({
      id: stored!.id,
      revision: expect.any(Number),
      teamId: team.id,
      title: 'Head of Sales',
      parentId: null,
      userId: member.user.id,
      responsibilities: 'Hit the quarterly sales target.',
      position: 1,
    });
  });

  it('a seat below another is vacant without userId, or with userId null, and empty responsibilities are null', async () => {
    const { team, admin } = await setup();
    const top = await addSeat(team.id, admin.key, { title: 'Head of Sales' });

    const omitted = await app.request('POST', `/v1/teams/${team.id}/org-chart/seats`, { key: admin.key, body: { title: 'Account Manager', parentId: top.id } });
    const explicit = await app.request('POST', `/v1/teams/${team.id}/org-chart/seats`, {
      key: admin.key,
      body: { title: 'Sales Analyst', parentId: top.id, userId: null, responsibilities: '  ' },
    });

    expect([omitted.status, explicit.status]).toEqual([201, 201]);
    expect(omitted.body).toMatchObject({ parentId: top.id, userId: null, responsibilities: null, position: 1 });
    expect(explicit.body).toMatchObject({ parentId: top.id, userId: null, responsibilities: null, position: 2 });
  });

  it('each new seat goes after the existing seats on its own level', async () => {
    const { team, admin } = await setup();
    const first = await addSeat(team.id, admin.key, { title: 'Visionary' });
    const below = await addSeat(team.id, admin.key, { title: 'Integrator', parentId: first.id });
    const second = await addSeat(team.id, admin.key, { title: 'Board' });
    const belowBelow = await addSeat(team.id, admin.key, { title: 'Sales', parentId: below.id });
    const belowSecond = await addSeat(team.id, admin.key, { title: 'Operations', parentId: below.id });
    const third = await addSeat(team.id, admin.key, { title: 'Advisors' });

    expect([first, second, third].map((seat) => seat.position)).toEqual([1, 2, 3]);
    expect([below, belowBelow, belowSecond].map((seat) => seat.position)).toEqual([1, 1, 2]);
  });

  it('seats added at the same time on one level get distinct positions, one after another', async () => {
    const { team, admin } = await setup();
    const top = await addSeat(team.id, admin.key, { title: 'Integrator' });

    const responses = await Promise.all(
      Array.from({ length: 6 }, (_, index) =>
        app.request('POST', `/v1/teams/${team.id}/org-chart/seats`, { key: admin.key, body: { title: `Seat ${index + 1}`, parentId: top.id } }),
      ),
    );

    expect(responses.map((response) => response.status)).toEqual([201, 201, 201, 201, 201, 201]);
    expect(responses.map((response) => response.body.position).sort()).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('a parent of another team, an unknown parent, or a person outside the team is a rule violation (422) and nothing is stored', async () => {
    const { org, team, admin, person } = await setup();
    const otherTeam = await createTeam(app.db, org.id);
    const foreignSeat = await createSeat(app.db, otherTeam.id);
    const orgAdmin = await person('ADMIN');

    for (const body of [
      { title: 'Sales', parentId: foreignSeat.id },
      { title: 'Sales', parentId: unknownId },
      { title: 'Sales', userId: orgAdmin.user.id },
      { title: 'Sales', userId: unknownId },
    ]) {
      const response = await app.request('POST', `/v1/teams/${team.id}/org-chart/seats`, { key: admin.key, body });
      expect(response.status, JSON.stringify(body)).toBe(422);
      expect(response.body.error.code).toBe('invalid');
      expect(response.body.error.issues).toBeUndefined();
    }
    expect(await seatsOf(team.id)).toEqual([]);
  });

  it('a title of 1-200 characters and responsibilities of at most 5000 are accepted; beyond, or a title of spaces, is a rule violation', async () => {
    const { team, admin } = await setup();

    for (const body of [{ title: 'x'.repeat(201) }, { title: '  ' }, { title: 'Sales', responsibilities: 'x'.repeat(5001) }]) {
      const response = await app.request('POST', `/v1/teams/${team.id}/org-chart/seats`, { key: admin.key, body });
      expect(response.status).toBe(422);
      expect(response.body.error.issues).toBeUndefined();
    }
    const largest = await addSeat(team.id, admin.key, { title: 'x'.repeat(200), responsibilities: 'y'.repeat(5000) });
    expect((await seatsOf(team.id)).map((seat) => seat.id)).toEqual([largest.id]);
  });

  it('a missing title or a parentId null or of the wrong type is a format error', async () => {
    const { team, admin } = await setup();

    for (const [body, path] of [[{ userId: null }, ['title']], [{ title: 'Sales', parentId: null }, ['parentId']], [{ title: 'Sales', parentId: 7 }, ['parentId']]] as const) {
      const response = await app.request('POST', `/v1/teams/${team.id}/org-chart/seats`, { key: admin.key, body });
      expect(response.status).toBe(422);
      expect(response.body.error.issues.map((issue: { path: string[] }) => issue.path)).toEqual([path]);
    }
  });

  it('team Members, Viewers and callers who cannot see the team get 403; an unknown team 404', async () => {
    const { team, member, person } = await setup();
    const viewer = await person('MEMBER', 'VIEWER');
    const orgMember = await person('MEMBER');
    const outsider = await createCaller(app.db);

    for (const caller of [member, viewer, orgMember, outsider]) {
      const response = await app.request('POST', `/v1/teams/${team.id}/org-chart/seats`, { key: caller.key, body: { title: 'Sales' } });
      expect(response.status).toBe(403);
      expect(response.body.error.code).toBe('forbidden');
    }
    expect((await app.request('POST', `/v1/teams/${unknownId}/org-chart/seats`, { key: member.key, body: { title: 'Sales' } })).status).toBe(404);
    expect(await seatsOf(team.id)).toEqual([]);
  });

  it('in a suspended organization adding a seat gives 409 orgSuspended, before the parent is checked', async () => {
    const { team, admin } = await setup({ suspended: true });

    for (const body of [{ title: 'Sales' }, { title: 'Sales', parentId: unknownId }]) {
      const response = await app.request('POST', `/v1/teams/${team.id}/org-chart/seats`, { key: admin.key, body });
      expect(response.status).toBe(409);
      expect(response.body.error.code).toBe('orgSuspended');
    }
    expect(await seatsOf(team.id)).toEqual([]);
  });
});

describe(`reading the chart (${databaseLabel})`, () => {
  it('GET /teams/{teamId}/org-chart returns every seat depth first, each level by position, only that team\'s', async () => {
    const { org, team, admin, member, person } = await setup();
    const viewer = await person('MEMBER', 'VIEWER');
    // Inserted out of order, with positions set directly, so that neither creation order nor ids give the answer.
    const sales = await createSeat(app.db, team.id, { title: 'Sales', position: 2 });
    const visionary = await createSeat(app.db, team.id, { title: 'Visionary', position: 1, userId: member.user.id, responsibilities: 'Ideas' });
    const analyst = await createSeat(app.db, team.id, { title: 'Analyst', parentId: sales.id, position: 3 });
    const manager = await createSeat(app.db, team.id, { title: 'Manager', parentId: sales.id, position: 1 });
    const junior = await createSeat(app.db, team.id, { title: 'Junior', parentId: manager.id, position: 2 });
    const senior = await createSeat(app.db, team.id, { title: 'Senior', parentId: manager.id, position: 1 });
    const trainee = await createSeat(app.db, team.id, { title: 'Trainee', parentId: junior.id, position: 1 });
    const integrator = await createSeat(app.db, team.id, { title: 'Integrator', parentId: visionary.id, position: 1 });
    const finance = await createSeat(app.db, team.id, { title: 'Finance', position: 3 });
    await createSeat(app.db, (await createTeam(app.db, org.id)).id, { title: 'Elsewhere' });

    const chart = await chartOf(team.id, viewer.key);

    expect(chart.map((seat) => seat.title)).toEqual(['Visionary', 'Integrator', 'Sales', 'Manager', 'Senior', 'Junior', 'Trainee', 'Analyst', 'Finance']);
    expect(chart.map((seat) => seat.id)).toEqual([visionary, integrator, sales, manager, senior, junior, trainee, analyst, finance].map((seat) => seat.id));
    expect(chart[0]).toEqual({
      id: visionary.id,
      revision: expect.any(Number),
      teamId: team.id,
      title: 'Visionary',
      parentId: null,
      userId: member.user.id,
      responsibilities: 'Ideas',
      position: 1,
    });
    expect(chart[6]).toMatchObject({ parentId: junior.id, userId: null, responsibilities: null });
    expect(await chartOf(team.id, admin.key)).toEqual(await chartOf(team.id, viewer.key));
  });

  it('seats sharing a position on one level keep their branches together', async () => {
    const { team, admin } = await setup();
    const a = await createSeat(app.db, team.id, { title: 'A', position: 1 });
    const b = await createSeat(app.db, team.id, { title: 'B', position: 1 });
    await createSeat(app.db, team.id, { title: 'A1', parentId: a.id, position: 1 });
    await createSeat(app.db, team.id, { title: 'B1', parentId: b.id, position: 1 });

    const titles = (await chartOf(team.id, admin.key)).map((seat) => seat.title);

    expect([titles.indexOf('A1') - titles.indexOf('A'), titles.indexOf('B1') - titles.indexOf('B')]).toEqual([1, 1]);
  });

  it('a team without seats has an empty chart; callers who cannot see the team get 403, an unknown team 404', async () => {
    const { team, member, person } = await setup();
    const orgMember = await person('MEMBER');
    const outsider = await createCaller(app.db);

    expect(await chartOf(team.id, member.key)).toEqual([]);
    for (const caller of [orgMember, outsider]) {
      expect((await app.request('GET', `/v1/teams/${team.id}/org-chart`, { key: caller.key })).status).toBe(403);
    }
    expect((await app.request('GET', `/v1/teams/${unknownId}/org-chart`, { key: member.key })).status).toBe(404);
    expect((await app.request('GET', `/v1/teams/${team.id}/org-chart?limit=10`, { key: member.key })).status).toBe(422);
  });
});

describe(`changing seats (${databaseLabel})`, () => {
  it('PATCH /org-chart/seats/{id} renames, fills and rewrites responsibilities, keeps the rest and returns the whole seat', async () => {
    const { team, admin, member } = await setup();
    const top = await createSeat(app.db, team.id, { title: 'Head of Sales', responsibilities: 'Sales' });
    const seat = await createSeat(app.db, team.id, { title: 'Analyst', parentId: top.id, position: 1 });

    const response = await app.request('PATCH', `/v1/org-chart/seats/${seat.id}`, {
      key: admin.key,
      body: { title: ' Sales Analyst ', userId: member.user.id, responsibilities: ' Weekly pipeline numbers ' },
    });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id: seat.id,
      revision: expect.any(Number),
      teamId: team.id,
      title: 'Sales Analyst',
      parentId: top.id,
      userId: member.user.id,
      responsibilities: 'Weekly pipeline numbers',
      position: 1,
    });
    expect((await storedSeat(top.id))!.title).toBe('Head of Sales');
  });

  it('userId null vacates the seat; empty responsibilities or null clear them; other fields stay', async () => {
    const { team, admin, member } = await setup();
    const seat = await createSeat(app.db, team.id, { userId: member.user.id, responsibilities: 'Sales' });

    const vacated = await app.request('PATCH', `/v1/org-chart/seats/${seat.id}`, { key: admin.key, body: { userId: null } });
    expect(vacated.body).toMatchObject({ title: 'Head of Sales', userId: null, responsibilities: 'Sales' });
    for (const responsibilities of ['', '  ', null]) {
      await app.request('PATCH', `/v1/org-chart/seats/${seat.id}`, { key: admin.key, body: { responsibilities: 'Sales' } });
      const cleared = await app.request('PATCH', `/v1/org-chart/seats/${seat.id}`, { key: admin.key, body: { responsibilities } });
      expect(cleared.status).toBe(200);
      expect(cleared.body.responsibilities).toBeNull();
    }
  });

  it('parentId is ignored: a seat cannot be moved, and a body with only parentId counts as empty (422)', async () => {
    const { team, admin } = await setup();
    const other = await createSeat(app.db, team.id, { title: 'Operations', position: 2 });
    const seat = await createSeat(app.db, team.id, { title: 'Sales', position: 1 });

    const mixed = await app.request('PATCH', `/v1/org-chart/seats/${seat.id}`, { key: admin.key, body: { title: 'Sales and Marketing', parentId: other.id } });
    expect(mixed.status).toBe(200);
    expect(mixed.body).toMatchObject({ title: 'Sales and Marketing', parentId: null });
    const only = await app.request('PATCH', `/v1/org-chart/seats/${seat.id}`, { key: admin.key, body: { parentId: other.id } });
    expect(only.status).toBe(422);
    expect(only.body.error.issues).toHaveLength(1);
    expect((await storedSeat(seat.id))!.parent_id).toBeNull();
  });

  it('other fields change after the person in the seat left the team; a new person outside the team is 422 and nothing changes', async () => {
    const { team, admin, person } = await setup();
    const leaver = await person('MEMBER', 'MEMBER');
    const seat = await createSeat(app.db, team.id, { userId: leaver.user.id });
    await app.db.deleteFrom('team_members').where('team_id', '=', team.id).where('user_id', '=', leaver.user.id).execute();

    const renamed = await app.request('PATCH', `/v1/org-chart/seats/${seat.id}`, { key: admin.key, body: { title: 'Head of Sales and Partnerships' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.userId).toBe(leaver.user.id);

    const refused = await app.request('PATCH', `/v1/org-chart/seats/${seat.id}`, { key: admin.key, body: { title: 'Renamed', userId: leaver.user.id } });
    expect(refused.status).toBe(422);
    expect(refused.body.error.issues).toBeUndefined();
    expect((await storedSeat(seat.id))!.title).toBe('Head of Sales and Partnerships');
  });

  it('an empty body, a title of spaces or of 201 characters is refused with 422 and changes nothing', async () => {
    const { team, admin } = await setup();
    const seat = await createSeat(app.db, team.id);

    for (const body of [{}, { unknown: 1 }, { title: '   ' }, { title: 'x'.repeat(201) }, { responsibilities: 'x'.repeat(5001) }]) {
      const response = await app.request('PATCH', `/v1/org-chart/seats/${seat.id}`, { key: admin.key, body });
      expect(response.status, JSON.stringify(body)).toBe(422);
    }
    expect(await storedSeat(seat.id)).toEqual(seat);
  });

  it('team Members and Viewers get 403, callers who cannot see the team and unknown ids 404, and nothing changes', async () => {
    const { team, member, person } = await setup();
    const viewer = await person('MEMBER', 'VIEWER');
    const orgMember = await person('MEMBER');
    const outsider = await createCaller(app.db);
    const seat = await createSeat(app.db, team.id);

    for (const [caller, status] of [[member, 403], [viewer, 403], [orgMember, 404], [outsider, 404]] as const) {
      const response = await app.request('PATCH', `/v1/org-chart/seats/${seat.id}`, { key: caller.key, body: { title: 'Renamed' } });
      expect(response.status).toBe(status);
    }
    expect((await app.request('PATCH', `/v1/org-chart/seats/${unknownId}`, { key: member.key, body: { title: 'Renamed' } })).status).toBe(404);
    expect(await storedSeat(seat.id)).toEqual(seat);
  });

  it('in a suspended organization a change gives 409 orgSuspended', async () => {
    const { team, admin } = await setup({ suspended: true });
    const seat = await createSeat(app.db, team.id);

    const response = await app.request('PATCH', `/v1/org-chart/seats/${seat.id}`, { key: admin.key, body: { title: 'Renamed' } });

    expect(response.status).toBe(409);
    expect(response.body.error.code).toBe('orgSuspended');
    expect(await storedSeat(seat.id)).toEqual(seat);
  });
});

describe(`deleting seats (${databaseLabel})`, () => {
  it('DELETE /org-chart/seats/{id} deletes a middle seat with its whole branch; the rest of the chart and the people stay', async () => {
    const { team, admin, member } = await setup();
    const top = await createSeat(app.db, team.id, { title: 'Visionary' });
    const middle = await createSeat(app.db, team.id, { title: 'Sales', parentId: top.id, position: 1, userId: member.user.id });
    const sibling = await createSeat(app.db, team.id, { title: 'Operations', parentId: top.id, position: 2 });
    const below = await createSeat(app.db, team.id, { title: 'Manager', parentId: middle.id });
    await createSeat(app.db, team.id, { title: 'Senior', parentId: below.id });
    await createSeat(app.db, team.id, { title: 'Junior', parentId: below.id, position: 2 });
    const siblingChild = await createSeat(app.db, team.id, { title: 'Logistics', parentId: sibling.id });

    const response = await app.request('DELETE', `/v1/org-chart/seats/${middle.id}`, { key: admin.key });

    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    expect((await chartOf(team.id, admin.key)).map((seat) => seat.id)).toEqual([top.id, sibling.id, siblingChild.id]);
    expect(await app.db.selectFrom('team_members').select('user_id').where('user_id', '=', member.user.id).executeTakeFirst()).toBeDefined();
    expect((await app.request('DELETE', `/v1/org-chart/seats/${below.id}`, { key: admin.key })).status).toBe(404);
  });

  it('team Owners and the organization\'s Owners, Admins and Implementers delete; Members and Viewers get 403, others 404', async () => {
    const { team, member, person } = await setup();
    const viewer = await person('MEMBER', 'VIEWER');
    const orgMember = await person('MEMBER');
    const outsider = await createCaller(app.db);
    const seat = await createSeat(app.db, team.id);

    for (const [caller, status] of [[member, 403], [viewer, 403], [orgMember, 404], [outsider, 404]] as const) {
      expect((await app.request('DELETE', `/v1/org-chart/seats/${seat.id}`, { key: caller.key })).status).toBe(status);
    }
    expect(await storedSeat(seat.id)).toEqual(seat);
    for (const caller of [await person('MEMBER', 'OWNER'), await person('OWNER'), await person('ADMIN'), await person('IMPLEMENTER')]) {
      const target = await createSeat(app.db, team.id, { title: 'Temporary', position: 2 });
      expect((await app.request('DELETE', `/v1/org-chart/seats/${target.id}`, { key: caller.key })).status).toBe(204);
    }
    expect((await seatsOf(team.id)).map((row) => row.id)).toEqual([seat.id]);
  });

  it('in a suspended organization deleting gives 409 orgSuspended and reads still work', async () => {
    const { team, admin } = await setup({ suspended: true });
    const seat = await createSeat(app.db, team.id);

    const response = await app.request('DELETE', `/v1/org-chart/seats/${seat.id}`, { key: admin.key });

    expect(response.status).toBe(409);
    expect((await chartOf(team.id, admin.key)).map((item) => item.id)).toEqual([seat.id]);
  });
});

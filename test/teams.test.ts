import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addOrganizationMember, addTeamMember, createCaller, createOrganization, createTeam, createUser } from './support/factories.js';
import { databaseLabel } from './support/database.js';
import { expectPagesAsMapped, trickyInstants, trickyTexts } from './support/jsonBodies.js';
import { toTeamMember } from '../src/records/teams.js';
import { walkPages } from './support/pages.js';
import { startTestApp, type TestApp } from './support/testApp.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

async function organizationWith(role: 'OWNER' | 'ADMIN' | 'MEMBER' | 'IMPLEMENTER' = 'ADMIN') {
  const org = await createOrganization(app.db);
  const caller = await createCaller(app.db);
  await addOrganizationMember(app.db, org.id, caller.user.id, role);
  return { org, caller, key: caller.key };
}

const storedTeam = (id: string) => app.db.selectFrom('teams').selectAll().where('id', '=', id).executeTakeFirst();

describe(`teams (${databaseLabel})`, () => {
  it('POST /orgs/{orgId}/teams creates a team with a slug, the default meeting settings and no members', async () => {
    const { org, key } = await organizationWith();

    const response = await app.request('POST', `/v1/orgs/${org.id}/teams`, { key, body: { name: '  Predaj Košice ' } });

    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.any(String),
      revision: expect.any(Number),
      orgId: org.id,
      name: 'Predaj Košice',
      slug: 'predaj-kosice',
      isLeadership: false,
      meetingDurationMin: 90,
      meetingWarningMin: 80,
    });
    expect((await app.request('GET', `/v1/teams/${response.body.id}/members`, { key })).body).toEqual({ data: [], nextCursor: null });
  });

  it('a taken slug gets a number suffix', async () => {
    const { org, key } = await organizationWith();
    const slugs = [];
    for (let i = 0; i < 3; i += 1) {
      slugs.push((await app.request('POST', `/v1/orgs/${org.id}/teams`, { key, body: { name: 'Sales' } })).body.slug);
    }
    expect(slugs).toEqual(['sales', 'sales-2', 'sales-3']);
  });

  it('a name empty after trimming or over 100 characters is refused and creates nothing', async () => {
    const { org, key } = await organizationWith();
    for (const name of ['   ', 'x'.repeat(101)]) {
      const response = await app.request('POST', `/v1/orgs/${org.id}/teams`, { key, body: { name } });
      expect([response.status, response.body.error.code]).toEqual([422, 'invalid']);
    }
    expect(await app.db.selectFrom('teams').select('id').where('org_id', '=', org.id).execute()).toEqual([]);
  });

  it('GET /orgs/{orgId}/teams shows Owners, Admins and Implementers every team by name, a plain Member only their own', async () => {
    const { org, key } = await organizationWith('IMPLEMENTER');
    const zeta = await createTeam(app.db, org.id, { name: 'Zeta' });
    const alpha = await createTeam(app.db, org.id, { name: 'Alpha' });
    const plain = await createCaller(app.db, { scopes: ['read'] });
    await addOrganizationMember(app.db, org.id, plain.user.id, 'MEMBER');
    await addTeamMember(app.db, zeta.id, plain.user.id, 'VIEWER');

    const all = await app.request('GET', `/v1/orgs/${org.id}/teams`, { key });
    const own = await app.request('GET', `/v1/orgs/${org.id}/teams`, { key: plain.key });

    expect(all.body.data.map((team: { id: string }) => team.id)).toEqual([alpha.id, zeta.id]);
    expect(all.body.nextCursor).toBeNull();
    expect(own.body.data.map((team: { id: string }) => team.id)).toEqual([zeta.id]);
  });

  it('GET /teams/{teamId} shows the team with its meeting settings', async () => {
    const { org, key } = await organizationWith('OWNER');
    const team = await createTeam(app.db, org.id, { name: 'Leadership', isLeadership: true });

    const response = await app.request('GET', `/v1/teams/${team.id}`, { key });

    expect(response.body).toEqual({
      id: team.id,
      revision: Number(team.revision),
      orgId: org.id,
      name: 'Leadership',
      slug: team.slug,
      isLeadership: true,
      meetingDurationMin: 90,
      meetingWarningMin: 80,
    });
  });

  it('PATCH /teams/{teamId} renames without changing the slug and sets the leadership flag', async () => {
    const { org, key } = await organizationWith();
    const team = await createTeam(app.db, org.id, { name: 'Ops' });

    const response = await app.request('PATCH', `/v1/teams/${team.id}`, { key, body: { name: 'Operations', isLeadership: true } });

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ name: 'Operations', slug: team.slug, isLeadership: true });
  });

  it('meeting settings out of range are stored adjusted and the response shows the stored values', async () => {
    const { org, key } = await organizationWith();
    const team = await createTeam(app.db, org.id);

    const high = await app.request('PATCH', `/v1/teams/${team.id}`, { key, body: { meetingDurationMin: 400, meetingWarningMin: 500 } });
    expect([high.body.meetingDurationMin, high.body.meetingWarningMin]).toEqual([300, 299]);

    const short = await app.request('PATCH', `/v1/teams/${team.id}`, { key, body: { meetingDurationMin: 5 } });
    expect([short.body.meetingDurationMin, short.body.meetingWarningMin]).toEqual([10, 9]);

    const stored = await storedTeam(team.id);
    expect([stored?.meeting_duration_min, stored?.meeting_warning_min]).toEqual([10, 9]);
  });

  it('a PATCH with one invalid field changes nothing', async () => {
    const { org, key } = await organizationWith();
    const team = await createTeam(app.db, org.id, { name: 'Ops' });

    const response = await app.request('PATCH', `/v1/teams/${team.id}`, { key, body: { name: 'x'.repeat(101), meetingDurationMin: 60 } });

    expect(response.status).toBe(422);
    const stored = await storedTeam(team.id);
    expect([stored?.name, stored?.meeting_duration_min]).toEqual(['Ops', 90]);
  });

  it('a PATCH with only unknown fields counts as empty', async () => {
    const { org, key } = await organizationWith();
    const team = await createTeam(app.db, org.id);
    const response = await app.request('PATCH', `/v1/teams/${team.id}`, { key, body: { slug: 'new-slug' } });
    expect(response.status).toBe(422);
    expect(response.body.error.issues).toBeDefined();
  });

  it('team Owners who are plain organization Members and outsiders may not change the team (403); only an unknown team is 404', async () => {
    const { org } = await organizationWith();
    const team = await createTeam(app.db, org.id);
    const teamOwner = await createCaller(app.db);
    await addOrganizationMember(app.db, org.id, teamOwner.user.id, 'MEMBER');
    await addTeamMember(app.db, team.id, teamOwner.user.id, 'OWNER');
    const outsider = await createCaller(app.db);

    expect((await app.request('PATCH', `/v1/teams/${team.id}`, { key: teamOwner.key, body: { name: 'Mine' } })).status).toBe(403);
    expect((await app.request('PATCH', `/v1/teams/${team.id}`, { key: outsider.key, body: { name: 'Mine' } })).status).toBe(403);
    expect((await app.request('DELETE', `/v1/teams/${team.id}`, { key: outsider.key })).status).toBe(403);
    expect((await app.request('PATCH', '/v1/teams/no-such-team', { key: outsider.key, body: { name: 'Mine' } })).status).toBe(404);
    expect((await storedTeam(team.id))?.name).not.toBe('Mine');
  });

  it('DELETE /teams/{teamId} deletes the team with all its data; its members stay in the organization', async () => {
    const { org, caller, key } = await organizationWith('OWNER');
    const team = await createTeam(app.db, org.id);
    const person = await createUser(app.db);
    await addOrganizationMember(app.db, org.id, person.id, 'MEMBER');
    await addTeamMember(app.db, team.id, person.id, 'MEMBER');
    const meeting = await app.db
      .insertInto('meetings')
      .values({ team_id: team.id, date: '2026-11-16', status: 'SCHEDULED', created_by_id: caller.user.id })
      .returning('id')
      .executeTakeFirstOrThrow();
    await app.db.insertInto('tasks').values({ team_id: team.id, title: 'T', owner_id: person.id, due_date: '2026-11-20', meeting_id: meeting.id }).execute();
    const goal = await app.db
      .insertInto('goals')
      .values({ team_id: team.id, org_id: org.id, title: 'G', owner_id: person.id, quarter: '2026-Q4' })
      .returning('id')
      .executeTakeFirstOrThrow();
    await app.db.insertInto('milestones').values({ goal_id: goal.id, title: 'M' }).execute();
    await app.db.insertInto('cascading_messages').values({ meeting_id: meeting.id, org_id: org.id, user_id: person.id, content: 'Hello' }).execute();

    expect((await app.request('DELETE', `/v1/teams/${team.id}`, { key })).status).toBe(204);

    expect(await storedTeam(team.id)).toBeUndefined();
    for (const table of ['tasks', 'meetings', 'goals', 'team_members'] as const) {
      expect(await app.db.selectFrom(table).select('team_id').where('team_id', '=', team.id).execute(), table).toEqual([]);
    }
    expect(await app.db.selectFrom('milestones').select('id').where('goal_id', '=', goal.id).execute()).toEqual([]);
    expect(await app.db.selectFrom('cascading_messages').select('id').where('meeting_id', '=', meeting.id).execute()).toEqual([]);
    expect(await app.db.selectFrom('organization_members').select('user_id').where('user_id', '=', person.id).execute()).toHaveLength(1);
    expect((await app.request('GET', `/v1/teams/${team.id}`, { key })).status).toBe(404);
  });
});

describe(`team members (${databaseLabel})`, () => {
  async function teamWith() {
    const { org, key } = await organizationWith();
    const team = await createTeam(app.db, org.id);
    return { org, team, key };
  }

  it('POST adds an organization member with role MEMBER by default and answers with the team member', async () => {
    const { org, team, key } = await teamWith();
    const person = await createUser(app.db, { name: 'Peter Novák' });
    await addOrganizationMember(app.db, org.id, person.id, 'MEMBER');

    const response = await app.request('POST', `/v1/teams/${team.id}/members`, { key, body: { userId: person.id } });

    expect(response.status).toBe(201);
    expect(response.body).toEqual({ userId: person.id, revision: expect.any(Number), email: person.email, name: 'Peter Novák', role: 'MEMBER' });
  });

  it('a person outside the organization, or already in the team, is refused', async () => {
    const { org, team, key } = await teamWith();
    const stranger = await createUser(app.db);
    const inTeam = await createUser(app.db);
    await addOrganizationMember(app.db, org.id, inTeam.id, 'MEMBER');
    await addTeamMember(app.db, team.id, inTeam.id, 'VIEWER');

    const outside = await app.request('POST', `/v1/teams/${team.id}/members`, { key, body: { userId: stranger.id } });
    const twice = await app.request('POST', `/v1/teams/${team.id}/members`, { key, body: { userId: inTeam.id, role: 'ADMIN' } });

    expect([outside.status, twice.status]).toEqual([422, 422]);
    const rows = await app.db.selectFrom('team_members').select(['user_id', 'role']).where('team_id', '=', team.id).execute();
    expect(rows).toEqual([{ user_id: inTeam.id, role: 'VIEWER' }]);
  });

  it('GET lists team members in the order they joined, page by page, each exactly once', async () => {
    const { org, team, key } = await teamWith();
    const ids = [];
    for (let i = 0; i < 5; i += 1) {
      const person = await createUser(app.db);
      await addOrganizationMember(app.db, org.id, person.id, 'MEMBER');
      await addTeamMember(app.db, team.id, person.id, i % 2 ? 'VIEWER' : 'MEMBER');
      ids.push(person.id);
    }

    const { items } = await walkPages<{ userId: string }>(app, `/v1/teams/${team.id}/members`, key, { limit: 2 });

    expect(items.map((member) => member.userId)).toEqual(ids);
  });

  it('GET /teams/{teamId}/members answers byte for byte what toTeamMember writes', async () => {
    const { org, team, key } = await teamWith();
    const roles = ['OWNER', 'ADMIN', 'MEMBER', 'VIEWER'] as const;
    for (let index = 0; index < 11; index++) {
      const text = trickyTexts[index % trickyTexts.length]!;
      // The contract holds emails to its format: of the tricky characters only `%` and `'` fit.
      const user = await createUser(app.db, { name: text, email: `o'brien%s%%1$s.${index}.${team.id}@example.com` });
      await addOrganizationMember(app.db, org.id, user.id, 'MEMBER');
      await addTeamMember(app.db, team.id, user.id, roles[index % roles.length]!);
      await app.db
        .updateTable('team_members')
        .set({ joined_at: trickyInstants[index % trickyInstants.length]! })
        .where('team_id', '=', team.id)
        .where('user_id', '=', user.id)
        .execute();
    }
    const rows = await app.db
      .selectFrom('team_members')
      .innerJoin('users', 'users.id', 'team_members.user_id')
      .select(['team_members.user_id', 'team_members.revision', 'team_members.role', 'team_members.joined_at', 'users.email', 'users.name'])
      .where('team_members.team_id', '=', team.id)
      .orderBy('team_members.joined_at')
      .orderBy('team_members.user_id')
      .execute();
    const cursorOf = (row: (typeof rows)[number]) => [row.joined_at, row.user_id];
    await expectPagesAsMapped(app, { path: `/v1/teams/${team.id}/members`, key, rows, map: toTeamMember, cursorOf }, 5);
  });

  it('PATCH changes the team role only; DELETE removes the person from this team only', async () => {
    const { org, team, key } = await teamWith();
    const otherTeam = await createTeam(app.db, org.id);
    const person = await createCaller(app.db, { scopes: ['read'] });
    await addOrganizationMember(app.db, org.id, person.user.id, 'MEMBER');
    await addTeamMember(app.db, team.id, person.user.id, 'MEMBER');
    await addTeamMember(app.db, otherTeam.id, person.user.id, 'MEMBER');

    const patched = await app.request('PATCH', `/v1/teams/${team.id}/members/${person.user.id}`, { key, body: { role: 'OWNER' } });
    expect(patched.body).toEqual({ userId: person.user.id, revision: expect.any(Number), email: person.user.email, name: person.user.name, role: 'OWNER' });

    expect((await app.request('DELETE', `/v1/teams/${team.id}/members/${person.user.id}`, { key })).status).toBe(204);
    expect((await app.request('GET', `/v1/teams/${team.id}`, { key: person.key })).status).toBe(404);
    expect((await app.request('GET', `/v1/teams/${otherTeam.id}`, { key: person.key })).status).toBe(200);
    expect((await app.request('GET', `/v1/orgs/${org.id}`, { key: person.key })).body.role).toBe('MEMBER');
  });

  it('a team Admin who is a plain organization Member gets 403 from PATCH and DELETE of a member, whether or not the person is in the team', async () => {
    const { org, team } = await teamWith();
    const teamAdmin = await createCaller(app.db);
    await addOrganizationMember(app.db, org.id, teamAdmin.user.id, 'MEMBER');
    await addTeamMember(app.db, team.id, teamAdmin.user.id, 'ADMIN');
    const inTeam = await createUser(app.db);
    const notInTeam = await createUser(app.db);
    for (const person of [inTeam, notInTeam]) await addOrganizationMember(app.db, org.id, person.id, 'MEMBER');
    await addTeamMember(app.db, team.id, inTeam.id, 'MEMBER');

    const answers = [];
    for (const person of [inTeam, notInTeam]) {
      const path = `/v1/teams/${team.id}/members/${person.id}`;
      answers.push(await app.request('PATCH', path, { key: teamAdmin.key, body: { role: 'VIEWER' } }));
      answers.push(await app.request('DELETE', path, { key: teamAdmin.key }));
    }

    expect(answers.map((answer) => [answer.status, answer.body.error.code])).toEqual(Array(4).fill([403, 'forbidden']));
    const rows = await app.db.selectFrom('team_members').select('role').where('team_id', '=', team.id).where('user_id', '=', inTeam.id).execute();
    expect(rows).toEqual([{ role: 'MEMBER' }]);
  });

  it('PATCH and DELETE of a person not in the team give 404', async () => {
    const { org, team, key } = await teamWith();
    const person = await createUser(app.db);
    await addOrganizationMember(app.db, org.id, person.id, 'MEMBER');
    expect((await app.request('PATCH', `/v1/teams/${team.id}/members/${person.id}`, { key, body: { role: 'ADMIN' } })).status).toBe(404);
    expect((await app.request('DELETE', `/v1/teams/${team.id}/members/${person.id}`, { key })).status).toBe(404);
  });
});

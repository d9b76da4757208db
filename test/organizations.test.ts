import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addOrganizationMember, addTeamMember, createCaller, createOrganization, createTeam, createUser } from './support/factories.js';
import { databaseLabel } from './support/database.js';
import { expectPagesAsMapped, trickyInstants, trickyTexts } from './support/jsonBodies.js';
import { toOrganizationMember } from '../src/records/organizations.js';
import { startTestApp, type TestApp } from './support/testApp.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

/** An organization with a caller of the given role in it. */
async function organizationWith(role: 'OWNER' | 'ADMIN' = 'OWNER') {
  const org = await createOrganization(app.db, { name: 'Acme Freight' });
  const caller = await createCaller(app.db);
  await addOrganizationMember(app.db, org.id, caller.user.id, role);
  return { org, caller, key: caller.key };
}

const member = (orgId: string, userId: string) =>
  app.db.selectFrom('organization_members').selectAll().where('org_id', '=', orgId).where('user_id', '=', userId).executeTakeFirst();

describe(`organization settings (${databaseLabel})`, () => {
  it('PATCH /orgs/{orgId} changes name, timezone and default language and answers with the organization', async () => {
    const { org, key } = await organizationWith('ADMIN');

    const response = await app.request('PATCH', `/v1/orgs/${org.id}`, {
      key,
      body: { name: '  Acme Logistics ', timezone: 'America/New_York', defaultLocale: 'sk' },
    });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id: org.id,
      revision: expect.any(Number),
      name: 'Acme Logistics',
      status: 'ACTIVE',
      role: 'ADMIN',
      timezone: 'America/New_York',
      defaultLocale: 'sk',
    });
    expect((await app.request('GET', `/v1/orgs/${org.id}`, { key })).body).toEqual(response.body);
  });

  it.each([
    ['EUROPE/PRAGUE', 'Europe/Prague'],
    ['etc/utc', 'UTC'],
    ['utc', 'UTC'],
    ['asia/kolkata', 'Asia/Kolkata'],
  ])('PATCH /orgs/{orgId} takes the time zone %s in any letter case and stores and answers %s', async (sent, stored) => {
    const { org, key } = await organizationWith();

    const response = await app.request('PATCH', `/v1/orgs/${org.id}`, { key, body: { timezone: sent } });

    expect(response.body.timezone).toBe(stored);
    expect((await app.request('GET', '/v1/me', { key })).body.orgs).toEqual([expect.objectContaining({ id: org.id, timezone: stored })]);
    const row = await app.db.selectFrom('organizations').select('timezone').where('id', '=', org.id).executeTakeFirstOrThrow();
    expect(row.timezone).toBe(stored);
  });

  it('a name Intl knows that is not in the tz database, such as PST, is refused like an unknown time zone', async () => {
    const { org, key } = await organizationWith();

    const response = await app.request('PATCH', `/v1/orgs/${org.id}`, { key, body: { timezone: 'PST' } });

    expect([response.status, response.body.error.code, response.body.error.issues]).toEqual([422, 'invalid', undefined]);
  });

  it('an unknown time zone is a rule violation and nothing of the PATCH is applied', async () => {
    const { org, key } = await organizationWith();

    const response = await app.request('PATCH', `/v1/orgs/${org.id}`, { key, body: { name: 'Renamed', timezone: 'Mars/Olympus' } });

    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe('invalid');
    expect(response.body.error.issues).toBeUndefined();
    const stored = await app.db.selectFrom('organizations').selectAll().where('id', '=', org.id).executeTakeFirstOrThrow();
    expect([stored.name, stored.timezone]).toEqual(['Acme Freight', 'Europe/Bratislava']);
  });

  it('a name over 200 characters or an unknown language is refused', async () => {
    const { org, key } = await organizationWith();
    expect((await app.request('PATCH', `/v1/orgs/${org.id}`, { key, body: { name: 'x'.repeat(201) } })).status).toBe(422);
    const language = await app.request('PATCH', `/v1/orgs/${org.id}`, { key, body: { defaultLocale: 'de' } });
    expect(language.status).toBe(422);
    expect(language.body.error.issues[0].path).toEqual(['defaultLocale']);
  });
});

describe(`organization members (${databaseLabel})`, () => {
  it('GET /orgs/{orgId}/members lists members with role and joinedAt, oldest membership first, page by page', async () => {
    const { org, caller, key } = await organizationWith();
    const others = [];
    for (const [index, role] of (['MEMBER', 'IMPLEMENTER', 'ADMIN'] as const).entries()) {
      const user = await createUser(app.db);
      await addOrganizationMember(app.db, org.id, user.id, role);
      // Joined a minute apart in this order: two inserts may share a millisecond, and ties go by id.
      await app.db
        .updateTable('organization_members')
        .set({ joined_at: new Date(Date.now() + (index + 1) * 60_000) })
        .where('org_id', '=', org.id)
        .where('user_id', '=', user.id)
        .execute();
      others.push({ user, role });
    }

    const first = await app.request('GET', `/v1/orgs/${org.id}/members?limit=2`, { key });
    const second = await app.request('GET', `/v1/orgs/${org.id}/members?limit=2&cursor=${first.body.nextCursor}`, { key });

    expect(first.body.data.map((m: { userId: string }) => m.userId)).toEqual([caller.user.id, others[0]!.user.id]);
    expect(second.body.nextCursor).toBeNull();
    expect(second.body.data).toEqual(
      others.slice(1).map(({ user, role }) => ({ userId: user.id, revision: expect.any(Number), email: user.email, name: user.name, role, joinedAt: expect.any(String) })),
    );
  });

  it('GET /orgs/{orgId}/members answers byte for byte what toOrganizationMember writes', async () => {
    const { org, key } = await organizationWith();
    const roles = ['OWNER', 'ADMIN', 'MEMBER', 'IMPLEMENTER'] as const;
    for (let index = 0; index < 11; index++) {
      const text = trickyTexts[index % trickyTexts.length]!;
      // The contract holds emails to its format: of the tricky characters only `%` and `'` fit.
      const user = await createUser(app.db, { name: text, email: `o'brien%s%%1$s.${index}.${org.id}@example.com` });
      await addOrganizationMember(app.db, org.id, user.id, roles[index % roles.length]!);
      await app.db
        .updateTable('organization_members')
        .set({ joined_at: trickyInstants[index % trickyInstants.length]! })
        .where('org_id', '=', org.id)
        .where('user_id', '=', user.id)
        .execute();
    }
    const rows = await app.db
      .selectFrom('organization_members')
      .innerJoin('users', 'users.id', 'organization_members.user_id')
      .select(['organization_members.user_id', 'organization_members.revision', 'organization_members.role', 'organization_members.joined_at', 'users.email', 'users.name'])
      .where('organization_members.org_id', '=', org.id)
      .orderBy('organization_members.joined_at')
      .orderBy('organization_members.user_id')
      .execute();
    const cursorOf = (row: (typeof rows)[number]) => [row.joined_at, row.user_id];
    await expectPagesAsMapped(app, { path: `/v1/orgs/${org.id}/members`, key, rows, map: toOrganizationMember, cursorOf }, 5);
  });

  it('adding an existing account keeps its name and sign-in method and answers created false', async () => {
    const { org, key } = await organizationWith();
    const person = await createUser(app.db, { name: 'Eva Horváthová', email: 'Eva.Horvathova@example.com' });

    const response = await app.request('POST', `/v1/orgs/${org.id}/members`, {
      key,
      body: { email: 'eva.horvathova@EXAMPLE.com', role: 'MEMBER', name: 'Someone Else', externalOnly: true },
    });

    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      userId: person.id,
      revision: expect.any(Number),
      email: 'Eva.Horvathova@example.com',
      name: 'Eva Horváthová',
      role: 'MEMBER',
      joinedAt: expect.any(String),
      created: false,
    });
    const stored = await app.db.selectFrom('users').selectAll().where('id', '=', person.id).executeTakeFirstOrThrow();
    expect([stored.name, stored.external_only]).toEqual(['Eva Horváthová', false]);
  });

  it('an unknown e-mail with externalOnly creates an external account in the organization\'s default language', async () => {
    const { org, key } = await organizationWith();
    await app.db.updateTable('organizations').set({ default_locale: 'sk' }).where('id', '=', org.id).execute();

    const response = await app.request('POST', `/v1/orgs/${org.id}/members`, {
      key,
      body: { email: 'novy.clen@example.com', role: 'IMPLEMENTER', name: 'Nový Člen', externalOnly: true },
    });

    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ email: 'novy.clen@example.com', name: 'Nový Člen', role: 'IMPLEMENTER', created: true });
    const stored = await app.db.selectFrom('users').selectAll().where('id', '=', response.body.userId).executeTakeFirstOrThrow();
    expect([stored.locale, stored.external_only, stored.password_hash]).toEqual(['sk', true, null]);
  });

  it('a new account without a name is named after its e-mail', async () => {
    const { org, key } = await organizationWith();
    const response = await app.request('POST', `/v1/orgs/${org.id}/members`, {
      key,
      body: { email: 'jana.mala@example.com', role: 'MEMBER', externalOnly: true },
    });
    expect(response.body.name).toBe('jana.mala');
  });

  it('an unknown e-mail without externalOnly true is refused and creates no account', async () => {
    const { org, key } = await organizationWith();

    for (const body of [{ email: 'nobody@example.com', role: 'MEMBER' }, { email: 'nobody@example.com', role: 'MEMBER', externalOnly: false }]) {
      const response = await app.request('POST', `/v1/orgs/${org.id}/members`, { key, body });
      expect(response.status).toBe(422);
      expect(response.body.error.issues).toBeUndefined();
    }
    expect(await app.db.selectFrom('users').select('id').where('email', '=', 'nobody@example.com').executeTakeFirst()).toBeUndefined();
  });

  it('a password, or any other unknown field, is refused: the body is strict', async () => {
    const { org, key } = await organizationWith();

    const response = await app.request('POST', `/v1/orgs/${org.id}/members`, {
      key,
      body: { email: 'strict@example.com', role: 'MEMBER', externalOnly: true, password: 'secret-password' },
    });

    expect(response.status).toBe(422);
    expect(response.body.error.issues[0]).toMatchObject({ code: 'unrecognized_keys' });
    expect(await app.db.selectFrom('users').select('id').where('email', '=', 'strict@example.com').executeTakeFirst()).toBeUndefined();
  });

  it('a person who is already a member is refused', async () => {
    const { org, caller, key } = await organizationWith();
    const response = await app.request('POST', `/v1/orgs/${org.id}/members`, { key, body: { email: caller.user.email, role: 'MEMBER' } });
    expect(response.status).toBe(422);
    expect((await member(org.id, caller.user.id))?.role).toBe('OWNER');
  });

  it('only an Owner may add someone as OWNER or ADMIN; an Admin may add Members and Implementers', async () => {
    const { org, key } = await organizationWith('ADMIN');
    const person = await createUser(app.db);

    for (const role of ['OWNER', 'ADMIN']) {
      const response = await app.request('POST', `/v1/orgs/${org.id}/members`, { key, body: { email: person.email, role } });
      expect([response.status, response.body.error.code]).toEqual([403, 'forbidden']);
    }
    expect(await member(org.id, person.id)).toBeUndefined();
    expect((await app.request('POST', `/v1/orgs/${org.id}/members`, { key, body: { email: person.email, role: 'IMPLEMENTER' } })).status).toBe(201);
  });

  it('PATCH member sets the organization role', async () => {
    const { org, key } = await organizationWith();
    const person = await createUser(app.db);
    await addOrganizationMember(app.db, org.id, person.id, 'MEMBER');

    const response = await app.request('PATCH', `/v1/orgs/${org.id}/members/${person.id}`, { key, body: { role: 'ADMIN' } });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ userId: person.id, revision: expect.any(Number), email: person.email, name: person.name, role: 'ADMIN', joinedAt: expect.any(String) });
    expect((await member(org.id, person.id))?.role).toBe('ADMIN');
  });

  it('an Admin may neither grant ADMIN nor change or remove an Owner or Admin', async () => {
    const { org, key } = await organizationWith('ADMIN');
    const plain = await createUser(app.db);
    const admin = await createUser(app.db);
    const owner = await createUser(app.db);
    await addOrganizationMember(app.db, org.id, plain.id, 'MEMBER');
    await addOrganizationMember(app.db, org.id, admin.id, 'ADMIN');
    await addOrganizationMember(app.db, org.id, owner.id, 'OWNER');

    const refused = [
      await app.request('PATCH', `/v1/orgs/${org.id}/members/${plain.id}`, { key, body: { role: 'ADMIN' } }),
      await app.request('PATCH', `/v1/orgs/${org.id}/members/${admin.id}`, { key, body: { role: 'MEMBER' } }),
      await app.request('PATCH', `/v1/orgs/${org.id}/members/${owner.id}`, { key, body: { role: 'MEMBER' } }),
      await app.request('DELETE', `/v1/orgs/${org.id}/members/${admin.id}`, { key }),
      await app.request('DELETE', `/v1/orgs/${org.id}/members/${owner.id}`, { key }),
    ];

    expect(refused.map((response) => response.status)).toEqual([403, 403, 403, 403, 403]);
    expect([(await member(org.id, plain.id))?.role, (await member(org.id, admin.id))?.role, (await member(org.id, owner.id))?.role]).toEqual([
      'MEMBER',
      'ADMIN',
      'OWNER',
    ]);
    expect((await app.request('PATCH', `/v1/orgs/${org.id}/members/${plain.id}`, { key, body: { role: 'IMPLEMENTER' } })).status).toBe(200);
  });

  it('a plain Member who is a team Admin gets 403 from PATCH and DELETE of a member, whether or not the person is a member', async () => {
    const { org } = await organizationWith();
    const team = await createTeam(app.db, org.id);
    const teamAdmin = await createCaller(app.db);
    await addOrganizationMember(app.db, org.id, teamAdmin.user.id, 'MEMBER');
    await addTeamMember(app.db, team.id, teamAdmin.user.id, 'ADMIN');
    const colleague = await createUser(app.db);
    await addOrganizationMember(app.db, org.id, colleague.id, 'MEMBER');
    const stranger = await createUser(app.db);

    const answers = [];
    for (const person of [colleague, stranger]) {
      const path = `/v1/orgs/${org.id}/members/${person.id}`;
      answers.push(await app.request('PATCH', path, { key: teamAdmin.key, body: { role: 'IMPLEMENTER' } }));
      answers.push(await app.request('DELETE', path, { key: teamAdmin.key }));
    }

    expect(answers.map((answer) => [answer.status, answer.body.error.code])).toEqual(Array(4).fill([403, 'forbidden']));
    expect((await member(org.id, colleague.id))?.role).toBe('MEMBER');
  });

  it('a person who is not a member gives 404 to PATCH and DELETE', async () => {
    const { org, key } = await organizationWith();
    const stranger = await createUser(app.db);
    expect((await app.request('PATCH', `/v1/orgs/${org.id}/members/${stranger.id}`, { key, body: { role: 'MEMBER' } })).status).toBe(404);
    expect((await app.request('DELETE', `/v1/orgs/${org.id}/members/${stranger.id}`, { key })).status).toBe(404);
  });

  it('the last Owner can be neither demoted nor removed, but one of two Owners can', async () => {
    const { org, caller, key } = await organizationWith();

    const demote = await app.request('PATCH', `/v1/orgs/${org.id}/members/${caller.user.id}`, { key, body: { role: 'ADMIN' } });
    const remove = await app.request('DELETE', `/v1/orgs/${org.id}/members/${caller.user.id}`, { key });
    expect([demote.status, remove.status]).toEqual([422, 422]);
    expect(demote.body.error.code).toBe('invalid');
    expect((await member(org.id, caller.user.id))?.role).toBe('OWNER');

    const second = await createUser(app.db);
    await addOrganizationMember(app.db, org.id, second.id, 'OWNER');
    expect((await app.request('PATCH', `/v1/orgs/${org.id}/members/${caller.user.id}`, { key, body: { role: 'ADMIN' } })).status).toBe(200);
  });

  it('removing a member takes them out of every team of the organization, keeps their history, and their key loses access at once', async () => {
    const { org, key } = await organizationWith();
    const team = await createTeam(app.db, org.id);
    const elsewhere = await createOrganization(app.db);
    const otherTeam = await createTeam(app.db, elsewhere.id);
    const leaving = await createCaller(app.db, { scopes: ['read'] });
    await addOrganizationMember(app.db, org.id, leaving.user.id, 'MEMBER');
    await addOrganizationMember(app.db, elsewhere.id, leaving.user.id, 'MEMBER');
    await addTeamMember(app.db, team.id, leaving.user.id, 'MEMBER');
    await addTeamMember(app.db, otherTeam.id, leaving.user.id, 'MEMBER');
    const task = await app.db
      .insertInto('tasks')
      .values({ team_id: team.id, title: 'Call the carrier', owner_id: leaving.user.id, due_date: '2026-11-30' })
      .returning('id')
      .executeTakeFirstOrThrow();
    expect((await app.request('GET', `/v1/teams/${team.id}`, { key: leaving.key })).status).toBe(200);

    expect((await app.request('DELETE', `/v1/orgs/${org.id}/members/${leaving.user.id}`, { key })).status).toBe(204);

    expect((await app.request('GET', `/v1/teams/${team.id}`, { key: leaving.key })).status).toBe(404);
    expect((await app.request('GET', `/v1/orgs/${org.id}`, { key: leaving.key })).status).toBe(404);
    expect((await app.request('GET', `/v1/teams/${otherTeam.id}`, { key: leaving.key })).status).toBe(200);
    const teamRows = await app.db.selectFrom('team_members').select('team_id').where('user_id', '=', leaving.user.id).execute();
    expect(teamRows.map((r) => r.team_id)).toEqual([otherTeam.id]);
    const kept = await app.db.selectFrom('tasks').select('owner_id').where('id', '=', task.id).executeTakeFirstOrThrow();
    expect(kept.owner_id).toBe(leaving.user.id);
  });
});

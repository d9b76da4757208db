import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocument, createDocuments } from './support/areaFactories.js';
import { databaseLabel } from './support/database.js';
import { expectNow } from './support/expectations.js';
import { expectPagesAsMapped, trickyInstants, trickyTexts } from './support/jsonBodies.js';
import { toDocument } from '../src/records/documents.js';
import { createCaller, createTeam, createTeamWorld } from './support/factories.js';
import { expectedOrder, walkPages } from './support/pages.js';
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

const documentsOf = (teamId: string) => app.db.selectFrom('documents').selectAll().where('team_id', '=', teamId).execute();
const link = { name: 'Pipeline dashboard', url: 'https://crm.northwind.example/dashboards/pipeline' };

describe(`adding links (${databaseLabel})`, () => {
  it('POST /teams/{teamId}/documents adds a LINK created by the caller, name and url trimmed', async () => {
    const { team, member } = await setup();

    const before = Date.now();
    const response = await app.request('POST', `/v1/teams/${team.id}/documents`, {
      key: member.key,
      body: { name: '  Pipeline dashboard ', url: ' https://crm.northwind.example/dashboards/pipeline?view=week#top ' },
    });
    const after = Date.now();

    expect(response.status).toBe(201);
    const [stored] = await documentsOf(team.id);
    expect(response.body).toEqual({
      id: stored!.id,
      revision: expect.any(Number),
      teamId: team.id,
      name: 'Pipeline dashboard',
      url: 'https://crm.northwind.example/dashboards/pipeline?view=week#top',
      type: 'LINK',
      createdById: member.user.id,
      createdAt: stored!.created_at.toISOString(),
    });
    expectNow(response.body.createdAt, before, after);
  });

  it('accepts http:// and https:// in any letter case', async () => {
    const { team, member } = await setup();

    for (const url of ['http://intranet.northwind.example/handbook', 'HTTPS://drive.northwind.example/sales', 'Http://10.0.0.7:8080/']) {
      const response = await app.request('POST', `/v1/teams/${team.id}/documents`, { key: member.key, body: { name: 'Link', url } });
      expect(response.status, url).toBe(201);
      expect(response.body.url).toBe(url);
    }
  });

  it('refuses every other scheme, javascript: and data: included, as a format error on url, and stores nothing', async () => {
    const { team, member } = await setup();

    for (const url of [
      'javascript:alert(document.cookie)',
      'JavaScript://%0Aalert(1)',
      'data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==',
      'ftp://files.northwind.example/report.pdf',
      'file:///etc/passwd',
      'mailto:ana@northwind.example',
      '//crm.northwind.example/dashboards',
      'crm.northwind.example/dashboards',
      'https://',
      'https://crm.northwind.example/two words',
    ]) {
      const response = await app.request('POST', `/v1/teams/${team.id}/documents`, { key: member.key, body: { name: 'Link', url } });
      expect(response.status, url).toBe(422);
      expect(response.body.error.code).toBe('invalid');
      expect(response.body.error.issues.map((issue: { path: string[] }) => issue.path), url).toEqual([['url']]);
    }
    expect(await documentsOf(team.id)).toEqual([]);
  });

  it('an http(s) address without a host is a rule violation (422 without issues)', async () => {
    const { team, member } = await setup();

    for (const url of ['https://:443/reports', 'http://[::1/']) {
      const response = await app.request('POST', `/v1/teams/${team.id}/documents`, { key: member.key, body: { name: 'Link', url } });
      expect(response.status, url).toBe(422);
      expect(response.body.error.code).toBe('invalid');
      expect(response.body.error.issues).toBeUndefined();
    }
    expect(await documentsOf(team.id)).toEqual([]);
  });

  it('a name of 1-200 characters and a url of at most 2000 are accepted; beyond, or a name of spaces, is a rule violation', async () => {
    const { team, member } = await setup();
    const longestUrl = `https://northwind.example/${'a'.repeat(2000 - 'https://northwind.example/'.length)}`;

    for (const body of [{ name: 'x'.repeat(201), url: link.url }, { name: '   ', url: link.url }, { name: 'Link', url: `${longestUrl}a` }]) {
      const response = await app.request('POST', `/v1/teams/${team.id}/documents`, { key: member.key, body });
      expect(response.status).toBe(422);
      expect(response.body.error.issues).toBeUndefined();
    }
    const longest = await app.request('POST', `/v1/teams/${team.id}/documents`, { key: member.key, body: { name: 'x'.repeat(200), url: longestUrl } });
    expect(longest.status).toBe(201);
    expect((await documentsOf(team.id)).map((document) => document.id)).toEqual([longest.body.id]);
  });

  it('a missing field or a url of the wrong type is a format error', async () => {
    const { team, member } = await setup();

    for (const [body, path] of [[{ name: 'Link' }, ['url']], [{ url: link.url }, ['name']], [{ name: 'Link', url: 42 }, ['url']]] as const) {
      const response = await app.request('POST', `/v1/teams/${team.id}/documents`, { key: member.key, body });
      expect(response.status).toBe(422);
      expect(response.body.error.issues.map((issue: { path: string[] }) => issue.path)).toEqual([path]);
    }
  });

  it('team Viewers and callers who cannot see the team get 403; an unknown team 404', async () => {
    const { team, member, person } = await setup();
    const viewer = await person('MEMBER', 'VIEWER');
    const orgMember = await person('MEMBER');
    const outsider = await createCaller(app.db);

    for (const caller of [viewer, orgMember, outsider]) {
      const response = await app.request('POST', `/v1/teams/${team.id}/documents`, { key: caller.key, body: link });
      expect(response.status).toBe(403);
      expect(response.body.error.code).toBe('forbidden');
    }
    const unknown = await app.request('POST', `/v1/teams/${unknownId}/documents`, { key: member.key, body: link });
    expect(unknown.status).toBe(404);
    expect(await documentsOf(team.id)).toEqual([]);
  });

  it('in a suspended organization adding a link gives 409 orgSuspended', async () => {
    const { team, member } = await setup({ suspended: true });

    const response = await app.request('POST', `/v1/teams/${team.id}/documents`, { key: member.key, body: link });

    expect(response.status).toBe(409);
    expect(response.body.error.code).toBe('orgSuspended');
    expect(await documentsOf(team.id)).toEqual([]);
  });
});

describe(`listing documents (${databaseLabel})`, () => {
  it('GET /teams/{teamId}/documents lists links and uploaded files oldest first, only that team\'s, to Viewers too', async () => {
    const { org, team, admin, member, person } = await setup();
    const viewer = await person('MEMBER', 'VIEWER');
    const file = await createDocument(app.db, team.id, admin.user.id, {
      name: 'Sales playbook 2026.pdf',
      url: 'https://app.teamos.example/files/sales-playbook-2026.pdf',
      type: 'FILE',
      createdAt: new Date('2026-11-02T10:14:05.331Z'),
    });
    const later = await createDocument(app.db, team.id, member.user.id, { createdAt: new Date('2026-11-16T09:58:21.740Z') });
    await createDocument(app.db, (await createTeam(app.db, org.id)).id, member.user.id);

    const response = await app.request('GET', `/v1/teams/${team.id}/documents`, { key: viewer.key });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: [
        {
          id: file.id,
          revision: expect.any(Number),
          teamId: team.id,
          name: 'Sales playbook 2026.pdf',
          url: 'https://app.teamos.example/files/sales-playbook-2026.pdf',
          type: 'FILE',
          createdById: admin.user.id,
          createdAt: '2026-11-02T10:14:05.331Z',
        },
        {
          id: later.id,
          revision: expect.any(Number),
          teamId: team.id,
          name: 'Pipeline dashboard',
          url: 'https://crm.northwind.example/dashboards/pipeline',
          type: 'LINK',
          createdById: member.user.id,
          createdAt: '2026-11-16T09:58:21.740Z',
        },
      ],
      nextCursor: null,
    });
  });

  it('a walk with limit 2 over 7 documents sharing creation trickyInstants returns each exactly once, in order', async () => {
    const { team, member } = await setup();
    const start = Date.parse('2026-11-01T08:00:00.000Z');
    const created = await createDocuments(app.db, team.id, member.user.id, 7, (index) => ({ createdAt: new Date(start + Math.floor(index / 3) * 1000) }));

    const { items, sizes } = await walkPages<{ id: string }>(app, `/v1/teams/${team.id}/documents`, member.key, { limit: 2 });

    expect(sizes).toEqual([2, 2, 2, 1]);
    expect(items.map((document) => document.id)).toEqual(expectedOrder(created));
  });

  it('GET /teams/{teamId}/documents answers byte for byte what toDocument writes', async () => {
    const { team, member } = await setup();
    await createDocuments(app.db, team.id, member.user.id, 12, (index) => ({
      name: trickyTexts[index % trickyTexts.length],
      url: `https://example.com/${trickyTexts[(index + 1) % trickyTexts.length]}`,
      type: index % 2 ? 'FILE' : 'LINK',
      createdAt: trickyInstants[index % trickyInstants.length]!,
    }));
    const rows = await app.db.selectFrom('documents').selectAll().where('team_id', '=', team.id).orderBy('created_at').orderBy('id').execute();
    const cursorOf = (row: (typeof rows)[number]) => [row.created_at, row.id];
    await expectPagesAsMapped(app, { path: `/v1/teams/${team.id}/documents`, key: member.key, rows, map: toDocument, cursorOf }, 5);
  });

  it('callers who cannot see the team get 403, an unknown team 404, a bad cursor or limit 422', async () => {
    const { team, member, person } = await setup();
    const orgMember = await person('MEMBER');
    const outsider = await createCaller(app.db);

    for (const caller of [orgMember, outsider]) {
      const response = await app.request('GET', `/v1/teams/${team.id}/documents`, { key: caller.key });
      expect(response.status).toBe(403);
    }
    expect((await app.request('GET', `/v1/teams/${unknownId}/documents`, { key: member.key })).status).toBe(404);
    for (const query of ['cursor=not-a-cursor', 'limit=0', 'limit=201', 'type=LINK']) {
      const response = await app.request('GET', `/v1/teams/${team.id}/documents?${query}`, { key: member.key });
      expect(response.status, query).toBe(422);
      expect(response.body.error.issues).toHaveLength(1);
    }
  });
});

describe(`deleting documents (${databaseLabel})`, () => {
  it('DELETE /documents/{id} deletes a link or a file for team Admins and Owners and organization Owners, Admins and Implementers', async () => {
    const { team, admin, member, person } = await setup();
    const owner = await person('MEMBER', 'OWNER');
    const orgOwner = await person('OWNER');
    const orgAdmin = await person('ADMIN');
    const implementer = await person('IMPLEMENTER');

    for (const caller of [admin, owner, orgOwner, orgAdmin, implementer]) {
      const document = await createDocument(app.db, team.id, member.user.id, { type: caller === admin ? 'FILE' : 'LINK' });
      const response = await app.request('DELETE', `/v1/documents/${document.id}`, { key: caller.key });
      expect(response.status).toBe(204);
      expect(response.text).toBe('');
    }
    expect(await documentsOf(team.id)).toEqual([]);
  });

  it('team Members get 403 also for their own links, Viewers 403, callers who cannot see the team 404, and the document stays', async () => {
    const { team, member, person } = await setup();
    const viewer = await person('MEMBER', 'VIEWER');
    const orgMember = await person('MEMBER');
    const outsider = await createCaller(app.db);
    const own = await createDocument(app.db, team.id, member.user.id);

    for (const [caller, status] of [[member, 403], [viewer, 403], [orgMember, 404], [outsider, 404]] as const) {
      const response = await app.request('DELETE', `/v1/documents/${own.id}`, { key: caller.key });
      expect(response.status).toBe(status);
    }
    expect((await app.request('DELETE', `/v1/documents/${unknownId}`, { key: member.key })).status).toBe(404);
    expect((await documentsOf(team.id)).map((document) => document.id)).toEqual([own.id]);
  });

  it('in a suspended organization deleting gives 409 orgSuspended and reads still work', async () => {
    const { team, admin } = await setup({ suspended: true });
    const document = await createDocument(app.db, team.id, admin.user.id);

    const response = await app.request('DELETE', `/v1/documents/${document.id}`, { key: admin.key });

    expect(response.status).toBe(409);
    expect(response.body.error.code).toBe('orgSuspended');
    const list = await app.request('GET', `/v1/teams/${team.id}/documents`, { key: admin.key });
    expect(list.body.data.map((item: { id: string }) => item.id)).toEqual([document.id]);
  });
});

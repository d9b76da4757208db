import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addOrganizationMember, createCaller, createOrganization } from './support/factories.js';
import { up as canonicalTimeZones } from '../src/db/migrations/0002_canonical_time_zones.js';
import { databaseLabel } from './support/database.js';
import { send, startTestApp, type TestApp } from './support/testApp.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

describe(`the account (${databaseLabel})`, () => {
  it('GET /me shows the caller, their organizations with role, the key\'s scopes and expiry', async () => {
    const { user, key, keyRow } = await createCaller(app.db, { name: 'Jana Kováčová', timezone: 'Europe/Bratislava', scopes: ['read'] });
    const beta = await createOrganization(app.db, { name: 'Beta Freight' });
    const alpha = await createOrganization(app.db, { name: 'Alpha Logistics', status: 'SUSPENDED' });
    await addOrganizationMember(app.db, beta.id, user.id, 'IMPLEMENTER');
    await addOrganizationMember(app.db, alpha.id, user.id, 'OWNER');

    const response = await app.request('GET', '/v1/me', { key });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      user: { id: user.id, email: user.email, name: 'Jana Kováčová', timezone: 'Europe/Bratislava' },
      orgs: [
        { id: alpha.id, name: 'Alpha Logistics', status: 'SUSPENDED', role: 'OWNER', timezone: 'Europe/Bratislava', defaultLocale: 'en', revision: expect.any(Number) },
        { id: beta.id, name: 'Beta Freight', status: 'ACTIVE', role: 'IMPLEMENTER', timezone: 'Europe/Bratislava', defaultLocale: 'en', revision: expect.any(Number) },
      ],
      scopes: ['read'],
      key: { id: keyRow.id, name: 'Test key', expiresAt: keyRow.expires_at.toISOString() },
    });
  });

  it('GET /me shows time zones stored in other letters before 0002_canonical_time_zones in the tz database\'s spelling once it ran', async () => {
    const { user, key } = await createCaller(app.db, { timezone: 'etc/utc' });
    const org = await createOrganization(app.db, { timezone: 'EUROPE/PRAGUE' });
    await addOrganizationMember(app.db, org.id, user.id, 'MEMBER');

    await canonicalTimeZones(app.db);

    const me = (await app.request('GET', '/v1/me', { key })).body;
    expect([me.user.timezone, me.orgs[0].timezone]).toEqual(['UTC', 'Europe/Prague']);
  });

  it('GET /orgs lists only the caller\'s organizations, each with the caller\'s role, as a small list', async () => {
    const { user, key } = await createCaller(app.db);
    const mine = await createOrganization(app.db);
    await createOrganization(app.db);
    await addOrganizationMember(app.db, mine.id, user.id, 'MEMBER');

    const response = await app.request('GET', '/v1/orgs', { key });

    expect(response.status).toBe(200);
    expect(response.body.nextCursor).toBeNull();
    expect(response.body.data.map((org: { id: string; role: string }) => [org.id, org.role])).toEqual([[mine.id, 'MEMBER']]);
  });

  it('GET /orgs/{orgId} shows an organization to its members', async () => {
    const { user, key } = await createCaller(app.db, { scopes: ['read'] });
    const org = await createOrganization(app.db, { timezone: 'America/New_York' });
    await addOrganizationMember(app.db, org.id, user.id, 'ADMIN');

    const response = await app.request('GET', `/v1/orgs/${org.id}`, { key });

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: org.id, role: 'ADMIN', timezone: 'America/New_York', status: 'ACTIVE' });
  });

  it('GET /orgs/{orgId} answers 404 to non-members, platform operators included, and for ids that do not exist', async () => {
    const org = await createOrganization(app.db);
    const outsider = await createCaller(app.db);
    const operator = await createCaller(app.db, { systemRole: 'SUPERADMIN', scopes: ['read'] });

    for (const key of [outsider.key, operator.key]) {
      const response = await app.request('GET', `/v1/orgs/${org.id}`, { key });
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('notFound');
    }
    expect((await app.request('GET', '/v1/orgs/00000000-0000-4000-8000-000000000000', { key: outsider.key })).status).toBe(404);
    expect((await app.request('GET', '/v1/orgs/not-a-uuid', { key: outsider.key })).status).toBe(404);
  });
});

describe(`the public documents (${databaseLabel})`, () => {
  it('GET /v1/openapi.json serves the bundled contract without a key', async () => {
    const response = await app.request('GET', '/v1/openapi.json');
    expect(response.status).toBe(200);
    expect(response.body.openapi).toBe('3.1.0');
    expect(Object.keys(response.body.paths)).toContain('/teams/{teamId}/tasks');
  });

  it('GET /v1/docs serves the self-contained documentation page without a key', async () => {
    const response = await app.request('GET', '/v1/docs');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/html');
    expect(response.text).toContain('Team OS API');
  });

  it('GET /v1/changelog, which the docs page links, serves CHANGELOG.md as Markdown without a key', async () => {
    const description = (await app.request('GET', '/v1/openapi.json')).body.info.description as string;
    const [, link] = /\[changelog\]\((\/v1\/[^)]+)\)/.exec(description) ?? [];
    expect(link, 'the docs page links the changelog').toBe('/v1/changelog');
    const response = await app.request('GET', link!);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    expect(response.text).toBe(await readFile(resolve(import.meta.dirname, '../CHANGELOG.md'), 'utf8'));
  });

  it('GET /healthz outside /v1 answers 200 while the database answers', async () => {
    const response = await send(app.url, 'GET', '/healthz');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: 'ok' });
    expect(response.headers.get('x-request-id')).toBeTruthy();
  });
});

import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import argon2 from 'argon2';
import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { databaseLabel } from './support/database.js';
import {
  addOrganizationMember,
  createCaller,
  createKey,
  createOrganization,
  createTeam,
  createUser,
} from './support/factories.js';
import { expectPagesAsMapped, trickyInstants, trickyTexts } from './support/jsonBodies.js';
import { createOperator, setCreatedAt } from './support/platformFactories.js';
import { expectedOrder, walkPages } from './support/pages.js';
import { startTestApp, type TestApp } from './support/testApp.js';
import { toPlatformOrganization, toPlatformUser } from '../src/records/platform.js';

const unique = () => randomBytes(4).toString('hex');
const day = 24 * 60 * 60 * 1000;

// Every line the app logs, at the most verbose level, to check that no secret is ever written.
const logLines: string[] = [];
const sink = new Writable({
  write(chunk, _encoding, done) {
    logLines.push(String(chunk));
    done();
  },
});

let app: TestApp;
let operator: Awaited<ReturnType<typeof createOperator>>;
beforeAll(async () => {
  app = await startTestApp({ logger: pino({ level: 'trace' }, sink) });
  operator = await createOperator(app.db);
});
afterAll(() => app.close());

const platform = <T = any>(method: string, path: string, body?: unknown) =>
  app.request<T>(method, `/v1/platform${path}`, { key: operator.key, body });

/** Every organization GET /platform/orgs lists, page by page. */
const allOrganizations = async (limit: number) =>
  (await walkPages<{ id: string; createdAt: string }>(app, '/v1/platform/orgs', operator.key, { limit })).items;

const organizationBody = (overrides: Record<string, unknown> = {}, owner: Record<string, unknown> = {}) => ({
  name: `Tatra Outfitters ${unique()}`,
  timezone: 'Europe/Prague',
  defaultLocale: 'sk',
  owner: { email: `owner.${unique()}@tatra.example`, name: 'Zuzana Hrabovská', password: 'Tatry-2026-Lomnica', ...owner },
  ...overrides,
});

const usersWithEmail = (email: string) =>
  app.db.selectFrom('users').selectAll().where(sql<boolean>`lower(email) = lower(${email})`).execute();

const organizationsNamed = (name: string) => app.db.selectFrom('organizations').selectAll().where('name', '=', name).execute();

describe(`the platform's scope (${databaseLabel})`, () => {
  it('refuses with 403 insufficientScope a write key of a platform operator, a read key, and the platform key of someone no longer SUPERADMIN', async () => {
    const writeKey = await createOperator(app.db, ['write']);
    const readKey = await createOperator(app.db, ['read']);
    const demoted = await createOperator(app.db);
    await app.db.updateTable('users').set({ system_role: 'USER' }).where('id', '=', demoted.user.id).execute();
    const victim = await createCaller(app.db);
    const body = organizationBody();

    for (const key of [writeKey.key, readKey.key, demoted.key]) {
      for (const [method, path, requestBody] of [
        ['GET', '/v1/platform/orgs', undefined],
        ['POST', '/v1/platform/orgs', body],
        ['DELETE', `/v1/platform/api-keys/${victim.keyRow.id}`, undefined],
      ] as const) {
        const response = await app.request(method, path, { key, body: requestBody });
        expect(response.status, `${method} ${path}`).toBe(403);
        expect(response.body.error.code).toBe('insufficientScope');
      }
    }
    expect(await organizationsNamed(body.name)).toEqual([]);
    expect((await app.request('GET', '/v1/me', { key: victim.key })).status).toBe(200);
  });
});

describe(`platform organizations (${databaseLabel})`, () => {
  it('GET /platform/orgs shows each organization with its slug, status and numbers of members and teams', async () => {
    const org = await createOrganization(app.db, { name: `Northwind ${unique()}`, status: 'SUSPENDED' });
    for (const role of ['OWNER', 'ADMIN', 'MEMBER'] as const) {
      await addOrganizationMember(app.db, org.id, (await createUser(app.db)).id, role);
    }
    await createTeam(app.db, org.id);
    await createTeam(app.db, org.id);

    const listed = (await allOrganizations(200)).find((item) => item.id === org.id);

    expect(listed).toEqual({
      id: org.id,
      name: org.name,
      slug: org.slug,
      status: 'SUSPENDED',
      members: 3,
      teams: 2,
      createdAt: org.created_at.toISOString(),
    });
  });

  it('GET /platform/orgs walks every organization once, oldest first by createdAt then id, page by page', async () => {
    const base = new Date('2001-03-04T10:15:00.000Z');
    const created = [];
    for (const offset of [2, 0, 1, 1, 3]) {
      const org = await createOrganization(app.db);
      const createdAt = new Date(base.getTime() + offset * 1000);
      await setCreatedAt(app.db, 'organizations', org.id, createdAt);
      created.push({ id: org.id, created_at: createdAt });
    }

    const walked = await allOrganizations(2);

    const total = await app.db.selectFrom('organizations').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    expect(walked).toHaveLength(Number(total.n));
    expect(new Set(walked.map((item) => item.id)).size).toBe(walked.length);
    const sorted = [...walked].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    expect(walked.map((item) => item.id)).toEqual(sorted.map((item) => item.id));
    const expectedMine = expectedOrder(created);
    expect(walked.map((item) => item.id).filter((id) => expectedMine.includes(id))).toEqual(expectedMine);
  });

  it('GET /platform/orgs refuses an unreadable cursor with 422 invalid', async () => {
    const response = await platform('GET', '/orgs?cursor=not-a-cursor');
    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe('invalid');
  });

  it('POST /platform/orgs creates an active organization whose new Owner signs in with a password stored only as an argon2id hash', async () => {
    const body = organizationBody();

    const response = await platform('POST', '/orgs', body);

    expect(response.status).toBe(201);
    const [org] = await organizationsNamed(body.name);
    expect(response.body).toEqual({
      id: org!.id,
      name: body.name,
      slug: `tatra-outfitters-${body.name.slice(-8)}`,
      status: 'ACTIVE',
      members: 1,
      teams: 0,
      createdAt: org!.created_at.toISOString(),
    });
    expect(org).toMatchObject({ timezone: 'Europe/Prague', default_locale: 'sk' });
    const [user] = await usersWithEmail(body.owner.email);
    expect(user).toMatchObject({ email: body.owner.email, name: 'Zuzana Hrabovská', locale: 'sk', system_role: 'USER', external_only: false, timezone: null });
    expect(user!.password_hash).toMatch(/^\$argon2id\$/);
    expect(await argon2.verify(user!.password_hash!, body.owner.password)).toBe(true);
    const members = await app.db.selectFrom('organization_members').selectAll().where('org_id', '=', org!.id).execute();
    expect(members).toEqual([expect.objectContaining({ user_id: user!.id, role: 'OWNER' })]);
  });

  it('POST /platform/orgs creates an external-only Owner without a password, named after the e-mail when no name is given', async () => {
    const body = organizationBody({ defaultLocale: 'en' }, { email: `Ondrej.Sykora.${unique()}@tatra.example`, name: undefined, password: undefined, externalOnly: true });

    const response = await platform('POST', '/orgs', body);

    expect(response.status).toBe(201);
    const [user] = await usersWithEmail(body.owner.email);
    expect(user).toMatchObject({ email: body.owner.email, name: body.owner.email.split('@')[0], locale: 'en', external_only: true, password_hash: null });
  });

  it('POST /platform/orgs makes an existing account (any letter case) the Owner unchanged, ignoring name, password and externalOnly', async () => {
    const existing = await createUser(app.db, { name: 'Marek Kráľ', email: `marek.${unique()}@tatra.example` });
    await app.db.updateTable('users').set({ password_hash: 'kept-hash', locale: 'en' }).where('id', '=', existing.id).execute();
    const body = organizationBody({}, { email: existing.email.toUpperCase(), name: 'Someone Else', password: 'another-password', externalOnly: true });

    const response = await platform('POST', '/orgs', body);

    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ members: 1, teams: 0 });
    const users = await usersWithEmail(existing.email);
    expect(users).toEqual([{ ...existing, password_hash: 'kept-hash', locale: 'en' }]);
    const members = await app.db.selectFrom('organization_members').selectAll().where('org_id', '=', response.body.id).execute();
    expect(members).toEqual([expect.objectContaining({ user_id: existing.id, role: 'OWNER' })]);
  });

  it('POST /platform/orgs numbers the slug when the name\'s slug is taken, and folds accents', async () => {
    const name = `Košice Ťahanovce ${unique()}`;
    const slug = `kosice-tahanovce-${name.slice(-8)}`;

    const first = await platform('POST', '/orgs', organizationBody({ name }));
    const second = await platform('POST', '/orgs', organizationBody({ name }));

    expect([first.status, second.status]).toEqual([201, 201]);
    expect(first.body.slug).toBe(slug);
    expect(second.body.slug).toBe(`${slug}-2`);
  });

  it('POST /platform/orgs gives concurrent organizations of the same name distinct slugs', async () => {
    const name = `Parallel ${unique()}`;

    const responses = await Promise.all([1, 2, 3].map(() => platform('POST', '/orgs', organizationBody({ name }))));

    expect(responses.map((response) => response.status)).toEqual([201, 201, 201]);
    const base = `parallel-${name.slice(-8)}`;
    expect(responses.map((response) => response.body.slug).sort()).toEqual([base, `${base}-2`, `${base}-3`]);
  });

  it.each([
    ['neither a password nor externalOnly', { password: undefined }],
    ['externalOnly false without a password', { password: undefined, externalOnly: false }],
    ['both a password and externalOnly', { externalOnly: true }],
  ])('POST /platform/orgs refuses a new Owner with %s: 422 invalid, and no account or organization is created', async (_case, owner) => {
    const body = organizationBody({}, owner);

    const response = await platform('POST', '/orgs', body);

    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe('invalid');
    expect(response.body.error.issues).toBeUndefined();
    expect(await usersWithEmail(body.owner.email)).toEqual([]);
    expect(await organizationsNamed(body.name)).toEqual([]);
  });

  it.each(['Europe/Atlantis', '+02:00', 'PST'])('POST /platform/orgs refuses the unknown time zone %s with 422 invalid and creates nothing', async (timezone) => {
    const body = organizationBody({ timezone });

    const response = await platform('POST', '/orgs', body);

    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe('invalid');
    expect(response.body.error.issues).toBeUndefined();
    expect(await usersWithEmail(body.owner.email)).toEqual([]);
    expect(await organizationsNamed(body.name)).toEqual([]);
  });

  it.each([
    ['etc/utc', 'UTC'],
    ['EUROPE/PRAGUE', 'Europe/Prague'],
    ['us/pacific', 'US/Pacific'],
  ])('POST /platform/orgs takes the time zone %s in any letter case and stores %s, which its Owner sees in GET /me', async (sent, stored) => {
    const owner = await createCaller(app.db);
    const body = organizationBody({ timezone: sent }, { email: owner.user.email, password: undefined });

    const response = await platform('POST', '/orgs', body);

    expect(response.status).toBe(201);
    const [org] = await organizationsNamed(body.name);
    expect(org?.timezone).toBe(stored);
    const me = await app.request('GET', '/v1/me', { key: owner.key });
    expect(me.body.orgs).toEqual([expect.objectContaining({ id: response.body.id, timezone: stored })]);
  });

  it('POST /platform/orgs refuses a name longer than 200 characters and a password shorter than 8 with 422 invalid', async () => {
    for (const body of [organizationBody({ name: 'x'.repeat(201) }), organizationBody({}, { password: 'short' })]) {
      const response = await platform('POST', '/orgs', body);
      expect(response.status).toBe(422);
      expect(response.body.error.code).toBe('invalid');
      expect(await usersWithEmail(body.owner.email)).toEqual([]);
    }
  });

  it('PATCH /platform/orgs/{id} suspends an organization, which its members then see as SUSPENDED, and restores it', async () => {
    const member = await createCaller(app.db, { scopes: ['read'] });
    const org = await createOrganization(app.db);
    await addOrganizationMember(app.db, org.id, member.user.id, 'OWNER');
    await createTeam(app.db, org.id);
    const shown = { id: org.id, name: org.name, slug: org.slug, members: 1, teams: 1, createdAt: org.created_at.toISOString() };

    const suspended = await platform('PATCH', `/orgs/${org.id}`, { status: 'SUSPENDED' });

    expect(suspended.status).toBe(200);
    expect(suspended.body).toEqual({ ...shown, status: 'SUSPENDED' });
    const seen = await app.request('GET', '/v1/orgs', { key: member.key });
    expect(seen.body.data).toEqual([expect.objectContaining({ id: org.id, status: 'SUSPENDED' })]);

    const restored = await platform('PATCH', `/orgs/${org.id}`, { status: 'ACTIVE' });

    expect(restored.status).toBe(200);
    expect(restored.body).toEqual({ ...shown, status: 'ACTIVE' });
    expect((await app.request('GET', '/v1/orgs', { key: member.key })).body.data[0].status).toBe('ACTIVE');
  });

  it('PATCH /platform/orgs/{id} with the status the organization already has answers with it unchanged', async () => {
    const org = await createOrganization(app.db, { status: 'SUSPENDED' });

    const response = await platform('PATCH', `/orgs/${org.id}`, { status: 'SUSPENDED' });

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: org.id, status: 'SUSPENDED' });
    expect(await app.db.selectFrom('organizations').selectAll().where('id', '=', org.id).executeTakeFirst()).toEqual(org);
  });

  it('PATCH /platform/orgs/{id} answers 404 for an unknown organization and 422 for a missing or unknown status', async () => {
    const unknown = await platform('PATCH', '/orgs/00000000-0000-4000-8000-000000000000', { status: 'SUSPENDED' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('notFound');

    const org = await createOrganization(app.db);
    for (const body of [{}, { status: 'DELETED' }]) {
      const response = await platform('PATCH', `/orgs/${org.id}`, body);
      expect(response.status).toBe(422);
      expect(response.body.error.code).toBe('invalid');
    }
    expect((await app.db.selectFrom('organizations').select('status').where('id', '=', org.id).executeTakeFirstOrThrow()).status).toBe('ACTIVE');
  });
});

describe(`platform API keys (${databaseLabel})`, () => {
  it('GET /platform/users/{id}/api-keys lists every key of the account, newest first, with its status and never the key or its hash', async () => {
    const user = await createUser(app.db);
    const now = Date.now();
    const active = await createKey(app.db, user.id, { name: 'CRM sync', scopes: ['read', 'write'] });
    const expired = await createKey(app.db, user.id, { name: 'Old export', scopes: ['read'], expiresAt: new Date(now - day) });
    const revoked = await createKey(app.db, user.id, { name: 'Dashboard', scopes: ['read'], revoked: true });
    const revokedAndExpired = await createKey(app.db, user.id, { name: 'Gone', expiresAt: new Date(now - day), revoked: true });
    await app.db.updateTable('api_keys').set({ last_used_at: new Date(now - 60_000) }).where('id', '=', active.row.id).execute();
    const order = [revoked, active, revokedAndExpired, expired];
    for (const [index, key] of order.entries()) await setCreatedAt(app.db, 'api_keys', key.row.id, new Date(now - (index + 2) * day));

    const response = await platform('GET', `/users/${user.id}/api-keys`);

    expect(response.status).toBe(200);
    const status = new Map([[active, 'active'], [expired, 'expired'], [revoked, 'revoked'], [revokedAndExpired, 'revoked']]);
    expect(response.body).toEqual({
      data: order.map((key, index) => ({
        id: key.row.id,
        name: key.row.name,
        prefix: key.row.prefix,
        scopes: key.row.scopes,
        status: status.get(key),
        expiresAt: key.row.expires_at.toISOString(),
        lastUsedAt: key === active ? new Date(now - 60_000).toISOString() : null,
        createdAt: new Date(now - (index + 2) * day).toISOString(),
      })),
      nextCursor: null,
    });
    for (const key of order) {
      expect(response.text).not.toContain(key.key);
      expect(response.text).not.toContain(key.row.key_hash);
    }
  });

  it('GET /platform/users/{id}/api-keys answers an empty list for an account without keys and 404 for an unknown account', async () => {
    const user = await createUser(app.db);
    expect((await platform('GET', `/users/${user.id}/api-keys`)).body).toEqual({ data: [], nextCursor: null });

    const unknown = await platform('GET', '/users/00000000-0000-4000-8000-000000000000/api-keys');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('notFound');
  });

  it('DELETE /platform/api-keys/{id} revokes a key, which gets 401 on its very next request; revoking again changes nothing', async () => {
    const holder = await createCaller(app.db, { scopes: ['read'] });
    expect((await app.request('GET', '/v1/me', { key: holder.key })).status).toBe(200);

    const revoked = await platform('DELETE', `/api-keys/${holder.keyRow.id}`);

    expect(revoked.status).toBe(204);
    const denied = await app.request('GET', '/v1/me', { key: holder.key });
    expect(denied.status).toBe(401);
    expect(denied.body.error.code).toBe('unauthenticated');
    const row = await app.db.selectFrom('api_keys').selectAll().where('id', '=', holder.keyRow.id).executeTakeFirstOrThrow();
    expect(row.revoked_at).toBeInstanceOf(Date);
    const listed = await platform('GET', `/users/${holder.user.id}/api-keys`);
    expect(listed.body.data[0]).toMatchObject({ id: holder.keyRow.id, status: 'revoked' });

    const again = await platform('DELETE', `/api-keys/${holder.keyRow.id}`);

    expect(again.status).toBe(204);
    expect(await app.db.selectFrom('api_keys').selectAll().where('id', '=', holder.keyRow.id).executeTakeFirstOrThrow()).toEqual(row);
  });

  it('DELETE /platform/api-keys/{id} leaves an expired key as it is (204) and answers 404 for an unknown key', async () => {
    const user = await createUser(app.db);
    const expired = await createKey(app.db, user.id, { expiresAt: new Date(Date.now() - day) });

    expect((await platform('DELETE', `/api-keys/${expired.row.id}`)).status).toBe(204);
    expect(await app.db.selectFrom('api_keys').selectAll().where('id', '=', expired.row.id).executeTakeFirstOrThrow()).toEqual(expired.row);

    const unknown = await platform('DELETE', '/api-keys/00000000-0000-4000-8000-000000000000');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('notFound');
  });
});

describe(`platform AI settings (${databaseLabel})`, () => {
  // The AI settings are global: each test starts from none.
  beforeEach(async () => {
    await app.db.deleteFrom('ai_prompts').execute();
    await app.db.deleteFrom('ai_providers').execute();
  });

  const putProvider = (type: string, apiKey: string, defaultModel = 'model-1') => platform('PUT', `/ai/providers/${type}`, { apiKey, defaultModel });
  const providerRow = (type: 'OPENAI' | 'ANTHROPIC') =>
    app.db.selectFrom('ai_providers').selectAll().where('type', '=', type).executeTakeFirstOrThrow();

  it('GET /platform/ai answers no providers and no prompts when nothing is configured', async () => {
    const response = await platform('GET', '/ai');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ providers: [], prompts: [] });
  });

  it('PUT /platform/ai/providers/{type} creates an enabled provider whose key is stored encrypted and shown only masked', async () => {
    const apiKey = 'sk-example-4c1d8e0b7a2f6e93d5b19f3a';

    const response = await putProvider('OPENAI', apiKey, 'gpt-4.1-mini');

    const row = await providerRow('OPENAI');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ id: row.id, type: 'OPENAI', defaultModel: 'gpt-4.1-mini', isActive: true, apiKeyMasked: '****9f3a' });
    expect(row.api_key_encrypted).not.toContain(apiKey);
    expect(row.api_key_encrypted).toMatch(/^v1:[\w-]+:[\w-]+:[\w-]+$/);
    expect(app.secrets.open(row.api_key_encrypted)).toBe(apiKey);
  });

  it('PUT /platform/ai/providers/{type} masks a key shorter than 12 characters completely', async () => {
    const response = await putProvider('ANTHROPIC', 'abcdefghijk');
    expect(response.body.apiKeyMasked).toBe('********');
    expect((await putProvider('ANTHROPIC', 'abcdefghijkl')).body.apiKeyMasked).toBe('****ijkl');
  });

  it('PUT /platform/ai/providers/{type} replaces the key and default model of a provider and keeps it disabled', async () => {
    const created = await putProvider('ANTHROPIC', 'sk-ant-first-key-0000', 'claude-old');
    await platform('PATCH', '/ai/providers/ANTHROPIC', { isActive: false });

    const replaced = await putProvider('ANTHROPIC', 'sk-ant-example-0e7b52a9d3f84c16c71e', 'claude-sonnet-4-5');

    expect(replaced.status).toBe(200);
    expect(replaced.body).toEqual({ id: created.body.id, type: 'ANTHROPIC', defaultModel: 'claude-sonnet-4-5', isActive: false, apiKeyMasked: '****c71e' });
    expect(app.secrets.open((await providerRow('ANTHROPIC')).api_key_encrypted)).toBe('sk-ant-example-0e7b52a9d3f84c16c71e');
  });

  it('PUT /platform/ai/providers/{type} refuses an unknown type and a key outside 8-500 characters with 422 invalid', async () => {
    for (const [type, apiKey] of [['MISTRAL', 'long-enough-key'], ['OPENAI', 'short'], ['OPENAI', 'k'.repeat(501)]]) {
      const response = await putProvider(type!, apiKey!);
      expect(response.status).toBe(422);
      expect(response.body.error.code).toBe('invalid');
    }
    expect((await platform('GET', '/ai')).body.providers).toEqual([]);
  });

  it('PATCH /platform/ai/providers/{type} disables and enables a provider, keeping its key and model; 404 when it is not configured', async () => {
    const created = await putProvider('OPENAI', 'sk-example-4c1d8e0b7a2f6e93d5b19f3a', 'gpt-4.1-mini');
    const sealed = (await providerRow('OPENAI')).api_key_encrypted;

    const disabled = await platform('PATCH', '/ai/providers/OPENAI', { isActive: false });

    expect(disabled.status).toBe(200);
    expect(disabled.body).toEqual({ ...created.body, isActive: false });
    expect((await platform('PATCH', '/ai/providers/OPENAI', { isActive: true })).body).toEqual(created.body);
    expect((await providerRow('OPENAI')).api_key_encrypted).toBe(sealed);

    const absent = await platform('PATCH', '/ai/providers/ANTHROPIC', { isActive: true });
    expect(absent.status).toBe(404);
    expect(absent.body.error.code).toBe('notFound');
  });

  it('GET /platform/ai lists providers in the order they were added and custom prompts ordered by input type', async () => {
    const anthropic = await putProvider('ANTHROPIC', 'sk-ant-example-0e7b52a9d3f84c16c71e', 'claude-sonnet-4-5');
    const openai = await putProvider('OPENAI', 'sk-example-4c1d8e0b7a2f6e93d5b19f3a', 'gpt-4.1-mini');
    await setCreatedAt(app.db, 'ai_providers', openai.body.id, new Date('2026-01-01T00:00:00.000Z'));
    await setCreatedAt(app.db, 'ai_providers', anthropic.body.id, new Date('2026-01-02T00:00:00.000Z'));
    const prompts = [];
    for (const inputType of ['VTO_CONTENT', 'TODO_TITLE', 'HEADLINE']) {
      prompts.push((await platform('PUT', `/ai/prompts/${inputType}`, { systemPrompt: `Help with ${inputType}.` })).body);
    }

    const response = await platform('GET', '/ai');

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      providers: [openai.body, anthropic.body],
      prompts: [prompts[1], prompts[2], prompts[0]],
    });
  });

  it('PUT /platform/ai/prompts/{inputType} stores an active prompt with the chosen enabled provider and model override', async () => {
    await putProvider('OPENAI', 'sk-example-4c1d8e0b7a2f6e93d5b19f3a');
    const anthropic = await putProvider('ANTHROPIC', 'sk-ant-example-0e7b52a9d3f84c16c71e');

    const response = await platform('PUT', '/ai/prompts/VTO_CONTENT', {
      systemPrompt: '  Help the leadership team phrase its vision.  ',
      providerId: anthropic.body.id,
      modelOverride: 'claude-opus-4',
    });

    const row = await app.db.selectFrom('ai_prompts').selectAll().where('input_type', '=', 'VTO_CONTENT').executeTakeFirstOrThrow();
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id: row.id,
      inputType: 'VTO_CONTENT',
      systemPrompt: 'Help the leadership team phrase its vision.',
      providerId: anthropic.body.id,
      modelOverride: 'claude-opus-4',
      isActive: true,
    });
  });

  it('PUT /platform/ai/prompts/{inputType} uses the first enabled provider when providerId is omitted, null or names a disabled provider', async () => {
    const openai = await putProvider('OPENAI', 'sk-example-4c1d8e0b7a2f6e93d5b19f3a');
    const anthropic = await putProvider('ANTHROPIC', 'sk-ant-example-0e7b52a9d3f84c16c71e');
    await setCreatedAt(app.db, 'ai_providers', openai.body.id, new Date('2026-01-01T00:00:00.000Z'));
    await setCreatedAt(app.db, 'ai_providers', anthropic.body.id, new Date('2026-01-02T00:00:00.000Z'));

    expect((await platform('PUT', '/ai/prompts/TODO_TITLE', { systemPrompt: 'p' })).body.providerId).toBe(openai.body.id);
    expect((await platform('PUT', '/ai/prompts/TODO_TITLE', { systemPrompt: 'p', providerId: null })).body.providerId).toBe(openai.body.id);

    await platform('PATCH', '/ai/providers/OPENAI', { isActive: false });
    expect((await platform('PUT', '/ai/prompts/TODO_TITLE', { systemPrompt: 'p', providerId: openai.body.id })).body.providerId).toBe(anthropic.body.id);

    await platform('PATCH', '/ai/providers/ANTHROPIC', { isActive: false });
    expect((await platform('PUT', '/ai/prompts/TODO_TITLE', { systemPrompt: 'p' })).body.providerId).toBeNull();
  });

  it('PUT /platform/ai/prompts/{inputType} stores no model override when it is omitted, null or empty', async () => {
    for (const modelOverride of [undefined, null, '', '   ']) {
      const response = await platform('PUT', '/ai/prompts/HEADLINE', { systemPrompt: 'Shorten the headline.', modelOverride });
      expect(response.status).toBe(200);
      expect(response.body.modelOverride).toBeNull();
    }
  });

  it('PUT /platform/ai/prompts/{inputType} replaces the prompt of its input type, keeping its id', async () => {
    const first = await platform('PUT', '/ai/prompts/ISSUE_TITLE', { systemPrompt: 'First.', modelOverride: 'gpt-4.1' });
    await app.db.updateTable('ai_prompts').set({ is_active: false }).where('id', '=', first.body.id).execute();

    const second = await platform('PUT', '/ai/prompts/ISSUE_TITLE', { systemPrompt: 'Second.' });

    expect(second.body).toEqual({ id: first.body.id, inputType: 'ISSUE_TITLE', systemPrompt: 'Second.', providerId: null, modelOverride: null, isActive: true });
  });

  it('PUT /platform/ai/prompts/{inputType} refuses an unknown providerId with 422 invalid and stores nothing', async () => {
    const response = await platform('PUT', '/ai/prompts/TODO_TITLE', { systemPrompt: 'p', providerId: '00000000-0000-4000-8000-000000000000' });

    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe('invalid');
    expect(response.body.error.issues).toBeUndefined();
    expect((await platform('GET', '/ai')).body.prompts).toEqual([]);
  });

  it('DELETE /platform/ai/providers/{type} moves the prompts that used it to the first enabled provider that remains, else to none, with its default model', async () => {
    const openai = await putProvider('OPENAI', 'sk-example-4c1d8e0b7a2f6e93d5b19f3a');
    const anthropic = await putProvider('ANTHROPIC', 'sk-ant-example-0e7b52a9d3f84c16c71e');
    const onOpenai = await platform('PUT', '/ai/prompts/TODO_TITLE', { systemPrompt: 'p', providerId: openai.body.id, modelOverride: 'gpt-4.1' });
    const onAnthropic = await platform('PUT', '/ai/prompts/HEADLINE', { systemPrompt: 'p', providerId: anthropic.body.id });

    expect((await platform('DELETE', '/ai/providers/OPENAI')).status).toBe(204);

    expect((await platform('GET', '/ai')).body).toEqual({
      providers: [anthropic.body],
      prompts: [{ ...onOpenai.body, providerId: anthropic.body.id, modelOverride: null }, onAnthropic.body],
    });

    await platform('PATCH', '/ai/providers/ANTHROPIC', { isActive: false });
    await putProvider('OPENAI', 'sk-example-4c1d8e0b7a2f6e93d5b19f3a');
    await platform('PATCH', '/ai/providers/OPENAI', { isActive: false });

    expect((await platform('DELETE', '/ai/providers/ANTHROPIC')).status).toBe(204);

    const prompts = (await platform('GET', '/ai')).body.prompts;
    expect(prompts.map((prompt: { providerId: string | null }) => prompt.providerId)).toEqual([null, null]);
  });

  it('DELETE /platform/ai/providers/{type} answers 404 when the provider is not configured', async () => {
    const response = await platform('DELETE', '/ai/providers/ANTHROPIC');
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('notFound');
  });

  it('DELETE /platform/ai/prompts/{inputType} deletes the custom prompt, then answers 404 for it', async () => {
    await platform('PUT', '/ai/prompts/CASCADING_MESSAGE', { systemPrompt: 'p' });

    expect((await platform('DELETE', '/ai/prompts/CASCADING_MESSAGE')).status).toBe(204);
    expect((await platform('GET', '/ai')).body.prompts).toEqual([]);

    const again = await platform('DELETE', '/ai/prompts/CASCADING_MESSAGE');
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('notFound');
  });
});

describe(`secrets stay secret (${databaseLabel})`, () => {
  it('neither an AI provider key nor an owner password appears in any response or any log line', async () => {
    const apiKey = `sk-secret-${unique()}-${unique()}`;
    const password = `pw-secret-${unique()}`;
    const body = organizationBody({}, { password });
    const responses = [
      await platform('PUT', '/ai/providers/OPENAI', { apiKey, defaultModel: 'gpt-4.1-mini' }),
      await platform('PATCH', '/ai/providers/OPENAI', { isActive: false }),
      await platform('GET', '/ai'),
      await platform('PUT', '/ai/providers/OPENAI', { apiKey }),
      await platform('PUT', '/ai/providers/OPENAI', { apiKey: 42, defaultModel: apiKey }),
      await platform('POST', '/orgs', body),
      await platform('POST', '/orgs', { ...body, owner: { ...body.owner, email: `x.${unique()}@tatra.example`, externalOnly: true } }),
      await platform('POST', '/orgs', { ...body, owner: { ...body.owner, email: 'not-an-email' } }),
      await platform('GET', '/users?limit=200'),
    ];
    await new Promise((settle) => setImmediate(settle));

    expect(responses.map((response) => response.status)).toEqual([200, 200, 200, 422, 422, 201, 422, 422, 200]);
    for (const response of responses) {
      expect(response.text).not.toContain(apiKey);
      expect(response.text).not.toContain(password);
    }
    expect(logLines.length).toBeGreaterThan(0);
    expect(logLines.join('')).not.toContain(apiKey);
    expect(logLines.join('')).not.toContain(password);
  });
});

const tricky = (index: number) => trickyTexts[index % trickyTexts.length]!;

describe(`lists written by PostgreSQL (${databaseLabel})`, () => {
  it('GET /platform/users answers byte for byte what toPlatformUser writes', async () => {
    const org = await createOrganization(app.db);
    const other = await createOrganization(app.db);
    for (let index = 0; index < 8; index += 1) {
      // The contract wants an e-mail address here: `'` and `%` are the characters of SQL's literals and format() it may hold.
      const user = await createUser(app.db, { name: tricky(index), email: `o'neil%s.${unique()}@example.com`, systemRole: index % 4 ? 'USER' : 'SUPERADMIN' });
      await setCreatedAt(app.db, 'users', user.id, trickyInstants[index % trickyInstants.length]!);
      for (const organization of [org, other].slice(0, index % 3)) await addOrganizationMember(app.db, organization.id, user.id, 'MEMBER');
      if (index % 2) await createKey(app.db, user.id);
      if (index % 3) await createKey(app.db, user.id, { revoked: true });
      if (index % 4) await createKey(app.db, user.id, { expiresAt: new Date(Date.now() - day) });
      if (index % 5) await createKey(app.db, user.id, { scopes: ['read'] });
    }
    const at = new Date();
    const rows = await app.db
      .selectFrom('users')
      .select([
        'id',
        'email',
        'name',
        'system_role',
        'created_at',
        sql<string>`(select count(*) from organization_members m where m.user_id = users.id)`.as('org_count'),
        sql<string>`(select count(*) from api_keys k where k.user_id = users.id and k.revoked_at is null and k.expires_at > ${at})`.as('active_api_keys'),
      ])
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    await expectPagesAsMapped(app, { path: '/v1/platform/users', key: operator.key, rows, map: toPlatformUser, cursorOf: (row) => [row.created_at, row.id] }, 7);
  });

  it('GET /platform/orgs answers byte for byte what toPlatformOrganization writes', async () => {
    for (let index = 0; index < 8; index += 1) {
      const org = await createOrganization(app.db, { name: tricky(index), status: index % 3 ? 'ACTIVE' : 'SUSPENDED' });
      await app.db.updateTable('organizations').set({ slug: `${tricky(index + 1)}${unique()}` }).where('id', '=', org.id).execute();
      await setCreatedAt(app.db, 'organizations', org.id, trickyInstants[index % trickyInstants.length]!);
      for (let member = 0; member < index % 3; member += 1) await addOrganizationMember(app.db, org.id, (await createUser(app.db)).id, 'MEMBER');
      for (let team = 0; team < index % 4; team += 1) await createTeam(app.db, org.id);
    }
    const rows = await app.db
      .selectFrom('organizations')
      .select([
        'id',
        'name',
        'slug',
        'status',
        'created_at',
        sql<string>`(select count(*) from organization_members m where m.org_id = organizations.id)`.as('members'),
        sql<string>`(select count(*) from teams t where t.org_id = organizations.id)`.as('teams'),
      ])
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    await expectPagesAsMapped(app, { path: '/v1/platform/orgs', key: operator.key, rows, map: toPlatformOrganization, cursorOf: (row) => [row.created_at, row.id] }, 7);
  });
});

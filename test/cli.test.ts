/**
 * The operator command line as an operator runs it: a real process (`node --import tsx src/cli/admin.ts …`,
 * what `npm run admin` runs, without npm's own start, which cost a second of CPU per command)
 * on a throwaway PGlite data directory, or, when TEST_DATABASE_URL is set, on a fresh PostgreSQL
 * database `teamos_cli_<random>` (dropped at the end). The tests run in order and build on each
 * other: the seeded demo people are used by the later commands.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../src/auth/apiKeys.js';
import { DataDirectoryLocked, openDatabase } from '../src/db/connect.js';
import type { Database } from '../src/db/database.js';
import { createPostgresDatabase, postgresUrl } from './support/database.js';
import { startTestApp, type TestApp } from './support/testApp.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const DAY_MS = 24 * 60 * 60 * 1000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const KEY = /^ak_[A-Za-z0-9_-]{43}$/;
// Each spawn costs a few seconds (tsx, opening the database).
const SLOW = 120_000;

// ---------------------------------------------------------------------------------------------------
// The database under test

let workDir: string;
let dataDir: string;
let databaseUrl: string | undefined;

let dropDatabase: (() => Promise<void>) | undefined;

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'teamos-cli-'));
  dataDir = join(workDir, 'data');
  if (postgresUrl) {
    const created = await createPostgresDatabase('teamos_cli');
    databaseUrl = created.url;
    dropDatabase = created.drop;
  }
});

afterAll(async () => {
  await dropDatabase?.();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

/** Opens the database the commands use (taking the PGlite lock while open), runs `check`, closes it. */
async function query<T>(check: (db: Kysely<Database>) => Promise<T>): Promise<T> {
  const database = await openDatabase({ databaseUrl, dataDir });
  try {
    return await check(database.db);
  } finally {
    await database.close();
  }
}

/** Runs `check` against the real app serving the database the commands use. */
async function withApi<T>(check: (app: TestApp) => Promise<T>): Promise<T> {
  const database = await openDatabase({ databaseUrl, dataDir });
  const app = await startTestApp({ database: { ...database, url: databaseUrl } });
  try {
    return await check(app);
  } finally {
    await app.close();
    await database.close();
  }
}

async function counts(): Promise<Record<'users' | 'apiKeys' | 'organizations' | 'teams', number>> {
  return query(async (db) => {
    const count = async (table: 'users' | 'api_keys' | 'organizations' | 'teams') =>
      Number((await db.selectFrom(table).select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n);
    return {
      users: await count('users'),
      apiKeys: await count('api_keys'),
      organizations: await count('organizations'),
      teams: await count('teams'),
    };
  });
}

// ---------------------------------------------------------------------------------------------------
// Running the command

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

const TEST_SECRETS_KEY = '0'.repeat(64);

function admin(args: string[], env: { DATA_DIR?: string; DATABASE_URL?: string } = {}): Promise<Run> {
  return new Promise((done, fail) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli/admin.ts', ...args],
      {
        cwd: root,
        // seed-demo seals secrets with the server's key, which PostgreSQL needs given (the embedded database keeps a key file).
        env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: databaseUrl ?? '', SECRETS_KEY: databaseUrl ? TEST_SECRETS_KEY : '', ...env },
      },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') {
          fail(error);
          return;
        }
        done({
          code: error ? Number(error.code) : 0,
          stdout,
          stderr,
        });
      },
    );
  });
}

/** The result: the last line of stdout, after a successful run. */
function result(run: Run): string {
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  const lines = run.stdout.trimEnd().split('\n');
  return lines[lines.length - 1] ?? '';
}

/** The one-line error of a failed run, which wrote nothing to stdout. */
function failure(run: Run): string {
  expect(run.code).toBe(1);
  expect(run.stdout).toBe('');
  const lines = run.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  return lines[0] ?? '';
}

function expectAbout(actual: Date, expected: Date, toleranceMs = 5 * 60_000): void {
  expect(Math.abs(actual.getTime() - expected.getTime())).toBeLessThan(toleranceMs);
}

// ---------------------------------------------------------------------------------------------------

describe(`the operator command line on ${postgresUrl ? 'PostgreSQL' : 'a PGlite data directory'}`, () => {
  const demo = new Map<string, { email: string; key: string }>();
  let createdUserId = '';
  let cliKey = '';

  it('shows the usage on stdout without a command, and on stderr after an unknown command', { timeout: SLOW }, async () => {
    const [bare, unknown] = await Promise.all([admin([]), admin(['frobnicate', '--email', 'a@b.io'])]);
    expect(bare.code).toBe(0);
    expect(bare.stderr).toBe('');
    expect(bare.stdout).toContain('Usage: npm run --silent admin -- COMMAND [options]');
    for (const command of ['create-user', 'update-user', 'create-key', 'revoke-key', 'create-org', 'seed-demo']) {
      expect(bare.stdout).toContain(command);
    }
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr.split('\n')[0]).toBe('Unknown command "frobnicate".');
    expect(unknown.stderr).toContain('Usage: npm run --silent admin -- COMMAND [options]');
  });

  it('seed-demo fills an empty database and prints the organization, the team to start from and a key for every role as the last lines', { timeout: SLOW }, async () => {
    const run = await admin(['seed-demo']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const printed = run.stdout.trimEnd().split('\n');
    const [organizationLine = '', teamLine = ''] = printed.slice(-10, -8);
    const [organizationTag, organizationId, organizationName, ...organizationRest] = organizationLine.split('\t');
    const [teamTag, teamId, teamName, ...teamRest] = teamLine.split('\t');
    expect([organizationTag, organizationName, organizationRest]).toEqual(['ORGANIZATION', 'Northwind Logistics', []]);
    expect([teamTag, teamName, teamRest]).toEqual(['TEAM', 'Leadership Team', []]);
    for (const line of printed.slice(-8)) {
      const [role = '', email = '', key = '', ...rest] = line.split('\t');
      expect(rest).toEqual([]);
      expect(email).toMatch(/@/);
      expect(key).toMatch(KEY);
      demo.set(role, { email, key });
    }
    expect([...demo.keys()].sort()).toEqual(
      ['ORG_ADMIN', 'ORG_IMPLEMENTER', 'ORG_OWNER', 'SUPERADMIN', 'TEAM_ADMIN', 'TEAM_MEMBER', 'TEAM_OWNER', 'TEAM_VIEWER'].sort(),
    );

    await query(async (db) => {
      // Each printed key belongs to the printed person; only its prefix and hash are stored.
      for (const [role, { email, key }] of demo) {
        const stored = await db
          .selectFrom('api_keys')
          .innerJoin('users', 'users.id', 'api_keys.user_id')
          .select(['users.email', 'users.system_role', 'api_keys.prefix', 'api_keys.scopes', 'api_keys.expires_at'])
          .where('api_keys.key_hash', '=', hashKey(key))
          .executeTakeFirstOrThrow();
        expect(stored.email).toBe(email);
        expect(stored.prefix).toBe(key.slice(0, 8));
        expect(stored.scopes).toEqual(role === 'SUPERADMIN' ? ['platform'] : ['write']);
        expect(stored.system_role).toBe(role === 'SUPERADMIN' ? 'SUPERADMIN' : 'USER');
        expectAbout(stored.expires_at, new Date(Date.now() + (role === 'SUPERADMIN' ? 90 : 365) * DAY_MS));
      }

      const org = await db.selectFrom('organizations').selectAll().where('id', '=', organizationId!).executeTakeFirstOrThrow();
      expect(org).toMatchObject({ id: organizationId, name: 'Northwind Logistics', timezone: 'Europe/Bratislava', default_locale: 'en', status: 'ACTIVE' });

      const orgRoles = await db
        .selectFrom('organization_members')
        .innerJoin('users', 'users.id', 'organization_members.user_id')
        .select(['users.email', 'organization_members.role'])
        .execute();
      const orgRoleOf = new Map(orgRoles.map((member) => [member.email, member.role]));
      expect(orgRoleOf.get(demo.get('ORG_OWNER')!.email)).toBe('OWNER');
      expect(orgRoleOf.get(demo.get('ORG_ADMIN')!.email)).toBe('ADMIN');
      expect(orgRoleOf.get(demo.get('ORG_IMPLEMENTER')!.email)).toBe('IMPLEMENTER');
      for (const role of ['TEAM_OWNER', 'TEAM_ADMIN', 'TEAM_MEMBER', 'TEAM_VIEWER']) {
        expect(orgRoleOf.get(demo.get(role)!.email)).toBe('MEMBER');
      }
      expect(orgRoleOf.has(demo.get('SUPERADMIN')!.email)).toBe(false);

      const teams = await db.selectFrom('teams').select(['id', 'name', 'is_leadership']).orderBy('name').execute();
      expect(teams.map((team) => [team.name, team.is_leadership])).toEqual([
        ['Leadership Team', true],
        ['Operations', false],
        ['Sales', false],
      ]);
      expect(teams[0]!.id).toBe(teamId);
      const salesId = teams.find((team) => team.name === 'Sales')!.id;
      const salesRoles = await db
        .selectFrom('team_members')
        .innerJoin('users', 'users.id', 'team_members.user_id')
        .select(['users.email', 'team_members.role'])
        .where('team_members.team_id', '=', salesId)
        .execute();
      expect(new Map(salesRoles.map((member) => [member.email, member.role]))).toEqual(
        new Map([
          [demo.get('TEAM_OWNER')!.email, 'OWNER'],
          [demo.get('TEAM_ADMIN')!.email, 'ADMIN'],
          [demo.get('TEAM_MEMBER')!.email, 'MEMBER'],
          [demo.get('TEAM_VIEWER')!.email, 'VIEWER'],
        ]),
      );
    });

    // The lines printed are enough for the first calls: the printed team is the one listed first, with to-dos.
    await withApi(async (app) => {
      const key = demo.get('ORG_OWNER')!.key;
      const teams = await app.request('GET', `/v1/orgs/${organizationId}/teams`, { key });
      expect(teams.body.data[0].id).toBe(teamId);
      const tasks = await app.request('GET', `/v1/teams/${teamId}/tasks`, { key });
      expect(tasks.status).toBe(200);
      expect(tasks.body.data.length).toBeGreaterThan(0);
    });
  });

  it('seed-demo refuses a database that already has users and writes nothing', { timeout: SLOW }, async () => {
    const before = await counts();
    expect(failure(await admin(['seed-demo']))).toMatch(/seed-demo needs an empty database.*12 user/);
    expect(await counts()).toEqual(before);
  });

  it('create-user prints the new id and refuses the same e-mail in other letters', { timeout: SLOW }, async () => {
    createdUserId = result(
      await admin(['create-user', '--email', 'Dana.Kral@Example.com', '--name', 'Dana Kráľ', '--timezone', 'Europe/Prague']),
    );
    expect(createdUserId).toMatch(UUID);
    const before = await counts();
    const duplicate = failure(await admin(['create-user', '--email', 'dana.kral@example.com', '--superadmin']));
    expect(duplicate).toBe('Error: A user with e-mail dana.kral@example.com already exists.');

    await query(async (db) => {
      const users = await db.selectFrom('users').selectAll().where('email', 'ilike', 'dana.kral@example.com').execute();
      expect(users).toHaveLength(1);
      expect(users[0]).toMatchObject({
        id: createdUserId,
        email: 'Dana.Kral@Example.com',
        name: 'Dana Kráľ',
        timezone: 'Europe/Prague',
        system_role: 'USER',
        locale: 'en',
      });
    });
    expect(await counts()).toEqual(before);
  });

  it('update-user changes only the given fields and refuses an unknown e-mail', { timeout: SLOW }, async () => {
    expect(result(await admin(['update-user', '--email', 'DANA.KRAL@example.com', '--no-timezone', '--superadmin', 'true']))).toBe(
      createdUserId,
    );
    expect(failure(await admin(['update-user', '--email', 'nobody@example.com', '--name', 'Nobody']))).toBe(
      'Error: No user with e-mail nobody@example.com.',
    );
    await query(async (db) => {
      const user = await db.selectFrom('users').selectAll().where('id', '=', createdUserId).executeTakeFirstOrThrow();
      expect(user).toMatchObject({ name: 'Dana Kráľ', timezone: null, system_role: 'SUPERADMIN' });
      expect(await db.selectFrom('users').select('id').where('name', '=', 'Nobody').execute()).toEqual([]);
    });
  });

  it('update-user stores a time zone given in any letter case in the tz database\'s spelling', { timeout: SLOW }, async () => {
    expect(result(await admin(['update-user', '--email', 'dana.kral@example.com', '--timezone', 'asia/kolkata']))).toBe(createdUserId);
    await query(async (db) => {
      const user = await db.selectFrom('users').select('timezone').where('id', '=', createdUserId).executeTakeFirstOrThrow();
      expect(user.timezone).toBe('Asia/Kolkata');
    });
  });

  it('create-key prints a key that is stored only as prefix and hash, with the default name and expiry', { timeout: SLOW }, async () => {
    const member = demo.get('TEAM_MEMBER')!.email;
    cliKey = result(await admin(['create-key', '--email', member.toUpperCase(), '--scopes', 'read,write']));
    expect(cliKey).toMatch(KEY);
    await query(async (db) => {
      const stored = await db
        .selectFrom('api_keys')
        .innerJoin('users', 'users.id', 'api_keys.user_id')
        .selectAll('api_keys')
        .select('users.email')
        .where('api_keys.key_hash', '=', hashKey(cliKey))
        .executeTakeFirstOrThrow();
      expect(stored).toMatchObject({ email: member, name: 'CLI key', prefix: cliKey.slice(0, 8), scopes: ['read', 'write'] });
      expect(stored.revoked_at).toBeNull();
      expectAbout(stored.expires_at, new Date(Date.now() + 365 * DAY_MS));
      expect(Object.values(stored)).not.toContain(cliKey);
    });
  });

  it('create-key gives a SUPERADMIN a platform key for at most 90 days, or one already expired', { timeout: SLOW }, async () => {
    const operator = demo.get('SUPERADMIN')!.email;
    const platformKey = result(await admin(['create-key', '--email', operator, '--scopes', 'platform', '--name', 'Ops laptop']));
    const expiredKey = result(
      await admin(['create-key', '--email', operator, '--scopes', 'read,platform', '--expires-at', '2020-01-01T01:00:00+01:00']),
    );
    await query(async (db) => {
      const stored = await db
        .selectFrom('api_keys')
        .select(['key_hash', 'name', 'scopes', 'expires_at'])
        .where('key_hash', 'in', [hashKey(platformKey), hashKey(expiredKey)])
        .execute();
      const platform = stored.find((key) => key.key_hash === hashKey(platformKey))!;
      expect(platform).toMatchObject({ name: 'Ops laptop', scopes: ['platform'] });
      expectAbout(platform.expires_at, new Date(Date.now() + 90 * DAY_MS));
      expect(platform.expires_at.getTime()).toBeLessThanOrEqual(Date.now() + 90 * DAY_MS);
      const expired = stored.find((key) => key.key_hash === hashKey(expiredKey))!;
      expect(expired).toMatchObject({ name: 'CLI key', scopes: ['read', 'platform'] });
      expect(expired.expires_at.toISOString()).toBe('2020-01-01T00:00:00.000Z');
    });
  });

  it('create-key refuses an unknown e-mail, a bad scope, platform for others, over 90 days and a bad date, writing no key', { timeout: SLOW }, async () => {
    const before = await counts();
    const operator = demo.get('SUPERADMIN')!.email;
    const member = demo.get('TEAM_MEMBER')!.email;
    const tooLate = new Date(Date.now() + 91 * DAY_MS).toISOString();

    expect(failure(await admin(['create-key', '--email', 'nobody@example.com', '--scopes', 'read']))).toBe(
      'Error: No user with e-mail nobody@example.com.',
    );
    expect(failure(await admin(['create-key', '--email', member, '--scopes', 'platform']))).toMatch(
      /^Error: Only a platform operator \(SUPERADMIN\) may have a platform key/,
    );
    // These three are refused before the database is opened, so they may run side by side.
    const [badScope, overNinetyDays, badDate] = await Promise.all([
      admin(['create-key', '--email', member, '--scopes', 'read,admin']),
      admin(['create-key', '--email', operator, '--scopes', 'platform', '--expires-at', tooLate]),
      admin(['create-key', '--email', member, '--scopes', 'read', '--expires-at', '2027-02-30T12:00:00Z']),
    ]);
    expect(failure(badScope)).toBe('Error: Unknown scope "admin": use read, write, platform.');
    expect(failure(overNinetyDays)).toMatch(/^Error: A platform key is valid at most 90 days/);
    expect(failure(badDate)).toMatch(/^Error: --expires-at "2027-02-30T12:00:00Z" is not a calendar day/);

    expect(await counts()).toEqual(before);
  });

  it('revoke-key sets revoked_at once, keeps it on a second revoke and refuses an unknown id', { timeout: SLOW }, async () => {
    const keyId = await query(async (db) =>
      (await db.selectFrom('api_keys').select('id').where('key_hash', '=', hashKey(cliKey)).executeTakeFirstOrThrow()).id,
    );
    const revokedAt = async () =>
      query(async (db) => (await db.selectFrom('api_keys').select('revoked_at').where('id', '=', keyId).executeTakeFirstOrThrow()).revoked_at);

    expect(result(await admin(['revoke-key', '--id', keyId]))).toBe(keyId);
    const first = await revokedAt();
    expect(first).toBeInstanceOf(Date);
    expectAbout(first!, new Date());

    expect(result(await admin(['revoke-key', '--id', keyId.toUpperCase()]))).toBe(keyId);
    expect(await revokedAt()).toEqual(first);

    const unknown = randomUUID();
    expect(failure(await admin(['revoke-key', '--id', unknown]))).toBe(`Error: No API key with id ${unknown}.`);
    const revokedCount = await query(
      async (db) => (await db.selectFrom('api_keys').select('id').where('revoked_at', 'is not', null).execute()).length,
    );
    expect(revokedCount).toBe(1);
  });

  it('create-org creates an organization and its Owner\'s account; create-key gives the owner a key that finds it through GET /v1/orgs', { timeout: SLOW }, async () => {
    const orgId = result(
      await admin([
        'create-org',
        '--name',
        '  Danube Freight s.r.o. ',
        '--owner-email',
        'Ivana.Mraz@Danube.example',
        '--owner-name',
        'Ivana Mráz',
        '--timezone',
        'europe/vienna',
        '--locale',
        'sk',
      ]),
    );
    expect(orgId).toMatch(UUID);
    const key = result(await admin(['create-key', '--email', 'ivana.mraz@danube.example', '--scopes', 'read']));

    await withApi(async (app) => {
      const orgs = await app.request('GET', '/v1/orgs', { key });
      expect(orgs.status).toBe(200);
      expect(orgs.body.data).toEqual([expect.objectContaining({ id: orgId, name: 'Danube Freight s.r.o.', status: 'ACTIVE', role: 'OWNER' })]);
      const org = await app.request('GET', `/v1/orgs/${orgId}`, { key });
      expect(org.body).toMatchObject({ timezone: 'Europe/Vienna', defaultLocale: 'sk' });
    });
    await query(async (db) => {
      const org = await db.selectFrom('organizations').selectAll().where('id', '=', orgId).executeTakeFirstOrThrow();
      expect(org).toMatchObject({ slug: 'danube-freight-s-r-o', status: 'ACTIVE' });
      const owner = await db
        .selectFrom('organization_members')
        .innerJoin('users', 'users.id', 'organization_members.user_id')
        .selectAll('users')
        .select('organization_members.role')
        .where('organization_members.org_id', '=', orgId)
        .execute();
      expect(owner).toEqual([
        expect.objectContaining({
          email: 'Ivana.Mraz@Danube.example',
          name: 'Ivana Mráz',
          locale: 'sk',
          timezone: null,
          system_role: 'USER',
          password_hash: null,
          external_only: false,
          role: 'OWNER',
        }),
      ]);
    });
  });

  it('create-org makes an existing account Owner unchanged and numbers a slug already taken', { timeout: SLOW }, async () => {
    const member = demo.get('TEAM_MEMBER')!;
    const account = () => query((db) => db.selectFrom('users').selectAll().where('email', '=', member.email).executeTakeFirstOrThrow());
    const before = { account: await account(), users: (await counts()).users };
    const orgId = result(
      await admin([
        'create-org',
        '--name',
        'Northwind Logistics',
        '--owner-email',
        member.email.toUpperCase(),
        '--owner-name',
        'Someone Else',
        '--timezone',
        'UTC',
        '--locale',
        'en',
      ]),
    );

    expect(await account()).toEqual(before.account);
    expect((await counts()).users).toBe(before.users);
    await query(async (db) => {
      expect(await db.selectFrom('organizations').select('slug').where('id', '=', orgId).executeTakeFirstOrThrow()).toEqual({ slug: 'northwind-logistics-2' });
      expect(await db.selectFrom('organization_members').select(['user_id', 'role']).where('org_id', '=', orgId).execute()).toEqual([
        { user_id: before.account.id, role: 'OWNER' },
      ]);
    });
    await withApi(async (app) => {
      const orgs = await app.request('GET', '/v1/orgs', { key: member.key });
      expect(orgs.body.data.map((org: { id: string; role: string }) => [org.id, org.role])).toContainEqual([orgId, 'OWNER']);
    });
  });

  it('create-org refuses a missing option, an empty name, an unknown time zone or language, writing nothing', { timeout: SLOW }, async () => {
    const before = await counts();
    const valid = ['--name', 'Alpine Cargo', '--owner-email', 'owner@alpine.example', '--timezone', 'Europe/Zurich', '--locale', 'en'];
    const without = (option: string) => valid.filter((_, index) => valid[index] !== option && valid[index - 1] !== option);
    // Refused before the database is opened, so they may run side by side.
    const [noOwner, emptyName, badZone, badLocale] = await Promise.all([
      admin(['create-org', ...without('--owner-email')]),
      admin(['create-org', ...without('--name'), '--name', '  ']),
      admin(['create-org', ...without('--timezone'), '--timezone', 'Mars/Olympus']),
      admin(['create-org', ...without('--locale'), '--locale', 'de']),
    ]);
    expect(failure(noOwner)).toBe('Error: create-org needs --owner-email.');
    expect(failure(emptyName)).toBe('Error: --name must not be empty.');
    expect(failure(badZone)).toBe('Error: "Mars/Olympus" is not an IANA time zone (for example Europe/Bratislava).');
    expect(failure(badLocale)).toBe('Error: --locale takes en or sk, not "de".');
    expect(await counts()).toEqual(before);
  });

  it('a second process on a data directory in use stops with the clear message', { timeout: SLOW }, async () => {
    // The commands' own directory: on PGlite it exists already, where a new one cost a cluster's creation.
    const held = await openDatabase({ dataDir });
    try {
      const run = await admin(['create-user', '--email', 'late@example.com'], { DATA_DIR: dataDir, DATABASE_URL: '' });
      expect(failure(run)).toBe(new DataDirectoryLocked(resolve(dataDir)).message);
    } finally {
      await held.close();
    }
  });
});

/**
 * An organization's export as a job (POST /orgs/{orgId}/exports, its GET and its archive), over HTTP:
 * the demo organization's archive read back whole and compared with the database's rows, a second
 * start answered with the first job, a job whose worker died (its lease ran out) finished by another
 * with every record once, and a failure shown as FAILED with its reason.
 */
import { randomBytes } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTeamOsClient } from '../client/src/index.js';
import { createSecretBox } from '../src/auth/secrets.js';
import { seedDemo, type DemoOrganization } from '../src/cli/demo.js';
import { exportKinds, purgeExpiredExports } from '../src/db/queries/exports.js';
import { runDueExports, type ExportWorkerOptions } from '../src/exports/worker.js';
import { createTestDatabase, databaseLabel, type TestDatabase } from './support/database.js';
import { createKey, createTeamWorld } from './support/factories.js';
import { startTestApp, type TestApp } from './support/testApp.js';

type Json = Record<string, any>;

/** The files of a tar archive by name (ustar, regular files only). */
function untar(archive: Buffer): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  let offset = 0;
  while (offset + 512 <= archive.length) {
    const header = archive.subarray(offset, offset + 512);
    if (header.every((byte) => byte === 0)) break;
    const name = header.subarray(0, 100).toString('ascii').replace(/\0.*$/s, '');
    const size = Number.parseInt(header.subarray(124, 136).toString('ascii').replace(/\0.*$/s, ''), 8);
    files.set(name, archive.subarray(offset + 512, offset + 512 + size));
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}

/** Every record of each kind in the archive, parsed. */
function recordsOf(archive: Buffer): { manifest: Json; kinds: Map<string, Json[]> } {
  const files = untar(archive);
  const manifest = JSON.parse(files.get('manifest.json')!.toString('utf8')) as Json;
  const kinds = new Map<string, Json[]>();
  for (const file of manifest.files as { name: string; kind: string }[]) {
    const text = gunzipSync(files.get(file.name)!).toString('utf8');
    kinds.set(file.kind, text === '' ? [] : text.trimEnd().split('\n').map((line) => JSON.parse(line) as Json));
  }
  return { manifest, kinds };
}

async function download(app: TestApp, orgId: string, exportId: string, key: string): Promise<Buffer> {
  const response = await fetch(`${app.url}/v1/orgs/${orgId}/exports/${exportId}/archive`, { headers: { authorization: `Bearer ${key}` } });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('application/x-tar');
  const archive = Buffer.from(await response.arrayBuffer());
  expect(archive.length).toBe(Number(response.headers.get('content-length')));
  return archive;
}

/** Polls the export until it has ended (no timing assumed: the test's own timeout bounds it). */
async function ended(app: TestApp, orgId: string, exportId: string, key: string): Promise<Json> {
  for (;;) {
    const response = await app.request('GET', `/v1/orgs/${orgId}/exports/${exportId}`, { key });
    expect(response.status).toBe(200);
    if (response.body.state === 'COMPLETED' || response.body.state === 'FAILED') return response.body;
    await new Promise((resume) => setTimeout(resume, 50));
  }
}

const silent = pino({ level: 'silent' });

describe(`an organization's export (${databaseLabel})`, () => {
  let database: TestDatabase;
  let app: TestApp;
  let demo: DemoOrganization;
  let ownerKey: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    const secrets = createSecretBox(randomBytes(32));
    demo = await database.db.transaction().execute((trx) => seedDemo(trx, new Date(), secrets));
    const owner = demo.people.find((person) => person.role === 'ORG_OWNER')!;
    ownerKey = (await createKey(database.db, owner.userId, { scopes: ['write'] })).key;
    app = await startTestApp({ database, secrets, exports: { pollMs: 50, batchSize: 40 } });
  }, 120_000);
  afterAll(() => app.close());

  it("reads back the demo organization's export completely: every record of every kind, with its relations", async () => {
    const orgId = demo.organizationId;
    const started = await app.request('POST', `/v1/orgs/${orgId}/exports`, { key: ownerKey });
    expect(started.status).toBe(202);
    expect(started.headers.get('location')).toBe(`/v1/orgs/${orgId}/exports/${started.body.id}`);
    const job = await ended(app, orgId, started.body.id, ownerKey);
    expect(job).toMatchObject({ state: 'COMPLETED', failure: null });
    expect(job.recordsDone).toBe(job.recordsTotal);

    const { manifest, kinds } = recordsOf(await download(app, orgId, job.id, ownerKey));
    expect(manifest).toMatchObject({ format: 1, exportId: job.id, orgId });
    expect([...kinds.keys()]).toEqual(exportKinds.map((kind) => kind.name));
    expect([...kinds.values()].reduce((total, records) => total + records.length, 0)).toBe(job.recordsDone);

    // Every kind against the database's rows of the organization, read here without the export's queries.
    const teams = (await database.db.selectFrom('teams').select('id').where('org_id', '=', orgId).execute()).map((team) => team.id);
    const rows = async (table: string, where: string, values: readonly unknown[]) =>
      (await sql<Json>`select * from ${sql.table(table)} where ${sql.raw(where)} = any(${values})`.execute(database.db)).rows;
    const meetings = await rows('meetings', 'team_id', teams);
    const messages = await rows('cascading_messages', 'org_id', [orgId]);
    const goals = await rows('goals', 'org_id', [orgId]);
    const metrics = await rows('metrics', 'team_id', teams);
    const members = await rows('organization_members', 'org_id', [orgId]);
    const expected: Record<string, Json[]> = {
      organization: await rows('organizations', 'id', [orgId]),
      users: await rows('users', 'id', members.map((member) => member.user_id)),
      organization_members: members,
      teams: await rows('teams', 'id', teams),
      team_members: await rows('team_members', 'team_id', teams),
      meetings,
      meeting_ratings: await rows('meeting_ratings', 'meeting_id', meetings.map((meeting) => meeting.id)),
      segues: await rows('segues', 'meeting_id', meetings.map((meeting) => meeting.id)),
      headlines: await rows('headlines', 'meeting_id', meetings.map((meeting) => meeting.id)),
      cascading_messages: messages,
      message_acknowledgements: await rows('message_acknowledgements', 'message_id', messages.map((message) => message.id)),
      tasks: await rows('tasks', 'team_id', teams),
      issues: await rows('issues', 'team_id', teams),
      goals,
      milestones: await rows('milestones', 'goal_id', goals.map((goal) => goal.id)),
      metrics,
      metric_values: await rows('metric_values', 'metric_id', metrics.map((metric) => metric.id)),
      visions: await rows('visions', 'team_id', teams),
      seats: await rows('seats', 'team_id', teams),
      people_reviews: await rows('people_reviews', 'team_id', teams),
      documents: await rows('documents', 'team_id', teams),
      webhook_subscriptions: await rows('webhook_subscriptions', 'org_id', [orgId]),
    };
    expect(Object.keys(expected)).toEqual([...kinds.keys()]);
    const keyOf = (kind: string, record: Json, camel: boolean) =>
      exportKinds
        .find((candidate) => candidate.name === kind)!
        .key.map((column) => String(record[camel ? column.replace(/_([a-z])/g, (_m, letter: string) => letter.toUpperCase()) : column]))
        .join('|');
    for (const [kind, records] of kinds) {
      const exported = records.map((record) => keyOf(kind, record, true));
      expect(new Set(exported).size, `${kind}: each record once`).toBe(exported.length);
      expect(exported.sort(), kind).toEqual(expected[kind]!.map((row) => keyOf(kind, row, false)).sort());
    }
    expect(kinds.get('tasks')!.length, 'the demo has to-dos').toBeGreaterThan(0);

    // Every field of a record, in camelCase; no secret and no password.
    const task = expected.tasks![0]!;
    const exportedTask = kinds.get('tasks')!.find((record) => record.id === task.id)!;
    expect(exportedTask).toMatchObject({ id: task.id, teamId: task.team_id, ownerId: task.owner_id, title: task.title, completed: task.completed });
    expect(kinds.get('users')!.every((user) => !('passwordHash' in user))).toBe(true);
    expect(kinds.get('webhook_subscriptions')!.every((subscription) => !('secret' in subscription) && !('previousSecret' in subscription))).toBe(true);

    // Relations: every id a record names is a record of the archive.
    const ids = (kind: string) => new Set(kinds.get(kind)!.map((record) => record.id as string));
    const users = ids('users');
    const named: [string, string, Set<string>][] = [
      ['team_members', 'teamId', ids('teams')],
      ['team_members', 'userId', users],
      ['organization_members', 'userId', users],
      ['meetings', 'teamId', ids('teams')],
      ['meeting_ratings', 'meetingId', ids('meetings')],
      ['tasks', 'teamId', ids('teams')],
      ['tasks', 'ownerId', users],
      ['issues', 'teamId', ids('teams')],
      ['goals', 'teamId', ids('teams')],
      ['milestones', 'goalId', ids('goals')],
      ['metric_values', 'metricId', ids('metrics')],
      ['message_acknowledgements', 'messageId', ids('cascading_messages')],
      ['seats', 'teamId', ids('teams')],
    ];
    for (const [kind, field, among] of named) {
      const dangling = kinds.get(kind)!.filter((record) => record[field] !== null && !among.has(record[field] as string));
      expect(dangling, `${kind}.${field}`).toEqual([]);
    }
  }, 120_000);

  it("lets the typed client start an export, follow its progress and stream its archive", async () => {
    const client = createTeamOsClient({ baseUrl: `${app.url}/v1`, apiKey: ownerKey });
    const started = await client.exports.start(demo.organizationId);
    const job = await client.exports.wait(demo.organizationId, started.id, { intervalMs: 50 });
    expect(job).toMatchObject({ id: started.id, state: 'COMPLETED' });
    const chunks: Uint8Array[] = [];
    for await (const chunk of await client.exports.download(demo.organizationId, job.id)) chunks.push(chunk);
    const { manifest, kinds } = recordsOf(Buffer.concat(chunks));
    expect(manifest.exportId).toBe(job.id);
    expect([...kinds.values()].reduce((total, records) => total + records.length, 0)).toBe(job.recordsDone);
  }, 120_000);
});

describe(`an export's job (${databaseLabel})`, () => {
  // No worker in this app: the tests run the jobs themselves, as a server's worker would.
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());
  const worker = (more: Partial<ExportWorkerOptions> = {}): ExportWorkerOptions => ({ db: app.db, logger: silent, now: () => new Date(), ...more });

  async function orgWithTasks(count: number) {
    const { org, team, person } = await createTeamWorld(app.db);
    const owner = await person('OWNER', 'OWNER');
    await app.db
      .insertInto('tasks')
      .values(Array.from({ length: count }, (_, index) => ({ team_id: team.id, owner_id: owner.user.id, title: `Load truck ${index + 1}`, due_date: '2026-12-02' })))
      .execute();
    return { org, owner, person };
  }

  it('answers a second start, while the first export is QUEUED, with the first export', async () => {
    const { org, owner } = await orgWithTasks(1);
    const first = await app.request('POST', `/v1/orgs/${org.id}/exports`, { key: owner.key });
    const second = await app.request('POST', `/v1/orgs/${org.id}/exports`, { key: owner.key });
    expect(first.status).toBe(202);
    expect(second.status).toBe(202);
    expect(second.body.id).toBe(first.body.id);
    expect(second.body.state).toBe('QUEUED');
  });

  it("refuses the export to the organization's Admins (403): it is its Owners' alone", async () => {
    const { org, person } = await orgWithTasks(1);
    const admin = await person('ADMIN');
    const response = await app.request('POST', `/v1/orgs/${org.id}/exports`, { key: admin.key });
    expect(response.status).toBe(403);
  });

  it('answers 422 to a download of an export that is not COMPLETED', async () => {
    const { org, owner } = await orgWithTasks(1);
    const started = await app.request('POST', `/v1/orgs/${org.id}/exports`, { key: owner.key });
    const response = await app.request('GET', `/v1/orgs/${org.id}/exports/${started.body.id}/archive`, { key: owner.key });
    expect(response.status).toBe(422);
  });

  it('finishes on another worker an export whose worker died mid-export (its lease ran out), with every record once', async () => {
    const { org, owner } = await orgWithTasks(57);
    // The workers claim the oldest export first: the other tests' exports, left QUEUED, are set aside.
    await app.db.updateTable('org_exports').set({ state: 'FAILED', failure: 'set aside by the test' }).where('state', 'in', ['QUEUED', 'RUNNING']).execute();
    const started = await app.request('POST', `/v1/orgs/${org.id}/exports`, { key: owner.key });
    // Worker A writes three chunks, then stands still as a dead process would: its clock does not move,
    // so its renewals never push the lease past the first one, which runs out in real time.
    const frozen = new Date();
    let release!: () => void;
    const stalled = new Promise<void>((resume) => (release = resume));
    let chunks = 0;
    let reachedStall!: () => void;
    const stalling = new Promise<void>((resume) => (reachedStall = resume));
    const dying = runDueExports(
      worker({
        now: () => frozen,
        leaseMs: 1000,
        batchSize: 5,
        afterChunk: async () => {
          chunks += 1;
          if (chunks === 3) {
            reachedStall();
            await stalled;
          }
        },
      }),
    );
    await stalling;
    const midway = await app.request('GET', `/v1/orgs/${org.id}/exports/${started.body.id}`, { key: owner.key });
    expect(midway.body.state).toBe('RUNNING');
    expect(midway.body.recordsDone).toBeGreaterThan(0);

    // Worker B claims it once the lease ran out, and finishes it.
    while ((await runDueExports(worker({ batchSize: 5 }))) === 0) await new Promise((resume) => setTimeout(resume, 100));
    const job = await ended(app, org.id, started.body.id, owner.key);
    expect(job.state).toBe('COMPLETED');

    // A, back to life, finds its job taken over and writes nothing more.
    release();
    expect(await dying).toBe(0);
    const { kinds } = recordsOf(await download(app, org.id, job.id, owner.key));
    const tasks = kinds.get('tasks')!.map((task) => task.id as string);
    expect(tasks).toHaveLength(57);
    expect(new Set(tasks).size).toBe(57);
    const after = await app.request('GET', `/v1/orgs/${org.id}/exports/${job.id}`, { key: owner.key });
    expect(after.body).toEqual(job);
  }, 120_000);

  it('fails visibly with the reason when the database refuses to store the archive, and a new start exports again', async () => {
    const { org, owner } = await orgWithTasks(3);
    const started = await app.request('POST', `/v1/orgs/${org.id}/exports`, { key: owner.key });
    await sql`create function refuse_export_chunks() returns trigger language plpgsql as $$
      begin raise exception 'could not extend file: No space left on device'; end $$`.execute(app.db);
    await sql`create trigger refuse_export_chunks before insert on org_export_chunks for each row execute function refuse_export_chunks()`.execute(app.db);
    try {
      await runDueExports(worker());
    } finally {
      await sql`drop trigger refuse_export_chunks on org_export_chunks`.execute(app.db);
      await sql`drop function refuse_export_chunks()`.execute(app.db);
    }
    const failed = await app.request('GET', `/v1/orgs/${org.id}/exports/${started.body.id}`, { key: owner.key });
    expect(failed.body.state).toBe('FAILED');
    expect(failed.body.failure).toContain('No space left on device');
    expect(failed.body.expiresAt).not.toBeNull();

    const again = await app.request('POST', `/v1/orgs/${org.id}/exports`, { key: owner.key });
    expect(again.status).toBe(202);
    expect(again.body.id).not.toBe(started.body.id);
    await runDueExports(worker());
    expect((await ended(app, org.id, again.body.id, owner.key)).state).toBe('COMPLETED');
  });

  it('forgets an export past its expiresAt (404), and the purge deletes it with its archive', async () => {
    const { org, owner } = await orgWithTasks(3);
    await app.db.updateTable('org_exports').set({ state: 'FAILED', failure: 'set aside by the test' }).where('state', 'in', ['QUEUED', 'RUNNING']).execute();
    const started = await app.request('POST', `/v1/orgs/${org.id}/exports`, { key: owner.key });
    await runDueExports(worker());
    const job = await ended(app, org.id, started.body.id, owner.key);
    expect(job.state).toBe('COMPLETED');
    const past = new Date(Date.parse(job.expiresAt) + 1000);
    await app.db.updateTable('org_exports').set({ expires_at: new Date(Date.now() - 1000) }).where('id', '=', job.id).execute();
    expect((await app.request('GET', `/v1/orgs/${org.id}/exports/${job.id}`, { key: owner.key })).status).toBe(404);
    expect((await app.request('GET', `/v1/orgs/${org.id}/exports/${job.id}/archive`, { key: owner.key })).status).toBe(404);
    while ((await purgeExpiredExports(app.db, past, 2)) > 0);
    expect(await app.db.selectFrom('org_export_chunks').select('seq').where('export_id', '=', job.id).execute()).toEqual([]);
    expect(await app.db.selectFrom('org_exports').select('id').where('id', '=', job.id).execute()).toEqual([]);
  });
});

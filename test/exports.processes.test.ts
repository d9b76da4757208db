/**
 * An organization's export across real server processes (src/server.ts) on one PostgreSQL database:
 * the process running an export is killed (SIGKILL) mid-export, and another process, started after,
 * claims the job once its lease ran out and finishes it, with every record in the archive once.
 * PostgreSQL only (TEST_DATABASE_URL): the embedded database allows one process.
 *
 * The process killed takes a short lease (EXPORTS_LEASE_MS, read by src/config.ts) so that the wait
 * fits in a test. The test waits for what must happen (rows, exits) as long as it may run, and holds
 * no duration to a ceiling.
 */
import { randomBytes } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, type OpenDatabase } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createPostgresDatabase, postgresUrl } from './support/database.js';
import { createTeamWorld } from './support/factories.js';
import { waitFor } from './support/processes.js';
import { killServerProcess, signalGroup, startServerProcess, stopServerProcess, type ServerProcess } from './support/serverProcess.js';

const leaseMs = 3_000;
/** Enough records that the export is still running when the test sees its first chunk. */
const tasks = 60_000;
const testMs = 180_000;

/** The tasks of the archive (a tar of manifest.json and <kind>.ndjson.gz). */
function taskIdsOf(archive: Buffer): string[] {
  let offset = 0;
  while (offset + 512 <= archive.length) {
    const header = archive.subarray(offset, offset + 512);
    if (header.every((byte) => byte === 0)) break;
    const name = header.subarray(0, 100).toString('ascii').replace(/\0.*$/s, '');
    const size = Number.parseInt(header.subarray(124, 136).toString('ascii').replace(/\0.*$/s, ''), 8);
    if (name === 'tasks.ndjson.gz') {
      const text = gunzipSync(archive.subarray(offset + 512, offset + 512 + size)).toString('utf8');
      return text.trimEnd().split('\n').map((line) => (JSON.parse(line) as { id: string }).id);
    }
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  throw new Error('no tasks.ndjson.gz in the archive');
}

describe.skipIf(!postgresUrl)('an export across server processes on one PostgreSQL (PostgreSQL only: PGlite allows one process)', () => {
  let database: { url: string; drop(): Promise<void> } | undefined;
  let direct: OpenDatabase | undefined;
  const started: ServerProcess[] = [];
  let env: Record<string, string>;
  let key: string;
  let orgId: string;

  const start = (name: string, extraEnv: Record<string, string> = {}) =>
    startServerProcess(name, { ...env, ...extraEnv }, { onSpawn: (server) => started.push(server) });

  beforeAll(async () => {
    database = await createPostgresDatabase('teamos_export_processes');
    direct = await openPostgres(database.url);
    await migrateToLatest(direct.db);
    const world = await createTeamWorld(direct.db);
    const owner = await world.person('OWNER', 'OWNER');
    key = owner.key;
    orgId = world.org.id;
    await sql`
      insert into tasks (team_id, owner_id, title, due_date)
      select ${world.team.id}, ${owner.user.id}, 'Load truck ' || n, date '2026-12-01' from generate_series(1, ${tasks}) n
    `.execute(direct.db);
    env = { DATABASE_URL: database.url, SECRETS_KEY: randomBytes(32).toString('hex') };
  }, testMs);

  afterAll(async () => {
    await Promise.all(started.map((server) => stopServerProcess(server, 5_000)));
    for (const server of started) signalGroup(server, 'SIGKILL');
    await direct?.close();
    await database?.drop();
  }, testMs);

  it('a process killed (SIGKILL) mid-export loses nothing: another finishes the export once its lease ran out, every record once', async () => {
    const victim = await start('server A', { EXPORTS_LEASE_MS: String(leaseMs) });
    const response = await fetch(`${victim.url}/v1/orgs/${orgId}/exports`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    const job = () => direct!.db.selectFrom('org_exports').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

    await waitFor('the export to write its first chunks', async () => (await job()).records_done > 0, testMs);
    expect(await killServerProcess(victim)).toEqual({ code: null, signal: 'SIGKILL' });
    const left = await job();
    expect(left.state, 'the export was still running when its process was killed (make `tasks` larger)').toBe('RUNNING');
    expect(left.records_done).toBeLessThan(left.records_total!);

    const heir = await start('server B');
    await waitFor('another process to finish the export', async () => (await job()).state !== 'RUNNING', testMs);
    const finished = await job();
    expect(finished.state).toBe('COMPLETED');
    expect(finished.attempts).toBe(2);

    const archive = await fetch(`${heir.url}/v1/orgs/${orgId}/exports/${id}/archive`, { headers: { authorization: `Bearer ${key}` } });
    expect(archive.status).toBe(200);
    const ids = taskIdsOf(Buffer.from(await archive.arrayBuffer()));
    expect(ids).toHaveLength(tasks);
    expect(new Set(ids).size).toBe(tasks);
  }, testMs);
});

/**
 * Several instances started at once on an empty PostgreSQL database: the schema is migrated once, and
 * no instance serves before it is complete.
 *
 * Kysely's migrator (node_modules/kysely, PostgresAdapter) runs the pending migrations in one
 * transaction on one connection that first takes a session-level advisory lock,
 * `pg_advisory_lock(3853314791062309107)`, and reads what is pending only once it holds the lock; the
 * server (src/server.ts) migrates before it listens. The test holds that lock itself while three
 * server processes start, waits until all three wait for it (pg_locks), and then lets go — so the
 * three contend for the empty database for certain, however fast or slow they start — while it asks
 * each of them, from the moment it exists, an API request and /readyz, again and again.
 *
 * PostgreSQL only (TEST_DATABASE_URL): the embedded database allows one process.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { migrations } from '../src/db/migrate.js';
import { createPostgresDatabase, postgresUrl } from './support/database.js';
import { waitFor } from './support/processes.js';
import { signalGroup, startServerProcess, stopServerProcess, type ServerProcess } from './support/serverProcess.js';

/** Kysely's lock (PostgresAdapter.acquireMigrationLock): a test that holds it holds every migrator back. */
const migrationLock = '3853314791062309107';
const instances = 3;
/** The test's own limit; a wait inside it may last `waitMs`, which leaves the test the time to say what it waited for. */
const testMs = 120_000;
const waitMs = testMs - 20_000;

interface Answer {
  path: string;
  status: number;
  at: number;
}

/** Asks `url` the API request and /readyz, one after the other, until told to stop; every answer kept (refused connections are not answers). */
function keepAsking(url: string, answers: Answer[]) {
  let asking = true;
  // A key of the right shape that no one has: its lookup reads api_keys, so it is 401 only with the schema in place.
  const unknownKey = `ak_${randomBytes(32).toString('base64url')}`;
  const ask = async (path: string, headers: Record<string, string> = {}) => {
    const response = await fetch(`${url}${path}`, { headers, signal: AbortSignal.timeout(10_000) }).catch(() => undefined);
    if (response) {
      await response.arrayBuffer();
      answers.push({ path, status: response.status, at: Date.now() });
    }
    return response !== undefined;
  };
  const done = (async () => {
    while (asking) {
      const answered = (await ask('/v1/me', { authorization: `Bearer ${unknownKey}` })) && (await ask('/readyz'));
      // Refused: not listening yet. The next try follows at once, so the first answer is caught early.
      if (!answered) await new Promise((wait) => setTimeout(wait, 10));
    }
  })();
  return async () => {
    asking = false;
    await done;
  };
}

describe.skipIf(!postgresUrl)('several instances started at once on an empty PostgreSQL database (PostgreSQL only: PGlite allows one process)', () => {
  let database: { url: string; drop(): Promise<void> } | undefined;
  const started: ServerProcess[] = [];
  const holders: pg.Client[] = [];

  afterAll(async () => {
    await Promise.all(started.map((server) => stopServerProcess(server, 5_000)));
    for (const server of started) signalGroup(server, 'SIGKILL');
    await Promise.all(holders.map((client) => client.end().catch(() => undefined)));
    await database?.drop();
  }, 30_000);

  it('migrate once, under the migrator\'s lock, and none answers before the schema is complete', async () => {
    database = await createPostgresDatabase('teamos_migration_race');
    const holder = new pg.Client({ connectionString: database.url });
    holders.push(holder);
    await holder.connect();
    await holder.query(`select pg_advisory_lock(${migrationLock})`);
    const waiting = async () => {
      const { rows } = await holder.query<{ n: number }>(
        `select count(*)::int as n from pg_locks l join pg_database d on d.oid = l.database
         where l.locktype = 'advisory' and not l.granted and d.datname = current_database()`,
      );
      return rows[0]!.n;
    };

    const env = { DATABASE_URL: database.url, SECRETS_KEY: randomBytes(32).toString('hex'), LOG_LEVEL: 'info' };
    const answers = new Map<string, Answer[]>();
    const stops: (() => Promise<void>)[] = [];
    const starting = Array.from({ length: instances }, (_, n) =>
      startServerProcess(`server ${n + 1}`, env, {
        timeoutMs: waitMs,
        onSpawn: (server) => {
          started.push(server);
          answers.set(server.name, []);
          stops.push(keepAsking(server.url, answers.get(server.name)!));
        },
      }),
    );
    // Failures of a start are reported by the Promise.all below, once the lock is let go.
    starting.forEach((start) => start.catch(() => undefined));

    // Until all three wait, or one of them went ahead without the lock (answered) or gave up (exited).
    const wentAhead = () => started.some((server) => !server.running() || answers.get(server.name)!.length > 0);
    await waitFor(`all ${instances} instances to wait for the migrator's lock`, async () => wentAhead() || (await waiting()) === instances, waitMs);
    const waited = await waiting();
    if (waited !== instances) {
      throw new Error(
        `${waited} of ${instances} instances waited for pg_advisory_lock(${migrationLock}) while the test held it, and one went ahead: ` +
          `does Kysely's migrator still take that lock?\n${started.map((server) => `${server.name}:\n${server.output()}`).join('\n')}`,
      );
    }
    const releasedAt = Date.now();
    await holder.query(`select pg_advisory_unlock(${migrationLock})`);
    const servers = await Promise.all(starting);
    // Every instance has answered /readyz 200 at least once: each was seen serving.
    await waitFor(
      'each instance to answer /readyz',
      () => servers.every((server) => answers.get(server.name)!.some((answer) => answer.path === '/readyz' && answer.status === 200)),
      waitMs,
    );
    await Promise.all(stops.map((stop) => stop()));

    // Each migration of this build applied, once (the migrator's table), by exactly one instance.
    const { rows } = await holder.query<{ name: string }>('select name from kysely_migration order by name');
    expect(rows.map((row) => row.name)).toEqual(Object.keys(migrations).sort());
    const migrated = servers.map((server) => {
      const lines = server
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { msg: string; migrations?: string[] });
      return lines.filter((line) => line.msg === 'database migrated').flatMap((line) => line.migrations ?? []);
    });
    expect(migrated.filter((names) => names.length > 0), JSON.stringify(migrated)).toEqual([Object.keys(migrations)]);

    // Nothing answered while the lock was held; then the API request was 401 (the key looked up in a
    // complete schema), never a 5xx, and /readyz said ready from the first answer of each.
    for (const server of servers) {
      const seen = answers.get(server.name)!;
      const summary = `${server.name}: ${JSON.stringify(seen.slice(0, 6))}…`;
      expect(seen.filter((answer) => answer.at < releasedAt), summary).toEqual([]);
      expect([...new Set(seen.filter((answer) => answer.path === '/v1/me').map((answer) => answer.status))], summary).toEqual([401]);
      expect([...new Set(seen.filter((answer) => answer.path === '/readyz').map((answer) => answer.status))], summary).toEqual([200]);
      expect(server.output(), server.name).not.toMatch(/could not|uncaught|unhandled|"level":(50|60)/);
    }
    console.info(
      `[migrationRace] ${instances} instances waited for the migrator's lock; one migrated ${Object.keys(migrations).length} migrations, ` +
        `answers per instance: ${servers.map((server) => answers.get(server.name)!.length).join(', ')}`,
    );
  }, testMs);
});

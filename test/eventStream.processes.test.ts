/**
 * The live stream on real server processes (src/server.ts, each in a process group of its own):
 *
 * - SIGTERM ends every stream with a short `retry:` before the server stops, so that clients
 *   reconnect to another instance (both databases: PGlite runs one process);
 * - on PostgreSQL, with two instances on one database: a change made on A reaches a stream open on B;
 *   a stream reconnected to A after B stopped resumes after its last event with nothing lost or
 *   repeated; and B's listening connection, cut while changes go on, costs its stream no event and
 *   repeats none.
 *
 * Nothing waits on time: each test waits until a condition holds, with a generous upper bound.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openPglite, openPostgres, type OpenDatabase } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createPostgresDatabase, databaseLabel, postgresUrl } from './support/database.js';
import { openStream, type OpenedStream } from './support/eventStream.js';
import { createTeamWorld } from './support/factories.js';
import { createCluster, postgresBinaries } from './support/postgresCluster.js';
import { waitFor } from './support/processes.js';
import { signalGroup, startServerProcess, stopServerProcess, type ServerProcess } from './support/serverProcess.js';

const testMs = 180_000;

const started: ServerProcess[] = [];
const streams: OpenedStream[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const stream of streams) stream.close();
  await Promise.all(started.map((server) => stopServerProcess(server)));
  for (const cleanup of cleanups) await cleanup();
});

async function open(server: ServerProcess, path: string, key: string, headers?: Record<string, string>) {
  const stream = await openStream(server.url, path, key, headers);
  streams.push(stream);
  return stream;
}

/** A database for server processes, with a team whose Owner (in the team) makes the changes. */
async function prepared(kind: 'postgres' | 'pglite') {
  let env: Record<string, string>;
  let direct: OpenDatabase;
  if (kind === 'postgres') {
    const created = await createPostgresDatabase('teamos_stream');
    cleanups.push(created.drop);
    env = { DATABASE_URL: created.url, SECRETS_KEY: randomBytes(32).toString('hex') };
    direct = await openPostgres(created.url);
  } else {
    const dataDir = await mkdtemp(join(tmpdir(), 'teamos-stream-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    env = { DATA_DIR: dataDir, DATABASE_URL: '' };
    direct = await openPglite(dataDir);
  }
  await migrateToLatest(direct.db);
  const world = await createTeamWorld(direct.db);
  const owner = await world.person('OWNER', 'MEMBER');
  return { env, direct, ...world, owner };
}

const createTask = (server: ServerProcess, key: string, teamId: string, ownerId: string, title: string) =>
  fetch(`${server.url}/v1/teams/${teamId}/tasks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title, ownerId, dueDate: '2026-11-27' }),
  }).then((response) => response.status);

describe(`the live stream when the server stops (${databaseLabel})`, () => {
  it('ends every stream with a short retry: on SIGTERM, then the server stops', { timeout: testMs }, async () => {
    const { env, direct, owner } = await prepared(postgresUrl ? 'postgres' : 'pglite');
    // PGlite allows one process: the server opens the data directory once this test has let it go.
    if (!postgresUrl) await direct.close();
    const server = await startServerProcess('stopping', env, { onSpawn: (spawned) => started.push(spawned) });
    const stream = await open(server, '/v1/events/stream', owner.key);
    expect(stream.status).toBe(200);

    signalGroup(server, 'SIGTERM');
    await stream.ended;
    expect(stream.raw()).toMatch(/\nretry:1000\n\n$/);
    expect((await server.exited).code).toBe(0);
    if (postgresUrl) await direct.close();
  });
});

describe.skipIf(!postgresUrl)('the live stream across instances on one PostgreSQL (PostgreSQL only: PGlite allows one process)', () => {
  it('brings a change made on one instance to a stream on another, resumes there after the last event, and loses nothing when its listening connection is cut', { timeout: testMs }, async () => {
    const { env, direct, team, owner } = await prepared('postgres');
    const start = (name: string) => startServerProcess(name, env, { onSpawn: (server) => started.push(server) });
    const [a, b] = await Promise.all([start('instance A'), start('instance B')]);

    const onB = await open(b, `/v1/events/stream?teamId=${team.id}`, owner.key);
    expect(await createTask(a, owner.key, team.id, owner.user.id, 'Made on A')).toBe(201);
    const [first] = await onB.waitForMessages(1, 30_000);
    expect([first!.event, JSON.parse(first!.data).data.object.title]).toEqual(['task.created', 'Made on A']);

    // B's listening connection cut while changes go on: B listens again, and its stream misses nothing.
    await sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = ${`teamos listen ${b.pid}`}`.execute(direct.db);
    for (const title of ['While cut 1', 'While cut 2', 'While cut 3']) expect(await createTask(a, owner.key, team.id, owner.user.id, title)).toBe(201);
    await onB.waitForMessages(4, 30_000);

    // B stops; the client comes back on A with the last id it received.
    signalGroup(b, 'SIGTERM');
    await onB.ended;
    expect(await createTask(a, owner.key, team.id, owner.user.id, 'While away')).toBe(201);
    const onA = await open(a, `/v1/events/stream?teamId=${team.id}`, owner.key, { 'last-event-id': onB.messages.at(-1)!.id! });
    await onA.waitForMessages(1, 30_000);
    // On A: B, draining, may stop listening at any moment.
    expect(await createTask(a, owner.key, team.id, owner.user.id, 'Back live')).toBe(201);
    await onA.waitForMessages(2, 30_000);

    const titles = [...onB.messages, ...onA.messages].map((message) => JSON.parse(message.data).data.object.title);
    expect(titles).toEqual(['Made on A', 'While cut 1', 'While cut 2', 'While cut 3', 'While away', 'Back live']);
    await waitFor('B stopped', () => !b.running(), 30_000);
    await direct.close();
  });
});

const bin = postgresBinaries();

describe.skipIf(!postgresUrl || !bin)('the live stream while PostgreSQL restarts (PostgreSQL only: a throwaway cluster of its own)', () => {
  it('keeps the stream open and delivers every change made after the restart, each once and in log order', { timeout: testMs }, async () => {
    const cluster = await createCluster(bin!);
    cleanups.push(() => cluster.destroy());
    await cluster.start();
    const direct = await openPostgres(cluster.url);
    await migrateToLatest(direct.db);
    const { org, team, person } = await createTeamWorld(direct.db);
    const owner = await person('OWNER', 'MEMBER');
    await direct.close();
    const server = await startServerProcess('restarted database', { DATABASE_URL: cluster.url, SECRETS_KEY: randomBytes(32).toString('hex') }, { onSpawn: (spawned) => started.push(spawned) });
    const stream = await open(server, `/v1/events/stream?teamId=${team.id}`, owner.key);
    expect(await createTask(server, owner.key, team.id, owner.user.id, 'Before the restart')).toBe(201);
    await stream.waitForMessages(1, 30_000);

    // Every session ends, the listening connection's too; the server lives on and reconnects by itself.
    await cluster.stop('fast');
    await cluster.start();
    await waitFor('the server to serve again', async () => (await fetch(`${server.url}/readyz`)).status === 200, 60_000);
    // Made as soon as the server serves: some may commit before it listens again, which only its poll then brings.
    const titles = ['After 1', 'After 2', 'After 3', 'After 4', 'After 5'];
    for (const title of titles) expect(await createTask(server, owner.key, team.id, owner.user.id, title)).toBe(201);
    await stream.waitForMessages(1 + titles.length, 60_000);
    // One more change once they all came: an event sent twice would have come before it.
    expect(await createTask(server, owner.key, team.id, owner.user.id, 'Last')).toBe(201);
    await stream.waitForMessages(2 + titles.length, 60_000);

    const feed = await fetch(`${server.url}/v1/orgs/${org.id}/events?limit=200`, { headers: { authorization: `Bearer ${owner.key}` } }).then((response) => response.json());
    const logged = (feed.data as { id: string; data: { object: { title: string } } }[]).map((event) => [event.id, event.data.object.title]);
    expect(logged.map(([, title]) => title)).toEqual(['Before the restart', ...titles, 'Last']);
    expect(stream.messages.map((message) => [message.id, JSON.parse(message.data).data.object.title])).toEqual(logged);
    expect(stream.isEnded()).toBe(false);
  });
});

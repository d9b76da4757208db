/**
 * The probes: /healthz is liveness (the process answers, whatever the database does), /readyz is
 * readiness (the database answers and has every migration of this build, and the process is not
 * stopping). A server process asked to stop with SIGTERM answers /readyz 503 at once and goes on
 * serving through its drain while a balancer notices, then stops listening, finishes the request in
 * flight and exits 0; one that nobody asked /readyz stops without a drain.
 *
 * Every wait is for an answer, never for a time: the drain is made longer than any test may last, and
 * a second signal ends it.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite, openPostgres, type OpenDatabase } from '../src/db/connect.js';
import { migrateToLatest, migrations } from '../src/db/migrate.js';
import { createPostgresDatabase, createTestDatabase, databaseLabel, postgresUrl, type TestDatabase } from './support/database.js';
import { createCaller } from './support/factories.js';
import { freePort } from './support/ports.js';
import { accepts } from './support/processes.js';
import { signalGroup, startServerProcess, stopServerProcess, type ServerProcess } from './support/serverProcess.js';
import { send, startTestApp, type TestApp } from './support/testApp.js';

describe(`the probes (${databaseLabel})`, () => {
  let app: TestApp;
  /** A second app, whose database the last test closes. */
  let cut: TestApp;
  let cutDatabase: TestDatabase;
  beforeAll(async () => {
    app = await startTestApp();
    cutDatabase = await createTestDatabase();
    cut = await startTestApp({ database: cutDatabase });
  });
  afterAll(async () => {
    await app?.close();
    await cut?.close();
  });

  it('GET /readyz answers 200 while the database answers with every migration applied, like /healthz', async () => {
    const [ready, live] = [await send(app.url, 'GET', '/readyz'), await send(app.url, 'GET', '/healthz')];
    expect([ready.status, ready.body]).toEqual([200, { status: 'ok' }]);
    expect([live.status, live.body]).toEqual([200, { status: 'ok' }]);
    expect(ready.headers.get('x-request-id')).toBeTruthy();
  });

  it('GET /readyz answers 503 while a migration of this build is not applied, and 200 again once it is; /healthz stays 200', async () => {
    const last = Object.keys(migrations).at(-1)!;
    const { rows } = await sql<{ timestamp: string }>`select timestamp from kysely_migration where name = ${last}`.execute(app.db);
    await sql`delete from kysely_migration where name = ${last}`.execute(app.db);
    try {
      const pending = await send(app.url, 'GET', '/readyz');
      expect([pending.status, pending.body]).toEqual([503, { status: 'migrating' }]);
      expect((await send(app.url, 'GET', '/healthz')).status).toBe(200);
    } finally {
      await sql`insert into kysely_migration (name, timestamp) values (${last}, ${rows[0]!.timestamp})`.execute(app.db);
    }
    expect((await send(app.url, 'GET', '/readyz')).status).toBe(200);
  });

  it('GET /readyz answers 503 when the database does not answer, while /healthz, liveness, still answers 200', async () => {
    await cutDatabase.close();
    const [ready, live] = [await send(cut.url, 'GET', '/readyz'), await send(cut.url, 'GET', '/healthz')];
    expect([ready.status, ready.body]).toEqual([503, { status: 'unavailable' }]);
    expect([live.status, live.body]).toEqual([200, { status: 'ok' }]);
  });
});

/** A server process's environment on a database of its own, with a key in it; `cleanup` removes the database. */
async function serverDatabase(): Promise<{ env: Record<string, string>; key: string; cleanup(): Promise<void> }> {
  let open: () => Promise<OpenDatabase>;
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  if (postgresUrl) {
    const created = await createPostgresDatabase('teamos_ready');
    env = { DATABASE_URL: created.url, SECRETS_KEY: randomBytes(32).toString('hex') };
    open = () => openPostgres(created.url);
    cleanup = created.drop;
  } else {
    const dataDir = await mkdtemp(join(tmpdir(), 'teamos-ready-'));
    env = { DATA_DIR: dataDir, DATABASE_URL: '' };
    open = () => openPglite(dataDir);
    cleanup = () => rm(dataDir, { recursive: true, force: true });
  }
  // Written before the server opens it: the embedded database is one process's at a time.
  const database = await open();
  try {
    await migrateToLatest(database.db);
    const { key } = await createCaller(database.db);
    return { env, key, cleanup };
  } finally {
    await database.close();
  }
}

/** A request whose headers are sent and whose body is not yet whole: in flight until `finish()`. */
async function requestInFlight(server: ServerProcess, key: string) {
  const url = new URL(server.url);
  const socket = connect(Number(url.port), url.hostname);
  let answer = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (answer += chunk));
  const ended = new Promise<void>((done) => socket.once('close', () => done()));
  await new Promise<void>((connected) => socket.once('connect', connected));
  const body = '{"title":"x"}';
  socket.write(
    `PATCH /v1/tasks/${randomUUID()} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${key}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 5)}`,
  );
  return {
    /** Sends the rest of the body; resolves with the answer's status line once the server closed the connection. */
    finish: async () => {
      socket.write(body.slice(5));
      await ended;
      return answer.split('\r\n')[0];
    },
  };
}

/** Resolves once `check` holds, asking again as soon as it answered: every step waits for an answer, never for a time. */
async function until(check: () => Promise<boolean>) {
  while (!(await check())) await new Promise((next) => setImmediate(next));
}

const processTestMs = 240_000;

describe(`a server process stopping (${databaseLabel})`, () => {
  let database: Awaited<ReturnType<typeof serverDatabase>>;
  const started: ServerProcess[] = [];
  beforeAll(async () => {
    database = await serverDatabase();
  }, processTestMs);
  afterAll(async () => {
    await Promise.all(started.map((server) => stopServerProcess(server, 1_000)));
    await database?.cleanup();
  }, processTestMs);

  it(
    'on SIGTERM answers /readyz 503 at once, serves through the drain, then stops listening, finishes the request in flight and exits 0',
    { timeout: processTestMs },
    async () => {
      const metricsPort = await freePort();
      const server = await startServerProcess('draining', { ...database.env, SHUTDOWN_DRAIN_MS: String(60 * 60_000), METRICS_PORT: String(metricsPort) }, { timeoutMs: processTestMs / 2 });
      started.push(server);
      const ready = await fetch(`${server.url}/readyz`);
      expect([ready.status, await ready.json()]).toEqual([200, { status: 'ok' }]);
      const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
      expect((await fetch(metricsUrl)).status).toBe(200);
      expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
      const inFlight = await requestInFlight(server, database.key);

      signalGroup(server, 'SIGTERM');
      await until(async () => (await fetch(`${server.url}/readyz`)).status === 503);
      const stopping = await fetch(`${server.url}/readyz`);
      expect([stopping.status, await stopping.json()]).toEqual([503, { status: 'stopping' }]);
      // Draining: the API, liveness and the metrics still answer.
      expect((await fetch(`${server.url}/v1/me`, { headers: { authorization: `Bearer ${database.key}` } })).status).toBe(200);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      expect((await fetch(metricsUrl)).status).toBe(200);

      // A second signal ends the drain: the server stops listening, but waits for the request in flight.
      signalGroup(server, 'SIGTERM');
      await until(async () => !(await accepts(Number(new URL(server.url).port))));
      expect(server.running()).toBe(true);
      expect(await inFlight.finish()).toMatch(/^HTTP\/1\.1 \d{3} /);
      expect(await server.exited, server.output()).toEqual({ code: 0, signal: null });
    },
  );

  it('stops on SIGTERM without a drain when nobody asked /readyz', { timeout: processTestMs }, async () => {
    // A drain longer than the test may last: the test passes only if there is none.
    const server = await startServerProcess('unprobed', { ...database.env, SHUTDOWN_DRAIN_MS: String(60 * 60_000) }, { timeoutMs: processTestMs / 2 });
    started.push(server);
    expect((await fetch(`${server.url}/v1/me`, { headers: { authorization: `Bearer ${database.key}` } })).status).toBe(200);
    signalGroup(server, 'SIGTERM');
    expect(await server.exited, server.output()).toEqual({ code: 0, signal: null });
  });
});

/**
 * The rate limit's shared counts in Redis fail open: with REDIS_URL set and Redis gone, requests pass
 * without a limit, one warning is logged, and counting resumes when Redis returns.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, databaseLabel, type TestDatabase } from './support/database.js';
import { createCaller } from './support/factories.js';
import { freePort } from './support/ports.js';
import { startRedis, stopProcess, waitFor } from './support/processes.js';
import { startTestApp, type TestApp } from './support/testApp.js';

const perMinute = 3;
const redisServerInstalled = spawnSync('redis-server', ['--version']).status === 0;

function capturedLog() {
  const lines: { level: number; msg: string }[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, logger: pino({ level: 'info' }, sink) };
}

const warnings = (lines: { level: number; msg: string }[]) => lines.filter((line) => line.level === 40 && line.msg.startsWith('rate limit counts unavailable'));

/** The apps' clock stands still inside a minute, so a burst is counted in one minute however slow the machine. */
const frozenAt = new Date((Math.floor(Date.now() / 60_000) - 60) * 60_000 + 17_000);
const now = () => frozenAt;

/** The statuses of `count` requests one after another. */
async function burst(app: TestApp, key: string, count: number) {
  const statuses: number[] = [];
  for (let i = 0; i < count; i += 1) statuses.push((await app.request('GET', '/v1/me', { key })).status);
  return statuses;
}

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.close());

describe(`Redis unavailable with REDIS_URL set (${databaseLabel})`, () => {
  it('Redis never reachable: every request passes without a limit; one warning is logged', async () => {
    const log = capturedLog();
    const app = await startTestApp({ rateLimitPerMinute: perMinute, redisUrl: `redis://127.0.0.1:${await freePort()}`, database, logger: log.logger, now });
    try {
      const { key } = await createCaller(database.db, { scopes: ['read'] });

      const statuses = await burst(app, key, perMinute + 3);

      expect(statuses).toEqual(Array(perMinute + 3).fill(200));
      expect(warnings(log.lines)).toHaveLength(1);
    } finally {
      await app.close();
    }
  });

  it('Redis that accepts connections and never answers: every request still passes without a limit; one warning is logged', async () => {
    // Without a bound on each command (commandTimeout), the first request would wait for the answer
    // forever and the test fail by its timeout; no measured duration decides it.
    const connections: Socket[] = [];
    const silent = createServer((connection) => void connections.push(connection));
    await new Promise<void>((listening) => silent.listen(0, '127.0.0.1', listening));
    const log = capturedLog();
    const app = await startTestApp({
      rateLimitPerMinute: perMinute,
      redisUrl: `redis://127.0.0.1:${(silent.address() as AddressInfo).port}`,
      database,
      logger: log.logger,
      now,
    });
    try {
      const { key } = await createCaller(database.db, { scopes: ['read'] });

      const statuses = await burst(app, key, perMinute + 3);

      expect(statuses).toEqual(Array(perMinute + 3).fill(200));
      expect(connections.length).toBeGreaterThan(0);
      expect(warnings(log.lines)).toHaveLength(1);
    } finally {
      await app.close();
      for (const connection of connections) connection.destroy();
      await new Promise((closed) => silent.close(closed));
    }
  });

  describe.skipIf(!redisServerInstalled)('Redis stopped and started again under a running app (needs redis-server)', () => {
    let port: number;
    let redis: ChildProcess | undefined;
    let app: TestApp;
    const log = capturedLog();
    beforeAll(async () => {
      port = await freePort();
      redis = await startRedis(port);
      app = await startTestApp({ rateLimitPerMinute: perMinute, redisUrl: `redis://127.0.0.1:${port}`, database, logger: log.logger, now });
    });
    afterAll(async () => {
      await app?.close();
      await stopProcess(redis);
    });

    it('counts while Redis runs, lets requests pass while it is gone, and counts again once it is back', async () => {
      const counted = await createCaller(database.db, { scopes: ['read'] });
      expect(await burst(app, counted.key, perMinute + 1)).toEqual([200, 200, 200, 429]);

      await stopProcess(redis);
      const during = await createCaller(database.db, { scopes: ['read'] });
      expect(await burst(app, during.key, perMinute + 3)).toEqual(Array(perMinute + 3).fill(200));
      expect(warnings(log.lines)).toHaveLength(1);

      redis = await startRedis(port);
      const after = await createCaller(database.db, { scopes: ['read'] });
      // ioredis reconnects with a backoff: the first request that is counted again shows the budget.
      await waitFor('counting to resume', async () => (await app.request('GET', '/v1/me', { key: after.key })).headers.has('ratelimit'));
      const again = await createCaller(database.db, { scopes: ['read'] });
      expect(await burst(app, again.key, perMinute + 1)).toEqual([200, 200, 200, 429]);
      expect(log.lines.some((line) => line.msg === 'rate limit counts available again (Redis)')).toBe(true);
    });
  });
});

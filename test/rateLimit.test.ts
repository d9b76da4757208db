import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { secondsUntilNextMinute } from '../src/http/rateLimit.js';
import { createCaller, createKey } from './support/factories.js';
import { createTestDatabase, databaseLabel, type TestDatabase } from './support/database.js';
import { startTestApp, type TestApp } from './support/testApp.js';

const redisUrl = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';

/** Waits until at least `seconds` remain in the current minute, so a burst stays within one window. */
async function awayFromMinuteEnd(seconds = 8) {
  const left = secondsUntilNextMinute(Date.now());
  if (left < seconds) await new Promise((wait) => setTimeout(wait, left * 1000 + 200));
}

describe(`the rate limit (${databaseLabel})`, () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ rateLimitPerMinute: 3 });
  });
  afterAll(() => app.close());

  it('answers requests over the per-minute budget of a key with 429 rateLimited and Retry-After until the next minute', async () => {
    const { key } = await createCaller(app.db, { scopes: ['read'] });
    await awayFromMinuteEnd();
    for (let i = 0; i < 3; i += 1) expect((await app.request('GET', '/v1/me', { key })).status).toBe(200);

    const limited = await app.request('GET', '/v1/me', { key });
    const expected = secondsUntilNextMinute(Date.now());

    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rateLimited');
    expect(Math.abs(Number(limited.headers.get('retry-after')) - expected)).toBeLessThanOrEqual(1);
  });

  it('shows the remaining budget in RateLimit headers on normal responses', async () => {
    const { key } = await createCaller(app.db, { scopes: ['read'] });
    await awayFromMinuteEnd();
    const first = await app.request('GET', '/v1/orgs', { key });
    const second = await app.request('GET', '/v1/orgs', { key });
    expect(first.headers.get('ratelimit')).toMatch(/^limit=3, remaining=2, reset=\d+$/);
    expect(second.headers.get('ratelimit')).toMatch(/^limit=3, remaining=1, reset=\d+$/);
    expect(first.headers.get('ratelimit-policy')).toBe('3;w=60');
  });

  it('counts per key: another key of the same person has its own budget', async () => {
    const first = await createCaller(app.db, { scopes: ['read'] });
    const second = await createKey(app.db, first.user.id, { scopes: ['read'] });
    await awayFromMinuteEnd();
    for (let i = 0; i < 3; i += 1) await app.request('GET', '/v1/me', { key: first.key });
    expect((await app.request('GET', '/v1/me', { key: first.key })).status).toBe(429);
    expect((await app.request('GET', '/v1/me', { key: second.key })).status).toBe(200);
  });
});

describe(`the rate limit shared through Redis (${databaseLabel})`, () => {
  let database: TestDatabase;
  let one: TestApp;
  let two: TestApp;
  beforeAll(async () => {
    database = await createTestDatabase();
    one = await startTestApp({ rateLimitPerMinute: 4, redisUrl, database });
    two = await startTestApp({ rateLimitPerMinute: 4, redisUrl, database });
  });
  afterAll(async () => {
    await one.close();
    await two.close();
    await database.close();
  });

  it('holds one budget per key across two instances of the app', async () => {
    const { key } = await createCaller(database.db, { scopes: ['read'], name: `Redis ${randomBytes(3).toString('hex')}` });
    await awayFromMinuteEnd();
    const statuses = [];
    for (const app of [one, two, one, two, one, two]) statuses.push((await app.request('GET', '/v1/me', { key })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
  });

  it('keeps its counts in Redis under keys that expire', async () => {
    const redis = new Redis(redisUrl);
    try {
      const keys = await redis.keys('teamos:rate:*');
      expect(keys.length).toBeGreaterThan(0);
      expect(await redis.pttl(keys[0]!)).toBeGreaterThan(0);
    } finally {
      redis.disconnect();
    }
  });
});

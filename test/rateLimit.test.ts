import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCaller, createKey } from './support/factories.js';
import { createTestDatabase, databaseLabel, type TestDatabase } from './support/database.js';
import { startTestApp, type ApiResponse, type TestApp } from './support/testApp.js';

const redisUrl = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';

/**
 * The apps' clock: it stands still a week before the real time, 43 s before a minute ends, so a burst
 * stays within one minute however slow the machine, and the seconds to the next minute are known.
 */
const frozenAt = new Date((Math.floor(Date.now() / 60_000) - 7 * 24 * 60) * 60_000 + 17_000);
const now = () => frozenAt;

describe(`the rate limit (${databaseLabel})`, () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ rateLimitPerMinute: 3, now });
  });
  afterAll(() => app.close());

  it('answers requests over the per-minute budget of a key with 429 rateLimited and Retry-After until the next minute', async () => {
    const { key } = await createCaller(app.db, { scopes: ['read'] });
    for (let i = 0; i < 3; i += 1) expect((await app.request('GET', '/v1/me', { key })).status).toBe(200);

    const limited = await app.request('GET', '/v1/me', { key });

    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rateLimited');
    expect(limited.headers.get('retry-after')).toBe('43');
  });

  it('shows the remaining budget in RateLimit headers on normal responses', async () => {
    const { key } = await createCaller(app.db, { scopes: ['read'] });
    const first = await app.request('GET', '/v1/orgs', { key });
    const second = await app.request('GET', '/v1/orgs', { key });
    expect(first.headers.get('ratelimit')).toMatch(/^limit=3, remaining=2, reset=\d+$/);
    expect(second.headers.get('ratelimit')).toMatch(/^limit=3, remaining=1, reset=\d+$/);
    expect(first.headers.get('ratelimit-policy')).toBe('3;w=60');
  });

  it('counts RateLimit reset to the next minute of the app clock, and on a 429 says the same seconds as Retry-After', async () => {
    const { key } = await createCaller(app.db, { scopes: ['read'] });
    const reset = (response: ApiResponse) => /reset=(\d+)$/.exec(response.headers.get('ratelimit') ?? '')?.[1];

    const answered = await app.request('GET', '/v1/me', { key });
    for (let i = 0; i < 2; i += 1) await app.request('GET', '/v1/me', { key });
    const limited = await app.request('GET', '/v1/me', { key });

    expect(answered.status).toBe(200);
    expect(reset(answered)).toBe('43');
    expect(limited.status).toBe(429);
    expect(reset(limited)).toBe(limited.headers.get('retry-after'));
    expect(limited.body.error.message).toBe(`Too many requests; try again in ${reset(limited)} seconds.`);
  });

  it('counts per key: another key of the same person has its own budget', async () => {
    const first = await createCaller(app.db, { scopes: ['read'] });
    const second = await createKey(app.db, first.user.id, { scopes: ['read'] });
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
    one = await startTestApp({ rateLimitPerMinute: 4, redisUrl, database, now });
    two = await startTestApp({ rateLimitPerMinute: 4, redisUrl, database, now });
  });
  afterAll(async () => {
    await one.close();
    await two.close();
    await database.close();
  });

  it('holds one budget per key across two instances of the app', async () => {
    const { key } = await createCaller(database.db, { scopes: ['read'], name: `Redis ${randomBytes(3).toString('hex')}` });
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

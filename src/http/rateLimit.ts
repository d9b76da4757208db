/**
 * RATE_LIMIT_PER_MINUTE requests per key per wall-clock minute, with express-rate-limit. The
 * budget is renewed when a minute begins (not a minute after the first request), so each hit
 * counts under a key naming the current minute. One instance keeps counts in memory; with
 * REDIS_URL every instance shares one count in Redis.
 */
import type { Request } from 'express';
import { MemoryStore, rateLimit, type IncrementResponse, type Options, type Store } from 'express-rate-limit';
import { Redis } from 'ioredis';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import { RateLimited } from '../errors.js';

const minuteMs = 60_000;

export const secondsUntilNextMinute = (now: number) => Math.max(1, Math.ceil((minuteMs - (now % minuteMs)) / 1000));

class MinuteAlignedStore implements Store {
  readonly localKeys: boolean;
  readonly prefix: string | undefined;

  constructor(private readonly inner: Store) {
    this.localKeys = inner.localKeys ?? false;
    this.prefix = inner.prefix;
  }

  private current(key: string, now: number) {
    return `${key}:${Math.floor(now / minuteMs)}`;
  }

  init(options: Options) {
    return this.inner.init?.(options);
  }

  async increment(key: string): Promise<IncrementResponse> {
    const now = Date.now();
    const { totalHits } = await this.inner.increment(this.current(key, now));
    return { totalHits, resetTime: new Date((Math.floor(now / minuteMs) + 1) * minuteMs) };
  }

  decrement(key: string) {
    return this.inner.decrement(this.current(key, Date.now()));
  }

  resetKey(key: string) {
    return this.inner.resetKey(this.current(key, Date.now()));
  }

  shutdown() {
    return this.inner.shutdown?.();
  }
}

export interface RateLimiter {
  middleware: ReturnType<typeof rateLimit>;
  close(): Promise<void>;
}

export function createRateLimiter(options: { perMinute: number; redisUrl: string | undefined }): RateLimiter {
  const redis = options.redisUrl ? new Redis(options.redisUrl, { lazyConnect: false, maxRetriesPerRequest: 2 }) : undefined;
  const inner: Store = redis
    ? new RedisStore({
        prefix: 'teamos:rate:',
        sendCommand: (command: string, ...args: string[]) => redis.call(command, ...args) as Promise<RedisReply>,
      })
    : new MemoryStore();
  const store = new MinuteAlignedStore(inner);
  const middleware = rateLimit({
    windowMs: minuteMs,
    limit: options.perMinute,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    store,
    keyGenerator: (req: Request) => req.caller!.keyId,
    handler: (_req, _res, next) => next(new RateLimited(secondsUntilNextMinute(Date.now()))),
  });
  return {
    middleware,
    close: async () => {
      await store.shutdown();
      if (redis) await redis.quit().catch(() => undefined);
    },
  };
}

/**
 * RATE_LIMIT_PER_MINUTE requests per key per wall-clock minute, with express-rate-limit. The
 * budget is renewed when a minute begins (not a minute after the first request), so each hit
 * counts under a key naming the current minute. One instance keeps counts in memory; with
 * REDIS_URL every instance shares one count in Redis.
 *
 * Redis failing fails open: while it cannot be reached (within about a second per request), requests
 * pass without a limit and one warning is logged; when Redis answers again counting resumes and that
 * is logged too. An outage of the shared counter must not take the API down with it.
 *
 * Counted (src/observability/metrics.ts): each request refused with 429, and each request let
 * through uncounted while Redis was away.
 */
import type { Request } from 'express';
import { MemoryStore, rateLimit, type IncrementResponse, type Options, type Store } from 'express-rate-limit';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import { RateLimited } from '../errors.js';
import type { Metrics } from '../observability/metrics.js';

const minuteMs = 60_000;

export const secondsUntilNextMinute = (now: number) => Math.max(1, Math.ceil((minuteMs - (now % minuteMs)) / 1000));

/** A failed count, already logged by the store when the outage began. */
class CountsUnavailable extends Error {}

class MinuteAlignedStore implements Store {
  readonly localKeys: boolean;
  readonly prefix: string | undefined;

  private unavailable = false;
  private options: Options | undefined;
  /** Set after a failure: the shared store loads its scripts again (a restarted Redis has none, a failed first load stays failed). */
  private reload = false;

  constructor(
    private readonly inner: Store,
    private readonly logger: Logger,
    private readonly clock: () => number,
    private readonly counts: Metrics['rateLimit'],
  ) {
    this.localKeys = inner.localKeys ?? false;
    this.prefix = inner.prefix;
  }

  private current(key: string, now: number) {
    return `${key}:${Math.floor(now / minuteMs)}`;
  }

  private failed(error: unknown) {
    this.reload = true;
    if (this.unavailable) return;
    this.unavailable = true;
    this.logger.warn({ err: error }, 'rate limit counts unavailable (Redis): requests pass without a limit until Redis answers');
  }

  init(options: Options) {
    this.options = options;
    const started = this.inner.init?.(options);
    return started instanceof Promise ? started.catch((error: unknown) => this.failed(error)) : started;
  }

  async increment(key: string): Promise<IncrementResponse> {
    const now = this.clock();
    let totalHits: number;
    try {
      if (this.reload && this.options) {
        await this.inner.init?.(this.options);
        this.reload = false;
      }
      ({ totalHits } = await this.inner.increment(this.current(key, now)));
    } catch (error) {
      this.failed(error);
      // express-rate-limit lets the request through (`passOnStoreError`).
      this.counts.failedOpen.inc();
      throw new CountsUnavailable('rate limit counts unavailable', { cause: error });
    }
    if (this.unavailable) {
      this.unavailable = false;
      this.logger.info('rate limit counts available again (Redis)');
    }
    // express-rate-limit turns resetTime into the seconds of RateLimit's `reset` and of Retry-After
    // against the real Date.now(), not the app's clock: the next minute of the app's clock is given as
    // that many whole seconds from the real now, so both say the same seconds, whatever the app's clock.
    return { totalHits, resetTime: new Date(Date.now() + secondsUntilNextMinute(now) * 1000) };
  }

  decrement(key: string) {
    return this.inner.decrement(this.current(key, this.clock()));
  }

  resetKey(key: string) {
    return this.inner.resetKey(this.current(key, this.clock()));
  }

  shutdown() {
    return this.inner.shutdown?.();
  }
}

export interface RateLimiter {
  middleware: ReturnType<typeof rateLimit>;
  close(): Promise<void>;
}

export function createRateLimiter(options: {
  perMinute: number;
  redisUrl: string | undefined;
  logger: Logger;
  now?: () => Date;
  counts: Metrics['rateLimit'];
}): RateLimiter {
  const clock = options.now ? () => options.now!().getTime() : Date.now;
  // Bounded waits: a refused or silent Redis costs a request at most about a second, never a hang.
  // Auto-pipelining sends the counts of the requests that arrive together in one write and reads
  // their answers in one: each count is still its own atomic script in Redis, so the limit stays
  // exact across instances, at about half the CPU a request (BENCH_ONLY=stages, Redis column).
  const redis = options.redisUrl
    ? new Redis(options.redisUrl, { lazyConnect: false, maxRetriesPerRequest: 1, connectTimeout: 1_000, commandTimeout: 1_000, enableAutoPipelining: true })
    : undefined;
  // Once the connection is lost, requests stop waiting for it until ioredis, which keeps reconnecting
  // on its own, is ready again; connection errors are reported through the counts' one warning.
  let disconnected = false;
  redis?.on('error', () => undefined);
  redis?.on('close', () => (disconnected = true));
  redis?.on('ready', () => (disconnected = false));
  const inner: Store = redis
    ? new RedisStore({
        prefix: 'teamos:rate:',
        sendCommand: (command: string, ...args: string[]) =>
          disconnected ? Promise.reject(new Error('Redis is not connected')) : (redis.call(command, ...args) as Promise<RedisReply>),
      })
    : new MemoryStore();
  const store = new MinuteAlignedStore(inner, options.logger, clock, options.counts);
  const middleware = rateLimit({
    windowMs: minuteMs,
    limit: options.perMinute,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    store,
    keyGenerator: (req: Request) => req.caller!.keyId,
    passOnStoreError: true,
    // Its checks guard against misconfigurations by IP address (proxies, shared stores); the key here
    // is the API key's id, and the checks' work (the client's IP among it) would be paid on every request.
    validate: false,
    // The store logs an outage once; express-rate-limit would log every request that passes.
    logger: {
      error: (error: unknown, message?: string) => {
        if (!(error instanceof CountsUnavailable)) options.logger.error({ err: error }, message ?? 'rate limit');
      },
      warn: (warning: unknown, message?: string) => options.logger.warn({ err: warning }, message ?? 'rate limit'),
    },
    // Retry-After is already set by express-rate-limit from the store's resetTime; the error repeats it.
    handler: (_req, res, next) => {
      options.counts.refused.inc();
      next(new RateLimited(Number(res.getHeader('Retry-After'))));
    },
  });
  return {
    middleware,
    close: async () => {
      await store.shutdown();
      if (redis) await redis.quit().catch(() => undefined);
    },
  };
}

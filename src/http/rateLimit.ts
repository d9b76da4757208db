/**
 * RATE_LIMIT_PER_MINUTE requests per key per wall-clock minute. The budget is renewed when a minute
 * begins (not a minute after the first request), so each hit counts under a key naming the current
 * minute. One instance keeps counts in express-rate-limit's memory store; with REDIS_URL every
 * instance shares one count in Redis (rate-limit-redis's store, an atomic script per count).
 *
 * The stores are the libraries'; the middleware around them is this module's four steps (count,
 * the `RateLimit` and `RateLimit-Policy` headers of IETF draft 7, refuse with 429 past the budget):
 * express-rate-limit's own, built for every option it offers, cost a request more than anything else
 * of ours (it awaits five times and reads the client's address for a debug line it does not print;
 * BENCH_ONLY=stages, docs/performance.md).
 *
 * Redis failing fails open: while it cannot be reached (within about a second per request), requests
 * pass without a limit and one warning is logged; when Redis answers again counting resumes and that
 * is logged too. An outage of the shared counter must not take the API down with it.
 *
 * Counted (src/observability/metrics.ts): each request refused with 429, and each request let
 * through uncounted while Redis was away.
 */
import type { RequestHandler } from 'express';
import { MemoryStore, type Options, type Store } from 'express-rate-limit';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import { RateLimited } from '../errors.js';
import type { Metrics } from '../observability/metrics.js';

const minuteMs = 60_000;

export const secondsUntilNextMinute = (now: number) => Math.max(1, Math.ceil((minuteMs - (now % minuteMs)) / 1000));

/**
 * A store's counts under keys naming the minute, and Redis's outages logged once (when they begin and
 * when they end) rather than on every request they let through.
 */
class MinuteCounts {
  private unavailable = false;
  private readonly options = { windowMs: minuteMs } as Options;
  /** Set after a failure: the shared store loads its scripts again (a restarted Redis has none, a failed first load stays failed). */
  private reload = false;

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
    private readonly counts: Metrics['rateLimit'],
  ) {
    const started = store.init?.(this.options);
    if (started instanceof Promise) started.catch((error: unknown) => this.failed(error));
  }

  private failed(error: unknown) {
    this.reload = true;
    if (this.unavailable) return;
    this.unavailable = true;
    this.logger.warn({ err: error }, 'rate limit counts unavailable (Redis): requests pass without a limit until Redis answers');
  }

  /** The requests of the key in the minute of `now`, this one counted; undefined while the counts are unavailable. */
  async count(key: string, now: number): Promise<number | undefined> {
    let totalHits: number;
    try {
      if (this.reload) {
        await this.store.init?.(this.options);
        this.reload = false;
      }
      ({ totalHits } = await this.store.increment(`${key}:${Math.floor(now / minuteMs)}`));
    } catch (error) {
      this.failed(error);
      this.counts.failedOpen.inc();
      return undefined;
    }
    if (this.unavailable) {
      this.unavailable = false;
      this.logger.info('rate limit counts available again (Redis)');
    }
    return totalHits;
  }

  shutdown() {
    return this.store.shutdown?.();
  }
}

export interface RateLimiter {
  middleware: RequestHandler;
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
  const store = new MinuteCounts(inner, options.logger, options.counts);
  const limit = options.perMinute;
  const policy = `${limit};w=${minuteMs / 1000}`;
  const middleware: RequestHandler = (req, res, next) => {
    const now = clock();
    store
      .count(req.caller!.keyId, now)
      .then((used) => {
        // Counts unavailable (Redis away): logged once and counted; the request passes without a limit.
        if (used === undefined) return next();
        // The seconds until the app's clock begins its next minute: RateLimit's `reset` and, on a 429, Retry-After.
        const reset = secondsUntilNextMinute(now);
        res.setHeader('RateLimit-Policy', policy);
        res.setHeader('RateLimit', `limit=${limit}, remaining=${Math.max(limit - used, 0)}, reset=${reset}`);
        if (used <= limit) return next();
        options.counts.refused.inc();
        next(new RateLimited(reset));
      })
      .catch(next);
  };
  return {
    middleware,
    close: async () => {
      await store.shutdown();
      if (redis) await redis.quit().catch(() => undefined);
    },
  };
}

/**
 * The delivery worker inside every server process. It fans the event log out into deliveries (one
 * process at a time, in log order: `fanOut`), then claims due deliveries and records an attempt of
 * each in one short statement (`FOR UPDATE SKIP LOCKED` with a lease, so several processes on one
 * PostgreSQL never take the same one), sends each outside any transaction, and records the attempt's
 * outcome and what follows from it (src/rules/webhookDelivery.ts).
 *
 * The lease is short and renewed while the deliveries are sent: every third of it, one statement
 * extends the leases of all this worker's deliveries in flight. A live worker keeps a delivery
 * however long its endpoint takes to answer; a process killed mid-delivery loses it within one lease,
 * and the attempt it had recorded shows in the delivery log as of unknown outcome.
 *
 * It polls the log every `pollMs` (a change pays nothing to wake it: NOTIFY would add a lock at
 * every commit) and wakes on PostgreSQL's NOTIFY for a ping or a redelivery. A change of its own
 * process wakes its fan-out after the change's commit (`eventsWritten`, at most one pass every
 * `fanOutGapMs`): the pass's notification wakes the live streams of every process, so an event
 * reaches them within that gap rather than a poll. It also purges the log
 * past its retention in small batches. Signatures follow Standard Webhooks, made by the
 * `standardwebhooks` package.
 */
import { AsyncResource } from 'node:async_hooks';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { Webhook } from 'standardwebhooks';
import type { SecretBox } from '../auth/secrets.js';
import type { Database } from '../db/database.js';
import { claimDue, deliveriesChannel, fanOut, purgeEvents, recordAttempt, releaseClaims, renewLeases, type ClaimedDelivery } from '../db/queries/webhooks.js';
import { loggableError } from '../logger.js';
import type { Tracing } from '../observability/tracing.js';
import { afterAttempt, defaultEventRetentionDays, resultOfStatus, type AttemptResult } from '../rules/webhookDelivery.js';
import { deliveryBody } from '../events/outbox.js';
import { guardedLookup, isPublicAddress, TargetRefused } from './targets.js';

export const deliveryTimeoutMs = 15_000;
/**
 * How long a claim holds a delivery unless renewed (WEBHOOKS_LEASE_MS): how long a killed process's
 * deliveries wait for another. Renewed every third of it, so a renewal may fail or come late and the
 * lease still holds.
 */
export const defaultLeaseMs = 10_000;
const responseBodyBytes = 1024;
const purgeEveryMs = 10 * 60 * 1000;
const purgeBatch = 500;
/**
 * The batch where the database runs in this thread (PGlite): one of 500 held the thread (and every
 * request with it) up to 160 ms, one of 100 about 10 ms (p99), and 250,000 events took no longer.
 */
const inThreadPurgeBatch = 100;
const fanOutBatch = 500;
/**
 * The shortest time between fan-out passes that changes of this process ask for: what it adds to an
 * event's way to the live streams, and what bounds the passes, whatever the rate of changes.
 */
export const fanOutGapMs = 50;

/**
 * The retention's purge as the worker runs it: events older than `before`, in batches of `purgeBatch`
 * statements of their own, oldest first, until none is left or `stopped()`; how many it deleted.
 * Between two batches it lets the process's waiting I/O in (with the next batch sent in the same turn
 * of the event loop, a purge on PGlite kept every request waiting for all of its 22 s).
 *
 * `inThread`: the database runs its statements in this thread (PGlite), so a batch holds every request
 * of the process while it runs. The batches are then smaller (`inThreadPurgeBatch`), and after each
 * the purge waits twice as long as the batch took (a third of the thread at most), long enough for a
 * request's several turns of the event loop to fit between two batches. Sent at the next turn, a
 * change waited for a batch at each of its turns (its p99 3.6 × as long during a purge); after a pause
 * as long as the batch, still up to 2.4 ×. On PostgreSQL a batch leaves the thread free, and a pause
 * would only make the purge longer.
 */
export async function purgeExpiredEvents(
  db: Kysely<Database>,
  before: Date,
  { stopped = () => false, inThread = false }: { stopped?: () => boolean; inThread?: boolean } = {},
): Promise<number> {
  const batch = inThread ? inThreadPurgeBatch : purgeBatch;
  let purged = 0;
  for (;;) {
    const started = performance.now();
    const deleted = await purgeEvents(db, before, batch);
    purged += deleted;
    if (deleted < batch || stopped()) return purged;
    if (inThread) await new Promise((next) => setTimeout(next, 2 * (performance.now() - started)));
    else await new Promise((next) => setImmediate(next));
  }
}

export interface WorkerOptions {
  db: Kysely<Database>;
  secrets: SecretBox;
  logger: Logger;
  /** The clock deliveries are scheduled by (tests move it across the retry schedule). */
  now: () => Date;
  allowPrivateTargets: boolean;
  listen?: (channel: string, onNotify: () => void) => Promise<() => Promise<void>>;
  /** How often to look for due deliveries without a notification. */
  pollMs?: number;
  /** Deliveries in flight at once. */
  concurrency?: number;
  /** How long a claim holds a delivery unless renewed (`defaultLeaseMs` unless given); renewed every third of it while the delivery is sent. */
  leaseMs?: number | undefined;
  /** How long the log keeps an event (EVENTS_RETENTION_DAYS; 30 days unless given). */
  retentionDays?: number | undefined;
  /** The database runs its statements in this thread (PGlite): the purge pauses between its batches (`purgeExpiredEvents`). */
  databaseInThread?: boolean;
  /** Told of each attempt once recorded, with the state it left its delivery in (the metrics count attempts by outcome). */
  onAttempt?: (state: ReturnType<typeof afterAttempt>['state']) => void;
  /** Sends each attempt in a span of its own when tracing is on. */
  tracing?: Pick<Tracing, 'delivery'> | undefined;
}

export interface DeliveryWorker {
  /** Looks for due deliveries now (after a change, or when a test moved the clock). */
  wake(): void;
  /** A change of this process committed its events: they are fanned out (and the live streams woken) soon, not at the next poll. */
  eventsWritten(): void;
  close(): Promise<void>;
}

interface Sent {
  statusCode: number | null;
  retryAfter?: string;
  error: string | null;
  responseBody: string | null;
}

/** The first KB of an answer as text, not cut inside a character. */
function firstKilobyte(bytes: Buffer): string {
  const text = bytes.subarray(0, responseBodyBytes).toString('utf8');
  return bytes.length > responseBodyBytes ? text.replace(/\uFFFD$/, '') : text;
}

function describe(error: unknown): string {
  if (error instanceof TargetRefused) return error.message;
  const code = (error as { code?: string }).code;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found';
  if (code === 'ECONNRESET') return 'connection reset';
  if (code === 'CERT_HAS_EXPIRED' || code?.startsWith('ERR_TLS') || code?.includes('CERT')) return `TLS error (${code})`;
  return code ? `network error (${code})` : 'network error';
}

/** One POST of the signed body; redirects are answers like any other (never followed). */
export function post(url: URL, headers: Record<string, string>, body: string, allowPrivate: boolean): Promise<Sent> {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  // A literal address is connected to without a lookup, so it is judged here.
  if (!allowPrivate && isIP(host) && !isPublicAddress(host)) {
    return Promise.resolve({ statusCode: null, error: `target refused: ${host} is not a public address`, responseBody: null });
  }
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const request = send(url, { method: 'POST', headers, lookup: guardedLookup(allowPrivate), timeout: deliveryTimeoutMs });
    const timer = setTimeout(() => request.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })), deliveryTimeoutMs);
    let settled = false;
    const finish = (sent: Sent) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(sent);
    };
    request.on('timeout', () => request.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    request.on('error', (error) => {
      const timedOut = (error as { code?: string }).code === 'TIMEOUT';
      finish({ statusCode: null, error: timedOut ? `timeout after ${deliveryTimeoutMs / 1000} s` : describe(error), responseBody: null });
    });
    request.on('response', (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let length = 0;
      const done = () => {
        const statusCode = response.statusCode ?? null;
        const redirect = statusCode !== null && statusCode >= 300 && statusCode < 400;
        const retryAfter = response.headers['retry-after'];
        finish({
          statusCode,
          ...(retryAfter === undefined ? {} : { retryAfter }),
          error: redirect ? 'redirect not followed' : null,
          responseBody: firstKilobyte(Buffer.concat(chunks)),
        });
        request.destroy();
      };
      response.on('data', (chunk: Buffer) => {
        if (length <= responseBodyBytes) chunks.push(chunk);
        length += chunk.length;
        if (length > responseBodyBytes) done();
      });
      response.on('end', done);
      response.on('error', done);
    });
    request.end(body);
  });
}

export function startDeliveryWorker(options: WorkerOptions): DeliveryWorker {
  const { db, secrets, logger, now, allowPrivateTargets, tracing } = options;
  const pollMs = options.pollMs ?? 250;
  const concurrency = options.concurrency ?? 32;
  const leaseMs = options.leaseMs ?? defaultLeaseMs;
  const inFlight = new Set<Promise<void>>();
  /** The lease tokens of the deliveries being sent, renewed together. */
  const sending = new Set<string>();
  let closed = false;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  let timerDueAt = Infinity;
  /** A change committed events that no pass has looked for yet, or a pass found another process fanning out. */
  let fanOutPending = false;
  let lastFanOutAt = -Infinity;
  const untilNextPass = () => Math.max(0, lastFanOutAt + fanOutGapMs - performance.now());
  let stopListening: (() => Promise<void>) | undefined;

  const signatures = (delivery: ClaimedDelivery, body: string, at: Date): string => {
    const keys = [delivery.secret];
    if (delivery.previous_secret && delivery.previous_secret_expires_at && delivery.previous_secret_expires_at > now()) keys.push(delivery.previous_secret);
    return keys.map((sealed) => new Webhook(secrets.open(sealed)).sign(delivery.event_id, at, body)).join(' ');
  };

  const deliver = async (delivery: ClaimedDelivery): Promise<void> => {
    // Receivers check the signature's time against their own clock: it is always the real time.
    const signedAt = new Date();
    const body = deliveryBody(delivery.event_id, delivery.event);
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'TeamOS-Webhooks/1',
      'webhook-id': delivery.event_id,
      'webhook-timestamp': String(Math.floor(signedAt.getTime() / 1000)),
      'webhook-signature': signatures(delivery, body, signedAt),
    };
    const url = new URL(delivery.url);
    const send = (traceparent: string | null) => post(url, traceparent === null ? headers : { ...headers, traceparent }, body, allowPrivateTargets);
    const started = performance.now();
    const sent = tracing
      ? await tracing.delivery({ traceparent: delivery.traceparent, url, eventId: delivery.event_id, deliveryId: delivery.id, attempt: delivery.attempt_count + 1 }, send)
      : await send(delivery.traceparent);
    const latencyMs = Math.round(performance.now() - started);
    const answeredAt = now();
    const result: AttemptResult =
      sent.statusCode === null ? { kind: 'failed' } : resultOfStatus(sent.statusCode, sent.retryAfter, answeredAt);
    const next = afterAttempt(delivery.attempt_count + 1, result, delivery.failing_since, answeredAt);
    await recordAttempt(db, {
      deliveryId: delivery.id,
      leaseToken: delivery.lease_token,
      subscriptionId: delivery.subscription_id,
      statusCode: sent.statusCode,
      latencyMs,
      error: sent.error,
      responseBody: sent.responseBody,
      state: next.state,
      nextAttemptAt: next.nextAttemptAt,
      failingSince: next.failingSince,
      disableReason: next.disableReason,
    });
    options.onAttempt?.(next.state);
  };

  // In the worker's own context even when a request schedules it (`eventsWritten`): what the pass runs
  // is not that request's work (its trace, when tracing).
  const tickInOwnContext = AsyncResource.bind(() => void tick());
  const schedule = (ms: number) => {
    if (closed) return;
    clearTimeout(timer);
    timerDueAt = performance.now() + ms;
    timer = setTimeout(() => {
      timerDueAt = Infinity;
      tickInOwnContext();
    }, ms);
    timer.unref();
  };

  /** The claim running now: `close` waits for it, so nothing is sent after the worker stopped. */
  let claiming: Promise<void> | undefined;

  async function claim(): Promise<void> {
    fanOutPending = false;
    lastFanOutAt = performance.now();
    try {
      for (;;) {
        const passed = await fanOut(db, now(), fanOutBatch);
        // What the other process's pass began too early to see must not wait for a poll.
        if (passed === undefined) fanOutPending = true;
        if (closed || passed !== fanOutBatch) break;
      }
    } catch (error) {
      if (!closed) logger.warn({ err: loggableError(error) }, 'could not fan webhook events out');
    }
    try {
      do {
        again = false;
        const room = concurrency - inFlight.size;
        if (room <= 0) break;
        const claimed = await claimDue(db, { now: now(), leaseMs, limit: room });
        if (closed) {
          if (claimed.length > 0) await releaseClaims(db, claimed.map((delivery) => delivery.lease_token));
          break;
        }
        for (const delivery of claimed) {
          sending.add(delivery.lease_token);
          const running: Promise<void> = deliver(delivery)
            .catch((error: unknown) => logger.warn({ err: loggableError(error) }, 'could not record a webhook delivery'))
            .finally(() => {
              sending.delete(delivery.lease_token);
              inFlight.delete(running);
              schedule(0);
            });
          inFlight.add(running);
        }
        if (claimed.length === room) again = true;
      } while (again && !closed);
    } catch (error) {
      if (!closed) logger.warn({ err: loggableError(error) }, 'could not claim webhook deliveries');
    }
  }

  async function tick(): Promise<void> {
    if (closed) return;
    if (claiming) {
      again = true;
      return;
    }
    claiming = claim();
    await claiming;
    claiming = undefined;
    schedule(fanOutPending ? untilNextPass() : pollMs);
  }

  /** The renewal running now: one at a time, and `close` waits for it. */
  let renewing: Promise<void> | undefined;
  const renew = setInterval(() => {
    if (renewing || sending.size === 0) return;
    renewing = renewLeases(db, [...sending], new Date(now().getTime() + leaseMs))
      .catch((error: unknown) => logger.warn({ err: loggableError(error) }, 'could not renew the leases of webhook deliveries'))
      .finally(() => (renewing = undefined));
  }, leaseMs / 3);
  renew.unref();

  const purgeOld = async () => {
    const before = new Date(now().getTime() - (options.retentionDays ?? defaultEventRetentionDays) * 24 * 60 * 60 * 1000);
    await purgeExpiredEvents(db, before, { stopped: () => closed, inThread: options.databaseInThread ?? false });
  };
  const purge = setInterval(() => {
    purgeOld().catch((error: unknown) => logger.warn({ err: loggableError(error) }, 'could not purge old events'));
  }, purgeEveryMs);
  purge.unref();

  // Bound to the worker's own context: PGlite calls a listener inside the statement that notified, and
  // the claims it starts would otherwise count as statements of that request (its trace, when tracing).
  void options
    .listen?.(deliveriesChannel, AsyncResource.bind(() => void tick()))
    .then((stop) => {
      if (closed) return void stop();
      stopListening = stop;
    })
    .catch((error: unknown) => logger.warn({ err: loggableError(error) }, 'could not listen for webhook deliveries; polling only'));
  schedule(0);

  return {
    wake: () => void tick(),
    eventsWritten: () => {
      if (closed || fanOutPending) return;
      fanOutPending = true;
      // While a pass runs, the tick that ends it schedules the next; a sooner timer (a delivery done) is kept.
      const wait = untilNextPass();
      if (!claiming && performance.now() + wait < timerDueAt) schedule(wait);
    },
    close: async () => {
      closed = true;
      clearTimeout(timer);
      clearInterval(purge);
      await stopListening?.();
      await claiming;
      await Promise.allSettled([...inFlight]);
      clearInterval(renew);
      await renewing;
    },
  };
}

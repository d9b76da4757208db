/**
 * The process's Prometheus metrics (prom-client), one registry per app so that several apps can run
 * in one process (the tests). Each mechanism counts in its own place, with the counters it is given
 * here: the request metrics in `requestMetrics`, statements in the database's error hook
 * (src/db/connect.ts), the rate limit in its store, idempotency and If-Match where they decide, the
 * webhook worker after each attempt. What a scrape reads from elsewhere (the pool, the delivery
 * backlog) is read when it is scraped.
 *
 * Every label has a bounded set of values: operation ids of the contract (or `unknown`), methods,
 * status classes, SQLSTATE classes, outcomes. Never a path, an id, a key or an email.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export interface Metrics {
  registry: Registry;
  http: {
    /** Every answered request, by the contract's operation id (`unknown` outside the contract), method and status class. */
    requests: Histogram<'operation_id' | 'method' | 'status_class'>;
  };
  database: {
    statementErrors: Counter<'sqlstate_class'>;
  };
  rateLimit: {
    /** Requests refused with 429. */
    refused: Counter;
    /** Requests let through uncounted because the shared counts (Redis) could not be reached. */
    failedOpen: Counter;
  };
  idempotency: {
    replays: Counter;
    /** 409 `idempotencyKeyInUse`: another request with the key was still running. */
    keyInUse: Counter;
  };
  conditional: {
    /** 412: an If-Match condition that did not hold. */
    preconditionFailed: Counter;
  };
  webhooks: {
    attempts: Counter<'outcome'>;
  };
  live: {
    /** Event streams open now (`GET /events/stream`). */
    streams: Gauge;
    /** Events sent on streams. */
    eventsSent: Counter;
    /** Streams the server ended: `slow` (the reader fell more than the bound behind), `revoked` (its key or all its access gone). */
    dropped: Counter<'reason'>;
  };
}

/** OpenTelemetry's advice for `http.server.request.duration`, in seconds. */
const durationBuckets = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/** `processMetrics` false leaves out Node's own metrics (counters that no one scrapes, for a router alone). */
export function createMetrics(options: { processMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  // Event-loop lag, heap, GC, CPU, file descriptors, under their conventional names (nodejs_*, process_*).
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    http: {
      requests: new Histogram({
        name: 'http_server_request_duration_seconds',
        help: 'Duration of answered HTTP requests of the API, from their arrival to the end of their answer',
        labelNames: ['operation_id', 'method', 'status_class'],
        buckets: durationBuckets,
        registers,
      }),
    },
    database: {
      statementErrors: new Counter({
        name: 'db_statement_errors_total',
        help: 'Database statements that failed, by SQLSTATE class (its first two characters; "none" for an error without one: a connection refused or lost, a pool timeout)',
        labelNames: ['sqlstate_class'],
        registers,
      }),
    },
    rateLimit: {
      refused: new Counter({ name: 'rate_limit_refused_total', help: 'Requests refused with 429 by the rate limit', registers }),
      failedOpen: new Counter({
        name: 'rate_limit_unavailable_total',
        help: 'Requests let through without a limit because the shared counts (Redis) could not be reached (fail-open)',
        registers,
      }),
    },
    idempotency: {
      replays: new Counter({ name: 'idempotency_replays_total', help: 'Changes answered with the stored outcome of an earlier request with the same Idempotency-Key', registers }),
      keyInUse: new Counter({ name: 'idempotency_key_in_use_total', help: 'Changes refused with 409 because a request with the same Idempotency-Key was still running', registers }),
    },
    conditional: {
      preconditionFailed: new Counter({ name: 'if_match_precondition_failed_total', help: 'Changes refused with 412 because their If-Match condition did not hold', registers }),
    },
    webhooks: {
      attempts: new Counter({
        name: 'webhook_delivery_attempts_total',
        help: 'Webhook delivery attempts recorded, by outcome: delivered, retrying (failed, tried again later) or failed (given up, or the subscription disabled)',
        labelNames: ['outcome'],
        registers,
      }),
    },
    live: {
      streams: new Gauge({ name: 'live_streams', help: 'Event streams (GET /events/stream) open on this process', registers }),
      eventsSent: new Counter({ name: 'live_events_sent_total', help: 'Events sent on event streams, one per event and stream', registers }),
      dropped: new Counter({
        name: 'live_streams_dropped_total',
        help: 'Event streams the server ended, by reason: slow (more than the bound waited to be sent to its reader) or revoked (its key, or all its access, gone)',
        labelNames: ['reason'],
        registers,
      }),
    },
  };
}

export const statusClassOf = (status: number): string => `${Math.floor(status / 100)}xx`;

const sqlState = /^[0-9A-Z]{5}$/;

/** Counts a failed statement by its SQLSTATE class. */
export function countStatementError(metrics: Metrics, error: unknown): void {
  const code = (error as { code?: unknown } | undefined)?.code;
  metrics.database.statementErrors.inc({ sqlstate_class: typeof code === 'string' && sqlState.test(code) ? code.slice(0, 2) : 'none' });
}

const attemptOutcomes = { DELIVERED: 'delivered', PENDING: 'retrying', FAILED: 'failed' } as const;

/** Counts a recorded delivery attempt by the state it left its delivery in. */
export function countAttempt(metrics: Metrics, state: keyof typeof attemptOutcomes): void {
  metrics.webhooks.attempts.inc({ outcome: attemptOutcomes[state] });
}

export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

/** The pool's connections, read at each scrape (PostgreSQL only: PGlite is one connection inside the process, without a pool). */
export function observePool(metrics: Metrics, stats: () => PoolStats): void {
  const gauge = (name: string, help: string, read: (stats: PoolStats) => number) =>
    new Gauge({
      name,
      help,
      registers: [metrics.registry],
      collect() {
        this.set(read(stats()));
      },
    });
  gauge('db_pool_connections', 'Connections the pool holds open to PostgreSQL, idle or lent', (s) => s.total);
  gauge('db_pool_idle_connections', 'Connections of the pool not lent to anyone', (s) => s.idle);
  gauge('db_pool_waiting_requests', 'Requests for a connection waiting because every connection is lent', (s) => s.waiting);
}

export interface Backlog {
  /** Deliveries due now. */
  due: number;
  /** When the oldest of them came due; null when none is due. */
  oldestDueAt: Date | null;
}

/**
 * The webhook backlog, read at each scrape with one indexed query. When it cannot be read (the
 * database is away), the two series are left out of that scrape rather than repeating old values.
 */
export function observeWebhookBacklog(metrics: Metrics, backlog: () => Promise<Backlog>, now: () => Date): void {
  // A scrape collects every metric at once: both gauges share the query the first one starts.
  let reading: Promise<Backlog | undefined> | undefined;
  const read = () =>
    (reading ??= backlog()
      .catch(() => undefined)
      .finally(() => (reading = undefined)));
  new Gauge({
    name: 'webhook_deliveries_due',
    help: 'Webhook deliveries due now, to active subscriptions',
    registers: [metrics.registry],
    async collect() {
      const value = await read();
      if (value) this.set(value.due);
      else this.reset();
    },
  });
  new Gauge({
    name: 'webhook_oldest_due_delivery_age_seconds',
    help: 'How long the oldest due webhook delivery has been due (0 when none is)',
    registers: [metrics.registry],
    async collect() {
      const value = await read();
      if (value) this.set(value.oldestDueAt ? Math.max(0, (now().getTime() - value.oldestDueAt.getTime()) / 1000) : 0);
      else this.reset();
    },
  });
}

/**
 * How far the event log's readers (the feed and the webhooks' fan-out) are behind, read at each
 * scrape: the age, by the app's clock, of the first committed event still above the log's horizon
 * (src/db/queries/events.ts, `logHorizon`), 0 when none is. In seconds rather than in transactions:
 * a count of transaction ids grows with the write rate, so no one threshold would fit a quiet and a
 * busy hour, while the seconds are the delay an integration sees. Left out of a scrape when it cannot be read.
 */
export function observeEventLogLag(metrics: Metrics, firstHeldAt: () => Promise<Date | null>, now: () => Date): void {
  new Gauge({
    name: 'event_log_horizon_lag_seconds',
    help: 'How long the first committed event not yet readable by the event feed and the webhooks has waited for the log horizon (an open transaction of the database holds it back); 0 when none waits',
    registers: [metrics.registry],
    async collect() {
      const at = await firstHeldAt().catch(() => undefined);
      if (at === undefined) this.reset();
      else this.set(at ? Math.max(0, (now().getTime() - at.getTime()) / 1000) : 0);
    },
  });
}

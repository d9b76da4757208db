/**
 * The Express application: security headers, request id, trace context, log line and metrics (and
 * the request's span when tracing is on) → CORS (a preflight answered at once) → the operation found in
 * the contract's route table (a public one answered at once) → authentication → rate limit → 404/405
 * or media type and body (64 KB) → scope → validation → typed handler → response, with one error
 * handler for every error. The body is read only for a routed, authenticated request. The probes
 * (/healthz, /readyz) sit outside /v1.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import express from 'express';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { authenticate } from './auth/authenticate.js';
import { startCallerCache, type CallerCache } from './auth/callerCache.js';
import type { SecretBox } from './auth/secrets.js';
import type { Config } from './config.js';
import type { Database } from './db/database.js';
import type { Listen } from './db/listen.js';
import { purgeOutcomes } from './db/queries/idempotency.js';
import { firstHeldEventAt } from './db/queries/events.js';
import { dueBacklog } from './db/queries/webhooks.js';
import { NotFound } from './errors.js';
import { handlers } from './handlers/index.js';
import type { HandlerMap, PublicOperationId } from './handlers/types.js';
import { crossOrigin } from './http/cors.js';
import { errorHandler } from './http/errorHandler.js';
import { idempotencyKeyLifetimeMs } from './http/idempotency.js';
import { createRateLimiter } from './http/rateLimit.js';
import { forV1, inTurn } from './http/inTurn.js';
import { requestId } from './http/requestId.js';
import { requestLog } from './http/requestLog.js';
import { securityHeaders } from './http/securityHeaders.js';
import { loggableError } from './logger.js';
import { loadContract, operationRoutes } from './http/router.js';
import { countAttempt, createMetrics, observeEventLogLag, observeWebhookBacklog, type Metrics } from './observability/metrics.js';
import { probes, type Probes } from './observability/probes.js';
import { requestMetrics } from './observability/requestMetrics.js';
import { whenAnswered } from './observability/answered.js';
import { traceContext } from './observability/traceContext.js';
import type { Tracing } from './observability/tracing.js';
import { startDeliveryWorker, type DeliveryWorker, type WorkerOptions } from './webhooks/worker.js';
import { startExportWorker, type ExportWorker, type ExportWorkerOptions } from './exports/worker.js';
import { startLiveStreams, type LiveOptions, type LiveStreams } from './live/streams.js';
import { startKnownLogEnd, type KnownLogEnd, type KnownLogEndOptions } from './events/knownLogEnd.js';
import { logPositions } from './events/positions.js';

export const contractDocument = JSON.parse(
  readFileSync(resolve(import.meta.dirname, '../generated/openapi.json'), 'utf8'),
) as object;

const purgeEveryMs = 10 * 60 * 1000;

const publicOperations: readonly PublicOperationId[] = ['getOpenApiDocument', 'getApiDocs', 'getChangelog'];

export interface App {
  app: express.Express;
  /** The webhook delivery worker, when this app runs one. */
  worker: DeliveryWorker | undefined;
  /** The export worker, when this app runs one. */
  exportWorker: ExportWorker | undefined;
  /** What /metrics shows (served on a listener of its own: src/observability/metricsServer.ts). */
  metrics: Metrics;
  /** The callers kept in memory (src/auth/callerCache.ts), when the cache is on. */
  callers: CallerCache | undefined;
  /** The live event streams: `close()` ends them with a `retry:` (the server does so before it stops accepting). */
  live: LiveStreams;
  /** The log's end this instance knows (src/events/knownLogEnd.ts): what reads state, and how far the feeds read at least. */
  knownLogEnd: Pick<KnownLogEnd, 'at'>;
  /** The probes: `stop()` turns /readyz to 503 when the process is asked to stop. */
  probes: Pick<Probes, 'stop' | 'readinessAsked'>;
  close(): Promise<void>;
}

export async function createApp(options: {
  db: Kysely<Database>;
  /** CORS origins: none unless given. */
  config: Pick<Config, 'rateLimitPerMinute' | 'redisUrl'> & Partial<Pick<Config, 'corsOrigins'>>;
  logger: Logger;
  /** Seals the secrets handlers store (AI provider keys). */
  secrets: SecretBox;
  /** Replaces some handlers (tests use it to reach the 500 path). */
  handlers?: Partial<HandlerMap>;
  /** The clock handlers and the rate limit's minutes read "now" from; the real time unless given (tests move it across time windows). */
  now?: () => Date;
  /** Where the app counts; a registry of its own unless given (the server gives the one its database also counts in). */
  metrics?: Metrics;
  /** Webhooks: whether they may target non-public addresses, and the delivery worker's settings when it runs in this app. */
  webhooks?: {
    allowPrivateTargets: boolean;
    deliver?: Pick<WorkerOptions, 'listen' | 'pollMs' | 'concurrency' | 'leaseMs' | 'retentionDays' | 'databaseInThread'>;
  };
  /**
   * OpenTelemetry tracing (src/observability/tracing.ts), when on: spans of the API's requests and of
   * webhook deliveries (the database the app is given reports its statements to it). Closed with the app.
   */
  tracing?: Tracing | undefined;
  /**
   * Callers kept in memory, forgotten by the database's notifications (src/auth/callerCache.ts):
   * `subscribe` is the database's (`OpenDatabase.subscribe`). Every request reads its caller from the
   * database unless given (AUTH_CACHE=off).
   */
  callerCache?: { subscribe: Listen; ttlMs?: number; maxEntries?: number; silenceMs?: number } | undefined;
  /**
   * The live event streams (src/live/streams.ts): `subscribe` is the database's notifications, which
   * wake them and tell them of changed callers; without it every stream decides its access before
   * each read that brings events. Tests give smaller limits.
   */
  live?: Pick<LiveOptions, 'subscribe' | 'maxPerKey' | 'bufferBytes' | 'pollMs' | 'keepAliveMs'>;
  /**
   * The log's end an organization's read states (`Log-Position`, src/events/knownLogEnd.ts): `subscribe`
   * is the database's notifications, which tell when the log grew; it is also read every `refreshMs`.
   */
  logPositions?: Pick<KnownLogEndOptions, 'subscribe' | 'refreshMs'>;
  /**
   * The export worker's settings (src/exports/worker.ts), when it runs in this app: it claims the
   * organizations' exports and writes their archives.
   */
  exports?: Pick<ExportWorkerOptions, 'pollMs' | 'leaseMs' | 'databaseInThread' | 'batchSize' | 'afterChunk'>;
  /** The bundled contract the app routes and validates by; generated/openapi.json unless given (tests mark operations deprecated). */
  contract?: object;
}): Promise<App> {
  const { db, config, logger, secrets } = options;
  const now = options.now ?? (() => new Date());
  const metrics = options.metrics ?? createMetrics();
  const contract = await loadContract(options.contract ?? contractDocument);
  const rateLimiter = createRateLimiter({ perMinute: config.rateLimitPerMinute, redisUrl: config.redisUrl, logger, now: options.now, counts: metrics.rateLimit });
  const allowPrivateWebhookTargets = options.webhooks?.allowPrivateTargets ?? false;
  const live = await startLiveStreams({ db, logger, metrics, now, positions: logPositions(secrets), ...options.live });
  const knownLogEnd = await startKnownLogEnd({ db, logger, ...options.logPositions });
  // Called only once the app serves requests, when `worker` below is set.
  const eventsWritten = () => worker?.eventsWritten();
  const routes = { contract, handlers: { ...handlers, ...options.handlers } as HandlerMap, db, logger, secrets, now: options.now, allowPrivateWebhookTargets, metrics, live, eventsWritten, knownLogEnd };
  const probe = probes(db);
  const callers = options.callerCache ? await startCallerCache({ ...options.callerCache, logger }) : undefined;
  observeWebhookBacklog(metrics, () => dueBacklog(db, now()), now);
  observeEventLogLag(metrics, () => firstHeldEventAt(db, knownLogEnd.at()), now);

  const app = express();
  app.set('etag', false);
  const operations = operationRoutes(routes, publicOperations);
  // One Express layer for every request, /v1 or not: Express's dispatch of a layer (and a mount's
  // taking its path off and putting it back) costs more than most of these steps themselves
  // (BENCH_ONLY=stages). First what every request gets and none can refuse; then the request's span
  // when tracing is on (off, an untraced request pays nothing for it); then CORS, before
  // authentication, since a preflight carries no key and must neither be refused nor counted (with no
  // origin listed CORS adds nothing, and is left out); then /v1's operations.
  const stamps = [securityHeaders, requestId, traceContext, whenAnswered([requestLog(logger), requestMetrics(metrics)])];
  app.use(
    inTurn(
      (req, res, next) => {
        for (const stamp of stamps) stamp(req, res);
        next();
      },
      ...(options.tracing ? [forV1(options.tracing.requests)] : []),
      ...(config.corsOrigins?.length ? [crossOrigin(config.corsOrigins)] : []),
      forV1(inTurn(operations.public, authenticate(db, logger, { now, callers }), rateLimiter.middleware, operations.authenticated)),
    ),
  );
  // After /v1, whose requests never reach them: the API's requests do not pay for matching them.
  app.get('/healthz', probe.liveness);
  app.get('/readyz', probe.readiness);

  app.use((_req, _res, next) => next(new NotFound()));
  app.use(errorHandler(logger));

  // Outcomes older than 24 hours are never replayed; deleting them only keeps the table small.
  const purge = setInterval(() => {
    purgeOutcomes(db, new Date(now().getTime() - idempotencyKeyLifetimeMs)).catch((error: unknown) =>
      logger.warn({ err: loggableError(error) }, 'could not purge old idempotency keys'),
    );
  }, purgeEveryMs);
  purge.unref();

  const deliver = options.webhooks?.deliver;
  const worker = deliver
    ? startDeliveryWorker({
        db,
        secrets,
        logger,
        now,
        allowPrivateTargets: allowPrivateWebhookTargets,
        onAttempt: (state) => countAttempt(metrics, state),
        tracing: options.tracing,
        ...deliver,
      })
    : undefined;

  const exportWorker = options.exports ? startExportWorker({ db, logger, now, ...options.exports }) : undefined;

  return {
    app,
    worker,
    exportWorker,
    metrics,
    callers,
    live,
    knownLogEnd,
    probes: probe,
    close: async () => {
      clearInterval(purge);
      await live.close();
      await knownLogEnd.close();
      await callers?.stop();
      await worker?.close();
      await exportWorker?.close();
      await rateLimiter.close();
      // Last: the spans of what closing ran are sent too.
      await options.tracing?.close();
    },
  };
}

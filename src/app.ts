/**
 * The Express application: security headers, request id and log line → CORS (a preflight answered
 * at once) → the operation found in the contract's route table (a public one answered at once) →
 * authentication → rate limit → 404/405 or media type and body (64 KB) → scope → validation → typed
 * handler → response, with one error handler for every error. The body is read only for a routed,
 * authenticated request.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import express from 'express';
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import { authenticate } from './auth/authenticate.js';
import type { SecretBox } from './auth/secrets.js';
import type { Config } from './config.js';
import type { Database } from './db/database.js';
import { purgeOutcomes } from './db/queries/idempotency.js';
import { NotFound } from './errors.js';
import { handlers } from './handlers/index.js';
import type { HandlerMap, PublicOperationId } from './handlers/types.js';
import { crossOrigin } from './http/cors.js';
import { errorHandler } from './http/errorHandler.js';
import { idempotencyKeyLifetimeMs } from './http/idempotency.js';
import { createRateLimiter } from './http/rateLimit.js';
import { requestId } from './http/requestId.js';
import { requestLog } from './http/requestLog.js';
import { securityHeaders } from './http/securityHeaders.js';
import { loggableError } from './logger.js';
import { loadContract, operationRoutes } from './http/router.js';
import { startDeliveryWorker, type DeliveryWorker, type WorkerOptions } from './webhooks/worker.js';

export const contractDocument = JSON.parse(
  readFileSync(resolve(import.meta.dirname, '../generated/openapi.json'), 'utf8'),
) as object;

const purgeEveryMs = 10 * 60 * 1000;

const publicOperations: readonly PublicOperationId[] = ['getOpenApiDocument', 'getApiDocs'];

export interface App {
  app: express.Express;
  /** The webhook delivery worker, when this app runs one. */
  worker: DeliveryWorker | undefined;
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
  /** Webhooks: whether they may target non-public addresses, and the delivery worker's settings when it runs in this app. */
  webhooks?: {
    allowPrivateTargets: boolean;
    deliver?: Pick<WorkerOptions, 'listen' | 'pollMs' | 'concurrency' | 'leaseMs' | 'retentionDays'>;
  };
}): Promise<App> {
  const { db, config, logger, secrets } = options;
  const contract = await loadContract(contractDocument);
  const rateLimiter = createRateLimiter({ perMinute: config.rateLimitPerMinute, redisUrl: config.redisUrl, logger, now: options.now });
  const allowPrivateWebhookTargets = options.webhooks?.allowPrivateTargets ?? false;
  const routes = { contract, handlers: { ...handlers, ...options.handlers } as HandlerMap, db, logger, secrets, now: options.now, allowPrivateWebhookTargets };

  const app = express();
  app.set('etag', false);
  app.use(securityHeaders());
  app.use(requestId);
  app.use(requestLog(logger));
  // Before /v1: a preflight carries no key, and must neither be refused by authentication nor counted.
  app.use(crossOrigin(config.corsOrigins ?? []));

  const operations = operationRoutes(routes, publicOperations);
  const v1 = express.Router();
  v1.use(operations.public);
  v1.use(authenticate(db, logger));
  v1.use(rateLimiter.middleware);
  v1.use(operations.authenticated);
  app.use('/v1', v1);
  // After /v1, whose requests never reach it: the API's requests do not pay for matching it.
  app.get('/healthz', async (_req, res) => {
    try {
      await sql`select 1`.execute(db);
      res.json({ status: 'ok' });
    } catch {
      res.status(503).json({ status: 'unavailable' });
    }
  });

  app.use((_req, _res, next) => next(new NotFound()));
  app.use(errorHandler(logger));

  // Outcomes older than 24 hours are never replayed; deleting them only keeps the table small.
  const now = options.now ?? (() => new Date());
  const purge = setInterval(() => {
    purgeOutcomes(db, new Date(now().getTime() - idempotencyKeyLifetimeMs)).catch((error: unknown) =>
      logger.warn({ err: loggableError(error) }, 'could not purge old idempotency keys'),
    );
  }, purgeEveryMs);
  purge.unref();

  const deliver = options.webhooks?.deliver;
  const worker = deliver ? startDeliveryWorker({ db, secrets, logger, now, allowPrivateTargets: allowPrivateWebhookTargets, ...deliver }) : undefined;

  return {
    app,
    worker,
    close: async () => {
      clearInterval(purge);
      await worker?.close();
      await rateLimiter.close();
    },
  };
}

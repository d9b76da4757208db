/**
 * `npm start`: opens the database (PostgreSQL with DATABASE_URL, else the embedded PGlite in
 * DATA_DIR), migrates it to the newest schema, serves the API (and with METRICS_PORT the Prometheus
 * metrics on a listener of their own), and stops gracefully:
 *
 * on SIGTERM, /readyz answers 503 at once; while anyone has asked /readyz since the start (a load
 * balancer or an orchestrator), the server goes on serving for SHUTDOWN_DRAIN_MS so that the balancer
 * notices and stops sending; then it ends the live event streams with a `retry:` (their clients
 * reconnect elsewhere and resume), stops accepting, finishes the requests in flight, closes the
 * database and releases its lock. SIGINT (Ctrl-C) and a second signal skip the drain.
 */
import type { Server } from 'node:http';
import { createApp } from './app.js';
import { createSecretBox, loadSecretsKey, SecretsKeyError } from './auth/secrets.js';
import { readConfig } from './config.js';
import { DataDirectoryLocked, openDatabase } from './db/connect.js';
import { migrateToLatest } from './db/migrate.js';
import { createHttpServer } from './http/httpServer.js';
import { createLogger } from './logger.js';
import { countStatementError, createMetrics, observePool } from './observability/metrics.js';
import { instanceId } from './observability/instance.js';
import { startMetricsServer } from './observability/metricsServer.js';
import { startTracing } from './observability/tracing.js';

const config = readConfig();
const logger = createLogger(config.logLevel);

const closeServer = (server: Server) =>
  new Promise<void>((closed) => {
    server.close(() => closed());
    server.closeIdleConnections();
  });

async function main() {
  const metrics = createMetrics();
  // Before the database: its statements are reported to the tracing (whose SDK is loaded only when on).
  const tracing = config.otlpTracesUrl === undefined ? undefined : await startTracing({ url: config.otlpTracesUrl }, logger);
  const database = await openDatabase(config, { onError: (error) => countStatementError(metrics, error), onStatement: tracing?.statement });
  if (database.poolStats) observePool(metrics, database.poolStats);
  // After opening: the embedded database's lock also guards the creation of its key file.
  const secrets = createSecretBox(await loadSecretsKey(config));
  const applied = await migrateToLatest(database.db);
  if (applied.length > 0) logger.info({ migrations: applied }, 'database migrated');

  const { app, probes, live, close } = await createApp({
    db: database.db,
    config,
    logger,
    secrets,
    metrics,
    tracing,
    callerCache: config.authCache ? { subscribe: database.subscribe } : undefined,
    live: { subscribe: database.subscribe },
    logPositions: { subscribe: database.subscribe },
    webhooks: { allowPrivateTargets: config.webhooksAllowPrivateTargets, deliver: {
        listen: database.listen,
        leaseMs: config.webhooksLeaseMs,
        retentionDays: config.eventsRetentionDays,
        databaseInThread: database.kind === 'pglite',
      },
    },
    exports: { leaseMs: config.exportsLeaseMs, databaseInThread: database.kind === 'pglite' },
  });
  const server: Server = createHttpServer(app).listen(config.port, config.host);
  await new Promise<void>((listening, failed) => {
    server.once('listening', listening);
    server.once('error', failed);
  });
  const metricsServer = config.metricsPort === undefined ? undefined : await startMetricsServer(metrics.registry, config.metricsPort, config.host);
  const base = `http://${config.host}:${config.port}`;
  logger.info(
    {
      // Beside pino's hostname and pid: the id a live stream's opening names (src/observability/instance.ts).
      instance: instanceId,
      database: database.kind === 'postgres' ? 'PostgreSQL (DATABASE_URL)' : `PGlite in ${config.dataDir}`,
      ...(metricsServer ? { metrics: `http://${config.host}:${config.metricsPort}/metrics` } : {}),
      ...(tracing ? { tracing: config.otlpTracesUrl } : {}),
    },
    `Team OS API on ${base}/v1 — docs ${base}/v1/docs`,
  );

  let stopping = false;
  let endDrain: (() => void) | undefined;
  const stop = async (signal: string) => {
    if (stopping) return endDrain?.();
    stopping = true;
    probes.stop();
    const drainMs = signal === 'SIGTERM' && probes.readinessAsked ? config.shutdownDrainMs : 0;
    logger.info({ signal, drainMs }, drainMs > 0 ? '/readyz answers 503; serving until the balancer notices, then stopping' : 'stopping: finishing requests in flight');
    if (drainMs > 0) {
      await new Promise<void>((drained) => {
        const timer = setTimeout(drained, drainMs);
        endDrain = () => {
          clearTimeout(timer);
          drained();
        };
      });
      logger.info('stopping: finishing requests in flight');
    }
    // Streams never finish by themselves: ended with a short `retry:`, their clients reconnect to another instance.
    await live.close();
    await closeServer(server);
    await close();
    await database.close();
    // Last: the final scrapes see the stop.
    if (metricsServer) await closeServer(metricsServer);
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((error: unknown) => {
  if (error instanceof DataDirectoryLocked || error instanceof SecretsKeyError) {
    logger.fatal(error.message);
  } else {
    logger.fatal({ err: error }, 'could not start');
  }
  process.exit(1);
});

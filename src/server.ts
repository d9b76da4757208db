/**
 * `npm start`: opens the database (PostgreSQL with DATABASE_URL, else the embedded PGlite in
 * DATA_DIR), migrates it to the newest schema, serves the API, and on SIGTERM/SIGINT stops
 * accepting, finishes the requests in flight, closes the database and releases its lock.
 */
import type { Server } from 'node:http';
import { createApp } from './app.js';
import { createSecretBox, loadSecretsKey, SecretsKeyError } from './auth/secrets.js';
import { readConfig } from './config.js';
import { DataDirectoryLocked, openDatabase } from './db/connect.js';
import { migrateToLatest } from './db/migrate.js';
import { createHttpServer } from './http/httpServer.js';
import { createLogger } from './logger.js';

const config = readConfig();
const logger = createLogger(config.logLevel);

async function main() {
  const database = await openDatabase(config);
  // After opening: the embedded database's lock also guards the creation of its key file.
  const secrets = createSecretBox(await loadSecretsKey(config));
  const applied = await migrateToLatest(database.db);
  if (applied.length > 0) logger.info({ migrations: applied }, 'database migrated');

  const { app, close } = await createApp({
    db: database.db,
    config,
    logger,
    secrets,
    webhooks: { allowPrivateTargets: config.webhooksAllowPrivateTargets, deliver: { listen: database.listen, leaseMs: config.webhooksLeaseMs, retentionDays: config.eventsRetentionDays } },
  });
  const server: Server = createHttpServer(app).listen(config.port, config.host);
  await new Promise<void>((listening, failed) => {
    server.once('listening', listening);
    server.once('error', failed);
  });
  const base = `http://${config.host}:${config.port}`;
  logger.info(
    { database: database.kind === 'postgres' ? 'PostgreSQL (DATABASE_URL)' : `PGlite in ${config.dataDir}` },
    `Team OS API on ${base}/v1 — docs ${base}/v1/docs`,
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping: finishing requests in flight');
    await new Promise<void>((closed) => {
      server.close(() => closed());
      server.closeIdleConnections();
    });
    await close();
    await database.close();
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

/**
 * Opens the database: PostgreSQL through a `pg` pool when a URL is given, else the embedded
 * PGlite in a data directory that one process at a time may hold (two processes on one PGlite
 * directory silently lose writes, so a second one is refused).
 */
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { createHash } from 'node:crypto';
import { Kysely, PostgresDialect, type LogEvent, type PostgresPool, type PostgresPoolClient } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pg from 'pg';
import lockfile from 'proper-lockfile';
import type { Database } from './database.js';
import { ownChannelsStatement, postgresNotifications, type Listen, type PostgresNotifications } from './listen.js';

const DATE_OID = 1082;
// Days stay the `YYYY-MM-DD` text PostgreSQL sends, never a Date shifted by a time zone.
const keepText = (value: string) => value;

export interface DatabaseOptions {
  /** Told of every statement the database runs (`begin` and `commit` included): the round-trip budget test counts them. */
  onQuery?: (sql: string) => void;
  /** Told of every statement that failed, with its error (the metrics count them by SQLSTATE class). */
  onError?: (error: unknown) => void;
  /** Told of every statement once it ran or failed, with its text, duration and error (tracing makes a span of it: src/observability/tracing.ts). */
  onStatement?: (event: LogEvent) => void;
}

/** Kysely's `log`, the one place every statement passes (`begin` and `commit` included); none without a hook, so that nothing is timed for no one. */
export const statementLog = (options: DatabaseOptions): { log?: (event: LogEvent) => void } => {
  const { onQuery, onError, onStatement } = options;
  if (!onQuery && !onError && !onStatement) return {};
  return {
    log: (event: LogEvent) => {
      onQuery?.(event.query.sql);
      if (event.level === 'error') onError?.(event.error);
      onStatement?.(event);
    },
  };
};

export interface OpenDatabase {
  db: Kysely<Database>;
  kind: 'postgres' | 'pglite';
  /** The pool's connections now (PostgreSQL; PGlite is one connection inside the process, without a pool). */
  poolStats?: () => { total: number; idle: number; waiting: number };
  /** Calls `onNotify` on every NOTIFY on `channel`, from any process of the database; resolves to a stop function. */
  listen(channel: string, onNotify: () => void): Promise<() => Promise<void>>;
  /** `listen` with each notification's payload, and told when notifications may have been missed (src/db/listen.ts). */
  subscribe: Listen;
  close(): Promise<void>;
}

export class DataDirectoryLocked extends Error {
  constructor(dataDir: string) {
    super(
      `The data directory ${dataDir} is in use by another process (a running server or admin command). ` +
        'Stop it first, or point DATA_DIR at another directory.',
    );
  }
}

const preparable = /^\s*(select|insert|update|delete|with)\b/i;
const statementNames = new Map<string, string>();

function statementName(text: string): string {
  let name = statementNames.get(text);
  if (!name) {
    name = `teamos_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    statementNames.set(text, name);
  }
  return name;
}

/**
 * Runs Kysely's queries as named prepared statements, so PostgreSQL parses and plans each query
 * shape once per connection instead of on every request (planning cost more than executing our
 * indexed lookups). Query shapes are fixed by the code, so the set of statements stays small. The
 * connections plan them generically (`plan_cache_mode`, set in `openPostgres`).
 */
function preparingPool(pool: pg.Pool, notifications: PostgresNotifications): PostgresPool {
  // One wrapper per connection, made when it is first lent: Kysely keeps its own connection object
  // per client it is given, so a new wrapper on every loan would cost a new one of each per query.
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  // The channels each connection listens to for this process's own changes (src/db/listen.ts).
  const listening = new WeakMap<pg.PoolClient, readonly string[]>();
  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    const query = (textOrCursor: unknown, parameters?: readonly unknown[]): unknown =>
      typeof textOrCursor === 'string' && preparable.test(textOrCursor)
        ? client.query({ name: statementName(textOrCursor), text: textOrCursor, values: parameters as unknown[] })
        : client.query(textOrCursor as never, parameters as never);
    return { query: query as PostgresPoolClient['query'], release: () => client.release() };
  };
  return {
    connect: async () => {
      const client = await pool.connect();
      const channels = notifications.ownChannels();
      if (channels.length > 0 && listening.get(client) !== channels) {
        try {
          await client.query(ownChannelsStatement(channels));
        } catch (error) {
          client.release(error as Error);
          throw error;
        }
        listening.set(client, channels);
      }
      let wrapper = wrappers.get(client);
      if (!wrapper) {
        wrapper = wrap(client);
        wrappers.set(client, wrapper);
      }
      return wrapper;
    },
    end: () => pool.end(),
  };
}

/**
 * Deliberate limits, so that an outage or a stuck statement gives a request a quick 500 instead of a
 * hang: at most 5 s to get a connection (a free one from the pool or a new one), at most 30 s per
 * statement, and a transaction left idle for 60 s is ended by the server.
 */
export const postgresLimits = { connectionTimeoutMs: 5_000, statementTimeoutMs: 30_000, idleInTransactionTimeoutMs: 60_000 };

/** `statementTimeoutMs` 0 lifts the statement limit (the bench's bulk seeding). */
export async function openPostgres(databaseUrl: string, options: DatabaseOptions & { statementTimeoutMs?: number } = {}): Promise<OpenDatabase> {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    connectionTimeoutMillis: postgresLimits.connectionTimeoutMs,
    statement_timeout: options.statementTimeoutMs ?? postgresLimits.statementTimeoutMs,
    idle_in_transaction_session_timeout: postgresLimits.idleInTransactionTimeoutMs,
    keepAlive: true,
    // A prepared statement is otherwise planned anew on each of its executions while PostgreSQL
    // estimates its generic plan dearer, which it did for every list page (a page size it cannot
    // see): about 0.2 ms of planning per page, measured 185 µs of PostgreSQL's CPU per task page.
    // Every statement of ours reads by key or keyset through an index, so the generic plan is the
    // custom one without its planning (the bench explains the deep task page's generic plan).
    options: '-c plan_cache_mode=force_generic_plan',
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === DATE_OID ? keepText : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client whose connection the server ended is dropped by the pool; without a listener the
  // error event would end the process.
  pool.on('error', () => undefined);
  // A connection lost while a request holds it (between two statements of a transaction) is reported
  // to that request by its next statement; unheard, the client's error event would end the process.
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
    client.on('notification', (message) => notifications.deliverOwn(message.channel, message.payload ?? ''));
  });
  const notifications = postgresNotifications(databaseUrl, {
    connectionTimeoutMs: postgresLimits.connectionTimeoutMs,
    // Straight through the pool, not Kysely: a heartbeat is no statement of the app's (not logged, counted or traced).
    notify: (channel) => pool.query('select pg_notify($1, null)', [channel]),
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: preparingPool(pool, notifications) }), ...statementLog(options) });
  return {
    db,
    kind: 'postgres',
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    listen: (channel, onNotify) => notifications.listen(channel, () => onNotify()),
    subscribe: notifications.listen,
    close: async () => {
      await notifications.close();
      await db.destroy();
    },
  };
}

/**
 * `dataDir` `memory://` opens a throwaway in-memory database (tests), which needs no lock.
 * `loadDataDir` starts a new database from a dump (`dumpDataDir`) instead of an empty cluster.
 */
export async function openPglite(dataDir: string, options: DatabaseOptions & { loadDataDir?: Blob } = {}): Promise<OpenDatabase> {
  const inMemory = dataDir === 'memory://';
  let release: (() => Promise<void>) | undefined;
  if (!inMemory) {
    const directory = resolve(dataDir);
    await mkdir(directory, { recursive: true });
    try {
      release = await lockfile.lock(directory, { lockfilePath: `${directory}/.teamos.lock`, stale: 15_000, update: 5_000 });
    } catch (error) {
      if ((error as { code?: string }).code === 'ELOCKED') throw new DataDirectoryLocked(directory);
      throw error;
    }
  }
  try {
    // Options go in one object: PGlite.create(undefined, options) ignores the options.
    const parsers = { [DATE_OID]: keepText };
    const pglite = await PGlite.create({ ...(inMemory ? {} : { dataDir: resolve(dataDir) }), parsers, loadDataDir: options.loadDataDir });
    const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite), ...statementLog(options) });
    // One process, no connection to lose; PGlite tells its listeners as the notifying statement or
    // COMMIT ends, so this process's own changes are told at commit whatever `ownChanges` says.
    const subscribe: Listen = async (channel, onNotify, events = {}) => {
      const unsubscribe = await pglite.listen(channel, (payload) => onNotify(payload));
      events.listening?.(false);
      return async () => {
        if (!pglite.closed) await unsubscribe();
      };
    };
    return {
      db,
      kind: 'pglite',
      listen: (channel, onNotify) => subscribe(channel, () => onNotify()),
      subscribe,
      close: async () => {
        await db.destroy();
        if (!pglite.closed) await pglite.close();
        await release?.();
      },
    };
  } catch (error) {
    await release?.();
    throw error;
  }
}

export function openDatabase(options: { databaseUrl?: string | undefined; dataDir: string }, hooks: DatabaseOptions = {}): Promise<OpenDatabase> {
  return options.databaseUrl ? openPostgres(options.databaseUrl, hooks) : openPglite(options.dataDir, hooks);
}

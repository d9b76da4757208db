/**
 * Opens the database: PostgreSQL through a `pg` pool when a URL is given, else the embedded
 * PGlite in a data directory that one process at a time may hold (two processes on one PGlite
 * directory silently lose writes, so a second one is refused).
 */
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pg from 'pg';
import lockfile from 'proper-lockfile';
import type { Database } from './database.js';

const DATE_OID = 1082;
// Days stay the `YYYY-MM-DD` text PostgreSQL sends, never a Date shifted by a time zone.
const keepText = (value: string) => value;

export interface OpenDatabase {
  db: Kysely<Database>;
  kind: 'postgres' | 'pglite';
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

export async function openPostgres(databaseUrl: string): Promise<OpenDatabase> {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === DATE_OID ? keepText : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, kind: 'postgres', close: () => db.destroy() };
}

/** `dataDir` `memory://` opens a throwaway in-memory database (tests), which needs no lock. */
export async function openPglite(dataDir: string): Promise<OpenDatabase> {
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
    const pglite = await PGlite.create(inMemory ? undefined : resolve(dataDir), { parsers: { [DATE_OID]: keepText } });
    const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
    return {
      db,
      kind: 'pglite',
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

export function openDatabase(options: { databaseUrl?: string | undefined; dataDir: string }): Promise<OpenDatabase> {
  return options.databaseUrl ? openPostgres(options.databaseUrl) : openPglite(options.dataDir);
}

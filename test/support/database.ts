/**
 * A real database for one test file: an in-memory PGlite by default, or, when TEST_DATABASE_URL is
 * set, a fresh PostgreSQL database created for the file and dropped afterwards. Migrated to the
 * newest schema, as the server would on start: a copy of the database the run migrated once
 * (test/support/databaseTemplate.ts).
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { inject } from 'vitest';
import { openPglite, openPostgres, type DatabaseOptions, type OpenDatabase } from '../../src/db/connect.js';
import type { Database } from '../../src/db/database.js';

export interface TestDatabase extends OpenDatabase {
  /** The URL of the PostgreSQL database, for child processes; undefined on PGlite. */
  url: string | undefined;
}

export const postgresUrl = process.env.TEST_DATABASE_URL || undefined;
export const databaseLabel = postgresUrl ? 'PostgreSQL' : 'PGlite';

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * A new PostgreSQL database, empty or a copy of `template`; returns its name, its URL and a function
 * that drops it.
 */
export async function createPostgresDatabase(prefix = 'teamos_test', template?: string): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await admin((client) => client.query(`create database ${name}${template ? ` template ${template}` : ''}`));
  const url = new URL(postgresUrl!);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: () => admin((client) => client.query(`drop database if exists ${name} with (force)`)).then(() => undefined),
  };
}

export async function createTestDatabase(options: DatabaseOptions = {}): Promise<TestDatabase> {
  if (!postgresUrl) {
    const template = await readFile(inject('pgliteTemplate')!);
    const database = await openPglite('memory://', { ...options, loadDataDir: new Blob([template]) });
    return { ...database, url: undefined };
  }
  const created = await createPostgresDatabase('teamos_test', inject('postgresTemplate'));
  const database = await openPostgres(created.url, options);
  return {
    ...database,
    url: created.url,
    close: async () => {
      await database.close();
      await created.drop();
    },
  };
}

/**
 * Empties every table but the migrations' own: a file that needs an empty database again (each of
 * the fuzzer's operations, each seeding of the demo data) reuses its own instead of making another.
 * Rows are deleted with foreign-key triggers off (replica role, this transaction only): much faster
 * than TRUNCATE on PostgreSQL, which recreates every table's files.
 */
export async function emptyDatabase(db: Kysely<Database>): Promise<void> {
  const { rows } = await sql<{ name: string }>`
    select table_name as name from information_schema.tables
    where table_schema = current_schema() and table_type = 'BASE TABLE' and table_name not like 'kysely_%'`.execute(db);
  await db.transaction().execute(async (trx) => {
    await sql`set local session_replication_role = replica`.execute(trx);
    for (const { name } of rows) await sql.raw(`delete from "${name}"`).execute(trx);
  });
}

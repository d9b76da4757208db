/**
 * A real database for one test file: an in-memory PGlite by default, or, when TEST_DATABASE_URL is
 * set, a fresh PostgreSQL database created for the file and dropped afterwards. Migrated to the
 * newest schema, as the server would on start.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openPglite, openPostgres, type DatabaseOptions, type OpenDatabase } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';

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

/** A new empty PostgreSQL database; returns its URL and a function that drops it. */
export async function createPostgresDatabase(prefix = 'teamos_test'): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await admin((client) => client.query(`create database ${name}`));
  const url = new URL(postgresUrl!);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => admin((client) => client.query(`drop database if exists ${name} with (force)`)).then(() => undefined),
  };
}

export async function createTestDatabase(options: DatabaseOptions = {}): Promise<TestDatabase> {
  if (!postgresUrl) {
    const database = await openPglite('memory://', options);
    await migrateToLatest(database.db);
    return { ...database, url: undefined };
  }
  const created = await createPostgresDatabase();
  const database = await openPostgres(created.url, options);
  await migrateToLatest(database.db);
  return {
    ...database,
    url: created.url,
    close: async () => {
      await database.close();
      await created.drop();
    },
  };
}

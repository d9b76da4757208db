/**
 * A real database for one test file: an in-memory PGlite by default, or, when TEST_DATABASE_URL is
 * set, a fresh PostgreSQL database created for the file and dropped afterwards. Migrated to the
 * newest schema, as the server would on start: a copy of the database the run migrated once
 * (test/support/databaseTemplate.ts).
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { inject } from 'vitest';
import { openPglite, openPostgres, type DatabaseOptions, type OpenDatabase } from '../../src/db/connect.js';

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

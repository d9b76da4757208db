/**
 * Vitest's global setup: the migrated schema every test file's database starts from, made once
 * instead of once per file (test/support/database.ts copies it).
 *
 * On PGlite, a new in-memory database spent about 6 s of CPU creating its cluster and 0.5 s migrating;
 * one loaded from a dump of a migrated one costs about 1 s. The dump is kept in node_modules/.cache,
 * named by a hash of the migrations and PGlite's version, so a run after a change of either makes it
 * anew (migrations import nothing from the app, so their files are all they depend on). On
 * PostgreSQL, each file's database is `create database … template` a database migrated once per run
 * (about 0.1 s against 2.5 s for running the migrations), dropped when the run ends.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import type { TestProject } from 'vitest/node';
import { openPostgres } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createPostgresDatabase, postgresUrl } from './database.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** PGlite: the path of a dump (tar) of a migrated data directory. */
    pgliteTemplate: string | undefined;
    /** PostgreSQL: the name of a migrated database to copy. */
    postgresTemplate: string | undefined;
  }
}

const root = resolve(import.meta.dirname, '../..');

function pgliteTemplatePath(): string {
  const hash = createHash('sha256');
  const migrations = join(root, 'src/db/migrations');
  for (const file of readdirSync(migrations).sort()) hash.update(file).update(readFileSync(join(migrations, file)));
  hash.update(readFileSync(join(root, 'src/db/migrate.ts')));
  hash.update(JSON.parse(readFileSync(join(root, 'node_modules/@electric-sql/pglite/package.json'), 'utf8')).version);
  return join(root, 'node_modules/.cache/teamos-test', `pglite-${hash.digest('hex').slice(0, 16)}.tar`);
}

async function makePgliteTemplate(path: string): Promise<void> {
  const pglite = await PGlite.create();
  try {
    const db = new Kysely<any>({ dialect: new PGliteDialect(pglite) });
    await migrateToLatest(db);
    const dump = await pglite.dumpDataDir('none');
    await mkdir(resolve(path, '..'), { recursive: true });
    // Written aside, then renamed: a run started meanwhile reads a whole dump or makes its own.
    const partial = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
    await writeFile(partial, Buffer.from(await dump.arrayBuffer()));
    await rename(partial, path);
  } finally {
    await pglite.close();
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if (!postgresUrl) {
    const path = pgliteTemplatePath();
    if (!existsSync(path)) await makePgliteTemplate(path);
    project.provide('pgliteTemplate', path);
    project.provide('postgresTemplate', undefined);
    return undefined;
  }
  const template = await createPostgresDatabase('teamos_template');
  const database = await openPostgres(template.url);
  try {
    await migrateToLatest(database.db);
  } finally {
    // A database is copied only while nobody is connected to it.
    await database.close();
  }
  project.provide('pgliteTemplate', undefined);
  project.provide('postgresTemplate', template.name);
  return template.drop;
}

/** Runs the migrations in src/db/migrations up to the newest; called on every start. */
import { type Kysely, type Migration, type MigrationProvider, Migrator } from 'kysely';
import * as initial from './migrations/0001_initial.js';
import * as canonicalTimeZones from './migrations/0002_canonical_time_zones.js';
import * as idempotencyKeys from './migrations/0003_idempotency_keys.js';
import * as webhooks from './migrations/0004_webhooks.js';
import * as eventLog from './migrations/0005_event_log.js';

// Listed here rather than read from the file system so the set is fixed at build time.
export const migrations: Record<string, Migration> = {
  '0001_initial': initial,
  '0002_canonical_time_zones': canonicalTimeZones,
  '0003_idempotency_keys': idempotencyKeys,
  '0004_webhooks': webhooks,
  '0005_event_log': eventLog,
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName);
}

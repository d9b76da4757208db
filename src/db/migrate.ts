/** Runs the migrations in src/db/migrations up to the newest; called on every start. */
import { DEFAULT_MIGRATION_TABLE, type Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely';
import * as initial from './migrations/0001_initial.js';
import * as canonicalTimeZones from './migrations/0002_canonical_time_zones.js';
import * as idempotencyKeys from './migrations/0003_idempotency_keys.js';
import * as webhooks from './migrations/0004_webhooks.js';
import * as eventLog from './migrations/0005_event_log.js';
import * as eventTrace from './migrations/0006_event_trace.js';
import * as callerNotifications from './migrations/0007_caller_notifications.js';
import * as eventText from './migrations/0008_event_text.js';
import * as callerKeyId from './migrations/0009_caller_key_id.js';
import * as teamMemberNotifications from './migrations/0010_team_member_notifications.js';
import * as eventSize from './migrations/0011_event_size.js';
import * as revisions from './migrations/0012_revisions.js';
import * as eventLogPurges from './migrations/0013_event_log_purges.js';
import * as memberRevisions from './migrations/0014_member_revisions.js';
import * as orgExports from './migrations/0015_org_exports.js';
import * as referenceRevisions from './migrations/0016_reference_revisions.js';

// Listed here rather than read from the file system so the set is fixed at build time.
export const migrations: Record<string, Migration> = {
  '0001_initial': initial,
  '0002_canonical_time_zones': canonicalTimeZones,
  '0003_idempotency_keys': idempotencyKeys,
  '0004_webhooks': webhooks,
  '0005_event_log': eventLog,
  '0006_event_trace': eventTrace,
  '0007_caller_notifications': callerNotifications,
  '0008_event_text': eventText,
  '0009_caller_key_id': callerKeyId,
  '0010_team_member_notifications': teamMemberNotifications,
  '0011_event_size': eventSize,
  '0012_revisions': revisions,
  '0013_event_log_purges': eventLogPurges,
  '0014_member_revisions': memberRevisions,
  '0015_org_exports': orgExports,
  '0016_reference_revisions': referenceRevisions,
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName);
}

/**
 * The migrations of this build that the database has not applied, in one statement on the
 * migrator's own table (the readiness probe: an instance serves only a complete schema). Fails while
 * the database does not answer, or before the first migration made the table.
 */
export async function pendingMigrations(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select name from ${sql.table(DEFAULT_MIGRATION_TABLE)}`.execute(db);
  const applied = new Set(rows.map((row) => row.name));
  return Object.keys(migrations).filter((name) => !applied.has(name));
}

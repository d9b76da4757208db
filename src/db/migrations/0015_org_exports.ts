/**
 * 0015_org_exports: an organization's export as a job, and its archive.
 *
 * - `org_exports`: one row per job. `state` QUEUED → RUNNING → COMPLETED or FAILED (with `failure`).
 *   A worker claims it with a lease (`lease_until`, `lease_token`) as webhook deliveries are claimed,
 *   and records where it is (`position`: the kind of record and the last key written, `chunk_count`,
 *   `records_done`) in the same transaction as each chunk, guarded by its token: a claim that takes a
 *   dead worker's job over resumes there, and every record is written once.
 * - At most one QUEUED or RUNNING job per organization (a partial unique index): a second start
 *   answers with the first.
 * - `org_export_chunks`: the archive in the database, so any instance serves it and it survives an
 *   instance's death; each chunk a gzip member of one batch of NDJSON lines of one kind, at most a
 *   few hundred KB. Deleted with their job, which is purged when its archive expires.
 *
 * Frozen in time: imports nothing from the application, only `kysely`.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table org_exports (
      id text primary key default gen_random_uuid()::text,
      org_id text not null references organizations (id) on delete cascade,
      state text not null default 'QUEUED' check (state in ('QUEUED', 'RUNNING', 'COMPLETED', 'FAILED')),
      failure text,
      records_done integer not null default 0,
      records_total integer,
      position jsonb,
      chunk_count integer not null default 0,
      archive_bytes bigint not null default 0,
      attempts integer not null default 0,
      lease_until timestamptz(3),
      lease_token text,
      created_at timestamptz(3) not null default now(),
      completed_at timestamptz(3),
      expires_at timestamptz(3)
    )`.execute(db);
  await sql`create unique index org_exports_one_active_idx on org_exports (org_id) where state in ('QUEUED', 'RUNNING')`.execute(db);
  await sql`create index org_exports_org_id_created_at_idx on org_exports (org_id, created_at)`.execute(db);
  await sql`create index org_exports_claimable_idx on org_exports (created_at) where state in ('QUEUED', 'RUNNING')`.execute(db);
  await sql`create index org_exports_expires_at_idx on org_exports (expires_at) where expires_at is not null`.execute(db);
  await sql`
    create table org_export_chunks (
      export_id text not null references org_exports (id) on delete cascade,
      seq integer not null,
      kind text not null,
      records integer not null,
      data bytea not null,
      primary key (export_id, seq)
    )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table org_export_chunks`.execute(db);
  await sql`drop table org_exports`.execute(db);
}

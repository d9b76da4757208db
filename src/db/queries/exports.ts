/**
 * Queries of an organization's export (0014_org_exports): the job (started once per organization at a
 * time, claimed with a lease as webhook deliveries are, its position recorded with each chunk), the
 * records of each kind read in keyset batches, and the archive's chunks read back for the download.
 */
import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { Database, OrgExportPosition, OrgExportRow } from '../database.js';
import { inTransaction } from '../transaction.js';
import { insertEvents, type NewEvent } from './events.js';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * One kind of record the archive holds, as one NDJSON file: the rows of `table` (alias `t`) that the
 * organization holds (`where`, with `${org}` its id), read in the order of `key` (columns of `t`,
 * unique together), without the columns `omit` names (secrets, and the database's own bookkeeping).
 */
export interface ExportKind {
  name: string;
  table: string;
  join?: string;
  where: (org: string) => RawBuilder<unknown>;
  key: readonly string[];
  omit?: readonly string[];
}

const inTeams = (org: string) => sql`t.team_id in (select id from teams where org_id = ${org})`;
const inMeetings = (org: string) => sql`t.meeting_id in (select m.id from meetings m join teams x on x.id = m.team_id where x.org_id = ${org})`;

/**
 * Every kind, parents before children, so that a reader rebuilding the organization in this order
 * finds every record a row names already made. Users are the organization's members (no password,
 * no platform role); webhook subscriptions come without their signing secrets.
 */
export const exportKinds: readonly ExportKind[] = [
  { name: 'organization', table: 'organizations', where: (org) => sql`t.id = ${org}`, key: ['id'] },
  {
    name: 'users',
    table: 'users',
    where: (org) => sql`t.id in (select user_id from organization_members where org_id = ${org})`,
    key: ['id'],
    omit: ['password_hash', 'system_role', 'external_only'],
  },
  { name: 'organization_members', table: 'organization_members', where: (org) => sql`t.org_id = ${org}`, key: ['user_id'] },
  { name: 'teams', table: 'teams', where: (org) => sql`t.org_id = ${org}`, key: ['id'] },
  { name: 'team_members', table: 'team_members', where: inTeams, key: ['team_id', 'user_id'] },
  { name: 'meetings', table: 'meetings', where: inTeams, key: ['id'] },
  { name: 'meeting_ratings', table: 'meeting_ratings', where: inMeetings, key: ['meeting_id', 'user_id'] },
  { name: 'segues', table: 'segues', where: inMeetings, key: ['id'] },
  { name: 'headlines', table: 'headlines', where: inMeetings, key: ['id'] },
  { name: 'cascading_messages', table: 'cascading_messages', where: (org) => sql`t.org_id = ${org}`, key: ['id'] },
  {
    name: 'message_acknowledgements',
    table: 'message_acknowledgements',
    where: (org) => sql`t.message_id in (select id from cascading_messages where org_id = ${org})`,
    key: ['message_id', 'user_id'],
  },
  { name: 'tasks', table: 'tasks', where: inTeams, key: ['id'] },
  { name: 'issues', table: 'issues', where: inTeams, key: ['id'] },
  { name: 'goals', table: 'goals', where: (org) => sql`t.org_id = ${org}`, key: ['id'] },
  { name: 'milestones', table: 'milestones', where: (org) => sql`t.goal_id in (select id from goals where org_id = ${org})`, key: ['id'] },
  { name: 'metrics', table: 'metrics', where: inTeams, key: ['id'] },
  {
    name: 'metric_values',
    table: 'metric_values',
    where: (org) => sql`t.metric_id in (select m.id from metrics m join teams x on x.id = m.team_id where x.org_id = ${org})`,
    key: ['metric_id', 'week'],
  },
  { name: 'visions', table: 'visions', where: inTeams, key: ['id'] },
  { name: 'seats', table: 'seats', where: inTeams, key: ['id'] },
  { name: 'people_reviews', table: 'people_reviews', where: inTeams, key: ['id'] },
  { name: 'documents', table: 'documents', where: inTeams, key: ['id'] },
  {
    name: 'webhook_subscriptions',
    table: 'webhook_subscriptions',
    where: (org) => sql`t.org_id = ${org}`,
    key: ['id'],
    omit: ['secret', 'previous_secret', 'previous_secret_expires_at'],
  },
];

/** Columns no kind exports: the database's own log position of a row's last change. */
const alwaysOmitted = ['revision'];

const keyOf = (kind: ExportKind) => sql.join(kind.key.map((column) => sql`t.${sql.ref(column)}::text`));

/** `snake_case` → `camelCase`: a column's name in the archive, as the API names its fields. */
export const camelName = (column: string) => column.replace(/_([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase());

/** The columns a kind exports, in the table's order: every one but `revision` and those `omit` names. */
export async function exportedColumns(db: Db, kind: ExportKind): Promise<string[]> {
  const omitted = new Set([...alwaysOmitted, ...(kind.omit ?? [])]);
  const { rows } = await sql<{ name: string }>`
    select column_name as name from information_schema.columns
    where table_schema = current_schema() and table_name = ${kind.table} order by ordinal_position
  `.execute(db);
  return rows.map((row) => row.name).filter((name) => !omitted.has(name));
}

/**
 * A batch of a kind's records after `after` (its key as text; null: from the first), as the database
 * writes them: their NDJSON text (one JSON object per line, `columns` named in camelCase, values as
 * `to_json` gives them), how many, and the last one's key. The lines are made where the rows are: the
 * process that answers requests gets one string per batch, not a row to parse and write again per record.
 */
export async function recordBatch(db: Db, kind: ExportKind, columns: readonly string[], orgId: string, after: readonly string[] | null, limit: number) {
  const key = keyOf(kind);
  // json_build_object preserves the order of its pairs, and takes at most 100 arguments.
  if (columns.length > 50) throw new Error(`${kind.table}: ${columns.length} columns, more than one JSON object of json_build_object holds`);
  const fields = sql.join(columns.map((column) => sql`${camelName(column)}::text, t.${sql.ref(column)}`));
  const { rows } = await sql<{ lines: string; records: number; last: string[] | null }>`
    with batch as (
      select json_build_object(${fields})::text as line, array[${key}] as key
      from ${sql.table(kind.table)} t
      where ${kind.where(orgId)} ${after === null ? sql`` : sql`and (${key}) > (${sql.join(after.map((value) => sql`${value}::text`))})`}
      order by ${key}
      limit ${limit}
    )
    select coalesce(string_agg(line || E'\n', '' order by key), '') as lines, count(*)::int as records, max(key) as last from batch
  `.execute(db);
  return rows[0]!;
}

/** How many records of every kind the organization holds now, in one statement: the job's total. */
export async function recordTotal(db: Db, orgId: string): Promise<number> {
  const counts = sql.join(
    exportKinds.map((kind) => sql`(select count(*) from ${sql.table(kind.table)} t where ${kind.where(orgId)})`),
    sql` + `,
  );
  const { rows } = await sql<{ total: number }>`select (${counts})::int as total`.execute(db);
  return rows[0]!.total;
}

/**
 * Starts an export of the organization unless one is QUEUED or RUNNING (the partial unique index
 * decides, also between two requests at once): the job, and whether this call created it.
 */
export async function startExport(db: Db, orgId: string): Promise<{ job: OrgExportRow; created: boolean }> {
  // A job another request started and finished between this statement's snapshot and its insert is
  // neither inserted nor seen: the next try sees it (or starts anew).
  for (let tries = 0; tries < 3; tries++) {
    const started = await startOrFind(db, orgId);
    if (started) return started;
  }
  throw new Error('an export neither started nor found running');
}

async function startOrFind(db: Db, orgId: string): Promise<{ job: OrgExportRow; created: boolean } | undefined> {
  const { rows } = await sql<OrgExportRow>`
    with created as (
      insert into org_exports (org_id) values (${orgId})
      on conflict (org_id) where state in ('QUEUED', 'RUNNING') do nothing
      returning *, true as created
    )
    select * from created
    union all
    select *, false as created from org_exports where org_id = ${orgId} and state in ('QUEUED', 'RUNNING') and not exists (select 1 from created)
  `.execute(db);
  const row = rows[0] as (OrgExportRow & { created: boolean }) | undefined;
  if (!row) return undefined;
  const { created, ...job } = row;
  return { job, created };
}

export async function findExport(db: Db, orgId: string, exportId: string): Promise<OrgExportRow | undefined> {
  return db.selectFrom('org_exports').selectAll().where('id', '=', exportId).where('org_id', '=', orgId).executeTakeFirst();
}

/**
 * Claims the oldest export that is QUEUED, or RUNNING with a lease that ran out (its worker died), for
 * `leaseMs`, with a token of its own: one short statement, `FOR UPDATE SKIP LOCKED` so that two
 * workers never take the same job.
 */
export async function claimExport(db: Db, now: Date, leaseMs: number): Promise<OrgExportRow | undefined> {
  const { rows } = await sql<OrgExportRow>`
    update org_exports set state = 'RUNNING', lease_until = ${new Date(now.getTime() + leaseMs)}, lease_token = gen_random_uuid()::text,
      attempts = attempts + 1
    where id = (
      select id from org_exports
      where state in ('QUEUED', 'RUNNING') and (lease_until is null or lease_until <= ${now})
      order by created_at, id limit 1
      for update skip locked
    )
    returning *
  `.execute(db);
  return rows[0];
}

/** Extends the lease of a job this worker holds; false when it is no longer its. */
export async function renewExportLease(db: Db, exportId: string, token: string, until: Date): Promise<boolean> {
  const result = await db.updateTable('org_exports').set({ lease_until: until }).where('id', '=', exportId).where('lease_token', '=', token).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Records the job's total once counted; false when the lease is no longer this worker's. */
export async function setExportTotal(db: Db, exportId: string, token: string, total: number): Promise<boolean> {
  const result = await db
    .updateTable('org_exports')
    .set({ records_total: total })
    .where('id', '=', exportId)
    .where('lease_token', '=', token)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Appends one chunk and moves the job's position past it, in one statement guarded by the lease's
 * token: either both or neither, so a worker that lost its job (its lease ran out and another claimed
 * it) writes nothing more, and the one that took over resumes exactly after the last chunk. `data`
 * may be empty (a kind finished on a batch boundary moves the position without a chunk). False when
 * the lease is no longer this worker's.
 *
 * Committed without waiting for the WAL's flush (`synchronous_commit = off`, for this transaction
 * only): a crash may lose the last chunks written, but each with the position that moved past it, so
 * the job resumes before them and writes them again. The API's commits no longer queue behind the
 * export's flushes.
 */
export async function appendChunk(
  db: Kysely<Database>,
  chunk: { exportId: string; token: string; kind: string; records: number; data: Buffer | null; position: OrgExportPosition },
): Promise<boolean> {
  const bytes = chunk.data?.length ?? 0;
  const { rows } = await inTransaction(db, async (trx) => {
    await sql`set local synchronous_commit = off`.execute(trx);
    return sql<{ seq: number }>`
    with moved as (
      update org_exports set position = ${JSON.stringify(chunk.position)}::jsonb, records_done = records_done + ${chunk.records},
        chunk_count = chunk_count + ${chunk.data === null ? 0 : 1}, archive_bytes = archive_bytes + ${bytes}
      where id = ${chunk.exportId} and lease_token = ${chunk.token}
      returning chunk_count - 1 as seq
    ),
    written as (
      insert into org_export_chunks (export_id, seq, kind, records, data)
      select ${chunk.exportId}, moved.seq, ${chunk.kind}, ${chunk.records}, ${chunk.data} from moved where ${chunk.data !== null}
    )
    select seq from moved
  `.execute(trx);
  });
  return rows.length > 0;
}

/**
 * Marks the job COMPLETED, purged at `expiresAt`, with its `export.completed` event (the job as its
 * GET answers, made by `event` from the completed row) in the same transaction. False when the lease
 * is no longer this worker's (nothing changes).
 */
export async function completeExport(
  trx: Transaction<Database>,
  done: { exportId: string; token: string; now: Date; expiresAt: Date },
  event: (job: OrgExportRow) => NewEvent,
): Promise<boolean> {
  const job = await trx
    .updateTable('org_exports')
    .set({ state: 'COMPLETED', completed_at: done.now, expires_at: done.expiresAt, lease_until: null, lease_token: null })
    .where('id', '=', done.exportId)
    .where('lease_token', '=', done.token)
    .returningAll()
    .executeTakeFirst();
  if (!job) return false;
  await insertEvents(trx, [event(job)], done.now);
  return true;
}

/** Marks the job FAILED with its reason (its chunks go with it at `expiresAt`); only while the lease is this worker's. */
export async function failExport(db: Db, failed: { exportId: string; token: string; reason: string; now: Date; expiresAt: Date }): Promise<void> {
  await db
    .updateTable('org_exports')
    .set({ state: 'FAILED', failure: failed.reason, completed_at: failed.now, expires_at: failed.expiresAt, lease_until: null, lease_token: null })
    .where('id', '=', failed.exportId)
    .where('lease_token', '=', failed.token)
    .execute();
}

/** Gives a claimed job back at once (a worker that stops): another claims it without waiting for the lease. */
export async function releaseExport(db: Db, exportId: string, token: string): Promise<void> {
  await db.updateTable('org_exports').set({ lease_until: null, lease_token: null }).where('id', '=', exportId).where('lease_token', '=', token).execute();
}

/** The archive's files: each kind's bytes and records, in the order written. */
export async function archiveFiles(db: Db, exportId: string) {
  const { rows } = await sql<{ kind: string; bytes: string; records: number; first: number }>`
    select kind, sum(octet_length(data))::bigint::text as bytes, sum(records)::int as records, min(seq) as first
    from org_export_chunks where export_id = ${exportId} group by kind order by first
  `.execute(db);
  return rows.map((row) => ({ kind: row.kind, bytes: Number(row.bytes), records: row.records }));
}

/** The archive's chunks after `afterSeq`, a few at a time (never the whole archive in memory). */
export async function chunksAfter(db: Db, exportId: string, afterSeq: number, limit: number) {
  return db
    .selectFrom('org_export_chunks')
    .select(['seq', 'kind', 'data'])
    .where('export_id', '=', exportId)
    .where('seq', '>', afterSeq)
    .orderBy('seq')
    .limit(limit)
    .execute();
}

/**
 * The purge of expired exports: up to `limit` chunks of jobs past `expires_at`, then the jobs left
 * without chunks; how many rows it deleted (the purge repeats while it deletes some).
 */
export async function purgeExpiredExports(db: Db, now: Date, limit: number): Promise<number> {
  const chunks = await sql`
    delete from org_export_chunks where (export_id, seq) in (
      select c.export_id, c.seq from org_export_chunks c join org_exports e on e.id = c.export_id
      where e.expires_at <= ${now} limit ${limit}
    )`.execute(db);
  const deleted = Number(chunks.numAffectedRows ?? 0n);
  if (deleted > 0) return deleted;
  const jobs = await sql`
    delete from org_exports where id in (
      select id from org_exports e where e.expires_at <= ${now}
      and not exists (select 1 from org_export_chunks c where c.export_id = e.id) limit ${limit}
    )`.execute(db);
  return Number(jobs.numAffectedRows ?? 0n);
}

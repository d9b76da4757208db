import { readFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import {
  Kysely,
  Migrator,
  NO_MIGRATIONS,
  PostgresDialect,
  sql,
  type InsertType,
  type MigrationResultSet,
  type SelectType,
} from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type {
  AiProviderType,
  ApiKeyScope,
  Database,
  NewAiProvider,
  NewApiKey,
  NewPeopleReview,
} from '../src/db/database.js';
import { keyQuery } from '../src/auth/authenticate.js';
import { migrations } from '../src/db/migrate.js';
import * as initial from '../src/db/migrations/0001_initial.js';
import * as canonicalTimeZones from '../src/db/migrations/0002_canonical_time_zones.js';
import { canonicalTimeZone } from '../src/time.js';
import { insertEvents } from '../src/db/queries/events.js';
import { deliveryBody, eventText } from '../src/events/outbox.js';
import { createPostgresDatabase, postgresUrl } from './support/database.js';

// ---------------------------------------------------------------------------------------------------
// Databases to run on: an in-memory PGlite always, PostgreSQL when TEST_DATABASE_URL is set.

interface OpenDatabase {
  db: Kysely<any>;
  close(): Promise<void>;
}

interface DatabaseUnderTest {
  name: string;
  open(): Promise<OpenDatabase>;
}

async function openPglite(): Promise<OpenDatabase> {
  const db = new Kysely<any>({ dialect: new PGliteDialect(new PGlite()) });
  return { db, close: () => db.destroy() };
}

/** A fresh throwaway PostgreSQL database, dropped on close. */
async function openPostgres(): Promise<OpenDatabase> {
  const created = await createPostgresDatabase('teamos_mig');
  const pool = new pg.Pool({ connectionString: created.url, max: 3 });
  // A connection still closing when the drop ends it reports that after the pool has ended.
  pool.on('error', () => undefined);
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    close: async () => {
      try {
        await db.destroy();
      } finally {
        await created.drop();
      }
    },
  };
}

const databases: DatabaseUnderTest[] = [{ name: 'PGlite', open: openPglite }];
if (postgresUrl) databases.push({ name: 'PostgreSQL', open: openPostgres });

function migratorFor(db: Kysely<any>): Migrator {
  return new Migrator({ db, provider: { getMigrations: async () => migrations } });
}

/** Every migration ran, in order (down: in reverse). */
function expectSuccess(result: MigrationResultSet, direction: 'Up' | 'Down'): void {
  expect(result.error).toBeUndefined();
  const names = Object.keys(migrations).sort();
  const inOrder = direction === 'Up' ? names : names.reverse();
  expect(result.results).toEqual(inOrder.map((migrationName) => ({ migrationName, direction, status: 'Success' })));
}

// ---------------------------------------------------------------------------------------------------
// What the database must look like. The column facts are checked by the compiler against the
// Database interface (kind of value, nullability, default) and at run time against the database, so
// the interface and the migration cannot drift apart.

type Presence<C> = null extends SelectType<C> ? 'nullable' : undefined extends InsertType<C> ? 'defaulted' : 'required';
type SqlTypeOf<S> = [S] extends [Date]
  ? 'timestamptz'
  : [S] extends [Buffer]
    ? 'bytea'
  : [S] extends [number]
    ? 'integer'
    : [S] extends [boolean]
      ? 'boolean'
      : [S] extends [string[]]
        ? 'text[]'
        : [S] extends [string]
          ? 'text' | 'date' | 'bigint' | 'xid8' | 'pg_snapshot'
          : 'jsonb';
type ColumnFact<C> = `${SqlTypeOf<NonNullable<SelectType<C>>>} ${Presence<C>}`;
type SchemaFacts = { [T in keyof Database]: { [C in keyof Database[T]]-?: ColumnFact<Database[T][C]> } };

const schema: SchemaFacts = {
  users: {
    id: 'text defaulted',
    email: 'text required',
    name: 'text required',
    timezone: 'text nullable',
    locale: 'text defaulted',
    system_role: 'text defaulted',
    password_hash: 'text nullable',
    external_only: 'boolean defaulted',
    created_at: 'timestamptz defaulted',
  },
  api_keys: {
    id: 'text defaulted',
    user_id: 'text required',
    name: 'text required',
    prefix: 'text required',
    key_hash: 'text required',
    scopes: 'text[] required',
    expires_at: 'timestamptz required',
    revoked_at: 'timestamptz nullable',
    last_used_at: 'timestamptz nullable',
    created_at: 'timestamptz defaulted',
  },
  organizations: {
    id: 'text defaulted',
    name: 'text required',
    slug: 'text required',
    status: 'text defaulted',
    timezone: 'text required',
    default_locale: 'text required',
    created_at: 'timestamptz defaulted',
    revision: 'bigint required',
  },
  organization_members: {
    org_id: 'text required',
    user_id: 'text required',
    role: 'text required',
    joined_at: 'timestamptz defaulted',
    revision: 'bigint required',
  },
  teams: {
    id: 'text defaulted',
    org_id: 'text required',
    name: 'text required',
    slug: 'text required',
    is_leadership: 'boolean defaulted',
    meeting_duration_min: 'integer defaulted',
    meeting_warning_min: 'integer defaulted',
    created_at: 'timestamptz defaulted',
    revision: 'bigint required',
  },
  team_members: {
    team_id: 'text required',
    user_id: 'text required',
    role: 'text required',
    joined_at: 'timestamptz defaulted',
    revision: 'bigint required',
  },
  meetings: {
    id: 'text defaulted',
    team_id: 'text required',
    date: 'date required',
    status: 'text required',
    started_at: 'timestamptz nullable',
    ended_at: 'timestamptz nullable',
    duration_min: 'integer nullable',
    created_by_id: 'text required',
    notes: 'text nullable',
    ratings_revealed_at: 'timestamptz nullable',
    created_at: 'timestamptz defaulted',
    revision: 'bigint required',
  },
  meeting_ratings: {
    meeting_id: 'text required',
    user_id: 'text required',
    rating: 'integer required',
    absent: 'boolean defaulted',
    created_at: 'timestamptz defaulted',
    updated_at: 'timestamptz defaulted',
  },
  segues: {
    id: 'text defaulted',
    meeting_id: 'text required',
    user_id: 'text required',
    content: 'text required',
    created_at: 'timestamptz defaulted',
    revision: 'bigint required',
  },
  headlines: {
    id: 'text defaulted',
    meeting_id: 'text required',
    user_id: 'text required',
    type: 'text required',
    content: 'text required',
    created_at: 'timestamptz defaulted',
    revision: 'bigint required',
  },
  cascading_messages: {
    id: 'text defaulted',
    meeting_id: 'text required',
    org_id: 'text required',
    user_id: 'text required',
    content: 'text required',
    created_at: 'timestamptz defaulted',
    revision: 'bigint required',
  },
  message_acknowledgements: {
    message_id: 'text required',
    user_id: 'text required',
    acknowledged_at: 'timestamptz defaulted',
  },
  tasks: {
    id: 'text defaulted',
    team_id: 'text required',
    title: 'text required',
    owner_id: 'text required',
    due_date: 'date required',
    completed: 'boolean defaulted',
    completed_at: 'timestamptz nullable',
    meeting_id: 'text nullable',
    created_at: 'timestamptz defaulted',
    revision: 'bigint required',
  },
  issues: {
    id: 'text defaulted',
    team_id: 'text required',
    title: 'text required',
    description: 'text nullable',
    priority: 'text defaulted',
    status: 'text defaulted',
    meeting_id: 'text nullable',
    created_by_id: 'text required',
    resolved_at: 'timestamptz nullable',
    created_at: 'timestamptz defaulted',
    revision: 'bigint required',
  },
  goals: {
    id: 'text defaulted',
    team_id: 'text required',
    org_id: 'text required',
    title: 'text required',
    description: 'text nullable',
    owner_id: 'text required',
    quarter: 'text required',
    level: 'text defaulted',
    status: 'text defaulted',
    created_at: 'timestamptz defaulted',
    revision: 'bigint required',
  },
  milestones: {
    id: 'text defaulted',
    goal_id: 'text required',
    title: 'text required',
    due_date: 'date nullable',
    completed: 'boolean defaulted',
    created_at: 'timestamptz defaulted',
    revision: 'bigint required',
  },
  metrics: {
    id: 'text defaulted',
    team_id: 'text required',
    title: 'text required',
    goal: 'text required',
    owner_id: 'text required',
    unit: 'text nullable',
    description: 'text nullable',
    position: 'integer required',
    created_at: 'timestamptz defaulted',
    revision: 'bigint required',
  },
  metric_values: {
    metric_id: 'text required',
    week: 'date required',
    value: 'text required',
    on_track: 'boolean required',
    entered_by_id: 'text required',
    created_at: 'timestamptz defaulted',
    updated_at: 'timestamptz defaulted',
    revision: 'bigint required',
  },
  visions: {
    id: 'text defaulted',
    team_id: 'text required',
    core_values: 'text nullable',
    core_focus: 'text nullable',
    ten_year_target: 'text nullable',
    marketing_strategy: 'text nullable',
    three_year_picture: 'text nullable',
    one_year_plan: 'text nullable',
    quarterly_rocks: 'text nullable',
    issues_list: 'text nullable',
    created_at: 'timestamptz defaulted',
    updated_at: 'timestamptz defaulted',
    revision: 'bigint required',
  },
  seats: {
    id: 'text defaulted',
    team_id: 'text required',
    parent_id: 'text nullable',
    user_id: 'text nullable',
    title: 'text required',
    responsibilities: 'text nullable',
    position: 'integer required',
    created_at: 'timestamptz defaulted',
    revision: 'bigint required',
  },
  people_reviews: {
    id: 'text defaulted',
    team_id: 'text required',
    user_id: 'text required',
    evaluator_id: 'text required',
    quarter: 'text required',
    core_values_scores: 'jsonb required',
    gwc: 'jsonb required',
    notes: 'text nullable',
    created_at: 'timestamptz defaulted',
    updated_at: 'timestamptz defaulted',
    revision: 'bigint required',
  },
  documents: {
    id: 'text defaulted',
    team_id: 'text required',
    name: 'text required',
    url: 'text required',
    type: 'text defaulted',
    created_by_id: 'text required',
    created_at: 'timestamptz defaulted',
    revision: 'bigint required',
  },
  ai_providers: {
    id: 'text defaulted',
    type: 'text required',
    api_key_encrypted: 'text required',
    api_key_last4: 'text required',
    default_model: 'text required',
    is_active: 'boolean defaulted',
    created_at: 'timestamptz defaulted',
    updated_at: 'timestamptz defaulted',
  },
  ai_prompts: {
    id: 'text defaulted',
    input_type: 'text required',
    system_prompt: 'text required',
    provider_id: 'text nullable',
    model_override: 'text nullable',
    is_active: 'boolean defaulted',
    created_at: 'timestamptz defaulted',
    updated_at: 'timestamptz defaulted',
  },
  idempotency_keys: {
    user_id: 'text required',
    operation_id: 'text required',
    key: 'text required',
    fingerprint: 'text required',
    status: 'integer required',
    body: 'text nullable',
    headers: 'jsonb defaulted',
    created_at: 'timestamptz required',
  },
  webhook_subscriptions: {
    id: 'text defaulted',
    org_id: 'text required',
    url: 'text required',
    events: 'text[] required',
    description: 'text nullable',
    is_active: 'boolean defaulted',
    disabled_reason: 'text nullable',
    secret: 'text required',
    previous_secret: 'text nullable',
    previous_secret_expires_at: 'timestamptz nullable',
    failing_since: 'timestamptz nullable',
    created_snapshot: 'pg_snapshot defaulted',
    created_at: 'timestamptz defaulted',
    updated_at: 'timestamptz defaulted',
    revision: 'bigint required',
  },
  webhook_events: {
    id: 'text defaulted',
    org_id: 'text required',
    type: 'text required',
    event: 'text required',
    created_at: 'timestamptz defaulted',
    team_id: 'text nullable',
    txid: 'xid8 defaulted',
    position: 'bigint required',
    traceparent: 'text nullable',
  },
  event_log_purges: {
    org_id: 'text required',
    txid: 'xid8 required',
    position: 'bigint required',
  },
  webhook_fanout: {
    id: 'integer required',
    last_txid: 'xid8 required',
    last_position: 'bigint required',
  },
  webhook_deliveries: {
    id: 'text defaulted',
    event_id: 'text required',
    subscription_id: 'text required',
    state: 'text defaulted',
    attempt_count: 'integer defaulted',
    next_attempt_at: 'timestamptz nullable',
    lease_until: 'timestamptz nullable',
    lease_token: 'text nullable',
    created_at: 'timestamptz defaulted',
  },
  webhook_attempts: {
    id: 'text defaulted',
    delivery_id: 'text required',
    attempted_at: 'timestamptz required',
    status_code: 'integer nullable',
    latency_ms: 'integer required',
    error: 'text nullable',
    response_body: 'text nullable',
  },
  org_exports: {
    id: 'text defaulted',
    org_id: 'text required',
    state: 'text defaulted',
    failure: 'text nullable',
    records_done: 'integer defaulted',
    records_total: 'integer nullable',
    position: 'jsonb nullable',
    chunk_count: 'integer defaulted',
    archive_bytes: 'bigint defaulted',
    attempts: 'integer defaulted',
    lease_until: 'timestamptz nullable',
    lease_token: 'text nullable',
    created_at: 'timestamptz defaulted',
    completed_at: 'timestamptz nullable',
    expires_at: 'timestamptz nullable',
  },
  org_export_chunks: {
    export_id: 'text required',
    seq: 'integer required',
    kind: 'text required',
    records: 'integer required',
    data: 'bytea required',
  },
};

const tableNames = Object.keys(schema).sort();

/**
 * Every foreign key as `table(columns) -> table on delete rule`. People are referenced without cascade
 * (their history stays); only a person's keys, memberships and acknowledgements go with the person.
 */
const foreignKeys = [
  'ai_prompts(provider_id) -> ai_providers set null',
  'api_keys(user_id) -> users cascade',
  'cascading_messages(meeting_id) -> meetings cascade',
  'cascading_messages(org_id) -> organizations cascade',
  'cascading_messages(user_id) -> users no action',
  'documents(created_by_id) -> users no action',
  'documents(team_id) -> teams cascade',
  'event_log_purges(org_id) -> organizations cascade',
  'goals(org_id) -> organizations cascade',
  'goals(owner_id) -> users no action',
  'goals(team_id) -> teams cascade',
  'headlines(meeting_id) -> meetings cascade',
  'headlines(user_id) -> users no action',
  'issues(created_by_id) -> users no action',
  'issues(meeting_id) -> meetings set null',
  'issues(team_id) -> teams cascade',
  'meeting_ratings(meeting_id) -> meetings cascade',
  'meeting_ratings(user_id) -> users no action',
  'meetings(created_by_id) -> users no action',
  'meetings(team_id) -> teams cascade',
  'message_acknowledgements(message_id) -> cascading_messages cascade',
  'message_acknowledgements(user_id) -> users cascade',
  'metric_values(entered_by_id) -> users no action',
  'metric_values(metric_id) -> metrics cascade',
  'metrics(owner_id) -> users no action',
  'metrics(team_id) -> teams cascade',
  'milestones(goal_id) -> goals cascade',
  'organization_members(org_id) -> organizations cascade',
  'organization_members(user_id) -> users cascade',
  'people_reviews(evaluator_id) -> users no action',
  'people_reviews(team_id) -> teams cascade',
  'people_reviews(user_id) -> users no action',
  'seats(parent_id) -> seats cascade',
  'seats(team_id) -> teams cascade',
  'seats(user_id) -> users no action',
  'segues(meeting_id) -> meetings cascade',
  'segues(user_id) -> users no action',
  'tasks(meeting_id) -> meetings set null',
  'tasks(owner_id) -> users no action',
  'tasks(team_id) -> teams cascade',
  'team_members(team_id) -> teams cascade',
  'team_members(user_id) -> users cascade',
  'teams(org_id) -> organizations cascade',
  'visions(team_id) -> teams cascade',
  'idempotency_keys(user_id) -> users cascade',
  'org_export_chunks(export_id) -> org_exports cascade',
  'org_exports(org_id) -> organizations cascade',
  'webhook_attempts(delivery_id) -> webhook_deliveries cascade',
  'webhook_deliveries(event_id) -> webhook_events cascade',
  'webhook_deliveries(subscription_id) -> webhook_subscriptions cascade',
  'webhook_events(org_id) -> organizations cascade',
  'webhook_subscriptions(org_id) -> organizations cascade',
];

/** Every index as `table(columns) [unique] [where predicate]`, primary keys and unique constraints included. */
const indexes = [
  'ai_prompts(id) unique',
  'ai_prompts(input_type) unique',
  'ai_prompts(provider_id)',
  'ai_providers(created_at, id)',
  'ai_providers(id) unique',
  'ai_providers(type) unique',
  'api_keys(id) unique',
  'api_keys(key_hash) unique',
  'api_keys(user_id, created_at DESC, id DESC)',
  'cascading_messages(id) unique',
  'cascading_messages(meeting_id, created_at, id)',
  'cascading_messages(org_id)',
  'documents(id) unique',
  'documents(team_id, created_at, id)',
  'event_log_purges(org_id) unique',
  "goals(org_id, created_at, id) where level = 'COMPANY'",
  "goals(org_id, quarter, created_at, id) where level = 'COMPANY'",
  'goals(org_id)',
  'goals(id) unique',
  'goals(team_id, created_at, id)',
  'goals(team_id, level, created_at, id)',
  'goals(team_id, quarter, created_at, id)',
  'goals(team_id, status, created_at, id)',
  'headlines(id) unique',
  'headlines(meeting_id, created_at, id)',
  'issues(id) unique',
  'issues(meeting_id)',
  'issues(team_id, created_at, id)',
  'issues(team_id, priority, created_at, id)',
  'issues(team_id, resolved_at)',
  'issues(team_id, status, created_at, id)',
  'meeting_ratings(meeting_id, user_id) unique',
  'meetings(id) unique',
  'meetings(team_id, date DESC, created_at DESC, id DESC)',
  'meetings(team_id, started_at)',
  'meetings(team_id, status, date DESC, created_at DESC, id DESC)',
  'message_acknowledgements(message_id, user_id) unique',
  'message_acknowledgements(user_id)',
  'metric_values(metric_id, week) unique',
  'metrics(id) unique',
  'metrics(team_id, "position") unique',
  'milestones(goal_id, created_at, id)',
  'milestones(id) unique',
  'organization_members(org_id, joined_at, user_id)',
  'organization_members(org_id, user_id) unique',
  'organization_members(user_id)',
  'organizations(created_at, id)',
  'organizations(id) unique',
  'organizations(slug) unique',
  'people_reviews(id) unique',
  'people_reviews(team_id, quarter DESC, user_id, evaluator_id) unique',
  'seats(id) unique',
  'seats(parent_id)',
  'seats(team_id, parent_id, "position")',
  'segues(id) unique',
  'segues(meeting_id, created_at, id)',
  'tasks(id) unique',
  'tasks(meeting_id)',
  'tasks(team_id, completed, created_at, id)',
  'tasks(team_id, created_at, id)',
  'tasks(team_id, owner_id, created_at, id)',
  'team_members(team_id, joined_at, user_id)',
  'team_members(team_id, user_id) unique',
  'team_members(user_id)',
  'teams(id) unique',
  'teams(org_id, name, id)',
  'teams(org_id, slug) unique',
  'users(created_at, id)',
  'users(id) unique',
  'users(lower(email)) unique',
  'visions(id) unique',
  'visions(team_id) unique',
  'idempotency_keys(created_at)',
  'idempotency_keys(user_id, operation_id, key) unique',
  'webhook_attempts(delivery_id, attempted_at, id)',
  'webhook_attempts(id) unique',
  'webhook_deliveries(created_at)',
  'webhook_deliveries(event_id, subscription_id) unique',
  'webhook_deliveries(id) unique',
  "webhook_deliveries(next_attempt_at) where state = 'PENDING'",
  'org_export_chunks(export_id, seq) unique',
  "org_exports(created_at) where state = ANY (ARRAY['QUEUED', 'RUNNING'])",
  'org_exports(expires_at) where expires_at IS NOT NULL',
  'org_exports(id) unique',
  'org_exports(org_id, created_at)',
  "org_exports(org_id) unique where state = ANY (ARRAY['QUEUED', 'RUNNING'])",
  'webhook_deliveries(subscription_id, created_at DESC, id DESC)',
  'webhook_deliveries(subscription_id, state, created_at DESC, id DESC)',
  'webhook_events(created_at)',
  'webhook_events(id) unique',
  'webhook_events(org_id, txid, "position")',
  'webhook_events(txid, "position")',
  'webhook_fanout(id) unique',
  'webhook_subscriptions(id) unique',
  'webhook_subscriptions(org_id, created_at, id)',
];

// ---------------------------------------------------------------------------------------------------
// Reading the catalog

const kysely = new Set(['kysely_migration', 'kysely_migration_lock']);

async function listTables(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ table_name: string }>`
    select table_name from information_schema.tables
    where table_schema = 'public' and table_type = 'BASE TABLE'
  `.execute(db);
  return rows.map((row) => row.table_name).filter((name) => !kysely.has(name)).sort();
}

const sqlTypes: Record<string, string> = {
  text: 'text',
  date: 'date',
  timestamptz: 'timestamptz',
  int4: 'integer',
  int8: 'bigint',
  bool: 'boolean',
  _text: 'text[]',
  jsonb: 'jsonb',
  bytea: 'bytea',
};

async function describeColumns(db: Kysely<any>): Promise<Record<string, Record<string, string>>> {
  const { rows } = await sql<{
    table_name: string;
    column_name: string;
    udt_name: string;
    is_nullable: 'YES' | 'NO';
    column_default: string | null;
  }>`
    select table_name, column_name, udt_name, is_nullable, column_default
    from information_schema.columns
    where table_schema = 'public'
    order by table_name, ordinal_position
  `.execute(db);
  const tables: Record<string, Record<string, string>> = {};
  for (const row of rows) {
    if (kysely.has(row.table_name)) continue;
    const presence = row.is_nullable === 'YES' ? 'nullable' : row.column_default !== null ? 'defaulted' : 'required';
    (tables[row.table_name] ??= {})[row.column_name] = `${sqlTypes[row.udt_name] ?? row.udt_name} ${presence}`;
  }
  return tables;
}

async function describeForeignKeys(db: Kysely<any>): Promise<string[]> {
  const rules: Record<string, string> = {
    a: 'no action',
    r: 'restrict',
    c: 'cascade',
    n: 'set null',
    d: 'set default',
  };
  const { rows } = await sql<{ source: string; columns: string[]; target: string; rule: string }>`
    select c.conrelid::regclass::text as source,
           array(select a.attname::text
                 from unnest(c.conkey) with ordinality as k(attnum, n)
                 join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.attnum
                 order by k.n) as columns,
           c.confrelid::regclass::text as target,
           c.confdeltype::text as rule
    from pg_constraint c
    where c.contype = 'f' and c.connamespace = 'public'::regnamespace
  `.execute(db);
  return rows
    .map((row) => `${row.source}(${row.columns.join(', ')}) -> ${row.target} ${rules[row.rule] ?? row.rule}`)
    .sort();
}

async function describeIndexes(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ source: string; definition: string }>`
    select tablename as source, indexdef as definition
    from pg_indexes
    where schemaname = 'public' and tablename not in ('kysely_migration', 'kysely_migration_lock')
  `.execute(db);
  // "CREATE [UNIQUE] INDEX name ON public.table USING btree (columns) [WHERE (predicate)]"
  const shape = /^CREATE (UNIQUE )?INDEX \S+ ON (?:public\.)?\S+ USING btree \((.*?)\)(?: WHERE \((.*)\))?$/;
  return rows
    .map((row) => {
      const match = shape.exec(row.definition);
      if (!match) return `unexpected: ${row.definition}`;
      const [, unique, columns, predicate] = match;
      const where = predicate ? ` where ${predicate.replace(/::text/g, '')}` : '';
      return `${row.source}(${columns})${unique ? ' unique' : ''}${where}`;
    })
    .sort();
}

/** Whether an index starts with exactly the given columns (in any order): usable for `where col = $1`. */
function isCovered(columns: string[], indexList: string[], table: string): boolean {
  return indexList.some((index) => {
    const match = /^(\w+)\((.*?)\)( unique)?$/.exec(index);
    if (!match || match[1] !== table) return false;
    const leading = match[2]!
      .split(', ')
      .slice(0, columns.length)
      .map((column) => column.replace(/"/g, '').split(' ')[0]);
    return leading.length === columns.length && columns.every((column) => leading.includes(column));
  });
}

// ---------------------------------------------------------------------------------------------------
// Rows for the tests

function apiKey(userId: string, keyHash: string, scopes: ApiKeyScope[] = ['read']): NewApiKey {
  return {
    user_id: userId,
    name: 'Integration',
    prefix: keyHash.slice(0, 8),
    key_hash: keyHash,
    scopes,
    expires_at: '2030-01-01T00:00:00.000Z',
  };
}

function aiProvider(type: AiProviderType): NewAiProvider {
  return { type, api_key_encrypted: 'payload', api_key_last4: 'abcd', default_model: 'model' };
}

/** A small organization with one team that has a row in every team-owned table. */
interface Seeded {
  orgId: string;
  teamId: string;
  userIds: [string, string];
  meetingId: string;
  metricIds: [string, string];
}

async function seed(db: Kysely<Database>, tag: string): Promise<Seeded> {
  const users = await db
    .insertInto('users')
    .values([
      { email: `owner-${tag}@example.test`, name: 'Owner' },
      { email: `member-${tag}@example.test`, name: 'Member', external_only: true },
    ])
    .returning('id')
    .execute();
  const [owner, member] = users.map((user) => user.id) as [string, string];
  await db.insertInto('api_keys').values(apiKey(owner, `hash-${tag}`, ['read', 'write'])).execute();
  const { id: orgId } = await db
    .insertInto('organizations')
    .values({ name: `Org ${tag}`, slug: `org-${tag}`, timezone: 'Europe/Bratislava', default_locale: 'en' })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db
    .insertInto('organization_members')
    .values([
      { org_id: orgId, user_id: owner, role: 'OWNER' },
      { org_id: orgId, user_id: member, role: 'MEMBER' },
    ])
    .execute();
  const { id: teamId } = await db
    .insertInto('teams')
    .values({ org_id: orgId, name: 'Sales', slug: 'sales' })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db
    .insertInto('team_members')
    .values([
      { team_id: teamId, user_id: owner, role: 'OWNER' },
      { team_id: teamId, user_id: member, role: 'MEMBER' },
    ])
    .execute();
  const { id: meetingId } = await db
    .insertInto('meetings')
    .values({
      team_id: teamId,
      date: '2026-11-16',
      status: 'IN_PROGRESS',
      started_at: new Date(),
      created_by_id: owner,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db
    .insertInto('meeting_ratings')
    .values([
      { meeting_id: meetingId, user_id: member, rating: 9 },
      { meeting_id: meetingId, user_id: owner, rating: 0, absent: true },
    ])
    .execute();
  await db.insertInto('segues').values({ meeting_id: meetingId, user_id: member, content: 'Good week' }).execute();
  await db
    .insertInto('headlines')
    .values({ meeting_id: meetingId, user_id: member, type: 'CUSTOMER', content: 'Signed Acme' })
    .execute();
  const { id: messageId } = await db
    .insertInto('cascading_messages')
    .values({ meeting_id: meetingId, org_id: orgId, user_id: owner, content: 'Office closed Friday' })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db.insertInto('message_acknowledgements').values({ message_id: messageId, user_id: member }).execute();
  await db
    .insertInto('tasks')
    .values({ team_id: teamId, title: 'Call Acme', owner_id: member, due_date: '2026-11-23', meeting_id: meetingId })
    .execute();
  await db
    .insertInto('issues')
    .values({ team_id: teamId, title: 'Late deliveries', meeting_id: meetingId, created_by_id: member })
    .execute();
  const { id: goalId } = await db
    .insertInto('goals')
    .values({ team_id: teamId, org_id: orgId, title: 'Sign 5 customers', owner_id: member, quarter: '2026-Q4' })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db.insertInto('milestones').values({ goal_id: goalId, title: 'First customer', due_date: null }).execute();
  const metrics = await db
    .insertInto('metrics')
    .values([
      { team_id: teamId, title: 'Leads', goal: '>=25', owner_id: member, position: 1 },
      { team_id: teamId, title: 'On-time delivery', goal: '>=95', owner_id: member, unit: '%', position: 2 },
    ])
    .returning('id')
    .execute();
  const metricIds = metrics.map((metric) => metric.id) as [string, string];
  await db
    .insertInto('metric_values')
    .values({ metric_id: metricIds[0], week: '2026-11-16', value: '27', on_track: true, entered_by_id: member })
    .execute();
  await db
    .insertInto('visions')
    .values({ team_id: teamId, core_values: JSON.stringify(['Do the right thing']) })
    .execute();
  const { id: topSeat } = await db
    .insertInto('seats')
    .values({ team_id: teamId, title: 'Visionary', user_id: owner, position: 1 })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db.insertInto('seats').values({ team_id: teamId, parent_id: topSeat, title: 'Sales', position: 1 }).execute();
  await db
    .insertInto('people_reviews')
    .values({
      team_id: teamId,
      user_id: member,
      evaluator_id: owner,
      quarter: '2026-Q4',
      core_values_scores: JSON.stringify({ 'Do the right thing': true }),
      gwc: JSON.stringify({ getsIt: true, wantsIt: true, capacityToDoIt: false }),
    })
    .execute();
  await db
    .insertInto('documents')
    .values({ team_id: teamId, name: 'Handbook', url: 'https://example.test/handbook', created_by_id: owner })
    .execute();
  return { orgId, teamId, userIds: [owner, member], meetingId, metricIds };
}

/** Tables whose rows belong to a team, directly or through a parent. */
const teamData = [
  'meetings',
  'meeting_ratings',
  'segues',
  'headlines',
  'cascading_messages',
  'message_acknowledgements',
  'tasks',
  'issues',
  'goals',
  'milestones',
  'metrics',
  'metric_values',
  'visions',
  'seats',
  'people_reviews',
  'documents',
] as const;

async function countRows(db: Kysely<any>, table: string): Promise<number> {
  const { count } = await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<string | number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(count);
}

async function countAll(db: Kysely<any>, tables: readonly string[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of tables) counts[table] = await countRows(db, table);
  return counts;
}

/** The rows `seed` creates for its team in each team-owned table. */
const rowsPerSeededTeam: Record<(typeof teamData)[number], number> = {
  meetings: 1,
  meeting_ratings: 2,
  segues: 1,
  headlines: 1,
  cascading_messages: 1,
  message_acknowledgements: 1,
  tasks: 1,
  issues: 1,
  goals: 1,
  milestones: 1,
  metrics: 2,
  metric_values: 1,
  visions: 1,
  seats: 2,
  people_reviews: 1,
  documents: 1,
};

function difference(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(after).map(([table, count]) => [table, count - (before[table] ?? 0)]));
}

function pick(counts: Record<string, number>, tables: readonly string[]): Record<string, number> {
  return Object.fromEntries(tables.map((table) => [table, counts[table] ?? 0]));
}

async function rejectsWithCode(promise: Promise<unknown>, code: string): Promise<void> {
  await expect(promise).rejects.toMatchObject({ code });
}

const UNIQUE_VIOLATION = '23505';
const FOREIGN_KEY_VIOLATION = '23503';
const CHECK_VIOLATION = '23514';

// ---------------------------------------------------------------------------------------------------

/**
 * Every `table.column` the authentication query reads (src/auth/authenticate.ts, `keyQuery`), as
 * PostgreSQL itself records what a view over that query depends on: its select list, joins, filter
 * and subquery alike.
 */
async function columnsAuthenticationReads(db: Kysely<Database>): Promise<string[]> {
  const compiled = keyQuery(db, { column: 'api_keys.key_hash', value: 'a key hash' }).compile();
  expect(compiled.parameters).toEqual(['a key hash']);
  return db.transaction().execute(async (trx) => {
    await sql.raw(`create view authentication_reads as ${compiled.sql.replace('$1', "'a key hash'")}`).execute(trx);
    const { rows } = await sql<{ column: string }>`
      select distinct table_name || '.' || column_name as column from information_schema.view_column_usage
      where view_name = 'authentication_reads' order by 1
    `.execute(trx);
    await sql`drop view authentication_reads`.execute(trx);
    return rows.map((row) => row.column);
  });
}

/** The key's use, which authentication records itself about once a minute: no trigger watches it, so that recording it costs no notification. */
const recordedByAuthentication = ['api_keys.last_used_at'];

/** Every `table.column` whose change a row-level caller trigger notifies: named in `update of` and compared in its `when`. */
async function columnsWatched(db: Kysely<Database>): Promise<string[]> {
  const { rows } = await sql<{ table: string; columns: string[]; definition: string }>`
    select c.relname as table, pg_get_triggerdef(t.oid) as definition,
      array(select a.attname::text from pg_attribute a where a.attrelid = t.tgrelid and a.attnum = any(t.tgattr) order by a.attnum) as columns
    from pg_trigger t join pg_class c on c.oid = t.tgrelid
    where t.tgname like '%\_caller\_update' and not t.tgisinternal
  `.execute(db);
  return rows.flatMap(({ table, columns, definition }) =>
    columns.filter((column) => new RegExp(`\\bold\\.${column}\\b`).test(definition) && new RegExp(`\\bnew\\.${column}\\b`).test(definition)).map((column) => `${table}.${column}`),
  );
}

describe.each(databases)('the migrations on $name', ({ open }) => {
  let database: OpenDatabase;
  let db: Kysely<Database>;
  let migrator: Migrator;

  beforeAll(async () => {
    database = await open();
    db = database.db;
    migrator = migratorFor(database.db);
  });

  afterAll(async () => {
    await database?.close();
  });

  it('creates every table of the data model', async () => {
    expectSuccess(await migrator.migrateToLatest(), 'Up');
    expect(await listTables(db)).toEqual(tableNames);
  });

  it('gives every column the kind, nullability and default that the Database interface declares', async () => {
    expect(await describeColumns(db)).toEqual(schema);
  });

  it('references people without cascade and cascades everything a team or organization owns', async () => {
    expect(await describeForeignKeys(db)).toEqual([...foreignKeys].sort());
  });

  it('has an index for every list order, filter and unique rule, and no other', async () => {
    expect(await describeIndexes(db)).toEqual([...indexes].sort());
  });

  it('notifies callers kept in memory of a change of every column authentication reads, found from its own query', async () => {
    const reads = await columnsAuthenticationReads(db);
    expect(reads, 'the derivation finds the columns it must').toEqual(expect.arrayContaining(['api_keys.expires_at', 'api_keys.revoked_at', 'organization_members.role', 'organizations.status', 'users.system_role']));
    const watched = await columnsWatched(db);
    expect(reads.filter((column) => !watched.includes(column) && !recordedByAuthentication.includes(column))).toEqual([]);
  });

  it('indexes every foreign key that cascades or sets null', async () => {
    const indexList = await describeIndexes(db);
    const uncovered = (await describeForeignKeys(db))
      .map((key) => /^(\w+)\((.*)\) -> (\w+) (.*)$/.exec(key)!)
      .filter(([, , , , rule]) => rule === 'cascade' || rule === 'set null')
      .filter(([, table, columns]) => !isCovered(columns!.split(', '), indexList, table!))
      .map(([key]) => key);
    expect(uncovered).toEqual([]);
  });

  it('accepts a row in every table through the types of the Database interface', async () => {
    const seeded = await seed(db, 'types');
    const review = await db
      .selectFrom('people_reviews')
      .select(['core_values_scores', 'gwc', 'quarter'])
      .where('team_id', '=', seeded.teamId)
      .executeTakeFirstOrThrow();
    // JSON text goes in, parsed objects come out.
    expect(review).toEqual({
      core_values_scores: { 'Do the right thing': true },
      gwc: { getsIt: true, wantsIt: true, capacityToDoIt: false },
      quarter: '2026-Q4',
    });
    const key = await db
      .selectFrom('api_keys')
      .select(['scopes', 'expires_at', 'revoked_at'])
      .where('key_hash', '=', 'hash-types')
      .executeTakeFirstOrThrow();
    expect(key).toEqual({ scopes: ['read', 'write'], expires_at: new Date('2030-01-01T00:00:00.000Z'), revoked_at: null });
    const team = await db.selectFrom('teams').selectAll().where('id', '=', seeded.teamId).executeTakeFirstOrThrow();
    expect(team).toMatchObject({ is_leadership: false, meeting_duration_min: 90, meeting_warning_min: 80 });
    expect(team.created_at).toBeInstanceOf(Date);
    const user = await db.selectFrom('users').selectAll().where('id', '=', seeded.userIds[0]).executeTakeFirstOrThrow();
    expect(user).toMatchObject({ locale: 'en', system_role: 'USER', external_only: false, timezone: null });
    expect(user.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("deletes all of a team's data with the team, and keeps the people and the organization", async () => {
    await seed(db, 'kept');
    const before = await countAll(db, ['users', 'organizations', 'organization_members', ...teamData]);
    const doomed = await seed(db, 'doomed');
    expect(difference(await countAll(db, teamData), before)).toEqual(rowsPerSeededTeam);
    await db.deleteFrom('teams').where('id', '=', doomed.teamId).execute();
    expect(await countAll(db, teamData)).toEqual(pick(before, teamData));
    expect(difference(await countAll(db, ['users', 'organizations', 'organization_members']), before)).toEqual({
      users: 2,
      organizations: 1,
      organization_members: 2,
    });
  });

  it('deletes the teams and all their data with the organization, and keeps the people', async () => {
    const tables = [...teamData, 'teams', 'team_members', 'organizations', 'organization_members'];
    const before = await countAll(db, [...tables, 'users', 'api_keys']);
    const doomed = await seed(db, 'org-doomed');
    await db.insertInto('teams').values({ org_id: doomed.orgId, name: 'Empty', slug: 'empty' }).execute();
    await db.deleteFrom('organizations').where('id', '=', doomed.orgId).execute();
    expect(await countAll(db, tables)).toEqual(pick(before, tables));
    expect(difference(await countAll(db, ['users', 'api_keys']), before)).toEqual({ users: 2, api_keys: 1 });
  });

  it('keeps the tasks and issues of a deleted meeting, no longer linked to it', async () => {
    const seeded = await seed(db, 'meeting-deleted');
    await db.deleteFrom('meetings').where('id', '=', seeded.meetingId).execute();
    const tasks = await db.selectFrom('tasks').select('meeting_id').where('team_id', '=', seeded.teamId).execute();
    const issues = await db.selectFrom('issues').select('meeting_id').where('team_id', '=', seeded.teamId).execute();
    expect(tasks).toEqual([{ meeting_id: null }]);
    expect(issues).toEqual([{ meeting_id: null }]);
  });

  it('deletes the seats below a deleted seat', async () => {
    const seeded = await seed(db, 'seats');
    const top = await db
      .selectFrom('seats')
      .select('id')
      .where('team_id', '=', seeded.teamId)
      .where('parent_id', 'is', null)
      .executeTakeFirstOrThrow();
    await db.deleteFrom('seats').where('id', '=', top.id).execute();
    expect(await db.selectFrom('seats').select('id').where('team_id', '=', seeded.teamId).execute()).toEqual([]);
  });

  it("keeps a removed member's history and refuses to delete a person who has any", async () => {
    const seeded = await seed(db, 'history');
    const [, member] = seeded.userIds;
    await db.deleteFrom('team_members').where('team_id', '=', seeded.teamId).where('user_id', '=', member).execute();
    await db.deleteFrom('organization_members').where('org_id', '=', seeded.orgId).where('user_id', '=', member).execute();
    expect(await db.selectFrom('tasks').select('id').where('owner_id', '=', member).execute()).toHaveLength(1);
    await rejectsWithCode(db.deleteFrom('users').where('id', '=', member).execute(), FOREIGN_KEY_VIOLATION);
  });

  it("deletes a person's keys, memberships and acknowledgements with the person", async () => {
    const seeded = await seed(db, 'leaver');
    const { id: userId } = await db
      .insertInto('users')
      .values({ email: 'leaver@example.test', name: 'Leaver' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const message = await db
      .selectFrom('cascading_messages')
      .select('id')
      .where('org_id', '=', seeded.orgId)
      .executeTakeFirstOrThrow();
    await db.insertInto('api_keys').values(apiKey(userId, 'hash-leaver-own')).execute();
    await db.insertInto('organization_members').values({ org_id: seeded.orgId, user_id: userId, role: 'MEMBER' }).execute();
    await db.insertInto('team_members').values({ team_id: seeded.teamId, user_id: userId, role: 'VIEWER' }).execute();
    await db.insertInto('message_acknowledgements').values({ message_id: message.id, user_id: userId }).execute();
    await db.deleteFrom('users').where('id', '=', userId).execute();
    for (const table of ['api_keys', 'organization_members', 'team_members', 'message_acknowledgements'] as const) {
      expect(await db.selectFrom(table).select('user_id').where('user_id', '=', userId).execute(), table).toEqual([]);
    }
  });

  it('keeps the prompts of a deleted AI provider, with no provider', async () => {
    const { id: providerId } = await db
      .insertInto('ai_providers')
      .values(aiProvider('OPENAI'))
      .returning('id')
      .executeTakeFirstOrThrow();
    await db
      .insertInto('ai_prompts')
      .values({ input_type: 'HEADLINE', system_prompt: 'Be brief', provider_id: providerId })
      .execute();
    await db.deleteFrom('ai_providers').where('id', '=', providerId).execute();
    expect(await db.selectFrom('ai_prompts').select(['input_type', 'provider_id', 'is_active']).execute()).toEqual([
      { input_type: 'HEADLINE', provider_id: null, is_active: true },
    ]);
  });

  it('treats e-mail addresses that differ only in letter case as the same account', async () => {
    await db.insertInto('users').values({ email: 'Case.Test@Example.test', name: 'A' }).execute();
    await rejectsWithCode(
      db.insertInto('users').values({ email: 'case.test@example.TEST', name: 'B' }).execute(),
      UNIQUE_VIOLATION,
    );
  });

  it('enforces every other unique rule', async () => {
    const seeded = await seed(db, 'unique');
    const other = await seed(db, 'unique-other');
    const [owner, member] = seeded.userIds;
    const { orgId, teamId, meetingId } = seeded;
    // The same team slug is fine in another organization.
    await db.insertInto('teams').values({ org_id: orgId, name: 'Ops', slug: 'ops' }).execute();
    await db.insertInto('teams').values({ org_id: other.orgId, name: 'Ops', slug: 'ops' }).execute();
    await db.insertInto('ai_providers').values(aiProvider('ANTHROPIC')).execute();
    await db.insertInto('ai_prompts').values({ input_type: 'VTO_CONTENT', system_prompt: 'Write clearly' }).execute();
    const message = await db
      .selectFrom('cascading_messages')
      .select('id')
      .where('org_id', '=', orgId)
      .executeTakeFirstOrThrow();
    const review: NewPeopleReview = {
      team_id: teamId,
      user_id: member,
      evaluator_id: owner,
      quarter: '2026-Q4',
      core_values_scores: '{}',
      gwc: '{"getsIt":false,"wantsIt":false,"capacityToDoIt":false}',
    };
    const attempts: Array<[string, () => Promise<unknown>]> = [
      [
        'organization slug',
        () =>
          db
            .insertInto('organizations')
            .values({ name: 'X', slug: 'org-unique', timezone: 'UTC', default_locale: 'sk' })
            .execute(),
      ],
      ['team slug', () => db.insertInto('teams').values({ org_id: orgId, name: 'Ops 2', slug: 'ops' }).execute()],
      ['api key hash', () => db.insertInto('api_keys').values(apiKey(member, 'hash-unique')).execute()],
      [
        'organization membership',
        () => db.insertInto('organization_members').values({ org_id: orgId, user_id: member, role: 'ADMIN' }).execute(),
      ],
      [
        'team membership',
        () => db.insertInto('team_members').values({ team_id: teamId, user_id: member, role: 'ADMIN' }).execute(),
      ],
      ['vision per team', () => db.insertInto('visions').values({ team_id: teamId }).execute()],
      [
        'rating per meeting and person',
        () => db.insertInto('meeting_ratings').values({ meeting_id: meetingId, user_id: member, rating: 5 }).execute(),
      ],
      [
        'value per metric and week',
        () =>
          db
            .insertInto('metric_values')
            .values({
              metric_id: seeded.metricIds[0],
              week: '2026-11-16',
              value: '1',
              on_track: false,
              entered_by_id: owner,
            })
            .execute(),
      ],
      ['people review per member, evaluator and quarter', () => db.insertInto('people_reviews').values(review).execute()],
      [
        'acknowledgement per message and person',
        () => db.insertInto('message_acknowledgements').values({ message_id: message.id, user_id: member }).execute(),
      ],
      ['AI provider per type', () => db.insertInto('ai_providers').values(aiProvider('ANTHROPIC')).execute()],
      [
        'AI prompt per input type',
        () => db.insertInto('ai_prompts').values({ input_type: 'VTO_CONTENT', system_prompt: 'Again' }).execute(),
      ],
    ];
    for (const [rule, attempt] of attempts) {
      await expect(attempt(), rule).rejects.toMatchObject({ code: UNIQUE_VIOLATION });
    }
    // Reviews of another quarter, by another evaluator or of another person are separate.
    await db
      .insertInto('people_reviews')
      .values([
        { ...review, quarter: '2027-Q1' },
        { ...review, evaluator_id: member },
        { ...review, user_id: owner },
      ])
      .execute();
  });

  it('replaces a people review through an upsert on member, evaluator and quarter', async () => {
    const seeded = await seed(db, 'upsert');
    const [owner, member] = seeded.userIds;
    await db
      .insertInto('people_reviews')
      .values({
        team_id: seeded.teamId,
        user_id: member,
        evaluator_id: owner,
        quarter: '2026-Q4',
        core_values_scores: JSON.stringify({ Honesty: false }),
        gwc: JSON.stringify({ getsIt: false, wantsIt: true, capacityToDoIt: true }),
        notes: 'Replaced',
      })
      .onConflict((conflict) =>
        conflict.columns(['team_id', 'user_id', 'evaluator_id', 'quarter']).doUpdateSet((eb) => ({
          core_values_scores: eb.ref('excluded.core_values_scores'),
          gwc: eb.ref('excluded.gwc'),
          notes: eb.ref('excluded.notes'),
          updated_at: sql<Date>`now()`,
        })),
      )
      .execute();
    const reviews = await db
      .selectFrom('people_reviews')
      .select(['core_values_scores', 'gwc', 'notes'])
      .where('team_id', '=', seeded.teamId)
      .execute();
    expect(reviews).toEqual([
      {
        core_values_scores: { Honesty: false },
        gwc: { getsIt: false, wantsIt: true, capacityToDoIt: true },
        notes: 'Replaced',
      },
    ]);
  });

  it('lets two metrics swap positions in one transaction and refuses a duplicate position at commit', async () => {
    const seeded = await seed(db, 'positions');
    const [first, second] = seeded.metricIds;
    await db.transaction().execute(async (trx) => {
      await trx.updateTable('metrics').set({ position: 2 }).where('id', '=', first).execute();
      await trx.updateTable('metrics').set({ position: 1 }).where('id', '=', second).execute();
    });
    const order = await db
      .selectFrom('metrics')
      .select('id')
      .where('team_id', '=', seeded.teamId)
      .orderBy('position')
      .execute();
    expect(order.map((metric) => metric.id)).toEqual([second, first]);
    await rejectsWithCode(
      db.transaction().execute(async (trx) => {
        await trx.updateTable('metrics').set({ position: 1 }).where('id', '=', first).execute();
      }),
      UNIQUE_VIOLATION,
    );
  });

  it('refuses values outside the allowed sets and ranges, and accepts the limits', async () => {
    const seeded = await seed(db, 'checks');
    const [owner, member] = seeded.userIds;
    const { orgId, teamId, meetingId, metricIds } = seeded;
    // Casts smuggle values past the Database types, which would refuse them.
    const value = (metricId: string, week: string) =>
      db
        .insertInto('metric_values')
        .values({ metric_id: metricId, week, value: '1', on_track: true, entered_by_id: member })
        .execute();
    const organization = (slug: string, status: string, locale: string) =>
      db
        .insertInto('organizations')
        .values({ name: 'S', slug, status: status as 'ACTIVE', timezone: 'UTC', default_locale: locale as 'en' })
        .execute();
    const team = (duration: number, warning: number) =>
      db
        .updateTable('teams')
        .set({ meeting_duration_min: duration, meeting_warning_min: warning })
        .where('id', '=', teamId)
        .execute();
    const rating = (score: number, absent: boolean) =>
      db
        .updateTable('meeting_ratings')
        .set({ rating: score, absent })
        .where('meeting_id', '=', meetingId)
        .where('user_id', '=', member)
        .execute();
    const goals = db.updateTable('goals').where('team_id', '=', teamId);
    const issues = db.updateTable('issues').where('team_id', '=', teamId);
    const attempts: Array<[string, () => Promise<unknown>]> = [
      ['locale', () => db.insertInto('users').values({ email: 'de@x.test', name: 'D', locale: 'de' as 'en' }).execute()],
      [
        'system role',
        () => db.insertInto('users').values({ email: 'r@x.test', name: 'R', system_role: 'ADMIN' as 'USER' }).execute(),
      ],
      ['unknown key scope', () => db.insertInto('api_keys').values(apiKey(owner, 'h1', ['admin' as 'read'])).execute()],
      ['no key scope', () => db.insertInto('api_keys').values(apiKey(owner, 'h2', [])).execute()],
      ['lowercase organization status', () => organization('status', 'active', 'en')],
      ['organization locale', () => organization('locale', 'ACTIVE', 'cs')],
      [
        'organization role',
        () => db.updateTable('organization_members').set({ role: 'VIEWER' as 'MEMBER' }).where('org_id', '=', orgId).execute(),
      ],
      [
        'team role',
        () => db.updateTable('team_members').set({ role: 'IMPLEMENTER' as 'MEMBER' }).where('team_id', '=', teamId).execute(),
      ],
      ['meeting duration below 10', () => team(9, 5)],
      ['meeting duration above 300', () => team(301, 80)],
      ['warning at the end of the meeting', () => team(90, 90)],
      ['warning before the start', () => team(90, 0)],
      [
        'meeting status',
        () => db.updateTable('meetings').set({ status: 'CANCELLED' as 'COMPLETED' }).where('id', '=', meetingId).execute(),
      ],
      ['rating above 10', () => rating(11, false)],
      ['rating below 0', () => rating(-1, false)],
      ['absent with a rating', () => rating(9, true)],
      [
        'headline type',
        () =>
          db.updateTable('headlines').set({ type: 'PARTNER' as 'CUSTOMER' }).where('meeting_id', '=', meetingId).execute(),
      ],
      ['issue priority', () => issues.set({ priority: 'URGENT' as 'HIGH' }).execute()],
      ['issue status', () => issues.set({ status: 'CLOSED' as 'SOLVED' }).execute()],
      ['goal quarter', () => goals.set({ quarter: '2026-Q5' }).execute()],
      ['goal quarter with more around it', () => goals.set({ quarter: '2026-Q4x' }).execute()],
      ['goal level', () => goals.set({ level: 'TEAM' as 'COMPANY' }).execute()],
      ['goal status', () => goals.set({ status: 'LATE' as 'DONE' }).execute()],
      ['metric week on a Tuesday', () => value(metricIds[1], '2026-11-17')],
      ['metric week on a Sunday', () => value(metricIds[1], '2026-11-22')],
      [
        'people review quarter',
        () => db.updateTable('people_reviews').set({ quarter: '2026-4' }).where('team_id', '=', teamId).execute(),
      ],
      [
        'document type',
        () => db.updateTable('documents').set({ type: 'IMAGE' as 'FILE' }).where('team_id', '=', teamId).execute(),
      ],
      ['AI provider type', () => db.insertInto('ai_providers').values(aiProvider('GEMINI' as 'OPENAI')).execute()],
      [
        'AI input type',
        () => db.insertInto('ai_prompts').values({ input_type: 'SEGUE' as 'HEADLINE', system_prompt: 'p' }).execute(),
      ],
    ];
    for (const [rule, attempt] of attempts) {
      await expect(attempt(), rule).rejects.toMatchObject({ code: CHECK_VIOLATION });
    }
    await team(10, 9);
    await team(300, 1);
    await rating(10, false);
    await rating(0, true);
    await value(metricIds[1], '2026-11-23');
    await db.insertInto('api_keys').values(apiKey(owner, 'h3', ['read', 'write', 'platform'])).execute();
    await organization('limits', 'SUSPENDED', 'sk');
  });

  it('removes every table when migrated down', async () => {
    expectSuccess(await migrator.migrateTo(NO_MIGRATIONS), 'Down');
    expect(await listTables(db)).toEqual([]);
    expect(await describeIndexes(db)).toEqual([]);
  });

  it('creates every table again when migrated up after down', async () => {
    expectSuccess(await migrator.migrateToLatest(), 'Up');
    expect(await listTables(db)).toEqual(tableNames);
    expect(await describeColumns(db)).toEqual(schema);
    expect(await describeForeignKeys(db)).toEqual([...foreignKeys].sort());
    expect(await describeIndexes(db)).toEqual([...indexes].sort());
    expect(await countRows(db, 'users')).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------------

describe.each(databases)('the canonical time zones migration on $name', ({ open }) => {
  // As stored before, in any letter case → as stored after.
  const spellings: Array<[string, string]> = [
    ['EUROPE/PRAGUE', 'Europe/Prague'],
    ['europe/bratislava', 'Europe/Bratislava'],
    ['Europe/Vienna', 'Europe/Vienna'],
    ['etc/utc', 'UTC'],
    ['utc', 'UTC'],
    ['GMT', 'UTC'],
    ['asia/kolkata', 'Asia/Kolkata'],
    ['Asia/Calcutta', 'Asia/Calcutta'],
    ['us/pacific', 'US/Pacific'],
    ['PST', 'America/Los_Angeles'],
  ];
  // Every name of the tz database, as sent in three letter cases.
  const tzDatabase = readFileSync(new URL('./fixtures/tz-database-names.txt', import.meta.url), 'utf8')
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .flatMap((name) => [name, name.toLowerCase(), name.toUpperCase()]);

  let database: OpenDatabase;
  let db: Kysely<Database>;
  let migrator: Migrator;
  let up: MigrationResultSet;

  beforeAll(async () => {
    database = await open();
    db = database.db;
    migrator = new Migrator({
      db: database.db,
      provider: { getMigrations: async () => ({ '0001_initial': initial, '0002_canonical_time_zones': canonicalTimeZones }) },
    });
    await migrator.migrateTo('0001_initial');
    await db
      .insertInto('organizations')
      .values(spellings.map(([before], index) => ({ name: `Zone ${index}`, slug: `zone-${index}`, timezone: before, default_locale: 'en' })))
      .execute();
    await db
      .insertInto('users')
      .values([
        ...spellings.map(([before], index) => ({ email: `zone-${index}@example.test`, name: 'Zone', timezone: before })),
        ...tzDatabase.map((before, index) => ({ email: `tz-${index}@example.test`, name: 'Zone', timezone: before })),
        { email: 'no-zone@example.test', name: 'No zone', timezone: null },
      ])
      .execute();
    up = await migrator.migrateToLatest();
  });

  afterAll(async () => {
    await database?.close();
  });

  const zonesOf = async (table: 'organizations' | 'users', key: 'slug' | 'email') =>
    Object.fromEntries((await db.selectFrom(table).select([key, 'timezone']).execute()).map((row: any) => [row[key], row.timezone]));

  it('rewrites every organization\'s and person\'s time zone in the tz database\'s spelling, UTC for its names', async () => {
    expect(up.error).toBeUndefined();
    expect(up.results).toEqual([{ migrationName: '0002_canonical_time_zones', direction: 'Up', status: 'Success' }]);
    expect(await zonesOf('organizations', 'slug')).toEqual(Object.fromEntries(spellings.map(([, after], index) => [`zone-${index}`, after])));
    const users = await zonesOf('users', 'email');
    expect(spellings.map((_spelling, index) => users[`zone-${index}@example.test`])).toEqual(spellings.map(([, after]) => after));
    expect(users['no-zone@example.test']).toBeNull();
  });

  it('stores every name of the tz database, in any letter case, as the API now stores it', async () => {
    const users = await zonesOf('users', 'email');
    const differing = tzDatabase
      .map((before, index) => [before, users[`tz-${index}@example.test`], canonicalTimeZone(before)])
      .filter(([, after, api]) => after !== api);
    expect(differing).toEqual([]);
  });

  it('keeps the new spellings when migrated down', async () => {
    const down = await migrator.migrateDown();

    expect(down.results).toEqual([{ migrationName: '0002_canonical_time_zones', direction: 'Down', status: 'Success' }]);
    expect(Object.values(await zonesOf('organizations', 'slug')).sort()).toEqual(spellings.map(([, after]) => after).sort());
  });
});

// ---------------------------------------------------------------------------------------------------

describe.each(databases)('the event text migration on $name', ({ open }) => {
  const at = new Date('2026-11-20T08:00:00.000Z');
  // Kept before as the body of their deliveries, whatever text their objects hold.
  const events = ['Quote "Baltic" \\ café', 'naïve 𝄞 \u2028 line', 'Plain'].map((title, n) => ({
    id: `event-${n}`,
    data: { orgId: 'org-event-text', teamId: null, object: { id: `task-${n}`, title } },
  }));
  const bodyOf = (event: (typeof events)[number]) => JSON.stringify({ type: 'task.updated', timestamp: at.toISOString(), data: event.data });

  let database: OpenDatabase;
  let migrator: Migrator;

  beforeAll(async () => {
    database = await open();
    migrator = new Migrator({ db: database.db, provider: { getMigrations: async () => migrations } });
    await migrator.migrateTo('0007_caller_notifications');
    await sql`insert into organizations (id, name, slug, timezone, default_locale) values ('org-event-text', 'Events', 'events', 'UTC', 'en')`.execute(database.db);
    for (const event of events) {
      await sql`insert into webhook_events (id, org_id, type, body) values (${event.id}, 'org-event-text', 'task.updated', ${bodyOf(event)})`.execute(database.db);
    }
  });

  afterAll(async () => {
    await database?.close();
  });

  const kept = async (column: 'event' | 'body') =>
    (await sql<{ text: string }>`select ${sql.ref(column)} as text from webhook_events order by id`.execute(database.db)).rows.map((row) => row.text);

  it('keeps each event as the feed answers it, and its deliveries send the same bytes as before', async () => {
    const up = await migrator.migrateTo('0008_event_text');

    expect(up.results).toEqual([{ migrationName: '0008_event_text', direction: 'Up', status: 'Success' }]);
    expect(await kept('event')).toEqual(events.map((event) => eventText(event.id, 'task.updated', at, event.data)));
    expect((await kept('event')).map((text, n) => deliveryBody(events[n]!.id, text))).toEqual(events.map(bodyOf));
  });

  it('gives back the bodies of the deliveries when migrated down', async () => {
    const down = await migrator.migrateDown();

    expect(down.results).toEqual([{ migrationName: '0008_event_text', direction: 'Down', status: 'Success' }]);
    expect(await kept('body')).toEqual(events.map(bodyOf));
  });
});

// ---------------------------------------------------------------------------------------------------

describe.each(databases)('the event size migration on $name', ({ open }) => {
  const at = new Date('2026-11-20T08:00:00.000Z');
  // A meeting of 210 segues of 1,000 control characters (6 bytes of JSON each): 1.3 MB, kept whole before.
  const segues = Array.from({ length: 210 }, (_, n) => ({ id: `segue-${n}`, meetingId: 'meeting-large', content: '\u0001'.repeat(1_000) }));
  const large = eventText('event-large', 'meeting.updated', at, { orgId: 'org-event-size', teamId: null, object: { id: 'meeting-large', status: 'COMPLETED', notes: 'Short notes', segues } });
  const small = eventText('event-small', 'task.updated', at, { orgId: 'org-event-size', teamId: null, object: { id: 'task-small', title: '\u0001'.repeat(1_000) } });

  let database: OpenDatabase;
  let migrator: Migrator;

  beforeAll(async () => {
    database = await open();
    migrator = new Migrator({ db: database.db, provider: { getMigrations: async () => migrations } });
    await migrator.migrateTo('0010_team_member_notifications');
    await sql`insert into organizations (id, name, slug, timezone, default_locale) values ('org-event-size', 'Events', 'events', 'UTC', 'en')`.execute(database.db);
    for (const [id, event] of [['event-large', large], ['event-small', small]]) {
      await sql`insert into webhook_events (id, org_id, type, event) values (${id}, 'org-event-size', ${JSON.parse(event!).type}, ${event})`.execute(database.db);
    }
  });

  afterAll(async () => {
    await database?.close();
  });

  it('rewrites an event kept larger than 64 KB in the reduced form the log writes now, and leaves the others as they were', async () => {
    expect(Buffer.byteLength(large)).toBeGreaterThan(1024 * 1024);

    const up = await migrator.migrateTo('0011_event_size');
    await database.db.transaction().execute((trx) => insertEvents(trx, [{ id: 'event-written', orgId: 'org-event-size', teamId: null, type: 'meeting.updated', event: large }], at));

    expect(up.results).toEqual([{ migrationName: '0011_event_size', direction: 'Up', status: 'Success' }]);
    const { rows } = await sql<{ id: string; event: string }>`select id, event from webhook_events order by id`.execute(database.db);
    const kept = Object.fromEntries(rows.map((row) => [row.id, row.event]));
    expect(JSON.parse(kept['event-large']!)).toEqual({
      id: 'event-large',
      type: 'meeting.updated',
      timestamp: at.toISOString(),
      data: { orgId: 'org-event-size', teamId: null, object: { id: 'meeting-large', status: 'COMPLETED', notes: 'Short notes', reduced: true, kind: 'meeting' } },
    });
    expect(kept['event-large']!.startsWith('{"id":"event-large",')).toBe(true);
    // The same text through today's writer: the same reduced form, byte for byte.
    expect(kept['event-written']).toBe(kept['event-large']);
    expect(kept['event-small']).toBe(small);
  });
});

// ---------------------------------------------------------------------------------------------------

describe.each(databases)('the revisions migration on $name', ({ open }) => {
  const at = new Date('2026-11-20T08:00:00.000Z');
  const events = [
    ['event-goal', 'goal.updated', { id: 'goal-old', title: 'Old', milestones: [{ id: 'milestone-old', goalId: 'goal-old', title: 'A step' }] }],
    ['event-value', 'metric_value.set', { metricId: 'metric-old', week: '2026-11-16', value: '3' }],
    ['event-deleted', 'task.deleted', { id: 'task-old' }],
  ] as const;
  let database: OpenDatabase;
  let migrator: Migrator;
  let before: Record<string, string>;

  const keptEvents = async () => {
    const { rows } = await sql<{ id: string; event: string; position: string }>`select id, event, position::text from webhook_events order by id`.execute(database.db);
    return rows;
  };

  beforeAll(async () => {
    database = await open();
    migrator = new Migrator({ db: database.db, provider: { getMigrations: async () => migrations } });
    await migrator.migrateTo('0011_event_size');
    await sql`insert into organizations (id, name, slug, timezone, default_locale) values ('org-revisions', 'Revisions', 'revisions', 'UTC', 'en')`.execute(database.db);
    for (const [id, type, object] of events) {
      const event = eventText(id, type, at, { orgId: 'org-revisions', teamId: null, object });
      await sql`insert into webhook_events (id, org_id, type, event) values (${id}, 'org-revisions', ${type}, ${event})`.execute(database.db);
    }
    before = Object.fromEntries((await keptEvents()).map((row) => [row.id, row.event]));
  });

  afterAll(async () => {
    await database?.close();
  });

  it('gives the records of the events kept before, nested ones too, the event\'s position as revision, and down takes it out again', async () => {
    const up = await migrator.migrateTo('0012_revisions');
    expect(up.results).toEqual([{ migrationName: '0012_revisions', direction: 'Up', status: 'Success' }]);
    const kept = Object.fromEntries((await keptEvents()).map((row) => [row.id, { object: JSON.parse(row.event).data.object, position: Number(row.position) }]));
    const goalEvent = kept['event-goal']!;
    expect(goalEvent.object).toEqual({ ...events[0][2], revision: goalEvent.position, milestones: [{ ...events[0][2].milestones[0], revision: goalEvent.position }] });
    expect(kept['event-value']!.object).toEqual({ ...events[1][2], revision: kept['event-value']!.position });
    expect(kept['event-deleted']!.object).toEqual({ id: 'task-old' });

    const down = await migrator.migrateTo('0011_event_size');
    expect(down.results).toEqual([{ migrationName: '0012_revisions', direction: 'Down', status: 'Success' }]);
    expect(Object.fromEntries((await keptEvents()).map((row) => [row.id, row.event]))).toEqual(before);
  });
});

// ---------------------------------------------------------------------------------------------------

describe.each(databases)('the member revisions migration on $name', ({ open }) => {
  const at = new Date('2026-11-27T08:00:00.000Z');
  const events = [
    ['event-org', 'organization.updated', { id: 'org-members', name: 'Members', status: 'ACTIVE', role: 'OWNER', timezone: 'UTC', defaultLocale: 'en' }],
    ['event-member', 'team_member.added', { userId: 'user-old', email: 'old@example.com', name: 'Old', role: 'MEMBER' }],
    ['event-removed', 'team_member.removed', { userId: 'user-old' }],
  ] as const;
  let database: OpenDatabase;
  let migrator: Migrator;
  let before: Record<string, string>;

  const keptEvents = async () => {
    const { rows } = await sql<{ id: string; event: string; position: string }>`select id, event, position::text from webhook_events order by id`.execute(database.db);
    return rows;
  };

  beforeAll(async () => {
    database = await open();
    migrator = new Migrator({ db: database.db, provider: { getMigrations: async () => migrations } });
    await migrator.migrateTo('0013_event_log_purges');
    await sql`insert into organizations (id, name, slug, timezone, default_locale) values ('org-members', 'Members', 'members', 'UTC', 'en')`.execute(database.db);
    for (const [id, type, object] of events) {
      const event = eventText(id, type, at, { orgId: 'org-members', teamId: null, object });
      await sql`insert into webhook_events (id, org_id, type, event) values (${id}, 'org-members', ${type}, ${event})`.execute(database.db);
    }
    before = Object.fromEntries((await keptEvents()).map((row) => [row.id, row.event]));
  });

  afterAll(async () => {
    await database?.close();
  });

  it("gives the organization and members of the events kept before the event's position as revision, after their key, and down takes it out again", async () => {
    const up = await migrator.migrateTo('0014_member_revisions');
    expect(up.results).toEqual([{ migrationName: '0014_member_revisions', direction: 'Up', status: 'Success' }]);
    const kept = Object.fromEntries((await keptEvents()).map((row) => [row.id, { object: JSON.parse(row.event).data.object, position: Number(row.position) }]));
    expect(Object.keys(kept['event-org']!.object).slice(0, 2)).toEqual(['id', 'revision']);
    expect(kept['event-org']!.object).toEqual({ ...events[0][2], revision: kept['event-org']!.position });
    expect(Object.keys(kept['event-member']!.object).slice(0, 2)).toEqual(['userId', 'revision']);
    expect(kept['event-member']!.object).toEqual({ ...events[1][2], revision: kept['event-member']!.position });
    expect(kept['event-removed']!.object).toEqual({ userId: 'user-old' });
    const { rows } = await sql<{ revision: string }>`select revision::text from organizations where id = 'org-members'`.execute(database.db);
    expect(Number(rows[0]!.revision)).toBeGreaterThan(0);

    const down = await migrator.migrateTo('0013_event_log_purges');
    expect(down.results).toEqual([{ migrationName: '0014_member_revisions', direction: 'Down', status: 'Success' }]);
    expect(Object.fromEntries((await keptEvents()).map((row) => [row.id, row.event]))).toEqual(before);
  });
});

// ---------------------------------------------------------------------------------------------------

describe.each(databases)('the reference revisions migration on $name', ({ open }) => {
  const at = new Date('2026-11-28T08:00:00.000Z');
  const events = [
    ['event-deleted', 'task.deleted', { id: 'task-gone' }],
    ['event-removed', 'team_member.removed', { userId: 'user-old' }],
    ['event-rating', 'meeting_rating.set', { meetingId: 'meeting-1', userId: 'user-old' }],
    ['event-ack', 'cascading_message.acknowledged', { id: 'message-1', userId: 'user-old' }],
    ['event-org', 'organization.updated', { id: 'org-refs', revision: 3, name: 'Refs', status: 'ACTIVE', role: 'OWNER', timezone: 'UTC', defaultLocale: 'en' }],
  ] as const;
  let database: OpenDatabase;
  let migrator: Migrator;
  let before: Record<string, string>;

  const keptEvents = async () => {
    const { rows } = await sql<{ id: string; event: string; position: string }>`select id, event, position::text from webhook_events order by id`.execute(database.db);
    return rows;
  };

  beforeAll(async () => {
    database = await open();
    migrator = new Migrator({ db: database.db, provider: { getMigrations: async () => migrations } });
    await migrator.migrateTo('0015_org_exports');
    await sql`insert into organizations (id, name, slug, timezone, default_locale) values ('org-refs', 'Refs', 'refs', 'UTC', 'en')`.execute(database.db);
    for (const [id, type, object] of events) {
      const event = eventText(id, type, at, { orgId: 'org-refs', teamId: null, object });
      await sql`insert into webhook_events (id, org_id, type, event) values (${id}, 'org-refs', ${type}, ${event})`.execute(database.db);
    }
    before = Object.fromEntries((await keptEvents()).map((row) => [row.id, row.event]));
  });

  afterAll(async () => {
    await database?.close();
  });

  it("gives the references of the events kept before the event's position as revision, last, leaves the records' events as they are, and down takes it out again", async () => {
    const up = await migrator.migrateTo('0016_reference_revisions');
    expect(up.results).toEqual([{ migrationName: '0016_reference_revisions', direction: 'Up', status: 'Success' }]);
    const kept = Object.fromEntries((await keptEvents()).map((row) => [row.id, { object: JSON.parse(row.event).data.object, position: Number(row.position) }]));
    for (const [id, , object] of events.slice(0, 4)) {
      expect(kept[id]!.object).toEqual({ ...object, revision: kept[id]!.position });
      expect(Object.keys(kept[id]!.object).at(-1)).toBe('revision');
    }
    expect(kept['event-org']!.object).toEqual(events[4][2]);

    const down = await migrator.migrateTo('0015_org_exports');
    expect(down.results).toEqual([{ migrationName: '0016_reference_revisions', direction: 'Down', status: 'Success' }]);
    expect(Object.fromEntries((await keptEvents()).map((row) => [row.id, row.event]))).toEqual(before);
  });
});

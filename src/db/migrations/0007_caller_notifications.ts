/**
 * 0007_caller_notifications: the database itself tells every listening server process when a
 * caller's facts change, so that callers kept in memory (src/auth/callerCache.ts) are forgotten
 * whoever made the change: the API, the operator command line or direct SQL.
 *
 * One NOTIFY on `auth_callers` per changed row, sent at commit: `user:<id>` when a key, an account
 * or a membership of that account changed, `org:<id>` when an organization's name, status, time
 * zone or language changed, `flush` when one of the tables was truncated. Only the columns
 * authentication reads fire them: `api_keys.last_used_at`, which authentication itself writes about
 * once a minute per key, is left out of the column list, so that update does not even call the
 * trigger. A new key or account notifies nothing: unknown keys are never kept.
 *
 * Row-level triggers: a statement that changes many rows sends one notification per distinct
 * payload (PostgreSQL folds identical ones of a transaction). A notifying transaction takes
 * PostgreSQL's notification lock at commit, which serialises notifying commits; only changes of
 * these rarely written rows pay it.
 *
 * Frozen in time: imports nothing from the application, only `kysely`.
 */
import { sql, type Kysely } from 'kysely';

const watched = [
  {
    table: 'api_keys',
    id: 'user_id',
    kind: 'user',
    columns: ['user_id', 'key_hash', 'name', 'scopes', 'expires_at', 'revoked_at'],
    onInsert: false,
  },
  { table: 'users', id: 'id', kind: 'user', columns: ['id', 'email', 'name', 'timezone', 'system_role'], onInsert: false },
  { table: 'organization_members', id: 'user_id', kind: 'user', columns: ['org_id', 'user_id', 'role'], onInsert: true },
  { table: 'organizations', id: 'id', kind: 'org', columns: ['id', 'name', 'status', 'timezone', 'default_locale'], onInsert: false },
] as const;

export async function up(db: Kysely<any>): Promise<void> {
  // The row's id column and the kind of payload are the trigger's arguments: one function serves all four tables.
  await sql`
    create function notify_caller_change() returns trigger language plpgsql as $$
    begin
      if tg_op in ('UPDATE', 'DELETE') then
        perform pg_notify('auth_callers', tg_argv[1] || ':' || (to_jsonb(old) ->> tg_argv[0]));
      end if;
      if tg_op in ('UPDATE', 'INSERT') then
        perform pg_notify('auth_callers', tg_argv[1] || ':' || (to_jsonb(new) ->> tg_argv[0]));
      end if;
      return null;
    end
    $$`.execute(db);
  await sql`
    create function notify_callers_flush() returns trigger language plpgsql as $$
    begin
      perform pg_notify('auth_callers', 'flush');
      return null;
    end
    $$`.execute(db);

  for (const { table, id, kind, columns, onInsert } of watched) {
    const args = sql`${sql.lit(id)}, ${sql.lit(kind)}`;
    const list = sql.join(columns.map((column) => sql.ref(column)));
    const before = sql.join(columns.map((column) => sql.ref(`old.${column}`)));
    const after = sql.join(columns.map((column) => sql.ref(`new.${column}`)));
    await sql`
      create trigger ${sql.id(`${table}_caller_update`)} after update of ${list} on ${sql.table(table)}
      for each row when ((${before}) is distinct from (${after}))
      execute function notify_caller_change(${args})`.execute(db);
    await sql`
      create trigger ${sql.id(`${table}_caller_delete`)} after delete on ${sql.table(table)}
      for each row execute function notify_caller_change(${args})`.execute(db);
    if (onInsert) {
      await sql`
        create trigger ${sql.id(`${table}_caller_insert`)} after insert on ${sql.table(table)}
        for each row execute function notify_caller_change(${args})`.execute(db);
    }
    await sql`
      create trigger ${sql.id(`${table}_caller_truncate`)} after truncate on ${sql.table(table)}
      for each statement execute function notify_callers_flush()`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const { table, onInsert } of watched) {
    for (const event of ['update', 'delete', ...(onInsert ? ['insert'] : []), 'truncate']) {
      await sql`drop trigger ${sql.id(`${table}_caller_${event}`)} on ${sql.table(table)}`.execute(db);
    }
  }
  await sql`drop function notify_callers_flush()`.execute(db);
  await sql`drop function notify_caller_change()`.execute(db);
}

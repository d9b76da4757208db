/**
 * 0009_caller_key_id: the trigger of 0007 on `api_keys` watches `id` too, so that it watches every
 * column authentication reads but the key's use (`last_used_at`, which authentication itself
 * records): a caller kept in memory carries its key's id, by which the key's use is recorded. 0007
 * already watched `expires_at`, `revoked_at` and the rest. `test/migrations.test.ts` finds the
 * columns authentication reads from its own query and holds the triggers to them.
 *
 * The trigger keeps its name and 0007's function, so 0007's `down` still removes it.
 *
 * Frozen in time: imports nothing from the application, only `kysely`.
 */
import { sql, type Kysely } from 'kysely';

async function watch(db: Kysely<any>, columns: readonly string[]): Promise<void> {
  const list = sql.join(columns.map((column) => sql.ref(column)));
  const before = sql.join(columns.map((column) => sql.ref(`old.${column}`)));
  const after = sql.join(columns.map((column) => sql.ref(`new.${column}`)));
  await sql`drop trigger api_keys_caller_update on api_keys`.execute(db);
  await sql`
    create trigger api_keys_caller_update after update of ${list} on api_keys
    for each row when ((${before}) is distinct from (${after}))
    execute function notify_caller_change('user_id', 'user')`.execute(db);
}

const in0007 = ['user_id', 'key_hash', 'name', 'scopes', 'expires_at', 'revoked_at'];

export async function up(db: Kysely<any>): Promise<void> {
  await watch(db, ['id', ...in0007]);
}

export async function down(db: Kysely<any>): Promise<void> {
  await watch(db, in0007);
}

/**
 * 0010_team_member_notifications: a change of a team's members tells every listening server process,
 * as 0007 does for keys, accounts and organization memberships, so that an open event stream
 * (src/live/streams.ts) decides its reader's access anew before its next event: a member added sees
 * the team from then on, a member removed or made a Viewer no more than the new role allows.
 *
 * The same channel and payload as 0007 (`user:<id>` on `auth_callers`, through its function
 * `notify_caller_change`): the caller cache then forgets that person's callers too, which costs their
 * next request one statement. A team deleted removes its members' rows, and each tells. Only the
 * columns that decide access fire the trigger. A notifying transaction takes PostgreSQL's
 * notification lock at commit; only changes of team members, which are rare, pay it.
 *
 * Frozen in time: imports nothing from the application, only `kysely`.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const args = sql`${sql.lit('user_id')}, ${sql.lit('user')}`;
  await sql`
    create trigger team_members_caller_update after update of team_id, user_id, role on team_members
    for each row when ((old.team_id, old.user_id, old.role) is distinct from (new.team_id, new.user_id, new.role))
    execute function notify_caller_change(${args})`.execute(db);
  await sql`
    create trigger team_members_caller_delete after delete on team_members
    for each row execute function notify_caller_change(${args})`.execute(db);
  await sql`
    create trigger team_members_caller_insert after insert on team_members
    for each row execute function notify_caller_change(${args})`.execute(db);
  await sql`
    create trigger team_members_caller_truncate after truncate on team_members
    for each statement execute function notify_callers_flush()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const event of ['update', 'delete', 'insert', 'truncate']) {
    await sql`drop trigger ${sql.id(`team_members_caller_${event}`)} on team_members`.execute(db);
  }
}

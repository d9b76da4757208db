/**
 * 0014_member_revisions: the organization, its members, a team's members and the webhook
 * subscriptions carry `revision` too, drawn as 0012_revisions draws it (docs/decisions.md, "Revisions").
 *
 * - Each table gets the column and 0012's `set_revision` trigger, with the columns its record does not
 *   show: a change of only those keeps the revision (an organization's slug; a subscription's sealed
 *   secrets, its failure clock and the snapshot of its creation).
 * - A member's record shows the person's name and e-mail from their account: an account's change of
 *   either (the operator's `update-user`) is a change of each of their memberships, so it bumps them.
 * - Authentication reads an organization's revision with its settings (`GET /orgs/{orgId}` answers from
 *   the caller it keeps), so the organization's trigger of 0007_caller_notifications watches it too.
 *   It moves only with a column already watched; listing it keeps the rule "every column read is
 *   watched" one the migrations test can check.
 * - An acknowledgement no longer bumps its message (nor so its meeting): `acknowledged` is the reader's
 *   own state, which no other reader's GET shows, so it moved every reader's revision for nothing and
 *   an event of the meeting could not carry it for everyone. Its own event tells the acknowledger.
 * - The events the log kept before of these records carry them with the event's position as revision,
 *   older than any number drawn here, as 0012 did for the team records. Down takes it out again.
 *
 * Frozen in time: imports nothing from the application, only `kysely`.
 */
import { sql, type Kysely } from 'kysely';

/** The tables whose rows are records that now carry a revision, each with the columns its record does not show. */
const tables = {
  organizations: ['slug'],
  organization_members: [],
  team_members: [],
  webhook_subscriptions: ['secret', 'previous_secret', 'previous_secret_expires_at', 'failing_since', 'created_snapshot'],
} as const satisfies Record<string, readonly string[]>;

/** The event types whose `object` is one of these records, and the record's key, after which `revision` goes. */
const recordEvents = [
  ['organization.updated', 'id'],
  ['organization_member.added', 'userId'],
  ['organization_member.updated', 'userId'],
  ['team_member.added', 'userId'],
  ['team_member.updated', 'userId'],
] as const;

/** 0007's trigger that tells the servers' kept callers of a change of these columns of an organization. */
async function callerUpdateTrigger(db: Kysely<any>, columns: readonly string[]): Promise<void> {
  const before = sql.join(columns.map((column) => sql.ref(`old.${column}`)));
  const after = sql.join(columns.map((column) => sql.ref(`new.${column}`)));
  await sql`drop trigger organizations_caller_update on organizations`.execute(db);
  await sql`
    create trigger organizations_caller_update after update of ${sql.join(columns.map((column) => sql.ref(column)))} on organizations
    for each row when ((${before}) is distinct from (${after}))
    execute function notify_caller_change('id', 'org')`.execute(db);
}

export async function up(db: Kysely<any>): Promise<void> {
  for (const [table, unshown] of Object.entries(tables)) {
    // The volatile default numbers the existing rows, one number each; the trigger numbers every write after.
    await sql.raw(`alter table ${table} add column revision bigint not null default nextval('webhook_events_position_seq')`).execute(db);
    await sql.raw(`alter table ${table} alter column revision drop default`).execute(db);
    const args = unshown.map((column) => `'${column}'`).join(', ');
    await sql.raw(`create trigger ${table}_revision before insert or update on ${table} for each row execute function set_revision(${args})`).execute(db);
  }
  // An update of the membership's row fires its `set_revision`, under that row's lock.
  await sql`
    create function bump_member_revisions() returns trigger language plpgsql as $$
    begin
      update organization_members set revision = 0 where user_id = new.id;
      update team_members set revision = 0 where user_id = new.id;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger users_member_revisions after update of name, email on users
    for each row when (old.name is distinct from new.name or old.email is distinct from new.email)
    execute function bump_member_revisions()`.execute(db);
  await callerUpdateTrigger(db, ['id', 'revision', 'name', 'status', 'timezone', 'default_locale']);
  await sql`drop trigger message_acknowledgements_parent_revision on message_acknowledgements`.execute(db);
  for (const [type, key] of recordEvents) {
    await sql`
      update webhook_events
      set event = regexp_replace(event, ${`"object":\\{"${key}":("[^"]*"),`}, '"object":{"' || ${key}::text || '":\\1,"revision":' || position || ',')
      where type = ${type}`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const [type] of recordEvents) {
    await sql`update webhook_events set event = regexp_replace(event, '("object":\\{"[A-Za-z]+":"[^"]*"),"revision":[0-9]+,', '\\1,') where type = ${type}`.execute(db);
  }
  await sql`
    create trigger message_acknowledgements_parent_revision after insert or update or delete on message_acknowledgements
    for each row execute function bump_parent_revision('message_id', 'cascading_messages')`.execute(db);
  await callerUpdateTrigger(db, ['id', 'name', 'status', 'timezone', 'default_locale']);
  await sql`drop trigger users_member_revisions on users`.execute(db);
  await sql`drop function bump_member_revisions()`.execute(db);
  for (const table of Object.keys(tables)) {
    await sql.raw(`drop trigger ${table}_revision on ${table}`).execute(db);
    await sql.raw(`alter table ${table} drop column revision`).execute(db);
  }
}

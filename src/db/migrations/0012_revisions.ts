/**
 * 0012_revisions: every record the API shows from a row of its own carries `revision`, the log
 * position of the last change that altered what a GET of it answers (docs/decisions.md, "Revisions").
 *
 * - The number is drawn from the sequence of `webhook_events.position`, so revisions and event
 *   positions share one number space, and it is drawn by a `before insert or update` trigger: one
 *   mechanism the database applies to every write, which no handler can forget or set itself.
 * - A `before update` row trigger runs once PostgreSQL holds the row's lock, which it keeps until the
 *   transaction ends: of two transactions changing one row, the one that commits later draws its
 *   number later, so a record's revisions strictly increase in commit order, even when transactions
 *   commit out of the order of their ids.
 * - A record whose GET shows rows of another table (a goal its milestones, a meeting its ratings,
 *   segues, headlines and messages; a message who acknowledged it) is bumped by those rows' triggers:
 *   an update of the parent row, which takes its lock and so its own trigger's number.
 * - An update that leaves the row as it was (but for columns the record does not show, such as a
 *   weekly value's `updated_at`) keeps its revision and bumps no parent: a PUT sent twice answers
 *   the same twice.
 * - The sequence stops at 2^53 − 1, so a revision is always an exact JavaScript number.
 * - Existing rows are numbered once, in no particular order (each a new number). The events the log
 *   kept before carry their records with the event's own position as revision: older than any
 *   number drawn here, as they are. Down takes `revision` out of the events again.
 *
 * Frozen in time: imports nothing from the application, only `kysely`.
 */
import { sql, type Kysely } from 'kysely';

/** The tables whose rows are records the API shows with a revision, each with the columns its record does not show. */
const tables = {
  teams: [],
  tasks: [],
  issues: [],
  goals: [],
  milestones: [],
  meetings: [],
  segues: [],
  headlines: [],
  cascading_messages: [],
  metrics: [],
  metric_values: ['updated_at'],
  visions: [],
  seats: [],
  people_reviews: [],
  documents: [],
} as const satisfies Record<string, readonly string[]>;

/** A child table, the column naming its parent's row and the parent's table: a change of the child is a change of the parent. */
const parents = [
  ['milestones', 'goal_id', 'goals'],
  ['meeting_ratings', 'meeting_id', 'meetings'],
  ['segues', 'meeting_id', 'meetings'],
  ['headlines', 'meeting_id', 'meetings'],
  ['cascading_messages', 'meeting_id', 'meetings'],
  ['message_acknowledgements', 'message_id', 'cascading_messages'],
] as const;

const MAX_SAFE_INTEGER = '9007199254740991';

/** The event types whose `object` is one of these records (the others carry an id or a reference). */
const recordEvents = [
  'team.created', 'team.updated', 'task.created', 'task.updated', 'issue.created', 'issue.updated', 'goal.created', 'goal.updated',
  'milestone.created', 'milestone.updated', 'metric.created', 'metric.updated', 'meeting.created', 'meeting.updated',
  'meeting.status_changed', 'meeting.ratings_revealed', 'segue.created', 'headline.created', 'cascading_message.created',
  'vision.created', 'vision.updated', 'seat.created', 'seat.updated', 'people_review.set', 'document.created',
];

export async function up(db: Kysely<any>): Promise<void> {
  await sql.raw(`alter sequence webhook_events_position_seq maxvalue ${MAX_SAFE_INTEGER}`).execute(db);
  // An update that leaves the row as it was (but for the columns named as the trigger's arguments,
  // which the record does not show) keeps its revision: a PUT sent twice answers the same twice.
  await sql`
    create function set_revision() returns trigger language plpgsql as $$
    begin
      if tg_op = 'UPDATE' and (to_jsonb(old) - coalesce(tg_argv, '{}')) = (to_jsonb(new) - coalesce(tg_argv, '{}')) then
        return new;
      end if;
      new.revision := nextval('webhook_events_position_seq');
      return new;
    end $$`.execute(db);
  // The parent row's update fires the parent's own `set_revision`, under the parent row's lock.
  await sql`
    create function bump_parent_revision() returns trigger language plpgsql as $$
    declare
      child record := case when tg_op = 'DELETE' then old else new end;
    begin
      -- The child's revision is part of the parent's record: only an update that left the child as it was is none.
      if tg_op = 'UPDATE' and to_jsonb(old) = to_jsonb(new) then
        return null;
      end if;
      execute format('update %I set revision = 0 where id = $1', tg_argv[1]) using to_jsonb(child) ->> tg_argv[0];
      if tg_op = 'UPDATE' and (to_jsonb(old) ->> tg_argv[0]) is distinct from (to_jsonb(new) ->> tg_argv[0]) then
        execute format('update %I set revision = 0 where id = $1', tg_argv[1]) using to_jsonb(old) ->> tg_argv[0];
      end if;
      return null;
    end $$`.execute(db);
  for (const table of Object.keys(tables)) {
    // The volatile default numbers the existing rows, one number each; the trigger numbers every write after.
    await sql.raw(`alter table ${table} add column revision bigint not null default nextval('webhook_events_position_seq')`).execute(db);
    await sql.raw(`alter table ${table} alter column revision drop default`).execute(db);
    const unshown = tables[table as keyof typeof tables].map((column) => `'${column}'`).join(', ');
    await sql.raw(`create trigger ${table}_revision before insert or update on ${table} for each row execute function set_revision(${unshown})`).execute(db);
  }
  // An event the log kept before carries its records (and their nested ones) with its own position as
  // their revision: a number of the same space, smaller than every revision numbered above, so older.
  await sql`
    update webhook_events set event = substr(event, 1, strpos(event, '"object":') - 1)
      || regexp_replace(substr(event, strpos(event, '"object":')), '\\{"id":("[^"]*"),', '{"id":\\1,"revision":' || position || ',', 'g')
    where type in (${sql.join(recordEvents)})`.execute(db);
  await sql`
    update webhook_events set event = regexp_replace(event, '"object":\\{', '"object":{"revision":' || position || ',')
    where type = 'metric_value.set'`.execute(db);
  for (const [child, column, parent] of parents) {
    await sql
      .raw(
        `create trigger ${child}_parent_revision after insert or update or delete on ${child} for each row execute function bump_parent_revision('${column}', '${parent}')`,
      )
      .execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const [child] of parents) await sql.raw(`drop trigger ${child}_parent_revision on ${child}`).execute(db);
  for (const table of Object.keys(tables)) {
    await sql.raw(`drop trigger ${table}_revision on ${table}`).execute(db);
    await sql.raw(`alter table ${table} drop column revision`).execute(db);
  }
  await sql`update webhook_events set event = regexp_replace(event, '"revision":[0-9]+,', '', 'g') where event like '%"revision":%'`.execute(db);
  await sql`drop function bump_parent_revision()`.execute(db);
  await sql`drop function set_revision()`.execute(db);
  await sql`alter sequence webhook_events_position_seq no maxvalue`.execute(db);
}

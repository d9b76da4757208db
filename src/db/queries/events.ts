/**
 * Queries of the event log (0005_event_log, 0008_event_text), the one module of its SQL: writing it in
 * the change's own transaction (src/events/outbox.ts decides what, and the changes of one statement
 * write their event themselves, `changeWithEvent`), each event at most `EVENT_MAX_BYTES`; its horizon,
 * below which every reader reads (`belowHorizon`), so that no event ever commits behind a reader's
 * position; and its reads, oldest first in the log's order (`txid`, `position`): an organization's feed
 * and the live streams. Pings are no change and stay out. The log keeps each event's JSON as the feed
 * answers it: a page is its rows' text as stored, joined here, so PostgreSQL neither takes the text
 * apart nor sorts it into one value (an ordered `string_agg` cost a page of 100 events about as much as
 * the rest of its statement). The webhooks' queries (./webhooks.ts) fan the log out into deliveries.
 */
import { sql, type Kysely, type OperationNodeSource, type RawBuilder, type Transaction } from 'kysely';
import type { Database } from '../database.js';
import { decodeCursor, type SortKeyType } from '../pagination.js';
import { prepared } from '../prepared.js';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * Channel of PostgreSQL's NOTIFY that wakes the live streams of every server process (src/live/streams.ts):
 * the fan-out sends it when it passed events, so the log below the horizon has grown. A change itself
 * sends nothing (see `fanOut`, ./webhooks.ts).
 */
export const logChannel = 'event_log';

/** A ping describes no change: it is sent to one subscription and stays out of the feed and the fan-out. */
export const pingType = 'webhook.ping';

// ---------------------------------------------------------------------------------------------------
// Writing the log

/** An event to write: the organization it belongs to, its type and its JSON text (`eventText`). */
export interface NewEvent {
  id: string;
  orgId: string;
  teamId: string | null;
  type: string;
  event: string;
  /** The W3C `traceparent` of the request that wrote it, which its deliveries send; none outside a request. */
  traceparent?: string | null;
  /** Whether its object is a reference that takes the log position as `revision`, last, as it is written (`logRevision`). */
  logRevision?: boolean;
}

/** Where a changed resource lives, found from what the request names. */
export type SubjectKind =
  | 'organization'
  | 'team'
  | 'teamWithoutVision'
  | 'task'
  | 'issue'
  | 'goal'
  | 'milestone'
  | 'metric'
  | 'meeting'
  | 'message'
  | 'goalOfMilestone'
  | 'meetingOfMessage'
  | 'seat'
  | 'document'
  | 'unacknowledgedMessages';

export interface Subject {
  /** The subject's own id where the lookup gives one (a message), else the key it was found by. */
  id: string;
  org_id: string;
  team_id: string | null;
}

/** The team-owned tables whose rows carry `team_id`. */
const teamRows = { task: 'tasks', issue: 'issues', goal: 'goals', metric: 'metrics', meeting: 'meetings', seat: 'seats', document: 'documents' } as const;

function subjectsOf(kind: SubjectKind, keys: readonly string[], userId: string) {
  const ids = sql`(${[...keys]}::text[])`;
  switch (kind) {
    case 'organization':
      return sql`select o.id, o.id as org_id, null::text as team_id from organizations o where o.id = any${ids}`;
    case 'team':
      return sql`select t.id, t.org_id, t.id as team_id from teams t where t.id = any${ids}`;
    case 'teamWithoutVision':
      return sql`select t.id, t.org_id, t.id as team_id from teams t
        where t.id = any${ids} and not exists (select 1 from visions v where v.team_id = t.id)`;
    case 'milestone':
      return sql`select x.id, t.org_id, t.id as team_id from milestones x join goals g on g.id = x.goal_id join teams t on t.id = g.team_id
        where x.id = any${ids}`;
    case 'goalOfMilestone':
      return sql`select g.id, t.org_id, t.id as team_id from milestones x join goals g on g.id = x.goal_id join teams t on t.id = g.team_id
        where x.id = any${ids}`;
    case 'meetingOfMessage':
      return sql`select m.id, x.org_id, m.team_id from cascading_messages x join meetings m on m.id = x.meeting_id where x.id = any${ids}`;
    case 'message':
      return sql`select x.id, x.org_id, m.team_id from cascading_messages x join meetings m on m.id = x.meeting_id where x.id = any${ids}`;
    case 'unacknowledgedMessages':
      return sql`select x.id, x.org_id, m.team_id from cascading_messages x join meetings m on m.id = x.meeting_id
        where x.id = any${ids} and not exists (select 1 from message_acknowledgements a where a.message_id = x.id and a.user_id = ${userId})`;
    default:
      return sql`select x.id, t.org_id, t.id as team_id from ${sql.table(teamRows[kind])} x join teams t on t.id = x.team_id
        where x.id = any${ids}`;
  }
}

/** The subjects of a change, looked up before it runs (a row it deletes, or what it alters), in one statement. */
export async function subjectsBefore(db: Db, kind: SubjectKind, keys: readonly string[], userId: string): Promise<Subject[]> {
  const [subjects] = await lookupsBefore(db, [{ kind, keys }], userId);
  return subjects!;
}

/**
 * Several lookups of subjects before a change, in one statement: the change's own subjects and the
 * records it alters as a side effect through a row it deletes (a deleted milestone's goal). Answers
 * each lookup's subjects, in the order asked.
 */
export async function lookupsBefore(db: Db, lookups: readonly { kind: SubjectKind; keys: readonly string[] }[], userId: string): Promise<Subject[][]> {
  const parts = lookups.map(
    ({ kind, keys }, index) => sql`(select ${sql.lit(index)} as lookup, subject.id, subject.org_id, subject.team_id from (${subjectsOf(kind, keys, userId)}) subject)`,
  );
  const { rows } = await sql<Subject & { lookup: number }>`select u.* from (${sql.join(parts, sql` union all `)}) u order by u.lookup, u.id`.execute(db);
  return lookups.map((_lookup, index) => rows.filter((row) => row.lookup === index).map(({ id, org_id, team_id }) => ({ id, org_id, team_id })));
}

/**
 * The largest event the log keeps: 64 KB of JSON (UTF-8 bytes), the whole event with its `id`. A live
 * stream's buffer and a feed page's budget follow from it (src/live/streams.ts, `FEED_PAGE_BYTES` below).
 */
export const EVENT_MAX_BYTES = 64 * 1024;
/** In a reduced event, a field of the record is kept when its value's JSON takes at most this. */
export const REDUCED_FIELD_MAX_BYTES = 1024;
/** …and while the fields kept so far take at most this: a reduced event stays far below `EVENT_MAX_BYTES`. */
const REDUCED_FIELDS_MAX_BYTES = 32 * 1024;

/**
 * The SQL of the event the log keeps for the SQL of an event's text (`{"id","type","timestamp","data":
 * {"orgId","teamId","object"}}`, compact): the text itself when it takes at most `EVENT_MAX_BYTES`, else
 * its reduced form, whose `object` is `{"reduced":true,"kind":<the type's subject>}` after the record's
 * fields that are a string, number, boolean or null of at most `REDUCED_FIELD_MAX_BYTES` of JSON, each
 * exactly as in the record (its id, who wrote it and whom it concerns among them, which the per-reader
 * views judge by), in the record's order; lists, objects and long texts are left out, and the reader
 * reads them with the subject's GET. Every writer of the log passes through here (`writeEvents`,
 * `changeWithEvent`), so no event of any kind can silence a stream or outgrow a page.
 *
 * `reduced` (SQL, true for a row) keeps the reduced form whatever the text's size: the object of a
 * large record read without its lists for its event (`findMeetingForEvent`), whose reduced form is
 * the one of the whole, since lists are never kept.
 *
 * `json` (not `jsonb`) keeps each value's text and the members' order as written. A text within the
 * limit costs its length's lookup only.
 */
function keptEvent(text: RawBuilder<unknown>, reduced: RawBuilder<unknown> = sql`false`): RawBuilder<string> {
  const reducedText = sql`(select '{"id":' || (j.v->'id')::text || ',"type":' || (j.v->'type')::text || ',"timestamp":' || (j.v->'timestamp')::text
      || ',"data":{"orgId":' || (j.v->'data'->'orgId')::text || ',"teamId":' || (j.v->'data'->'teamId')::text || ',"object":{'
      || coalesce((
        select string_agg(m.member, ',' order by m.ord) || ',' from (
          select f.ord, to_json(f.key)::text || ':' || f.value::text as member,
            sum(octet_length(f.key) + octet_length(f.value::text) + 4) over (order by f.ord) as kept
          from json_each(j.v->'data'->'object') with ordinality f(key, value, ord)
          where json_typeof(f.value) in ('string', 'number', 'boolean', 'null') and octet_length(f.value::text) <= ${sql.lit(REDUCED_FIELD_MAX_BYTES)}
        ) m where m.kept <= ${sql.lit(REDUCED_FIELDS_MAX_BYTES)}
      ), '')
      || '"reduced":true,"kind":' || to_json(split_part(j.v->>'type', '.', 1))::text || '}}}'
    from (select t.event::json as v) j)`;
  return sql<string>`(select case when not ${reduced} and octet_length(t.event) <= ${sql.lit(EVENT_MAX_BYTES)} then t.event else ${reducedText} end
    from (select (${text})::text as event) t)`;
}

/**
 * Writes the events of `sent` (rows of id, org_id, team_id, type, event, traceparent, and whether to
 * keep it reduced whatever its size) into the log, in one statement of the change's transaction.
 */
async function writeEvents(trx: Transaction<Database>, sent: RawBuilder<unknown>, now: Date): Promise<void> {
  await sql`
    insert into webhook_events (id, org_id, team_id, type, event, traceparent, created_at)
    select sent.id, sent.org_id, sent.team_id, sent.type, ${keptEvent(sql`sent.event`, sql`sent.reduced`)}, sent.traceparent, ${now}
    from (${sent}) sent (id, org_id, team_id, type, event, traceparent, reduced)
  `.execute(trx);
}

/**
 * The SQL of a log position drawn as an event is written, as text: the `revision` of an event whose
 * object is a reference (what is gone, who was removed, which rating changed, who acknowledged), the
 * log position of its change. It is drawn from the sequence of revisions and positions (0012_revisions)
 * after every revision the change drew, so it is greater than the last revision of what is gone, and a
 * record that comes back (a member added again) gets a greater one.
 */
export const logRevision = sql<string>`nextval('webhook_events_position_seq')::text`;

/** The SQL of a reference object's JSON text with `revision` (`logRevision`) as its last member. */
const withLogRevision = (object: RawBuilder<unknown>) => sql`left(${object}, -1) || ',"revision":' || ${logRevision} || '}'`;

/** Writes events whose organization is known (their subjects were looked up before the change). */
export async function insertEvents(trx: Transaction<Database>, events: readonly NewEvent[], now: Date): Promise<void> {
  await insertChangeEvents(trx, events, [], now);
}

/** An event whose subject (its organization and team) is found from what the request names, as it is written. */
export interface EventOf {
  id: string;
  kind: SubjectKind;
  key: string;
  userId: string;
  type: string;
  /** The team of a resource created outside any team's rows (a new team); else the subject's. */
  teamId?: string | undefined;
  /** The event's object, as JSON text. */
  object: string;
  /**
   * Whether the event is kept in its reduced form whatever the size of `object`: the object is a large
   * record read without its lists (`findMeetingForEvent`), whose reduced form holds none of them.
   */
  reduced?: boolean;
  /** Whether its object is a reference that takes the log position as `revision`, last, as it is written (`logRevision`). */
  logRevision?: boolean;
  at: Date;
  traceparent?: string | null;
}

/**
 * Writes the events of a change in one statement, in this order: those whose organization is known
 * (`known`), then those whose subject is found from a key as they are written (`found`: a change's
 * own event when its subject still exists after it, and the events of the records it altered as a
 * side effect). One statement whatever their number, so a side effect costs its change no round trip
 * of its own to write.
 */
export async function insertChangeEvents(trx: Transaction<Database>, known: readonly NewEvent[], found: readonly EventOf[], now: Date): Promise<void> {
  if (known.length === 0 && found.length === 0) return;
  // A known event's text ends with its object's `}` and then the data's and the event's.
  const knownRows = sql`select k.id, k.org_id, k.team_id, k.type,
      case when k.log_revision then left(k.event, -3) || ',"revision":' || ${logRevision} || '}}}' else k.event end, k.traceparent, false
    from unnest(${known.map((e) => e.id)}::text[], ${known.map((e) => e.orgId)}::text[], ${known.map((e) => e.teamId)}::text[],
      ${known.map((e) => e.type)}::text[], ${known.map((e) => e.event)}::text[], ${known.map((e) => e.traceparent ?? null)}::text[],
      ${known.map((e) => e.logRevision === true)}::boolean[]) k (id, org_id, team_id, type, event, traceparent, log_revision)`;
  const foundRows = found.map((event) => {
    const teamId = event.teamId === undefined ? sql`subject.team_id` : sql`${event.teamId}::text`;
    return sql`select ${event.id}::text, subject.org_id, ${teamId}, ${event.type}::text,
      ${eventTextOf(eventHead(event.id, event.type, event.at), sql`subject.org_id`, teamId, event.logRevision ? withLogRevision(sql`${event.object}::text`) : sql`${event.object}::text`)},
      ${event.traceparent ?? null}::text,
      ${sql.lit(event.reduced === true)}
      from (${subjectsOf(event.kind, [event.key], event.userId)}) subject`;
  });
  const parts = [...(known.length > 0 ? [knownRows] : []), ...foundRows].map((part) => sql`(${part})`);
  await writeEvents(trx, sql.join(parts, sql` union all `), now);
}

/**
 * The SQL of an event's text, as `eventText` writes it — `{"id","type","timestamp","data":{"orgId",
 * "teamId","object"}}`, compact — from the SQL of its organization, team and object (JSON text).
 */
function eventTextOf(head: string, orgId: RawBuilder<unknown>, teamId: RawBuilder<unknown>, object: RawBuilder<unknown>) {
  return sql`${head}::text || to_json(${orgId})::text || ',"teamId":' || coalesce(to_json(${teamId})::text, 'null')
      || ',"object":' || ${object} || '}}'`;
}

/** The start of an event's text up to its organization, all known before the change runs: `{"id","type","timestamp","data":{"orgId":`. */
const eventHead = (id: string, type: string, at: Date) =>
  `{"id":${JSON.stringify(id)},"type":${JSON.stringify(type)},"timestamp":${JSON.stringify(at.toISOString())},"data":{"orgId":`;

/** When and under which request a change writes the events of the records it alters in bulk (`insertEventsOfRows`). */
export interface BulkStamp {
  at: Date;
  /** The W3C `traceparent` of the request, which the events' deliveries send. */
  traceparent: string | null;
}

/**
 * The SQL that writes a `type` event for each row of `rows` — the name of a `with` query of the
 * change's statement whose rows have `org_id`, `team_id` and `object` (the event's object as JSON
 * text) — for the records a change alters as a side effect, however many: the metrics whose place
 * a move shifted, the seats a deletion took below it, the teams a member left. Written by the change's
 * own statement (a data-modifying `with`), so they cost no round trip of their own, whatever their
 * number; each gets an id of its own (`gen_random_uuid`, a version 4 UUID as `randomUUID` gives the
 * others; a volatile function in a subquery's list is computed for each row).
 */
export function insertEventsOfRows(rows: string, type: string, stamp: BulkStamp) {
  const text = sql`'{"id":' || to_json(r.id)::text || ${`,"type":${JSON.stringify(type)},"timestamp":${JSON.stringify(stamp.at.toISOString())},"data":{"orgId":`}::text
      || to_json(r.org_id)::text || ',"teamId":' || coalesce(to_json(r.team_id)::text, 'null') || ',"object":' || r.object || '}}'`;
  return sql`insert into webhook_events (id, org_id, team_id, type, event, traceparent, created_at)
    select r.id, r.org_id, r.team_id, ${type}::text, ${keptEvent(text)}, ${stamp.traceparent}::text, ${stamp.at}
    from (select gen_random_uuid()::text as id, rows.org_id, rows.team_id, rows.object from ${sql.table(rows)} rows) r`;
}

/** An event stamped before its change runs, which the change writes itself (`changeWithEvent`). */
export interface EventStamp {
  id: string;
  type: string;
  at: Date;
  /** The W3C `traceparent` of the request, which the event's deliveries send. */
  traceparent: string | null;
}

/** An event's stamp as the values of its change's statement (`changeStatement`). */
type StampValues = {
  eventId: string;
  eventType: string;
  eventHead: string;
  traceparent: string | null;
  at: Date;
};

const stampValues = (event: EventStamp): StampValues => ({
  eventId: event.id,
  eventType: event.type,
  eventHead: eventHead(event.id, event.type, event.at),
  traceparent: event.traceparent,
  at: event.at,
});

/**
 * A change and its event in one statement (a data-modifying `with`, atomic without `begin` and
 * `commit`). `change` is an `insert`, `update` or `delete` whose guard (`where`) holds the access
 * check and the rules, and which returns, for the row it changed, the event's `org_id` and `team_id`
 * and `object`, the JSON text of the event's object (the record as the change answers it, written
 * with `jsonRecord`, or the id of what is gone). Its one row is `object`; none when the guard let
 * nothing through.
 */
const changeStatement = (change: OperationNodeSource, stamp: StampValues) => sql<{ object: string }>`
    with changed as (${change}),
    event as (
      insert into webhook_events (id, org_id, team_id, type, event, traceparent, created_at)
      select ${stamp.eventId}::text, changed.org_id, changed.team_id, ${stamp.eventType}::text,
        ${keptEvent(eventTextOf(stamp.eventHead, sql`changed.org_id`, sql`changed.team_id`, sql`changed.object`))}, ${stamp.traceparent}::text, ${stamp.at}
      from changed
    )
    select changed.object from changed
  `;

/**
 * A change and its event in one statement (`changeStatement`), which Kysely builds and compiles once
 * per shape of its arguments (src/db/prepared.ts): `build` may use its arguments only as values, and
 * an argument left `undefined` (a field the change leaves alone) makes a shape of its own. Building
 * and compiling the statement anew cost a task's PATCH 69–87 µs of the server's CPU, of some 500
 * (docs/performance.md). Answers `object`; undefined when the guard let nothing through — then
 * nothing changed and no event was written.
 */
export function changeWithEvent<A extends Record<string, unknown>>(build: (db: Db, args: A) => OperationNodeSource) {
  const run = prepared((db, args: A & StampValues) => {
    const statement = changeStatement(build(db, args), args);
    return { compile: () => statement.compile(db) };
  });
  return async (db: Db, args: A, event: EventStamp): Promise<string | undefined> => (await run(db, { ...args, ...stampValues(event) }))[0]?.object;
}

// ---------------------------------------------------------------------------------------------------
// The horizon

/**
 * The log's horizon (see 0005_event_log and docs/architecture.md): an `xid8` below which no
 * transaction that may still write the log is running, in the statement's snapshot. It is the
 * snapshot's oldest running transaction (`pg_snapshot_xmin`) with the transactions of the server's
 * other databases left out, which can never write our log: a transaction held open in another
 * database no longer holds back our feed and webhooks.
 *
 * - Each running transaction of the snapshot (`pg_snapshot_xip`, top-level ids only: a subtransaction's
 *   events carry its top-level id, `pg_current_xact_id()`) counts, unless it is known to belong to
 *   another database: a session's `backend_xid` in `pg_stat_activity` with another `datid`, or a
 *   prepared transaction of another database. With none counted, the horizon is the snapshot's
 *   `xmax`: a transaction that gets its id later (one that has none yet) gets one at or above it.
 * - Only leaving out is decided from the views, never keeping in: a transaction of ours is always
 *   counted, so within our database the order is exactly as gap-free as with `pg_snapshot_xmin`. A
 *   transaction id belongs to one database for good, so a view read after the snapshot (or, within a
 *   transaction, the activity PostgreSQL copied at its first read) can only be incomplete, never
 *   wrong: another database's transaction that ended meanwhile is counted, and holds nothing back
 *   beyond that statement. A session whose database is unknown (a background worker) is counted.
 * - The activity is only read when the snapshot has running transactions, once per statement (an
 *   uncorrelated subquery). On PGlite (one database, one session) nothing is left out, so the horizon
 *   is its `pg_snapshot_xmin` exactly.
 */
export const logHorizon = sql<string>`(
  select least(pg_snapshot_xmax(pg_current_snapshot()), min(running.xid))
  from pg_snapshot_xip(pg_current_snapshot()) as running(xid)
  where not exists (
    select 1 from pg_stat_activity a
    where a.backend_xid = running.xid::xid and a.datid <> (select d.oid from pg_database d where d.datname = current_database())
  ) and not exists (
    select 1 from pg_prepared_xacts p where p.transaction = running.xid::xid and p.database <> current_database()
  )
)`;

/** Only events of transactions below the log's horizon are read: nothing can commit there any more. */
export const belowHorizon = (txid: RawBuilder<unknown>) => sql`${txid} < ${logHorizon}`;

/**
 * Below the log's horizon or below a horizon read earlier (`known`, the instance's known end of the
 * log: src/events/knownLogEnd.ts), whichever is greater. A horizon once read stays true: a transaction
 * that gets its id later gets one above it. A statement's own horizon can be lower than one read
 * before: another database's transaction that ends between the statement's snapshot and its reading of
 * `pg_stat_activity` can no longer be left out, and holds the statement back below events an earlier
 * read showed. With the known end, a page never shows less than what the instance already knew.
 */
export const belowKnownHorizon = (txid: RawBuilder<unknown>, known: string) => sql`${txid} < greatest(${logHorizon}, ${known}::xid8)`;

/**
 * When the next event the log's readers wait for was written: the first committed event, in log
 * order, at or above the horizon and the instance's known end (`known`), as the feed reads (one probe
 * of `webhook_events_txid_position_idx`); null when every committed event is below them. Its age is
 * how far the feed and the fan-out are behind.
 */
export async function firstHeldEventAt(db: Db, known: LogPosition): Promise<Date | null> {
  const { rows } = await sql<{ created_at: Date }>`
    select e.created_at from webhook_events e
    where not (${belowKnownHorizon(sql`e.txid`, known.txid)}) and e.type <> ${sql.lit(pingType)}
    order by e.txid, e.position
    limit 1
  `.execute(db);
  return rows[0]?.created_at ?? null;
}

/**
 * Whether the log deleted an event of one of these organizations after the place (`txid`, `position`),
 * as 0013_event_log_purges records every deletion: a feed or stream that started there would miss it.
 * One probe of the table's primary key per organization.
 */
const cutAfter = (orgIds: RawBuilder<unknown>, txid: RawBuilder<unknown>, position: RawBuilder<unknown>) =>
  sql`exists (select 1 from event_log_purges c where c.org_id = any(${orgIds}) and (c.txid, c.position) > (${txid}, ${position}))`;

/**
 * Pings are left out by a literal, not a parameter: in a generic plan `type <> $1` is estimated from
 * the number of distinct types, which for a log of few types makes it look as if almost no row
 * passes, and PostgreSQL then chose a scan of the whole log and a sort over the index (on a log of
 * 50,000 events of one organization: 30 ms against 0.07 ms for a page of 100).
 */
const notPing = (alias: string) => sql`${sql.ref(`${alias}.type`)} <> ${sql.lit(pingType)}`;

// ---------------------------------------------------------------------------------------------------
// The feed

/**
 * A page of the feed answers at most 1 MB: it stops before the event that would pass it and gives
 * `nextCursor` there. An event takes at most `EVENT_MAX_BYTES` (64 KB), so a page holds at least one.
 */
export const FEED_PAGE_BYTES = 1024 * 1024;
/** What a page's answer adds around its events: `{"data":[`, the commas, `],"nextCursor":…}`. */
const PAGE_FRAME_BYTES = 4 * 1024;
/**
 * How much of the log one page reads at most, events the reader may not read included: 1,000 events
 * and `FEED_PAGE_BYTES` of them. A page that reaches it before `limit` events its reader may read gives
 * `nextCursor` there; within it, what a reader may not read changes nothing in what they are answered.
 */
export const FEED_SCAN_EVENTS = 1_000;

/** Opaque cursors (src/auth/secrets.ts `TokenBox`): the feed's place sealed, never an event's id. */
export interface CursorSeal {
  seal(value: Buffer): string;
  open(token: string): Buffer | undefined;
}

const sealPosition = (cursors: CursorSeal, at: LogPosition): string => {
  const value = Buffer.alloc(16);
  value.writeBigUInt64BE(BigInt(at.txid), 0);
  value.writeBigUInt64BE(BigInt(at.position), 8);
  return cursors.seal(value);
};

/**
 * The place a cursor holds. A cursor of the earlier form (an event's id, base64url JSON), which a client
 * may still hold across an upgrade, is read as `after` that event: it names nothing `after` cannot.
 */
function openCursor(cursors: CursorSeal, cursor: string): { at: LogPosition } | { after: string } {
  const value = cursors.open(cursor);
  if (value?.length === 16) return { at: { txid: value.readBigUInt64BE(0).toString(), position: value.readBigUInt64BE(8).toString() } };
  return { after: decodeCursor(cursor, legacyCursorTypes)[0] as string };
}

const legacyCursorTypes: SortKeyType[] = ['string'];

interface FeedArgs extends Record<string, unknown> {
  orgId: string;
  /** The event the page starts after, by id (`after`); none of it, `at` or `since` at the beginning of the log. */
  after: string | undefined;
  /** The place of an event the page starts after (a cursor's). */
  txid: string | undefined;
  position: string | undefined;
  /** The log position the page starts after (`after`, src/events/positions.ts): a place, not necessarily an event's. */
  sinceTxid: string | undefined;
  sincePosition: string | undefined;
  types: string[] | undefined;
  teamId: string | undefined;
  /** The transaction id of the instance's known end of the log: events below it are read whatever the statement's horizon. */
  known: string;
  fetch: number;
  /** How many bytes of events the read may still bring (its first event whatever its size). */
  bytes: number;
}

/**
 * An event's text and its place (`txid:position`, one column: every column a row adds is decoded 100
 * times a page); the text is null past the bytes the read may bring. The one row with no place answers
 * that the page's start is not in the log.
 */
interface FeedRow {
  event: string | null;
  place: string | null;
}

const placeOf = (row: FeedRow): LogPosition => {
  const [txid, position] = row.place!.split(':');
  return { txid: txid!, position: position! };
};

/**
 * Up to `fetch` events of the feed in one statement: where the page starts (an event by id, or a place
 * of the organization's log), then the events after it in log order through
 * `webhook_events_org_id_txid_position_idx`, each with its place, and its text while the
 * events so far take at most `bytes` (the size is known without reading the text: PostgreSQL keeps it
 * with a long value). When the start is not in the log, or the log deleted events of the organization
 * after it (a purge past it: the page would skip them), one row without a place says so, so that an
 * empty page is told apart from an expired start.
 */
const feedRows = prepared((db: Db, args: FeedArgs) => {
  const start =
    args.after !== undefined
      ? sql`select s.txid, s.position from webhook_events s where s.id = ${args.after} and s.org_id = ${args.orgId} and ${notPing('s')}
          and not ${cutAfter(sql`array[${args.orgId}::text]`, sql`s.txid`, sql`s.position`)}`
      : args.txid !== undefined
        ? sql`select s.txid, s.position from webhook_events s
            where s.org_id = ${args.orgId} and s.txid = ${args.txid}::xid8 and s.position = ${args.position}::bigint and ${notPing('s')}
              and not ${cutAfter(sql`array[${args.orgId}::text]`, sql`s.txid`, sql`s.position`)}`
        : args.sinceTxid !== undefined
          ? sql`select ${args.sinceTxid}::xid8 as txid, ${args.sincePosition}::bigint as position
              where not ${cutAfter(sql`array[${args.orgId}::text]`, sql`${args.sinceTxid}::xid8`, sql`${args.sincePosition}::bigint`)}`
          : undefined;
  const filters = [
    sql`e.org_id = ${args.orgId}`,
    notPing('e'),
    belowKnownHorizon(sql`e.txid`, args.known),
    ...(start ? [sql`(e.txid, e.position) > (select s.txid, s.position from start s)`] : []),
    ...(args.types !== undefined ? [sql`e.type = any(${args.types}::text[])`] : []),
    ...(args.teamId !== undefined ? [sql`e.team_id = ${args.teamId}`] : []),
  ];
  const scan = sql`select r.event, r.txid, r.position,
      sum(octet_length(r.event)) over (order by r.txid, r.position rows between unbounded preceding and current row) as read
    from (
      select e.event, e.txid, e.position from webhook_events e
      where ${sql.join(filters, sql` and `)}
      order by e.txid, e.position
      limit ${args.fetch}
    ) r`;
  // A read's first event always comes with its text, so every page moves on.
  const rows = sql`select case when p.read <= ${args.bytes} or p.read = octet_length(p.event) then p.event end as event, p.txid, p.position from (${scan}) p`;
  const query = start
    ? sql<FeedRow>`
      with start as (${start})
      select u.event, u.txid::text || ':' || u.position::text as place from (
        (${rows})
        union all
        select null, null, null where not exists (select 1 from start)
      ) u
      order by u.txid, u.position`
    : sql<FeedRow>`select u.event, u.txid::text || ':' || u.position::text as place from (${rows}) u order by u.txid, u.position`;
  return { compile: () => query.compile(db) };
});

export interface FeedFilter {
  /** An event's id, or a log position opened (`LogPosition`): the page starts after it. */
  after?: string | LogPosition | undefined;
  types?: readonly string[] | undefined;
  teamId?: string | undefined;
}

/**
 * An event as its reader sees it (its JSON text, the stored one when unchanged), or undefined when they
 * may not read it: `eventViewText` (src/events/views.ts) for a team's feed, every event as stored for
 * the organization's Owners and Admins.
 */
export type FeedReader = (event: string) => string | undefined;

/**
 * A page of an organization's feed for a reader: the events they may read, each as its JSON text,
 * undefined when where it is to start (`after`, or the cursor's place) is not in the organization's
 * kept log. A cursor decides where the page starts; `after` is read only without one.
 *
 * The page ends when it holds `limit` events its reader may read and the log holds one more for them
 * (its `nextCursor` then follows the last it shows), when the log ends (no `nextCursor`), or when it
 * has read `FEED_SCAN_EVENTS` events or `FEED_PAGE_BYTES` of them, or its answer would pass
 * `FEED_PAGE_BYTES` (a `nextCursor` where it stopped). So what a reader may not read decides nothing in
 * their answer within that budget: not how many events a page holds, not whether a cursor follows, and
 * a cursor is sealed (`cursors`), never an event's id. A page is one statement when its first read
 * brings `limit` events the reader may read, or the log's end; each further one reads more, up to the
 * budget. No offset: each read starts after the last place read.
 *
 * The log is read below its horizon or below `known`, the instance's known end of the log
 * (`belowKnownHorizon`), so a page never shows less than what an earlier read of the instance showed.
 */
export async function eventPage(
  db: Db,
  orgId: string,
  filter: FeedFilter,
  page: { limit: number; cursor?: string | undefined },
  cursors: CursorSeal,
  known: LogPosition,
  reader: FeedReader = (event) => event,
): Promise<{ events: string[]; nextCursor: string | null } | undefined> {
  const opened = page.cursor === undefined ? undefined : openCursor(cursors, page.cursor);
  let from: { after: string | undefined; at: LogPosition | undefined; since?: LogPosition } =
    opened !== undefined
      ? 'at' in opened
        ? { after: undefined, at: opened.at }
        : { after: opened.after, at: undefined }
      : typeof filter.after === 'object'
        ? { after: undefined, at: undefined, since: filter.after }
        : { after: filter.after, at: undefined };
  const types = filter.types === undefined ? undefined : [...filter.types];
  const events: string[] = [];
  let answered = PAGE_FRAME_BYTES;
  let read = 0;
  let scanned = 0;
  let lastShown: FeedRow | undefined;
  let fetch = page.limit + 1;
  for (;;) {
    const rows = await feedRows(db, {
      orgId,
      after: from.after,
      txid: from.at?.txid,
      position: from.at?.position,
      sinceTxid: from.since?.txid,
      sincePosition: from.since?.position,
      types,
      teamId: filter.teamId,
      known: known.txid,
      fetch,
      bytes: FEED_PAGE_BYTES - read,
    });
    if (rows.length === 1 && rows[0]!.place === null) return undefined;
    let last: FeedRow | undefined;
    for (const row of rows) {
      // Past the bytes the page may read: it ends before this event.
      if (row.event === null) return { events, nextCursor: sealPosition(cursors, placeOf(last!)) };
      const bytes = Buffer.byteLength(row.event);
      const view = reader(row.event);
      if (view !== undefined) {
        const viewBytes = view === row.event ? bytes : Buffer.byteLength(view);
        // The page is full: the reader may read one more after it.
        if (events.length === page.limit || (events.length > 0 && answered + viewBytes + 1 > FEED_PAGE_BYTES)) return { events, nextCursor: sealPosition(cursors, placeOf(lastShown!)) };
        events.push(view);
        answered += viewBytes + 1;
        lastShown = row;
      }
      last = row;
      read += bytes;
      scanned += 1;
    }
    // The log's end: nothing more for this reader, however many events it skipped.
    if (rows.length < fetch) return { events, nextCursor: null };
    if (scanned >= FEED_SCAN_EVENTS) return { events, nextCursor: sealPosition(cursors, placeOf(last!)) };
    from = { after: undefined, at: placeOf(last!) };
    fetch = Math.min(FEED_SCAN_EVENTS - scanned, Math.max(page.limit + 1 - events.length, fetch * 4));
  }
}

/**
 * One event of the feed by id, as JSON text, with its organization; undefined for a ping, an unknown id
 * or one not yet below the horizon nor the instance's known end of the log (`known`), as a page reads.
 */
export async function findEvent(db: Db, id: string, known: LogPosition): Promise<{ org_id: string; event: string } | undefined> {
  const { rows } = await sql<{ org_id: string; event: string }>`
    select e.org_id, e.event from webhook_events e
    where e.id = ${id} and ${notPing('e')} and ${belowKnownHorizon(sql`e.txid`, known.txid)}
  `.execute(db);
  return rows[0];
}

// ---------------------------------------------------------------------------------------------------
// Live streams (src/live/streams.ts)

/** A place in the log: the writing transaction's id and the event's sequence number, as decimal text. */
export interface LogPosition {
  txid: string;
  position: string;
}

/**
 * PostgreSQL's text of a non-negative integer (`xid8`, `bigint`) has no sign and no leading zero: the
 * longer is the greater, and two of one length compare as text. A live stream compares each event a
 * read brings with its place, so 500 streams make tens of thousands of comparisons a second; with
 * four BigInt parses each, that was the streams' largest cost (docs/performance.md).
 */
const compareDigits = (a: string, b: string): number => (a.length !== b.length ? (a.length < b.length ? -1 : 1) : a < b ? -1 : a > b ? 1 : 0);

/** The order of two places in the log: negative, zero or positive as `a` is before, at or after `b`. */
export const compareLogPositions = (a: LogPosition, b: LogPosition): number => compareDigits(a.txid, b.txid) || compareDigits(a.position, b.position);

/** An event of the log as a live stream reads it: where it belongs, its type, its place and its text. */
export interface LogEvent extends LogPosition {
  id: string;
  orgId: string;
  teamId: string | null;
  type: string;
  event: string;
}

interface StreamRow {
  id: string | null;
  org_id: string | null;
  team_id: string | null;
  type: string | null;
  txid: string;
  position: string;
  event: string | null;
}

/**
 * How many bytes of events one read of the log for the live streams brings at most (its first event
 * whatever its size): half a stream's buffer (src/live/streams.ts), so that one read, framed, never
 * drops a reader that keeps up.
 */
export const LOG_READ_BYTES = 512 * 1024;

/**
 * The next events of the log after `after` (of these organizations only, when given), in log order,
 * below the horizon, pings aside, at most `limit` of them and `LOG_READ_BYTES` of their text; and in
 * the same statement, so in the same snapshot, the log's last place below the horizon (`end`,
 * undefined while the log is empty). Unless `full` (the read stopped at its count or its bytes), the
 * reader has seen every event up to `end` that the filter lets through: no event can commit there any
 * more. `cut`: the organizations (of the filter) whose log was purged after `after` (event_log_purges,
 * 0013), read in the same snapshot as the events: events of theirs after `after` are gone, so a reader
 * at `after` would miss them without this.
 */
export async function logAfter(
  db: Db,
  args: { after: LogPosition; orgIds?: readonly string[]; limit: number },
): Promise<{ events: LogEvent[]; end: LogPosition | undefined; full: boolean; cut: string[] }> {
  const filters = [
    sql`(e.txid, e.position) > (${args.after.txid}::xid8, ${args.after.position}::bigint)`,
    belowHorizon(sql`e.txid`),
    notPing('e'),
    ...(args.orgIds ? [sql`e.org_id = any(${[...args.orgIds]}::text[])`] : []),
  ];
  const within = sql`(p.read <= ${LOG_READ_BYTES} or p.read = octet_length(p.event))`;
  const { rows } = await sql<StreamRow & { part: number }>`
    with page as (
      select r.*, sum(octet_length(r.event)) over (order by r.txid, r.position rows between unbounded preceding and current row) as read from (
        select e.id, e.org_id, e.team_id, e.type, e.txid, e.position, e.event from webhook_events e
        where ${sql.join(filters, sql` and `)}
        order by e.txid, e.position
        limit ${args.limit}
      ) r
    ),
    last as (
      select e.txid, e.position from webhook_events e where ${belowHorizon(sql`e.txid`)}
      order by e.txid desc, e.position desc limit 1
    )
    select u.id, u.org_id, u.team_id, u.type, u.txid::text as txid, u.position::text as position, u.event, u.part from (
      select p.id, p.org_id, p.team_id, p.type, p.txid, p.position, p.event, 0 as part from page p where ${within}
      union all
      select null, null, null, null, l.txid, l.position, null, 1 from last l
      union all
      (select null, null, null, null, p.txid, p.position, null, 2 from page p where not ${within} limit 1)
      union all
      select null, c.org_id, null, null, c.txid, c.position, null, 3 from event_log_purges c
      where (c.txid, c.position) > (${args.after.txid}::xid8, ${args.after.position}::bigint)
        ${args.orgIds ? sql`and c.org_id = any(${[...args.orgIds]}::text[])` : sql``}
    ) u
    -- By the log's own columns: their text would put transaction 1000 before 999.
    order by u.part, u.txid, u.position
  `.execute(db);
  const events: LogEvent[] = [];
  const purged: string[] = [];
  let end: LogPosition | undefined;
  let cut = false;
  for (const row of rows) {
    if (row.part === 1) end = { txid: row.txid, position: row.position };
    else if (row.part === 2) cut = true;
    else if (row.part === 3) purged.push(row.org_id!);
    else events.push({ id: row.id!, orgId: row.org_id!, teamId: row.team_id, type: row.type!, txid: row.txid, position: row.position, event: row.event! });
  }
  return { events, end, full: cut || events.length === args.limit, cut: purged };
}

/** The log's last place below the horizon; the very beginning while the log is empty. */
export async function logEnd(db: Db): Promise<LogPosition> {
  const { rows } = await sql<LogPosition>`
    select e.txid::text as txid, e.position::text as position from webhook_events e where ${belowHorizon(sql`e.txid`)}
    order by e.txid desc, e.position desc limit 1
  `.execute(db);
  return rows[0] ?? { txid: '0', position: '0' };
}

/**
 * The log's end as a read's `Log-Position` states it (src/events/knownLogEnd.ts): the horizon with
 * sequence number 0, a place at or after every event below the horizon and before any event at or
 * above it. Every event up to it was written by a transaction that has ended, so any statement that
 * starts later sees it. One statement without a table: the log's own rows are not read.
 */
export async function horizonPlace(db: Db): Promise<LogPosition> {
  const { rows } = await sql<{ txid: string }>`select ${logHorizon}::text as txid`.execute(db);
  return { txid: rows[0]!.txid, position: '0' };
}

/**
 * Whether a reader of these organizations may start the log after the place: no event of theirs after
 * it was deleted (purged after the retention). False tells that a start there would miss events.
 */
export async function keptAfter(db: Db, orgIds: readonly string[], at: LogPosition): Promise<boolean> {
  const { rows } = await sql<{ cut: boolean }>`
    select ${cutAfter(sql`${[...orgIds]}::text[]`, sql`${at.txid}::xid8`, sql`${at.position}::bigint`)} as cut
  `.execute(db);
  return !rows[0]!.cut;
}

/**
 * The place of an event of these organizations in the log; undefined when the log keeps no such event
 * (purged, unknown, a ping, another's), or when it deleted events of theirs after it: a start there
 * would miss them (a stream that ended because the log was purged past it resumes so).
 */
export async function eventPosition(db: Db, id: string, orgIds: readonly string[]): Promise<LogPosition | undefined> {
  const { rows } = await sql<LogPosition>`
    select e.txid::text as txid, e.position::text as position from webhook_events e
    where e.id = ${id} and e.org_id = any(${[...orgIds]}::text[]) and ${notPing('e')}
      and not ${cutAfter(sql`${[...orgIds]}::text[]`, sql`e.txid`, sql`e.position`)}
  `.execute(db);
  return rows[0];
}

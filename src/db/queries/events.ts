/**
 * Queries of the event feed: an organization's log (src/webhooks/outbox.ts writes it) read oldest
 * first in the log's order (`txid`, `position`), only below the horizon of running transactions
 * (`belowHorizon`, see 0005_event_log), so that no event ever commits behind a reader's position.
 * Pings are no change and stay out. The log keeps each event's JSON as the feed answers it
 * (0008_event_text): a page is its rows' text as stored, joined here, so PostgreSQL neither takes the
 * text apart nor sorts it into one value (an ordered `string_agg` cost a page of 100 events about as
 * much as the rest of its statement).
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../database.js';
import { decodeCursor, encodeCursor, type SortKeyType } from '../pagination.js';
import { prepared } from '../prepared.js';
import { belowHorizon, pingType } from './webhooks.js';

/**
 * Pings are left out by a literal, not a parameter: in a generic plan `type <> $1` is estimated from
 * the number of distinct types, which for a log of few types makes it look as if almost no row
 * passes, and PostgreSQL then chose a scan of the whole log and a sort over the index (on a log of
 * 50,000 events of one organization: 30 ms against 0.07 ms for a page of 100).
 */
const notPing = (alias: string) => sql`${sql.ref(`${alias}.type`)} <> ${sql.lit(pingType)}`;

type Db = Kysely<Database> | Transaction<Database>;

/** The cursor names the page's last event by its id: a page resumes after it as after `after`. */
const cursorTypes: SortKeyType[] = ['string'];

interface FeedArgs extends Record<string, unknown> {
  orgId: string;
  /** The event the page starts after; the beginning of the log when undefined. */
  after: string | undefined;
  types: string[] | undefined;
  teamId: string | undefined;
  fetch: number;
}

/** An event's text; the one row with none answers that the event the page was to start after is not in the log. */
interface FeedRow {
  event: string | null;
}

/**
 * One page of the feed in one statement: the event it starts after (by id, in the organization's log,
 * pings aside), then the page's events after it in log order through
 * `webhook_events_org_id_txid_position_idx`, one more than the page to know whether more follow. When
 * the event to start after is not in the log, one row without an event says so, so that an empty page
 * is told apart from an expired start. Only each event's text is sent: every column a row adds is
 * decoded 100 times a page.
 */
const feedPage = prepared((db: Db, args: FeedArgs) => {
  const resumes = args.after !== undefined;
  const filters = [
    sql`e.org_id = ${args.orgId}`,
    notPing('e'),
    belowHorizon(sql`e.txid`),
    ...(resumes ? [sql`(e.txid, e.position) > (select s.txid, s.position from start s)`] : []),
    ...(args.types !== undefined ? [sql`e.type = any(${args.types}::text[])`] : []),
    ...(args.teamId !== undefined ? [sql`e.team_id = ${args.teamId}`] : []),
  ];
  const page = sql`select e.event, e.txid, e.position from webhook_events e
    where ${sql.join(filters, sql` and `)}
    order by e.txid, e.position
    limit ${args.fetch}`;
  const query = resumes
    ? sql<FeedRow>`
      with start as (
        select s.txid, s.position from webhook_events s where s.id = ${args.after} and s.org_id = ${args.orgId} and ${notPing('s')}
      )
      select p.event from (
        (${page})
        union all
        select null, null, null where not exists (select 1 from start)
      ) p
      order by p.txid, p.position`
    : sql<FeedRow>`select p.event from (${page}) p order by p.txid, p.position`;
  return { compile: () => query.compile(db) };
});

export interface FeedFilter {
  after?: string | undefined;
  types?: readonly string[] | undefined;
  teamId?: string | undefined;
}

/**
 * A page of an organization's feed, each event as its JSON text; undefined when the event it is to
 * start after (`after`, or the cursor's last event) is not in the organization's kept log. A cursor
 * decides where the page starts; `after` is read only without one. The cursor names the page's last
 * event, so a reader who is shown fewer of them (a team's feed) still moves on past it.
 */
export async function eventPage(
  db: Db,
  orgId: string,
  filter: FeedFilter,
  page: { limit: number; cursor?: string | undefined },
): Promise<{ events: string[]; nextCursor: string | null } | undefined> {
  const after = page.cursor === undefined ? filter.after : (decodeCursor(page.cursor, cursorTypes)[0] as string);
  const rows = await feedPage(db, {
    orgId,
    after,
    types: filter.types === undefined ? undefined : [...filter.types],
    teamId: filter.teamId,
    fetch: page.limit + 1,
  });
  if (rows.length === 1 && rows[0]!.event === null) return undefined;
  const events = rows.map((row) => row.event!);
  const shown = events.length > page.limit ? events.slice(0, page.limit) : events;
  const nextCursor = events.length > page.limit ? encodeCursor([(JSON.parse(shown.at(-1)!) as { id: string }).id]) : null;
  return { events: shown, nextCursor };
}

/** One event of the feed by id, as JSON text, with its organization; undefined for a ping, an unknown id or one not yet below the horizon. */
export async function findEvent(db: Db, id: string): Promise<{ org_id: string; event: string } | undefined> {
  const { rows } = await sql<{ org_id: string; event: string }>`
    select e.org_id, e.event from webhook_events e
    where e.id = ${id} and ${notPing('e')} and ${belowHorizon(sql`e.txid`)}
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
 * The next events of the log after `after` (of these organizations only, when given), in log order,
 * below the horizon, pings aside; and in the same statement, so in the same snapshot, the log's last
 * place below the horizon (`end`, undefined while the log is empty). When fewer than `limit` events
 * came, the reader has seen every event up to `end` that the filter lets through: no event can commit
 * there any more.
 */
export async function logAfter(
  db: Db,
  args: { after: LogPosition; orgIds?: readonly string[]; limit: number },
): Promise<{ events: LogEvent[]; end: LogPosition | undefined }> {
  const filters = [
    sql`(e.txid, e.position) > (${args.after.txid}::xid8, ${args.after.position}::bigint)`,
    belowHorizon(sql`e.txid`),
    notPing('e'),
    ...(args.orgIds ? [sql`e.org_id = any(${[...args.orgIds]}::text[])`] : []),
  ];
  const { rows } = await sql<StreamRow>`
    with page as (
      select e.id, e.org_id, e.team_id, e.type, e.txid, e.position, e.event from webhook_events e
      where ${sql.join(filters, sql` and `)}
      order by e.txid, e.position
      limit ${args.limit}
    ),
    last as (
      select e.txid, e.position from webhook_events e where ${belowHorizon(sql`e.txid`)}
      order by e.txid desc, e.position desc limit 1
    )
    select u.id, u.org_id, u.team_id, u.type, u.txid::text as txid, u.position::text as position, u.event from (
      select p.id, p.org_id, p.team_id, p.type, p.txid, p.position, p.event, 0 as part from page p
      union all
      select null, null, null, null, l.txid, l.position, null, 1 from last l
    ) u
    -- By the log's own columns: their text would put transaction 1000 before 999.
    order by u.part, u.txid, u.position
  `.execute(db);
  const events: LogEvent[] = [];
  let end: LogPosition | undefined;
  for (const row of rows) {
    if (row.event === null) end = { txid: row.txid, position: row.position };
    else events.push({ id: row.id!, orgId: row.org_id!, teamId: row.team_id, type: row.type!, txid: row.txid, position: row.position, event: row.event });
  }
  return { events, end };
}

/** The log's last place below the horizon; the very beginning while the log is empty. */
export async function logEnd(db: Db): Promise<LogPosition> {
  const { rows } = await sql<LogPosition>`
    select e.txid::text as txid, e.position::text as position from webhook_events e where ${belowHorizon(sql`e.txid`)}
    order by e.txid desc, e.position desc limit 1
  `.execute(db);
  return rows[0] ?? { txid: '0', position: '0' };
}

/** The place of an event of these organizations in the log; undefined when the log keeps no such event (purged, unknown, a ping, another's). */
export async function eventPosition(db: Db, id: string, orgIds: readonly string[]): Promise<LogPosition | undefined> {
  const { rows } = await sql<LogPosition>`
    select e.txid::text as txid, e.position::text as position from webhook_events e
    where e.id = ${id} and e.org_id = any(${[...orgIds]}::text[]) and ${notPing('e')}
  `.execute(db);
  return rows[0];
}

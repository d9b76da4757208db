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

type Db = Kysely<Database> | Transaction<Database>;

/** The cursor holds the log position of a page's last event. */
const cursorTypes: SortKeyType[] = ['bigint', 'bigint'];

interface FeedArgs extends Record<string, unknown> {
  orgId: string;
  /** Where the page starts: after the event `after`, or after the position (`txid`, `position`) of a cursor. */
  after: string | undefined;
  txid: string | undefined;
  position: string | undefined;
  types: string[] | undefined;
  teamId: string | undefined;
  fetch: number;
}

interface FeedRow {
  /** Whether the event the page starts after is in the organization's log (null when the page starts at the beginning). */
  found: boolean | null;
  /** Null in the one row of a page without events. */
  event: string | null;
  txid: string | null;
  position: string | null;
}

/**
 * One page of the feed in one statement: the event it starts after (looked up by id, or by a cursor's
 * position, in the organization's log, pings aside), then the page's events after it in log order
 * through `webhook_events_org_id_txid_position_idx`, one more than the page to know whether more
 * follow. A page that starts after an event is joined to whether that event was found, so that an
 * empty page still answers it.
 */
const feedPage = prepared((db: Db, args: FeedArgs) => {
  const resumes = args.after !== undefined || args.txid !== undefined;
  const start =
    args.after !== undefined ? sql`s.id = ${args.after}` : sql`s.txid = ${args.txid}::xid8 and s.position = ${args.position}::bigint`;
  const filters = [
    sql`e.org_id = ${args.orgId}`,
    sql`e.type <> ${pingType}`,
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
        select s.txid, s.position from webhook_events s where s.org_id = ${args.orgId} and s.type <> ${pingType} and ${start}
      )
      select f.found, p.event, p.txid::text as txid, p.position::text as position
      from (select exists (select 1 from start) as found) f left join lateral (${page}) p on true
      order by p.txid, p.position`
    : sql<FeedRow>`select null::boolean as found, p.event, p.txid::text as txid, p.position::text as position from (${page}) p order by p.txid, p.position`;
  return { compile: () => query.compile(db) };
});

export interface FeedFilter {
  after?: string | undefined;
  types?: readonly string[] | undefined;
  teamId?: string | undefined;
}

/**
 * A page of an organization's feed, its events as JSON text; undefined when the event it is to start
 * after (`after`, or the cursor's last event) is not in the organization's kept log. A cursor decides
 * where the page starts; `after` is read only without one.
 */
export async function eventPage(
  db: Db,
  orgId: string,
  filter: FeedFilter,
  page: { limit: number; cursor?: string | undefined },
): Promise<{ records: string; nextCursor: string | null } | undefined> {
  const [txid, position] = page.cursor === undefined ? [] : (decodeCursor(page.cursor, cursorTypes) as string[]);
  const rows = await feedPage(db, {
    orgId,
    after: txid === undefined ? filter.after : undefined,
    txid,
    position,
    types: filter.types === undefined ? undefined : [...filter.types],
    teamId: filter.teamId,
    fetch: page.limit + 1,
  });
  if (rows[0]?.found === false) return undefined;
  const events = rows.filter((row) => row.event !== null);
  const shown = events.slice(0, page.limit);
  const last = shown.at(-1);
  const nextCursor = events.length > page.limit && last ? encodeCursor([last.txid!, last.position!]) : null;
  return { records: shown.map((row) => row.event).join(','), nextCursor };
}

/** One event of the feed by id, as JSON text, with its organization; undefined for a ping, an unknown id or one not yet below the horizon. */
export async function findEvent(db: Db, id: string): Promise<{ org_id: string; event: string } | undefined> {
  const { rows } = await sql<{ org_id: string; event: string }>`
    select e.org_id, e.event from webhook_events e
    where e.id = ${id} and e.type <> ${pingType} and ${belowHorizon(sql`e.txid`)}
  `.execute(db);
  return rows[0];
}

/**
 * Queries of the event feed: an organization's log (src/webhooks/outbox.ts writes it) read oldest
 * first in the log's order (`txid`, `position`), only below the horizon of running transactions
 * (`belowHorizon`, see 0005_event_log), so that no event ever commits behind a reader's position.
 * Pings are no change and stay out. PostgreSQL writes each event's JSON: the stored body is the exact
 * text of its deliveries (`{"type",…}`), to which the id is put in front.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../database.js';
import { decodeCursor, encodeCursor, type SortKeyType } from '../pagination.js';
import { prepared } from '../prepared.js';
import { belowHorizon, pingType } from './webhooks.js';

type Db = Kysely<Database> | Transaction<Database>;

/** The event of the row `alias` as the contract's `Event`: `{"id", "type", "timestamp", "data"}`. */
const eventJson = (alias: string) => sql.raw<string>(`'{"id":' || to_json(${alias}.id)::text || ',' || substr(${alias}.body, 2)`);

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
  limit: number;
}

interface FeedRow {
  /** Whether the event the page starts after is in the organization's log (null when the page starts at the beginning). */
  found: boolean | null;
  records: string;
  fetched: number;
  last_txid: string | null;
  last_position: string | null;
}

/**
 * One page of the feed in one statement: the event it starts after (looked up by id, or by a cursor's
 * position, in the organization's log, pings aside), then the page's events after it in log order
 * through `webhook_events_org_id_txid_position_idx`, one more than the page to know whether more follow.
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
  const query = sql<FeedRow>`
    with start as (
      select s.txid, s.position from webhook_events s where s.org_id = ${args.orgId} and s.type <> ${pingType} and ${start}
    ),
    page as (
      select e.id, e.body, e.txid, e.position, row_number() over (order by e.txid, e.position) as n
      from webhook_events e
      where ${sql.join(filters, sql` and `)}
      order by e.txid, e.position
      limit ${args.fetch}
    )
    select
      ${resumes ? sql`exists (select 1 from start)` : sql`null::boolean`} as found,
      coalesce(string_agg(${eventJson('p')}, ',' order by p.n) filter (where p.n <= ${args.limit}), '') as records,
      count(*)::int as fetched,
      (array_agg(p.txid::text) filter (where p.n = ${args.limit}))[1] as last_txid,
      (array_agg(p.position::text) filter (where p.n = ${args.limit}))[1] as last_position
    from page p
  `;
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
  const [row] = await feedPage(db, {
    orgId,
    after: txid === undefined ? filter.after : undefined,
    txid,
    position,
    types: filter.types === undefined ? undefined : [...filter.types],
    teamId: filter.teamId,
    fetch: page.limit + 1,
    limit: page.limit,
  });
  if (!row || row.found === false) return undefined;
  const nextCursor = row.fetched > page.limit ? encodeCursor([row.last_txid!, row.last_position!]) : null;
  return { records: row.records, nextCursor };
}

/** One event of the feed by id, as JSON text, with its organization; undefined for a ping, an unknown id or one not yet below the horizon. */
export async function findEvent(db: Db, id: string): Promise<{ org_id: string; event: string } | undefined> {
  const { rows } = await sql<{ org_id: string; event: string }>`
    select e.org_id, ${eventJson('e')} as event from webhook_events e
    where e.id = ${id} and e.type <> ${pingType} and ${belowHorizon(sql`e.txid`)}
  `.execute(db);
  return rows[0];
}

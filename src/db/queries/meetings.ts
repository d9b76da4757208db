/**
 * Queries of meetings and of what is recorded in them: ratings, segues, headlines and cascading
 * messages. A meeting is read with everything it shows in one statement (JSON arrays built by
 * correlated subqueries), and a page of meetings with their rating summaries in one statement too.
 */
import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { Database, Day, HeadlineType, IssuePriority, IssueStatus, MeetingRow, MeetingStatus } from '../database.js';
import { jsonRecord, type JsonShape } from '../json.js';
import { preparedJsonPages } from '../pagination.js';
import { prepared } from '../prepared.js';
import { callerTeamRole, standingColumnNames, standingColumns, withStanding } from './access.js';

type Db = Kysely<Database> | Transaction<Database>;
type Page = { limit: number; cursor?: string | undefined };

/**
 * The team of a meeting, or undefined when there is no such meeting. Inside a transaction the row is
 * locked against deletion until a task or issue that refers to it is written.
 */
export async function meetingTeamId(db: Db, meetingId: string): Promise<string | undefined> {
  const row = await db.selectFrom('meetings').select('team_id').where('id', '=', meetingId).forKeyShare().executeTakeFirst();
  return row?.team_id;
}

// ---------------------------------------------------------------------------------------------------
// Pieces of the meeting statements. Instants inside JSON arrive as text in the session's zone; the
// mappers turn them into UTC. Days inside JSON arrive as `YYYY-MM-DD` text.

export interface RatingSummaryJson {
  average: number | null;
  rated_count: number;
  absent_count: number;
}

export interface RatingJson {
  user_id: string;
  rating: number;
  absent: boolean;
}

export interface SegueJson {
  id: string;
  revision: number | string;
  meeting_id: string;
  user_id: string;
  content: string;
  created_at: string;
}

export interface HeadlineJson extends SegueJson {
  type: HeadlineType;
}

export interface MessageJson extends SegueJson {
  acknowledged: boolean;
}

/** `rating_summary`: the average of the present members' ratings, how many rated and how many were absent. */
function ratingSummaryOf(meetingIdColumn: string) {
  return sql<RatingSummaryJson>`(
    select json_build_object(
      'average', cast(avg(r.rating) filter (where not r.absent) as double precision),
      'rated_count', count(*) filter (where not r.absent),
      'absent_count', count(*) filter (where r.absent)
    )
    from meeting_ratings r
    where r.meeting_id = ${sql.ref(meetingIdColumn)}
  )`.as('rating_summary');
}

/** `next_started_at`: when the team's next meeting started (the earliest start after this one's), or null. */
const nextStartedAt = sql<Date | null>`(
  select min(n.started_at) from meetings n where n.team_id = meetings.team_id and n.started_at > meetings.started_at
)`.as('next_started_at');

const ratingsOf = sql<RatingJson[]>`(
  select coalesce(
    json_agg(json_build_object('user_id', r.user_id, 'rating', r.rating, 'absent', r.absent) order by r.created_at, r.user_id),
    '[]'::json
  )
  from meeting_ratings r
  where r.meeting_id = meetings.id
)`.as('ratings');

const seguesRows = sql<SegueJson[]>`(
  select coalesce(
    json_agg(
      json_build_object('id', s.id, 'revision', s.revision, 'meeting_id', s.meeting_id, 'user_id', s.user_id, 'content', s.content, 'created_at', s.created_at)
      order by s.created_at, s.id
    ),
    '[]'::json
  )
  from segues s
  where s.meeting_id = meetings.id
)`;
const seguesOf = seguesRows.as('segues');

const headlinesRows = sql<HeadlineJson[]>`(
  select coalesce(
    json_agg(
      json_build_object(
        'id', h.id, 'revision', h.revision, 'meeting_id', h.meeting_id, 'user_id', h.user_id, 'type', h.type, 'content', h.content, 'created_at', h.created_at
      )
      order by h.created_at, h.id
    ),
    '[]'::json
  )
  from headlines h
  where h.meeting_id = meetings.id
)`;
const headlinesOf = headlinesRows.as('headlines');

/** `messages`, each with whether the caller has acknowledged it. */
function messagesOf(userId: string) {
  return messagesRows(userId).as('messages');
}

function messagesRows(userId: string) {
  return sql<MessageJson[]>`(
    select coalesce(
      json_agg(
        json_build_object(
          'id', c.id, 'revision', c.revision, 'meeting_id', c.meeting_id, 'user_id', c.user_id, 'content', c.content, 'created_at', c.created_at,
          'acknowledged', exists (select 1 from message_acknowledgements a where a.message_id = c.id and a.user_id = ${userId})
        )
        order by c.created_at, c.id
      ),
      '[]'::json
    )
    from cascading_messages c
    where c.meeting_id = meetings.id
  )`;
}

/** The meeting with its team's organization and the caller's role in the team. */
function selectMeetingFacts(db: Db, userId: string) {
  return db
    .selectFrom('meetings')
    .innerJoin('teams', 'teams.id', 'meetings.team_id')
    .selectAll('meetings')
    .select(['teams.org_id', callerTeamRole('meetings.team_id', userId)]);
}

// ---------------------------------------------------------------------------------------------------
// Reads

/** A row of the meeting list: the meeting and its rating summary already written as JSON. */
export type MeetingPageRow = MeetingRow & { rating_summary: string };

/**
 * `rating_summary`: the meeting's rating summary written by `shape`. Computed here rather than in the
 * page's record because it aggregates other rows; `average` is null while the ratings are hidden.
 */
function ratingSummaryText<S>(shape: JsonShape<RatingSummaryJson, S>) {
  return sql<string>`(
    select ${jsonRecord(shape, 's')}
    from (
      select
        -- ratingsHidden (src/rules/meetingStatus.ts): a meeting in progress hides them until revealed.
        case when meetings.status = 'IN_PROGRESS' and meetings.ratings_revealed_at is null then null
          else cast(avg(r.rating) filter (where not r.absent) as double precision) end as average,
        count(*) filter (where not r.absent) as rated_count,
        count(*) filter (where r.absent) as absent_count
      from meeting_ratings r
      where r.meeting_id = meetings.id
    ) s
  )`.as('rating_summary');
}

type MeetingPageArgs = { teamId: string; userId: string; status: MeetingStatus | undefined };

/**
 * The team's meetings with their rating summaries, newest first (day, then creation, then id),
 * written as JSON by `shape` and `ratingShape` (given by the handler), with the team's facts for the
 * access check (`standingColumns`).
 */
export function teamMeetingPages<R, S>(shape: JsonShape<MeetingPageRow, R>, ratingShape: JsonShape<RatingSummaryJson, S>) {
  const ratingJson = ratingSummaryText(ratingShape);
  const pages = preparedJsonPages(
    (db: Db, { teamId, userId, status }: MeetingPageArgs) => {
      let query = db
        .selectFrom('meetings')
        .selectAll('meetings')
        .select(ratingJson)
        .select(standingColumns(teamId, userId))
        .where('meetings.team_id', '=', teamId);
      if (status !== undefined) query = query.where('meetings.status', '=', status);
      return query;
    },
    [
      { column: 'meetings.date', direction: 'desc', type: 'day' },
      { column: 'meetings.created_at', direction: 'desc', type: 'instant' },
      { column: 'meetings.id', direction: 'desc', type: 'string' },
    ],
    shape,
    standingColumnNames,
  );
  return async (db: Db, teamId: string, userId: string, filters: { status?: MeetingStatus | undefined }, page: Page) =>
    withStanding(teamId, await pages(db, { teamId, userId, status: filters.status }, page));
}

/** One meeting with everything it shows and what decides access and its rating window, in one statement. */
const meetingById = prepared((db, { meetingId, userId }: { meetingId: string; userId: string }) =>
  selectMeetingFacts(db, userId)
    .select([ratingSummaryOf('meetings.id'), nextStartedAt, ratingsOf, seguesOf, headlinesOf, messagesOf(userId)])
    .where('meetings.id', '=', meetingId),
);

export async function findMeeting(db: Db, meetingId: string, userId: string) {
  return (await meetingById(db, { meetingId, userId }))[0];
}

export type MeetingDetailRow = NonNullable<Awaited<ReturnType<typeof findMeeting>>>;

/**
 * The bytes of a meeting's segues', headlines' and messages' contents: a lower bound of the size of
 * the meeting's JSON, which PostgreSQL knows without reading the texts (a long one keeps its size in
 * its header). Escaping them to measure their JSON exactly cost each segue added to a large meeting
 * more than reading it whole.
 */
const contentBytes = sql<number>`(
  (select coalesce(sum(octet_length(s.content)), 0) from segues s where s.meeting_id = meetings.id)
  + (select coalesce(sum(octet_length(h.content)), 0) from headlines h where h.meeting_id = meetings.id)
  + (select coalesce(sum(octet_length(c.content)), 0) from cascading_messages c where c.meeting_id = meetings.id)
)`;

/**
 * The meeting as `findMeeting` reads it for the event of a change that altered it, in one statement,
 * but without its segues, headlines and messages (empty lists, `large` true) when their contents alone
 * take more than `bytes` of JSON: its event is then kept in its reduced form, which holds none of
 * them, so a meeting of 1 MB is not read and written again for each segue added to it.
 */
export async function findMeetingForEvent(db: Db, meetingId: string, userId: string, bytes: number) {
  const large = sql<boolean>`${contentBytes} > ${bytes}`;
  const listed = <T, Name extends string>(list: RawBuilder<T[]>, name: Name) => sql<T[]>`case when ${large} then '[]'::json else ${list} end`.as(name);
  const row = await selectMeetingFacts(db, userId)
    .select([ratingSummaryOf('meetings.id'), nextStartedAt, ratingsOf, large.as('large')])
    .select([listed(seguesRows, 'segues'), listed(headlinesRows, 'headlines'), listed(messagesRows(userId), 'messages')])
    .where('meetings.id', '=', meetingId)
    .executeTakeFirst();
  return row;
}

/**
 * The team's meetings dated `since` or later, each as `findMeeting` reads it, newest first (the list's
 * order: day, then creation, then id), in one statement (`meetings_team_id_date_created_at_id_idx`).
 */
const meetingsSince = prepared((db, { teamId, userId, since }: { teamId: string; userId: string; since: string }) =>
  selectMeetingFacts(db, userId)
    .select([ratingSummaryOf('meetings.id'), nextStartedAt, ratingsOf, seguesOf, headlinesOf, messagesOf(userId)])
    .where('meetings.team_id', '=', teamId)
    .where('meetings.date', '>=', sql<string>`${since}::date`)
    .orderBy('meetings.date', 'desc')
    .orderBy('meetings.created_at', 'desc')
    .orderBy('meetings.id', 'desc'),
);

export function teamMeetingsSince(db: Db, teamId: string, userId: string, since: string): Promise<MeetingDetailRow[]> {
  return meetingsSince(db, { teamId, userId, since });
}

/** What decides access to a meeting: its team, organization and the caller's role in the team. */
export function findMeetingFacts(db: Db, meetingId: string, userId: string) {
  return selectMeetingFacts(db, userId).where('meetings.id', '=', meetingId).executeTakeFirst();
}

/** The meeting to change, locked until the end of the transaction, so that two status moves never both succeed. */
export function lockMeeting(trx: Transaction<Database>, meetingId: string, userId: string) {
  return selectMeetingFacts(trx, userId).where('meetings.id', '=', meetingId).forUpdate('meetings').executeTakeFirst();
}

/**
 * The meeting to rate with what decides its rating window, locked until the end of the transaction:
 * a rating changes the meeting (its summary, so its revision: 0012_revisions), so raters of one
 * meeting take turns, and a status move waits for them (and they for it). A share lock here would
 * deadlock two raters, each then waiting to update the row the other shares.
 */
export function lockMeetingForRating(trx: Transaction<Database>, meetingId: string, userId: string) {
  return selectMeetingFacts(trx, userId).select(nextStartedAt).where('meetings.id', '=', meetingId).forNoKeyUpdate('meetings').executeTakeFirst();
}

export interface RecapTaskJson {
  id: string;
  title: string;
  owner_id: string;
  owner_name: string;
  due_date: Day;
  completed: boolean;
}

export interface RecapIssueJson {
  id: string;
  title: string;
  priority: IssuePriority;
  status: IssueStatus;
}

const issueJson = sql`json_build_object('id', i.id, 'title', i.title, 'priority', i.priority, 'status', i.status)`;

/**
 * A meeting with its recap, in one statement: the tasks and issues created with its id, the team's
 * issues solved between its start and end, its headlines and messages.
 */
export function findMeetingRecap(db: Db, meetingId: string, userId: string) {
  return selectMeetingFacts(db, userId)
    .select([
      ratingSummaryOf('meetings.id'),
      headlinesOf,
      messagesOf(userId),
      sql<RecapTaskJson[]>`(
        select coalesce(
          json_agg(
            json_build_object(
              'id', t.id, 'title', t.title, 'owner_id', t.owner_id, 'owner_name', u.name, 'due_date', t.due_date, 'completed', t.completed
            )
            order by t.created_at, t.id
          ),
          '[]'::json
        )
        from tasks t
        join users u on u.id = t.owner_id
        where t.meeting_id = meetings.id
      )`.as('new_tasks'),
      sql<RecapIssueJson[]>`(
        select coalesce(json_agg(${issueJson} order by i.created_at, i.id), '[]'::json)
        from issues i
        where i.meeting_id = meetings.id
      )`.as('raised_issues'),
      sql<RecapIssueJson[]>`(
        select coalesce(json_agg(${issueJson} order by i.resolved_at, i.id), '[]'::json)
        from issues i
        where i.team_id = meetings.team_id and i.resolved_at between meetings.started_at and meetings.ended_at
      )`.as('solved_issues'),
    ])
    .where('meetings.id', '=', meetingId)
    .executeTakeFirst();
}

// ---------------------------------------------------------------------------------------------------
// Writes

export function insertMeeting(
  db: Db,
  meeting: {
    teamId: string;
    createdById: string;
    date: Day;
    status: MeetingStatus;
    startedAt: Date | null;
    endedAt: Date | null;
    durationMin: number | null;
    createdAt: Date;
  },
) {
  return db
    .insertInto('meetings')
    .values({
      team_id: meeting.teamId,
      created_by_id: meeting.createdById,
      date: meeting.date,
      status: meeting.status,
      started_at: meeting.startedAt,
      ended_at: meeting.endedAt,
      duration_min: meeting.durationMin,
      created_at: meeting.createdAt,
    })
    .returningAll()
    .returning(ratingSummaryOf('meetings.id'))
    .executeTakeFirstOrThrow();
}

export interface MeetingChange {
  status?: MeetingStatus;
  date?: Day;
  startedAt?: Date;
  endedAt?: Date;
  durationMin?: number;
  notes?: string | null;
}

export async function updateMeeting(trx: Transaction<Database>, meetingId: string, change: MeetingChange) {
  await trx
    .updateTable('meetings')
    .set({
      status: change.status,
      date: change.date,
      started_at: change.startedAt,
      ended_at: change.endedAt,
      duration_min: change.durationMin,
      notes: change.notes,
    })
    .where('id', '=', meetingId)
    .execute();
}

/** Reveals the ratings of a meeting in progress; a second reveal keeps the first moment. */
export async function revealRatings(trx: Transaction<Database>, meetingId: string, now: Date) {
  await trx
    .updateTable('meetings')
    .set({ ratings_revealed_at: sql<Date>`coalesce(ratings_revealed_at, ${now})` })
    .where('id', '=', meetingId)
    .where('status', '=', 'IN_PROGRESS')
    .execute();
}

/** Stores one person's rating or absence: one row per person and meeting, however many requests race. */
export function upsertRating(trx: Transaction<Database>, rating: { meetingId: string; userId: string; rating: number; absent: boolean }) {
  return trx
    .insertInto('meeting_ratings')
    .values({ meeting_id: rating.meetingId, user_id: rating.userId, rating: rating.rating, absent: rating.absent })
    .onConflict((conflict) =>
      conflict.columns(['meeting_id', 'user_id']).doUpdateSet({
        rating: (eb) => eb.ref('excluded.rating'),
        absent: (eb) => eb.ref('excluded.absent'),
        updated_at: sql<Date>`now()`,
      }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteRating(trx: Transaction<Database>, meetingId: string, userId: string) {
  await trx.deleteFrom('meeting_ratings').where('meeting_id', '=', meetingId).where('user_id', '=', userId).execute();
}

/** Adds a segue or headline to the meeting if it still exists (undefined otherwise). */
export function insertSegue(db: Db, segue: { meetingId: string; userId: string; content: string }) {
  return db
    .insertInto('segues')
    .columns(['meeting_id', 'user_id', 'content'])
    .expression((eb) =>
      eb
        .selectFrom('meetings')
        .select(['meetings.id', sql<string>`${segue.userId}::text`.as('user_id'), sql<string>`${segue.content}::text`.as('content')])
        .where('meetings.id', '=', segue.meetingId),
    )
    .returningAll()
    .executeTakeFirst();
}

export function insertHeadline(db: Db, headline: { meetingId: string; userId: string; type: HeadlineType; content: string }) {
  return db
    .insertInto('headlines')
    .columns(['meeting_id', 'user_id', 'type', 'content'])
    .expression((eb) =>
      eb
        .selectFrom('meetings')
        .select([
          'meetings.id',
          sql<string>`${headline.userId}::text`.as('user_id'),
          sql<HeadlineType>`${headline.type}::text`.as('type'),
          sql<string>`${headline.content}::text`.as('content'),
        ])
        .where('meetings.id', '=', headline.meetingId),
    )
    .returningAll()
    .executeTakeFirst();
}

/** Adds a cascading message to the meeting (if it still exists), in the organization of the meeting's team. */
export function insertMessage(db: Db, message: { meetingId: string; userId: string; content: string }) {
  return db
    .insertInto('cascading_messages')
    .columns(['meeting_id', 'org_id', 'user_id', 'content'])
    .expression((eb) =>
      eb
        .selectFrom('meetings')
        .innerJoin('teams', 'teams.id', 'meetings.team_id')
        .select([
          'meetings.id',
          'teams.org_id',
          sql<string>`${message.userId}::text`.as('user_id'),
          sql<string>`${message.content}::text`.as('content'),
        ])
        .where('meetings.id', '=', message.meetingId),
    )
    .returningAll()
    .executeTakeFirst();
}

/** A cascading message with what decides access to it: its meeting's team and organization and the caller's role. */
export function findMessageFacts(db: Db, messageId: string, userId: string) {
  return db
    .selectFrom('cascading_messages')
    .innerJoin('meetings', 'meetings.id', 'cascading_messages.meeting_id')
    .select(['cascading_messages.id', 'meetings.team_id', 'cascading_messages.org_id', callerTeamRole('meetings.team_id', userId)])
    .where('cascading_messages.id', '=', messageId)
    .executeTakeFirst();
}

/**
 * Deleting a message changes its meeting (0012_revisions): the meeting is locked before the message,
 * in the order every change of a meeting's messages takes (`acknowledgeMessages`), so that two such
 * changes never wait for each other in a circle.
 */
export async function deleteMessage(db: Db, messageId: string) {
  await db
    .deleteFrom('cascading_messages')
    .where('id', '=', messageId)
    .where(({ exists }) =>
      exists(sql`(select 1 from meetings m where m.id = cascading_messages.meeting_id for no key update)`),
    )
    .execute();
}

/** The organizations of the messages that exist among `ids` (ids that match nothing are left out). */
export async function messageOrganizations(db: Db, ids: readonly string[]): Promise<string[]> {
  const rows = await db.selectFrom('cascading_messages').select('org_id').distinct().where('id', 'in', [...ids]).execute();
  return rows.map((row) => row.org_id);
}

/** Marks the messages that exist among `ids` read by the person; those already read stay as they were. */
export async function acknowledgeMessages(db: Db, ids: readonly string[], userId: string) {
  await db
    .insertInto('message_acknowledgements')
    .columns(['message_id', 'user_id'])
    .expression((eb) =>
      eb
        .selectFrom('cascading_messages')
        .select(['cascading_messages.id', sql<string>`${userId}::text`.as('user_id')])
        // Acknowledging changes each message and its meeting (0012_revisions): their rows are locked
        // first, meetings before their messages and each in id order, the same order for every
        // acknowledgement, so that two of the same messages at once take turns instead of deadlocking.
        .where(
          'cascading_messages.id',
          'in',
          sql<string>`(select c.id from meetings m join cascading_messages c on c.meeting_id = m.id
            where c.id in (${sql.join([...ids])}) order by m.id, c.id for no key update of m, c)`,
        ),
    )
    .onConflict((conflict) => conflict.columns(['message_id', 'user_id']).doNothing())
    .execute();
}

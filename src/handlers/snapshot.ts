/**
 * The team snapshot (`GET /teams/{teamId}/snapshot`): what a team's screen shows, each record as the
 * caller's own read of it answers, read in one repeatable-read transaction together with the log
 * position it reflects. Every part is read by the query its own list or GET uses, with the same JSON
 * shape (src/records/), so its bytes are the list's; the long parts in keyset batches of
 * `SNAPSHOT_BATCH` records, each batch written to the answer's spool (src/api/spooledJson.ts) before
 * the next is read, so memory stays flat however large the team.
 *
 * Statements: the transaction's start and end, the team with the caller's role, the log's end, one
 * per part (two for goals, issues and tasks: two groups each), and one more for every further
 * `SNAPSHOT_BATCH` records of a part (test/roundTrips.test.ts counts a team below it).
 */
import type { Kysely, Transaction } from 'kysely';
import { JsonSpool } from '../api/spooledJson.js';
import { loadTeamAccess } from '../auth/access.js';
import type { Caller } from '../auth/caller.js';
import { seesEveryPeopleReview } from '../auth/permissions.js';
import type { SecretBox } from '../auth/secrets.js';
import type { Database } from '../db/database.js';
import * as documents from '../db/queries/documents.js';
import { logEnd } from '../db/queries/events.js';
import * as goals from '../db/queries/goals.js';
import * as issues from '../db/queries/issues.js';
import * as meetings from '../db/queries/meetings.js';
import * as metrics from '../db/queries/metrics.js';
import * as orgChart from '../db/queries/orgChart.js';
import * as peopleReviews from '../db/queries/peopleReviews.js';
import * as tasks from '../db/queries/tasks.js';
import * as teams from '../db/queries/teams.js';
import * as vision from '../db/queries/vision.js';
import { RuleViolation } from '../errors.js';
import { logPositions } from '../events/positions.js';
import { documentJson } from '../records/documents.js';
import { goalJson, milestoneJson } from '../records/goals.js';
import { issueJson } from '../records/issues.js';
import { toMeetingDetail } from '../records/meetings.js';
import { metricValueJson, scorecardMetricJson, scorecardText } from '../records/metrics.js';
import { toSeat } from '../records/orgChart.js';
import { gwcJson, peopleReviewJson } from '../records/peopleReviews.js';
import { taskJson } from '../records/tasks.js';
import { teamMemberJson, toTeam } from '../records/teams.js';
import { toVision } from '../records/vision.js';
import { scorecardWeeks } from '../rules/scorecardWeeks.js';
import { addWeeks, dayInTimeZone, mondayOf, previousQuarter, quarterOf } from '../time.js';
import { callerTimeZoneIn } from './shared.js';

/** Records read per statement of a long part. */
export const SNAPSHOT_BATCH = 1_000;
/** The largest snapshot, in bytes of JSON: a larger team is read with the lists. */
export const SNAPSHOT_MAX_BYTES = 256 * 1024 * 1024;
/** Snapshots one process builds at once; more wait their turn, in arrival order. */
export const SNAPSHOT_CONCURRENCY = 1;
/** Tasks completed this long before the snapshot are still in it. */
const RECENTLY_COMPLETED_MS = 14 * 24 * 60 * 60 * 1000;
/** Meetings dated this many weeks before today on are in it. */
const MEETING_WEEKS_BACK = 13;

/**
 * At most `limit` holders at once; the others wait in arrival order. Only building a snapshot holds
 * it (the transaction and the spool), not sending it: a slow client holds no database connection.
 */
export class Turns {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly limit: number) {}

  async take(): Promise<void> {
    if (this.running < this.limit) {
      this.running += 1;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  /** Hands the turn to the next in line, or frees it. */
  give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running -= 1;
  }
}

/** Every page of a long part, each written to the spool as read: the records, comma-separated. */
async function writePages(spool: JsonSpool, read: (page: { limit: number; cursor?: string | undefined }) => Promise<{ records: string; nextCursor: string | null }>, first = true) {
  let cursor: string | undefined;
  let empty = first;
  do {
    const page = await read({ limit: SNAPSHOT_BATCH, cursor });
    if (page.records !== '') {
      await spool.write(empty ? page.records : `,${page.records}`);
      empty = false;
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return empty;
}

const teamMemberPages = teams.teamMemberPages(teamMemberJson);
const teamDocumentPages = documents.teamDocumentPages(documentJson);
const teamPeopleReviewPages = peopleReviews.teamPeopleReviewPages(peopleReviewJson, gwcJson);
const teamGoalPages = goals.teamGoalPages(goalJson, milestoneJson);
const scorecards = metrics.scorecards(scorecardMetricJson, metricValueJson);
const teamIssuePages = issues.teamIssuePages(issueJson);
const teamTaskPages = tasks.teamTaskPages(taskJson);

const json = JSON.stringify;

/**
 * Writes the team's snapshot for `caller` at `now` into `spool`, in one repeatable-read transaction:
 * the access check (403, 404) first, then the log's end in the same snapshot of the database.
 */
async function writeSnapshot(trx: Transaction<Database>, caller: Caller, teamId: string, now: Date, secrets: SecretBox, spool: JsonSpool) {
  const { team, access } = await loadTeamAccess(trx, caller, teamId, 'collection');
  // Every event below the log's horizon in this transaction's snapshot committed before it: the
  // changes at or before this place are all in what follows (src/db/queries/events.ts, the horizon).
  const position = logPositions(secrets).seal(access.orgId, await logEnd(trx));
  const today = dayInTimeZone(now, callerTimeZoneIn(caller, access.orgId));
  const { userId } = caller;

  await spool.write(`{"position":${json(position)},"takenAt":${json(now.toISOString())},"team":${json(toTeam(team))},"members":[`);
  await writePages(spool, (page) => teamMemberPages(trx, teamId, page));
  const found = await vision.findVision(trx, teamId);
  const seats = await orgChart.listTeamSeats(trx, teamId);
  await spool.write(`],"vision":${found ? json(toVision(found)) : 'null'},"seats":${json(seats.map(toSeat))},"documents":[`);
  await writePages(spool, (page) => teamDocumentPages(trx, teamId, userId, page));
  await spool.write('],"peopleReviews":[');
  const involving = seesEveryPeopleReview(access) ? undefined : userId;
  await writePages(spool, (page) => teamPeopleReviewPages(trx, teamId, { quarter: undefined, involving }, page));
  await spool.write('],"goals":[');
  const quarter = quarterOf(today);
  const none = await writePages(spool, (page) => teamGoalPages(trx, teamId, userId, { quarter }, page));
  await writePages(spool, (page) => teamGoalPages(trx, teamId, userId, { quarter: previousQuarter(quarter) }, page), none);
  const range = scorecardWeeks({}, () => mondayOf(today))!;
  const scorecard = await scorecards(trx, teamId, userId, range.from, range.to);
  await spool.write(`],"scorecard":${scorecardText(teamId, range, scorecard.records).text},"meetings":[`);
  const details = await meetings.teamMeetingsSince(trx, teamId, userId, addWeeks(today, -MEETING_WEEKS_BACK));
  await spool.write(details.map((row) => json(toMeetingDetail(row, userId, now))).join(','));
  await spool.write('],"issues":[');
  const noOpen = await writePages(spool, (page) => teamIssuePages(trx, teamId, userId, { status: 'OPEN' }, page));
  await writePages(spool, (page) => teamIssuePages(trx, teamId, userId, { status: 'SOLVING' }, page), noOpen);
  await spool.write('],"tasks":[');
  const noneOpen = await writePages(spool, (page) => teamTaskPages(trx, teamId, userId, { completed: false }, page));
  const since = new Date(now.getTime() - RECENTLY_COMPLETED_MS);
  await writePages(spool, (page) => teamTaskPages(trx, teamId, userId, { completed: true, completedSince: since }, page), noneOpen);
  await spool.write(']}');
}

/**
 * The team's snapshot, whole, in a spool ready to send; refused with the team's 403 or 404, or 422
 * past `SNAPSHOT_MAX_BYTES`. Waits for a turn of `turns` first.
 */
export async function buildSnapshot(db: Kysely<Database>, turns: Turns, request: { caller: Caller; teamId: string; now: () => Date; secrets: SecretBox }): Promise<JsonSpool> {
  const spool = new JsonSpool(
    SNAPSHOT_MAX_BYTES,
    () => new RuleViolation(`The team's snapshot would take more than ${SNAPSHOT_MAX_BYTES / 1024 / 1024} MB; read its records with the lists.`),
  );
  await turns.take();
  try {
    await db
      .transaction()
      .setIsolationLevel('repeatable read')
      .setAccessMode('read only')
      .execute((trx) => writeSnapshot(trx, request.caller, request.teamId, request.now(), request.secrets, spool));
    await spool.finish();
    return spool;
  } catch (error) {
    await spool.discard();
    throw error;
  } finally {
    turns.give();
  }
}

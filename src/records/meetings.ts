/** Rows → the contract's meeting records: what a caller sees of a meeting depends on who asks and when. */
import type { Schemas } from '../api/operations.js';
import type { MeetingRatingRow, MeetingRow } from '../db/database.js';
import { declareRecord } from '../db/json.js';
import type {
  HeadlineJson,
  MeetingDetailRow,
  MessageJson,
  RatingJson,
  RatingSummaryJson,
  RecapIssueJson,
  RecapTaskJson,
  SegueJson,
} from '../db/queries/meetings.js';
import { ratingsHidden } from '../rules/meetingStatus.js';
import { ratingWindow } from '../rules/ratingWindow.js';

/** An instant read from a JSON array (text in the session's zone) or a column (Date), in UTC. */
const instant = (value: string | Date): string => new Date(value).toISOString();

/** A meeting's rating summary; `ratingSummaryJson` for the list (src/db/json.ts), whose query hides `average` itself. */
const ratingSummary = declareRecord<RatingSummaryJson, Schemas['MeetingRatingSummary']>({
  average: ['number', 'average'],
  ratedCount: ['integer', 'rated_count'],
  absentCount: ['integer', 'absent_count'],
});

export const { shape: ratingSummaryJson } = ratingSummary;

/**
 * A meeting as its row holds it, the rating's average whether hidden or not; `meetingJson` for the
 * list, whose `rating_summary` holds the text `ratingSummaryJson` wrote.
 */
const meeting = declareRecord<MeetingRow & { rating_summary: RatingSummaryJson }, Schemas['Meeting']>({
  id: ['id', 'id'],
  revision: ['integer', 'revision'],
  teamId: ['id', 'team_id'],
  date: ['day', 'date'],
  status: ['enum', 'status'],
  startedAt: ['instant', 'started_at'],
  endedAt: ['instant', 'ended_at'],
  durationMin: ['integer', 'duration_min'],
  createdById: ['id', 'created_by_id'],
  rating: ['json', 'rating_summary', ratingSummary],
});

export const { shape: meetingJson } = meeting;

/** The meeting for single reads and changes: no average while its ratings are hidden (the rule the list's query repeats). */
export const toMeeting = (row: MeetingRow & { rating_summary: RatingSummaryJson }): Schemas['Meeting'] => {
  const record = meeting.toRecord(row);
  if (ratingsHidden(row.status, row.ratings_revealed_at)) record.rating.average = null;
  return record;
};

export const toRating = (row: RatingJson | MeetingRatingRow): Schemas['Rating'] => ({
  userId: row.user_id,
  rating: row.rating,
  absent: row.absent,
});

export const toSegue = (row: SegueJson | (Omit<SegueJson, 'created_at'> & { created_at: Date })): Schemas['Segue'] => ({
  id: row.id,
  revision: Number(row.revision),
  meetingId: row.meeting_id,
  userId: row.user_id,
  content: row.content,
  createdAt: instant(row.created_at),
});

export const toHeadline = (row: HeadlineJson | (Omit<HeadlineJson, 'created_at'> & { created_at: Date })): Schemas['Headline'] => ({
  ...toSegue(row),
  type: row.type,
});

export const toCascadingMessage = (row: MessageJson | (Omit<MessageJson, 'created_at'> & { created_at: Date })): Schemas['CascadingMessage'] => ({
  ...toSegue(row),
  acknowledged: row.acknowledged,
});

/**
 * The single meeting as `callerId` sees it at `now`: while its ratings are hidden only the caller's own
 * rating shows; the rating window is the one the rule decides at that moment.
 */
export function toMeetingDetail(row: MeetingDetailRow, callerId: string, now: Date): Schemas['MeetingDetail'] {
  const hidden = ratingsHidden(row.status, row.ratings_revealed_at);
  const window = ratingWindow(
    { status: row.status, startedAt: row.started_at, createdAt: row.created_at, nextMeetingStartedAt: row.next_started_at },
    now,
  );
  return {
    ...toMeeting(row),
    notes: row.notes,
    ratings: row.ratings.filter((rating) => !hidden || rating.user_id === callerId).map(toRating),
    segues: row.segues.map(toSegue),
    headlines: row.headlines.map(toHeadline),
    messages: row.messages.map(toCascadingMessage),
    ratingWindow: { open: window.open, closesAt: window.closesAt && instant(window.closesAt) },
    ratingsHidden: hidden,
  };
}

/**
 * The single meeting as an event carries it: as a reader who has neither rated it nor acknowledged
 * any of its messages sees it at the moment of the change. An event is read by many (the feed's
 * Owners and Admins, webhook receivers), so it may carry only what all of them would be shown:
 * while the ratings are hidden, nobody's rating (not even that of the person who made the change,
 * whose own answer shows theirs); and `acknowledged`, which tells a reader their own state, false.
 * Revealing the ratings, or completing the meeting, is an event of its own that carries them.
 */
export function meetingSeenByEveryone(detail: Schemas['MeetingDetail']): Schemas['MeetingDetail'] {
  return {
    ...detail,
    ratings: detail.ratingsHidden ? [] : detail.ratings,
    messages: detail.messages.map((message) => ({ ...message, acknowledged: false })),
  };
}

const toRecapIssue = (row: RecapIssueJson): Schemas['RecapIssue'] => ({ id: row.id, title: row.title, priority: row.priority, status: row.status });

/** The recap of a COMPLETED meeting (its times are set). */
export function toMeetingRecap(
  row: MeetingRow & {
    rating_summary: RatingSummaryJson;
    headlines: HeadlineJson[];
    messages: MessageJson[];
    new_tasks: RecapTaskJson[];
    raised_issues: RecapIssueJson[];
    solved_issues: RecapIssueJson[];
  },
): Schemas['MeetingRecap'] {
  return {
    meetingId: row.id,
    teamId: row.team_id,
    date: row.date,
    startedAt: instant(row.started_at!),
    endedAt: instant(row.ended_at!),
    durationMin: row.duration_min!,
    rating: ratingSummary.toRecord(row.rating_summary),
    newTasks: row.new_tasks.map((task) => ({
      id: task.id,
      title: task.title,
      ownerId: task.owner_id,
      ownerName: task.owner_name,
      dueDate: task.due_date,
      completed: task.completed,
    })),
    solvedIssues: row.solved_issues.map(toRecapIssue),
    raisedIssues: row.raised_issues.map(toRecapIssue),
    headlines: row.headlines.map(toHeadline),
    messages: row.messages.map(toCascadingMessage),
    notes: row.notes,
  };
}

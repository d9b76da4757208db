/**
 * Handlers of the meetings area: weekly meetings and their status, ratings (with their window and
 * hidden ratings), notes, segues, headlines, cascading messages and the recap.
 */
import { locationOf } from '../api/location.js';
import type { Kysely } from 'kysely';
import type { Caller } from '../auth/caller.js';
import {
  mayRateSelf,
  messagesAccess,
  ratesAnyTime,
  requireChange,
  teamAccess,
  teamAllows,
  type TeamAccess,
} from '../auth/permissions.js';
import type { Database, MeetingRow } from '../db/database.js';
import { loadTeamAccess } from '../auth/access.js';
import { standingOf } from '../db/queries/access.js';
import * as meetings from '../db/queries/meetings.js';
import { pageLimit } from '../db/pagination.js';
import { FormatError, NotFound, RatingClosed, RuleViolation } from '../errors.js';
import {
  meetingJson,
  ratingSummaryJson,
  toCascadingMessage,
  toHeadline,
  toMeeting,
  toMeetingDetail,
  toMeetingRecap,
  toRating,
  toSegue,
} from '../records/meetings.js';
import { pageText } from '../api/jsonText.js';
import { isStepForward, liveDurationMin } from '../rules/meetingStatus.js';
import { mayRateNow } from '../rules/ratingWindow.js';
import { addMinutes, dayInTimeZone, isDay } from '../time.js';
import { callerTimeZoneIn, clearable, requireTeamMember } from './shared.js';
import type { AreaHandlers, Handler } from './types.js';
import { inTransaction } from '../db/transaction.js';

/** A meeting's start as sent: an instant with a zone (the contract checks the format), not in the future. */
function meetingStart(text: string, now: Date): Date {
  const startedAt = new Date(text);
  if (Number.isNaN(startedAt.getTime())) {
    throw new FormatError([{ origin: 'body', code: 'invalid_format', path: ['startedAt'], message: 'Not a valid instant.', format: 'instant' }]);
  }
  if (startedAt > now) throw new RuleViolation('A meeting cannot start in the future.');
  return startedAt;
}

/**
 * The meeting day of a start: its day in the caller's time zone (the profile's, else the
 * organization's), within the years a day may have (2000-2100).
 */
function meetingDay(startedAt: Date, caller: Caller, access: TeamAccess): string {
  const date = dayInTimeZone(startedAt, callerTimeZoneIn(caller, access.orgId));
  if (!isDay(date)) throw new RuleViolation('A meeting must take place between the years 2000 and 2100.');
  return date;
}

function requireRatingOpen(meeting: MeetingRow & { next_started_at: Date | null }, now: Date, anyTime: boolean) {
  const facts = {
    status: meeting.status,
    startedAt: meeting.started_at,
    createdAt: meeting.created_at,
    nextMeetingStartedAt: meeting.next_started_at,
  };
  if (mayRateNow(facts, now, anyTime)) return;
  throw new RatingClosed(
    meeting.status === 'SCHEDULED'
      ? 'The meeting has not started yet; it cannot be rated.'
      : "The meeting's rating window has closed; only team Admins and Owners may still rate it.",
  );
}

/** The caller's access to a meeting; an invisible meeting is answered like a missing one (404). */
async function meetingAccess(db: Kysely<Database>, caller: Caller, meetingId: string) {
  const meeting = await meetings.findMeetingFacts(db, meetingId, caller.userId);
  return teamAccess(caller, meeting && standingOf(meeting), 'item');
}

const teamMeetingPages = meetings.teamMeetingPages(meetingJson, ratingSummaryJson);

export const listTeamMeetings: Handler<'listTeamMeetings'> = async ({ params, query }, { db, caller }) => {
  const page = await teamMeetingPages(db, params.teamId, caller.userId, { status: query.status }, { limit: pageLimit(query.limit), cursor: query.cursor });
  const { access } = await loadTeamAccess(db, caller, params.teamId, 'collection', page.standing);
  return { status: 200, body: pageText(page), logOf: access.orgId };
};

/** A past meeting as recorded: COMPLETED, ended `durationMin` after its start, on its start's day. */
function recordedMeeting(record: { startedAt: string; durationMin: number }, now: Date, caller: Caller, access: TeamAccess) {
  const startedAt = meetingStart(record.startedAt, now);
  return {
    date: meetingDay(startedAt, caller, access),
    status: 'COMPLETED' as const,
    startedAt,
    endedAt: addMinutes(startedAt, record.durationMin),
    durationMin: record.durationMin,
  };
}

export const createMeeting: Handler<'createMeeting'> = async ({ params, body }, { db, caller, now }) => {
  const { access } = await loadTeamAccess(db, caller, params.teamId, 'collection');
  requireChange(access, teamAllows(access, 'manageMeetings'));
  const at = now();
  const shape =
    'date' in body
      ? { date: body.date, status: 'SCHEDULED' as const, startedAt: null, endedAt: null, durationMin: null }
      : recordedMeeting(body, at, caller, access);
  const meeting = await meetings.insertMeeting(db, { ...shape, teamId: params.teamId, createdById: caller.userId, createdAt: at });
  return { status: 201, body: toMeeting(meeting), headers: { Location: locationOf('/meetings/{id}', { id: meeting.id }) } };
};

export const getMeeting: Handler<'getMeeting'> = async ({ params }, { db, caller, now }) => {
  const meeting = await meetings.findMeeting(db, params.id, caller.userId);
  const access = teamAccess(caller, meeting && standingOf(meeting), 'item');
  return { status: 200, body: toMeetingDetail(meeting!, caller.userId, now()), logOf: access.orgId };
};

/**
 * The meeting stays locked from the check of its status to the write, so that of two status moves
 * racing on one meeting the second sees the first's result and is refused.
 */
export const updateMeeting: Handler<'updateMeeting'> = async ({ params, body }, { db, caller, now }) => {
  const at = now();
  const updated = await inTransaction(db, async (trx) => {
    const meeting = await meetings.lockMeeting(trx, params.id, caller.userId);
    const access = teamAccess(caller, meeting && standingOf(meeting), 'item');
    requireChange(access, teamAllows(access, 'manageMeetings'));
    const stored = meeting!;
    let change: meetings.MeetingChange;
    if ('status' in body) {
      if (!isStepForward(stored.status, body.status)) {
        throw new RuleViolation(`A ${stored.status} meeting cannot move to ${body.status}: only one step forward is allowed.`);
      }
      change =
        body.status === 'IN_PROGRESS'
          ? { status: body.status, startedAt: at }
          : { status: body.status, endedAt: at, durationMin: liveDurationMin(stored.started_at!, at) };
    } else if ('notes' in body) {
      change = { notes: clearable(body.notes) };
    } else {
      if (stored.status !== 'COMPLETED') throw new RuleViolation('Only the times of a COMPLETED meeting can be corrected.');
      const startedAt = body.startedAt === undefined ? stored.started_at! : meetingStart(body.startedAt, at);
      const durationMin = body.durationMin ?? stored.duration_min!;
      change = {
        startedAt,
        durationMin,
        endedAt: addMinutes(startedAt, durationMin),
        ...(body.startedAt === undefined ? {} : { date: meetingDay(startedAt, caller, access) }),
      };
    }
    await meetings.updateMeeting(trx, stored.id, change);
    return meetings.findMeeting(trx, stored.id, caller.userId);
  });
  if (!updated) throw new NotFound();
  return { status: 200, body: toMeetingDetail(updated, caller.userId, at) };
};

export const getMeetingRecap: Handler<'getMeetingRecap'> = async ({ params }, { db, caller }) => {
  const meeting = await meetings.findMeetingRecap(db, params.id, caller.userId);
  const access = teamAccess(caller, meeting && standingOf(meeting), 'item');
  if (meeting!.status !== 'COMPLETED') throw new RuleViolation('Only a COMPLETED meeting has a recap.');
  return { status: 200, body: toMeetingRecap(meeting!), logOf: access.orgId };
};

/** The meeting is share-locked while the rating is written, so its status cannot move in between. */
export const rateMeetingAsMe: Handler<'rateMeetingAsMe'> = async ({ params, body }, { db, caller, now }) => {
  const rating = await inTransaction(db, async (trx) => {
    const meeting = await meetings.lockMeetingForRating(trx, params.id, caller.userId);
    const access = teamAccess(caller, meeting && standingOf(meeting), 'item');
    requireChange(access, mayRateSelf(access));
    requireRatingOpen(meeting!, now(), ratesAnyTime(access));
    return meetings.upsertRating(trx, { meetingId: meeting!.id, userId: caller.userId, rating: body.rating, absent: false });
  });
  return { status: 200, body: toRating(rating) };
};

export const setMeetingRating: Handler<'setMeetingRating'> = async ({ params, body }, { db, caller, now }) => {
  const rating = await inTransaction(db, async (trx) => {
    const meeting = await meetings.lockMeetingForRating(trx, params.id, caller.userId);
    const access = teamAccess(caller, meeting && standingOf(meeting), 'item');
    requireChange(access, teamAllows(access, 'rateOthers'));
    requireRatingOpen(meeting!, now(), true);
    await requireTeamMember(trx, meeting!.team_id, params.userId, 'rating', 'rated person');
    const target = { meetingId: meeting!.id, userId: params.userId };
    if (!('rating' in body)) return meetings.upsertRating(trx, { ...target, rating: 0, absent: true });
    if (body.rating === 0) {
      await meetings.deleteRating(trx, target.meetingId, target.userId);
      return undefined;
    }
    return meetings.upsertRating(trx, { ...target, rating: body.rating, absent: false });
  });
  return rating ? { status: 200, body: toRating(rating) } : { status: 204, body: undefined };
};

export const revealMeetingRatings: Handler<'revealMeetingRatings'> = async ({ params }, { db, caller, now }) => {
  const at = now();
  const revealed = await inTransaction(db, async (trx) => {
    const meeting = await meetings.lockMeeting(trx, params.id, caller.userId);
    const access = teamAccess(caller, meeting && standingOf(meeting), 'item');
    requireChange(access, teamAllows(access, 'manageMeetings'));
    if (meeting!.status === 'SCHEDULED') throw new RuleViolation('A SCHEDULED meeting has no ratings to reveal.');
    await meetings.revealRatings(trx, meeting!.id, at);
    return meetings.findMeeting(trx, meeting!.id, caller.userId);
  });
  if (!revealed) throw new NotFound();
  return { status: 200, body: toMeetingDetail(revealed, caller.userId, at) };
};

export const createSegue: Handler<'createSegue'> = async ({ params, body }, { db, caller }) => {
  const access = await meetingAccess(db, caller, params.id);
  requireChange(access, teamAllows(access, 'addMeetingContent'));
  const segue = await meetings.insertSegue(db, { meetingId: params.id, userId: caller.userId, content: body.content });
  if (!segue) throw new NotFound();
  return { status: 201, body: toSegue(segue) };
};

export const createHeadline: Handler<'createHeadline'> = async ({ params, body }, { db, caller }) => {
  const access = await meetingAccess(db, caller, params.id);
  requireChange(access, teamAllows(access, 'addMeetingContent'));
  const headline = await meetings.insertHeadline(db, { meetingId: params.id, userId: caller.userId, type: body.type, content: body.content });
  if (!headline) throw new NotFound();
  return { status: 201, body: toHeadline(headline) };
};

export const createCascadingMessage: Handler<'createCascadingMessage'> = async ({ params, body }, { db, caller }) => {
  const access = await meetingAccess(db, caller, params.id);
  requireChange(access, teamAllows(access, 'addMeetingContent'));
  const message = await meetings.insertMessage(db, { meetingId: params.id, userId: caller.userId, content: body.content });
  if (!message) throw new NotFound();
  return { status: 201, body: toCascadingMessage({ ...message, acknowledged: false }) };
};

export const deleteCascadingMessage: Handler<'deleteCascadingMessage'> = async ({ params }, { db, caller }) => {
  const message = await meetings.findMessageFacts(db, params.id, caller.userId);
  const access = teamAccess(caller, message && standingOf(message), 'item');
  requireChange(access, teamAllows(access, 'delete'));
  await meetings.deleteMessage(db, params.id);
  return { status: 204, body: undefined };
};

/** Checked and written in one transaction: a refused request acknowledges nothing. */
export const acknowledgeCascadingMessages: Handler<'acknowledgeCascadingMessages'> = async ({ body }, { db, caller }) => {
  await inTransaction(db, async (trx) => {
    requireChange(messagesAccess(caller, await meetings.messageOrganizations(trx, body.ids)), true);
    await meetings.acknowledgeMessages(trx, body.ids, caller.userId);
  });
  return { status: 204, body: undefined };
};

export const meetingsHandlers: AreaHandlers<'Meetings'> = {
  listTeamMeetings,
  createMeeting,
  getMeeting,
  updateMeeting,
  getMeetingRecap,
  rateMeetingAsMe,
  setMeetingRating,
  revealMeetingRatings,
  createSegue,
  createHeadline,
  createCascadingMessage,
  deleteCascadingMessage,
  acknowledgeCascadingMessages,
};

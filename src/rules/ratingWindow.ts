/**
 * The self-rating window of a meeting (the reference's "Meeting rating window"): team members may rate
 * a meeting themselves from its start until the team's next meeting starts, at most 7 days. For a
 * meeting recorded after the fact the 7 days count from the moment it was entered, which is the later
 * of its start and its creation: a meeting run live was created before it started, a recorded one
 * after. A SCHEDULED meeting is closed to everyone. The clock is passed in, never read here.
 */
import type { MeetingStatus } from './meetingStatus.js';
import { addMinutes } from '../time.js';

export const RATING_WINDOW_DAYS = 7;

export interface RatingWindowFacts {
  status: MeetingStatus;
  startedAt: Date | null;
  /** When the meeting was entered (scheduled or recorded). */
  createdAt: Date;
  /** When the team's next meeting started: the earliest start after this meeting's start, or null. */
  nextMeetingStartedAt: Date | null;
}

export interface RatingWindow {
  open: boolean;
  /** null while SCHEDULED. */
  closesAt: Date | null;
}

export function ratingWindow(facts: RatingWindowFacts, now: Date): RatingWindow {
  if (facts.status === 'SCHEDULED' || facts.startedAt === null) return { open: false, closesAt: null };
  const opensAt = facts.createdAt > facts.startedAt ? facts.createdAt : facts.startedAt;
  const latest = addMinutes(opensAt, RATING_WINDOW_DAYS * 24 * 60);
  const next = facts.nextMeetingStartedAt;
  const closesAt = next !== null && next < latest ? next : latest;
  return { open: now < closesAt, closesAt };
}

/**
 * Whether a rating may be given now. Nobody rates a SCHEDULED meeting; after the window closes only
 * those who rate at any time (team Admins and Owners, as the authorization module decides) still may.
 */
export function mayRateNow(facts: RatingWindowFacts, now: Date, ratesAnyTime: boolean): boolean {
  if (facts.status === 'SCHEDULED') return false;
  return ratesAnyTime || ratingWindow(facts, now).open;
}

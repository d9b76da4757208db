/**
 * The meeting's state machine: SCHEDULED, then IN_PROGRESS, then COMPLETED, one step forward at a
 * time; and what follows from the status: whether ratings are hidden, and how long a live meeting lasted.
 */
import { minutesBetween } from '../time.js';

/** A meeting's status; the rules own it, and the database's table types take it from here. */
export type MeetingStatus = 'SCHEDULED' | 'IN_PROGRESS' | 'COMPLETED';

const nextStatus: Record<MeetingStatus, MeetingStatus | null> = {
  SCHEDULED: 'IN_PROGRESS',
  IN_PROGRESS: 'COMPLETED',
  COMPLETED: null,
};

/** Only one step forward is allowed: not backwards, not to the same status, not SCHEDULED straight to COMPLETED. */
export const isStepForward = (from: MeetingStatus, to: MeetingStatus): boolean => nextStatus[from] === to;

/** While a meeting runs, other people's ratings stay hidden until revealed; completed meetings always show them. */
export const ratingsHidden = (status: MeetingStatus, revealedAt: Date | null): boolean => status === 'IN_PROGRESS' && revealedAt === null;

/** The length of a meeting ended live: whole minutes since its start, rounded, at least 1. */
export const liveDurationMin = (startedAt: Date, endedAt: Date): number => Math.max(1, minutesBetween(startedAt, endedAt));

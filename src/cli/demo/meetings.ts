/** The demo's meetings: held, running and scheduled ones, with their ratings, segues, headlines and cascading messages. */
import type { HeadlineType } from '../../db/database.js';
import { addMinutes, addWeeks, dayInTimeZone } from '../../time.js';
import { addDays, DEMO_TIME_ZONE, localTime } from './calendar.js';
import type { Person, RatingPlan } from './content.js';
import type { DemoContext } from './context.js';

export interface Meeting {
  id: string;
  date: string;
  startedAt: Date;
  /** null while IN_PROGRESS. */
  endedAt: Date | null;
}

/** A meeting held live: scheduled at `createdAt`, started and (unless still running) ended. */
export async function heldMeeting(
  { db, ids }: DemoContext,
  teamId: string,
  plan: { start: Date; durationMin: number | null; createdAt: Date; createdBy: Person; notes: string | null; id?: string },
): Promise<Meeting> {
  const endedAt = plan.durationMin === null ? null : addMinutes(plan.start, plan.durationMin);
  const date = dayInTimeZone(plan.start, DEMO_TIME_ZONE);
  const { id } = await db
    .insertInto('meetings')
    .values({
      ...(plan.id ? { id: plan.id } : {}),
      team_id: teamId,
      date,
      status: endedAt === null ? 'IN_PROGRESS' : 'COMPLETED',
      started_at: plan.start,
      ended_at: endedAt,
      duration_min: plan.durationMin,
      created_by_id: ids[plan.createdBy],
      notes: plan.notes,
      // Ratings are revealed at the end of a meeting; a running one still hides them.
      ratings_revealed_at: endedAt === null ? null : addMinutes(endedAt, -2),
      created_at: plan.createdAt,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id, date, startedAt: plan.start, endedAt };
}

export async function scheduledMeeting({ db, ids }: DemoContext, teamId: string, date: string, createdAt: Date, createdBy: Person, id?: string): Promise<void> {
  await db
    .insertInto('meetings')
    .values({ ...(id ? { id } : {}), team_id: teamId, date, status: 'SCHEDULED', created_by_id: ids[createdBy], created_at: createdAt })
    .execute();
}

/** Weekly meetings on one weekday, oldest first, each scheduled when the one before it ended. */
export async function weeklyMeetings(
  context: DemoContext,
  teamId: string,
  plan: { weekday: number; time: string; durations: number[]; createdBy: Person; notes: string[]; lastId?: string },
): Promise<Meeting[]> {
  const held: Meeting[] = [];
  for (const [index, durationMin] of plan.durations.entries()) {
    const weeksBack = plan.durations.length - index;
    const start = localTime(addDays(addWeeks(context.calendar.thisMonday, -weeksBack), plan.weekday), plan.time);
    const before = held[index - 1];
    const createdAt = before?.endedAt ? addMinutes(before.endedAt, 10) : addMinutes(start, -7 * 24 * 60);
    const id = index === plan.durations.length - 1 ? plan.lastId : undefined;
    held.push(await heldMeeting(context, teamId, { start, durationMin, createdAt, createdBy: plan.createdBy, notes: plan.notes[index] ?? null, id }));
  }
  return held;
}

/** Ratings given in the last minutes of a meeting (or, while it runs, `minutesIn` after its start). */
export async function rate({ db, ids }: DemoContext, meeting: Meeting, ratings: RatingPlan[], minutesIn?: number): Promise<void> {
  const givenFrom = minutesIn === undefined ? addMinutes(meeting.endedAt!, -4) : addMinutes(meeting.startedAt, minutesIn);
  await db
    .insertInto('meeting_ratings')
    .values(
      ratings.map(({ person, rating }, index) => {
        const at = new Date(givenFrom.getTime() + index * 10_000);
        return { meeting_id: meeting.id, user_id: ids[person], rating: rating ?? 0, absent: rating === null, created_at: at, updated_at: at };
      }),
    )
    .execute();
}

export async function segue({ db, ids }: DemoContext, meeting: Meeting, person: Person, minutesIn: number, content: string): Promise<void> {
  await db
    .insertInto('segues')
    .values({ meeting_id: meeting.id, user_id: ids[person], content, created_at: addMinutes(meeting.startedAt, minutesIn) })
    .execute();
}

export async function headline({ db, ids }: DemoContext, meeting: Meeting, person: Person, minutesIn: number, type: HeadlineType, content: string): Promise<void> {
  await db
    .insertInto('headlines')
    .values({ meeting_id: meeting.id, user_id: ids[person], type, content, created_at: addMinutes(meeting.startedAt, minutesIn) })
    .execute();
}

export async function cascadingMessage(
  { db, orgId, ids }: DemoContext,
  meeting: Meeting,
  person: Person,
  minutesIn: number,
  content: string,
  readBy: Person[],
  messageId?: string,
): Promise<void> {
  const createdAt = addMinutes(meeting.startedAt, minutesIn);
  const { id } = await db
    .insertInto('cascading_messages')
    .values({ ...(messageId ? { id: messageId } : {}), meeting_id: meeting.id, org_id: orgId, user_id: ids[person], content, created_at: createdAt })
    .returning('id')
    .executeTakeFirstOrThrow();
  if (readBy.length > 0) {
    await db
      .insertInto('message_acknowledgements')
      .values(readBy.map((reader, index) => ({ message_id: id, user_id: ids[reader], acknowledged_at: addMinutes(createdAt, 3 * 60 + index * 17) })))
      .execute();
  }
}

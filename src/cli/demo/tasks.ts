/** The demo's to-dos, open and done, some decided in a meeting. */
import { addMinutes } from '../../time.js';
import { addDays } from './calendar.js';
import type { Person } from './content.js';
import type { DemoContext } from './context.js';
import type { Meeting } from './meetings.js';

export async function task(
  { db, ids }: DemoContext,
  teamId: string,
  plan: { title: string; owner: Person; due: string; createdAt: Date; meeting?: Meeting; completedAt?: Date; id?: string },
): Promise<void> {
  await db
    .insertInto('tasks')
    .values({
      ...(plan.id ? { id: plan.id } : {}),
      team_id: teamId,
      title: plan.title,
      owner_id: ids[plan.owner],
      due_date: plan.due,
      completed: plan.completedAt !== undefined,
      completed_at: plan.completedAt ?? null,
      meeting_id: plan.meeting?.id ?? null,
      created_at: plan.createdAt,
    })
    .execute();
}

/** A to-do decided in a meeting: entered `minutesIn` after its start, due a week after the meeting. */
export function meetingTask(
  context: DemoContext,
  teamId: string,
  meeting: Meeting,
  minutesIn: number,
  plan: { title: string; owner: Person; completedAt?: Date; id?: string },
): Promise<void> {
  return task(context, teamId, { ...plan, due: addDays(meeting.date, 7), createdAt: addMinutes(meeting.startedAt, minutesIn), meeting });
}

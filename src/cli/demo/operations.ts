/** The story of Operations, a smaller team: two meetings held, one scheduled, and a little in each area. */
import { addMinutes } from '../../time.js';
import { addDays } from './calendar.js';
import { OPERATIONS_METRICS, OPERATIONS_ROCKS, OPERATIONS_SEATS } from './content.js';
import type { DemoContext } from './context.js';
import { goals } from './goals.js';
import { issue } from './issues.js';
import { rate, scheduledMeeting, weeklyMeetings, type Meeting } from './meetings.js';
import { scorecard } from './metrics.js';
import { seats } from './orgChart.js';
import { meetingTask, task } from './tasks.js';

export async function seedOperationsTeam(context: DemoContext, teamId: string): Promise<void> {
  const { today, thisMonday, quarter } = context.calendar;
  const operations = await weeklyMeetings(context, teamId, {
    weekday: 2,
    time: '13:00',
    durations: [60, 55],
    createdBy: 'admin',
    notes: ['Dock plan for the morning wave drafted.', 'Dock 3 door broke down again; service called.'],
  });
  const [o2, o1] = operations as [Meeting, Meeting];
  await rate(context, o2, [
    { person: 'admin', rating: 8 },
    { person: 'owner', rating: 7 },
    { person: 'warehouse', rating: 8 },
  ]);
  await rate(context, o1, [
    { person: 'admin', rating: 7 },
    { person: 'owner', rating: 8 },
    { person: 'warehouse', rating: 9 },
  ]);
  await scheduledMeeting(context, teamId, addDays(thisMonday, 9), addMinutes(o1.endedAt!, 10), 'admin');
  await meetingTask(context, teamId, o1, 30, { title: 'Train two new forklift drivers', owner: 'warehouse' });
  await task(context, teamId, {
    title: 'Renew the forklift maintenance contract',
    owner: 'admin',
    due: addDays(today, 14),
    createdAt: addMinutes(o2.startedAt, -2 * 24 * 60),
  });
  await issue(context, teamId, {
    title: 'Dock 3 door breaks down every week',
    priority: 'HIGH',
    status: 'OPEN',
    createdBy: 'warehouse',
    createdAt: addMinutes(o1.startedAt, 20),
    meeting: o1,
  });
  await goals(context, teamId, OPERATIONS_ROCKS, quarter);
  await scorecard(context, teamId, OPERATIONS_METRICS);
  await seats(context, teamId, OPERATIONS_SEATS);
}

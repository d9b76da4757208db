/**
 * The Leadership Team's story: something in every area, meetings in every status (this week's runs
 * right now), and most of the records the docs page's samples name.
 */
import { addMinutes } from '../../time.js';
import { addDays, localTime } from './calendar.js';
import {
  LEADERSHIP_LAST_QUARTER_ROCKS,
  LEADERSHIP_METRICS,
  LEADERSHIP_ROCKS,
  LEADERSHIP_SEATS,
  LEADERSHIP_VISION,
} from './content.js';
import type { DemoContext } from './context.js';
import { documents } from './documents.js';
import { goals } from './goals.js';
import { issue } from './issues.js';
import { cascadingMessage, headline, heldMeeting, rate, scheduledMeeting, segue, weeklyMeetings, type Meeting } from './meetings.js';
import { scorecard } from './metrics.js';
import { seats } from './orgChart.js';
import { peopleReviews } from './peopleReviews.js';
import { SAMPLE_IDS } from './sampleIds.js';
import { meetingTask, task } from './tasks.js';
import { vision } from './vision.js';

export async function seedLeadershipTeam(context: DemoContext, teamId: string): Promise<void> {
  const { now, today, thisMonday, quarter, lastQuarter } = context.calendar;
  const leadership = await weeklyMeetings(context, teamId, {
    weekday: 0,
    time: '09:00',
    durations: [84, 92, 95, 88],
    createdBy: 'admin',
    notes: [
      'Q plan check-in: Vienna lease offer received, legal review pending.',
      'Fuel surcharge agreed for spot customers from the first of next month.',
      'Vienna lease still not signed; landlord asks for a 10-year term.',
      'Danubia Retail renewal discussed at length; Tomáš and Peter meet their buyer on Thursday.',
    ],
    lastId: SAMPLE_IDS.meeting,
  });
  const [, l3, l2, l1] = leadership as [Meeting, Meeting, Meeting, Meeting];
  await rate(context, leadership[0]!, [
    { person: 'owner', rating: 8 },
    { person: 'admin', rating: 9 },
    { person: 'salesOwner', rating: 7 },
    { person: 'finance', rating: 8 },
  ]);
  await rate(context, l3, [
    { person: 'owner', rating: 9 },
    { person: 'admin', rating: 8 },
    { person: 'salesOwner', rating: 8 },
    { person: 'finance', rating: null },
  ]);
  await rate(context, l2, [
    { person: 'owner', rating: 7 },
    { person: 'admin', rating: 8 },
    { person: 'salesOwner', rating: 6 },
    { person: 'finance', rating: 8 },
  ]);
  await rate(context, l1, [
    { person: 'owner', rating: 9 },
    { person: 'admin', rating: 9 },
    { person: 'salesOwner', rating: 8 },
    { person: 'finance', rating: 9 },
  ]);
  // This week's meeting runs right now; it was scheduled when last week's ended.
  const running = await heldMeeting(context, teamId, {
    start: addMinutes(now, -35),
    durationMin: null,
    createdAt: addMinutes(l1.endedAt!, 10),
    createdBy: 'admin',
    notes: null,
    id: SAMPLE_IDS.runningMeeting,
  });
  await rate(context, running, [{ person: 'admin', rating: 9 }, { person: 'finance', rating: 8 }], 30);
  await scheduledMeeting(context, teamId, addDays(thisMonday, 7), addMinutes(running.startedAt, 2), 'admin', SAMPLE_IDS.nextMeeting);

  await segue(context, l2, 'finance', 3, 'The new invoicing run saved us two days this month.');
  await segue(context, l1, 'owner', 2, 'Visited the Győr depot on Friday: spotless, and the team is proud of it.');
  await segue(context, l1, 'salesOwner', 4, 'Two enterprise prospects asked for a site visit next week.');
  await segue(context, running, 'admin', 3, 'The second shift got two new forklift drivers.');
  await headline(context, l2, 'admin', 15, 'EMPLOYEE', 'Juraj finished the warehouse safety certification.');
  await headline(context, l1, 'salesOwner', 14, 'CUSTOMER', 'Košice Freight praised the live delivery tracking.');
  await headline(context, l1, 'finance', 16, 'EMPLOYEE', 'Eva passed the last ACCA exam.');
  await headline(context, running, 'owner', 12, 'CUSTOMER', 'Danubia Retail agreed to a meeting about the renewal.');
  await cascadingMessage(context, 
    l1,
    'owner',
    80,
    'Quotes above EUR 50,000 need a margin check by Finance before they go out.',
    ['admin', 'salesOwner', 'salesAdmin'],
    SAMPLE_IDS.message,
  );

  await meetingTask(context, teamId, l2, 45, {
    title: 'Send the fuel surcharge letter to spot customers',
    owner: 'finance',
    completedAt: addMinutes(l1.startedAt, -18 * 60),
  });
  await meetingTask(context, teamId, l2, 52, {
    title: 'Get a second offer for the Vienna hall',
    owner: 'admin',
    completedAt: addMinutes(l1.startedAt, -20 * 60),
  });
  await meetingTask(context, teamId, l1, 40, { title: 'Meet the Danubia Retail buyer with Peter', owner: 'salesOwner' });
  await meetingTask(context, teamId, l1, 47, {
    title: 'Draft the job ad for two shift supervisors',
    owner: 'admin',
    completedAt: addMinutes(l1.endedAt!, 2 * 24 * 60),
  });
  await meetingTask(context, teamId, l1, 55, { title: 'Prepare the cash-flow forecast for the Vienna cross-dock', owner: 'finance', id: SAMPLE_IDS.task });
  await task(context, teamId, {
    title: 'Review the draft lease with the lawyer',
    owner: 'owner',
    due: addDays(today, 3),
    createdAt: addMinutes(running.startedAt, 20),
    meeting: running,
  });
  await task(context, teamId, {
    title: 'Book the venue for the quarterly planning day',
    owner: 'owner',
    due: addDays(today, 14),
    createdAt: localTime(addDays(thisMonday, -10), '14:00'),
  });

  await issue(context, teamId, {
    id: SAMPLE_IDS.issue,
    title: 'Second warehouse shift is not fully staffed',
    description: 'Three of eight positions are open; overtime covers them and late deliveries pile up on Mondays.',
    priority: 'HIGH',
    status: 'OPEN',
    createdBy: 'admin',
    createdAt: localTime(addDays(thisMonday, -12), '16:20'),
  });
  await issue(context, teamId, {
    title: 'Fuel surcharge is not passed on to spot customers',
    priority: 'MEDIUM',
    status: 'SOLVED',
    createdBy: 'finance',
    createdAt: addMinutes(l3.startedAt, 25),
    meeting: l3,
    resolvedAt: addMinutes(l2.startedAt, 55),
  });
  await issue(context, teamId, {
    title: 'Dates of next year’s quarterly planning days',
    priority: 'LOW',
    status: 'SOLVED',
    createdBy: 'owner',
    createdAt: localTime(addDays(l2.date, -3), '11:00'),
    resolvedAt: addMinutes(l1.startedAt, 35),
  });
  await issue(context, teamId, {
    title: 'Danubia Retail renewal depends on on-time deliveries',
    description: 'Their contract ends this quarter; they count every late delivery.',
    priority: 'HIGH',
    status: 'SOLVING',
    createdBy: 'salesOwner',
    createdAt: addMinutes(l1.startedAt, 30),
    meeting: l1,
  });
  await issue(context, teamId, {
    title: 'Terms of the Vienna lease renewal',
    priority: 'MEDIUM',
    status: 'OPEN',
    createdBy: 'owner',
    createdAt: addMinutes(running.startedAt, 25),
    meeting: running,
  });

  await goals(context, teamId, LEADERSHIP_ROCKS, quarter);
  await goals(context, teamId, LEADERSHIP_LAST_QUARTER_ROCKS, lastQuarter);
  await scorecard(context, teamId, LEADERSHIP_METRICS);

  await vision(context, teamId, LEADERSHIP_VISION, LEADERSHIP_ROCKS);
  await seats(context, teamId, LEADERSHIP_SEATS);
  await peopleReviews(context, teamId, 'owner', [
    { person: 'admin', livesValues: [true, true, true, true], capacity: true, notes: 'Runs the weekly meeting with a firm hand.' },
    { person: 'salesOwner', livesValues: [true, true, false, true], capacity: true, notes: 'Quotes still too complicated for small customers.' },
    { person: 'finance', livesValues: [true, true, true, true], capacity: true, notes: 'Took over the fuel contracts on top of the close.' },
  ]);
  await documents(context, teamId, [
    { name: 'Quarterly planning day agenda', url: 'https://docs.northwind.example/leadership/quarterly-planning', by: 'admin' },
    { name: 'Board report template', url: 'https://docs.northwind.example/leadership/board-report', by: 'owner', id: SAMPLE_IDS.document },
  ]);
}

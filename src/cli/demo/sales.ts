/** The story of Sales, the team of the demo's team roles (its Owner, Admin, Member and Viewer): nearly as much as the Leadership Team. */
import { addMinutes } from '../../time.js';
import { addDays, localTime } from './calendar.js';
import { SALES_METRICS, SALES_ROCKS, SALES_SEATS } from './content.js';
import type { DemoContext } from './context.js';
import { documents } from './documents.js';
import { goals } from './goals.js';
import { issue } from './issues.js';
import { cascadingMessage, headline, rate, scheduledMeeting, segue, weeklyMeetings, type Meeting } from './meetings.js';
import { scorecard } from './metrics.js';
import { seats } from './orgChart.js';
import { peopleReviews } from './peopleReviews.js';
import { meetingTask, task } from './tasks.js';

export async function seedSalesTeam(context: DemoContext, teamId: string): Promise<void> {
  const { today, thisMonday, quarter } = context.calendar;
  const sales = await weeklyMeetings(context, teamId, {
    weekday: 1,
    time: '09:00',
    durations: [75, 92, 86, 90],
    createdBy: 'salesOwner',
    notes: [
      'Trade fair leads split between Marek and Lucia.',
      'Price list update approved by Leadership.',
      'Quote approval: Tomáš approves quotes under EUR 50,000 himself from now on.',
      'Pipeline review: two enterprise quotes waiting for approval. Danubia Retail renewal at risk.',
    ],
  });
  const [, s3, s2, s1] = sales as [Meeting, Meeting, Meeting, Meeting];
  await rate(context, sales[0]!, [
    { person: 'salesOwner', rating: 8 },
    { person: 'salesAdmin', rating: 8 },
    { person: 'salesMember', rating: 7 },
  ]);
  await rate(context, s3, [
    { person: 'salesOwner', rating: 9 },
    { person: 'salesAdmin', rating: 7 },
    { person: 'salesMember', rating: null },
  ]);
  await rate(context, s2, [
    { person: 'salesOwner', rating: 8 },
    { person: 'salesAdmin', rating: 8 },
    { person: 'salesMember', rating: 8 },
  ]);
  await rate(context, s1, [
    { person: 'salesOwner', rating: 9 },
    { person: 'salesAdmin', rating: 8 },
    { person: 'salesMember', rating: 7 },
  ]);
  await scheduledMeeting(context, teamId, addDays(thisMonday, 8), addMinutes(s1.endedAt!, 10), 'salesOwner');

  await segue(context, s1, 'salesAdmin', 4, 'Ran my first half marathon on Sunday.');
  await headline(context, s1, 'salesOwner', 12, 'CUSTOMER', 'Košice Freight praised the new live delivery tracking.');
  await headline(context, s1, 'salesMember', 14, 'EMPLOYEE', 'Marek finished the advanced negotiation course.');
  await cascadingMessage(context, s1, 'salesOwner', 85, 'From Monday all quotes use the new price list in the shared drive.', ['owner']);

  await meetingTask(context, teamId, s2, 40, {
    title: 'Call the three lost leads from the trade fair',
    owner: 'salesMember',
    completedAt: addMinutes(s1.startedAt, -20 * 60),
  });
  await meetingTask(context, teamId, s1, 35, { title: 'Send the revised quote to Danubia Retail', owner: 'salesAdmin' });
  await meetingTask(context, teamId, s1, 42, { title: 'Clean up the CRM pipeline stages', owner: 'salesMember' });
  await meetingTask(context, teamId, s1, 50, {
    title: 'Plan the customer visits in Košice',
    owner: 'salesOwner',
    completedAt: addMinutes(s1.endedAt!, 29 * 60),
  });
  await task(context, teamId, {
    title: 'Prepare the quarterly review for Košice Freight',
    owner: 'salesOwner',
    due: addDays(today, 12),
    createdAt: localTime(addDays(thisMonday, -3), '10:00'),
  });

  await issue(context, teamId, {
    title: 'Quote approval takes three days',
    priority: 'MEDIUM',
    status: 'SOLVED',
    createdBy: 'salesOwner',
    createdAt: addMinutes(s2.startedAt, 35),
    meeting: s2,
    resolvedAt: addMinutes(s1.startedAt, 50),
  });
  await issue(context, teamId, {
    title: 'Late deliveries to Danubia Retail put the renewal at risk',
    description: 'Three late deliveries in the last month; their buyer asked for a call.',
    priority: 'HIGH',
    status: 'OPEN',
    createdBy: 'salesAdmin',
    createdAt: addMinutes(s1.startedAt, 30),
    meeting: s1,
  });
  await issue(context, teamId, {
    title: 'Duplicate companies in the CRM after the import',
    priority: 'LOW',
    status: 'SOLVING',
    createdBy: 'salesMember',
    createdAt: localTime(addDays(thisMonday, -11), '11:00'),
  });

  await goals(context, teamId, SALES_ROCKS, quarter);
  await scorecard(context, teamId, SALES_METRICS);
  await seats(context, teamId, SALES_SEATS);
  await peopleReviews(context, teamId, 'salesOwner', [
    { person: 'salesAdmin', livesValues: [true, true, true, true], capacity: true, notes: 'Keeps every key account informed.' },
    { person: 'salesMember', livesValues: [true, false, true, true], capacity: true, notes: 'Follow-ups slip when the week gets busy.' },
  ]);
  await documents(context, teamId, [{ name: 'Price list', url: 'https://docs.northwind.example/sales/price-list', by: 'salesAdmin' }]);
}

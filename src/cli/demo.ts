/**
 * The demo organization of `seed-demo`: Northwind Logistics, a haulier between Bratislava, Vienna and
 * Budapest, with a Leadership Team, Sales and Operations and half a year of history.
 *
 * A newcomer's first calls list the organization's teams (sorted by name, so "Leadership Team" comes
 * first for everyone who sees it) and then that team's content: the Leadership Team has something in
 * every area (to-dos, issues, company Rocks with milestones, a Scorecard with values, meetings in every
 * status with ratings, segues, headlines and cascading messages, the vision, the accountability chart,
 * people reviews, documents). Sales, the only team of the demo people with a Sales role, has nearly as
 * much.
 *
 * Every instant and day is counted back from `now`, in the organization's time zone, so the demo always
 * looks current; and the data keeps the product's own rules whatever `now` is (test/demoData.test.ts
 * checks them at several awkward instants): created before completed, resolved or started, started
 * before ended, nothing after `now`; meetings with the fields of their status, rated by their team's
 * members inside the rating window; owners and authors members of the item's team with the role the
 * change needs; metric weeks on Mondays, judged against their goal as the API judges them.
 *
 * What it holds is plain data in demo/content.ts. The records the docs page's samples name carry the
 * contract's example ids (demo/sampleIds.ts), and demo/sampleRecords.ts adds what only the samples
 * need, so that each sample runs as written with the Owner's demo key.
 */
import type { Transaction } from 'kysely';
import type { SecretBox } from '../auth/secrets.js';
import type { Database, HeadlineType, IssuePriority, IssueStatus, TeamRole } from '../db/database.js';
import { judgeValue } from '../rules/metricValues.js';
import { storedVisionValue } from '../rules/vision.js';
import { addMinutes, addWeeks, dayInTimeZone, mondayOf, quarterOf } from '../time.js';
import {
  LEADERSHIP_LAST_QUARTER_ROCKS,
  LEADERSHIP_METRICS,
  LEADERSHIP_ROCKS,
  LEADERSHIP_SEATS,
  LEADERSHIP_VALUES,
  LEADERSHIP_VISION,
  OPERATIONS_METRICS,
  OPERATIONS_ROCKS,
  OPERATIONS_SEATS,
  PEOPLE,
  SALES_METRICS,
  SALES_ROCKS,
  SALES_SEATS,
  type DemoPerson,
  type GoalPlan,
  type MetricPlan,
  type Person,
  type RatingPlan,
  type SeatPlan,
} from './demo/content.js';
import { SAMPLE_IDS } from './demo/sampleIds.js';
import { seedSampleRecords } from './demo/sampleRecords.js';

/** seed-demo writes only into a database without accounts. */
export class DatabaseNotEmpty extends Error {
  constructor(users: number) {
    super(`seed-demo needs an empty database, but it already has ${users} user(s).`);
  }
}

export const DEMO_ORGANIZATION_NAME = 'Northwind Logistics';
export const DEMO_TIME_ZONE = 'Europe/Bratislava';

export interface DemoOrganization {
  organizationId: string;
  /** The team GET /orgs/{orgId}/teams lists first, with content in every area. */
  firstTeam: { id: string; name: string };
  /** The people with a demo role, in output order. */
  people: { role: string; email: string; userId: string; superadmin: boolean }[];
}

// ---------------------------------------------------------------------------------------------------
// Days and local times

const DAY_MS = 24 * 60 * 60 * 1000;

function addDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

function firstDayOfQuarter(quarter: string): string {
  const month = (Number(quarter.slice(6)) - 1) * 3 + 1;
  return `${quarter.slice(0, 4)}-${String(month).padStart(2, '0')}-01`;
}

const wallClock = new Intl.DateTimeFormat('en-US', {
  timeZone: DEMO_TIME_ZONE,
  calendar: 'gregory',
  numberingSystem: 'latn',
  hourCycle: 'h23',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});

/** How far the organization's wall clock is ahead of UTC at an instant (whole seconds). */
function zoneOffsetMs(instant: number): number {
  const whole = instant - (((instant % 1000) + 1000) % 1000);
  const parts = Object.fromEntries(wallClock.formatToParts(new Date(whole)).map((part) => [part.type, part.value]));
  const wall = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second));
  return wall - whole;
}

/** The instant the organization's clocks show `time` (HH:MM) on `day`; the demo's times are never in a DST gap. */
function localTime(day: string, time: string): Date {
  const wall = Date.parse(`${day}T${time}:00.000Z`);
  // The offset at the first guess may differ from the one at the answer when a DST change lies between.
  return new Date(wall - zoneOffsetMs(wall - zoneOffsetMs(wall)));
}

// ---------------------------------------------------------------------------------------------------
// Seeding

type Trx = Transaction<Database>;

interface Meeting {
  id: string;
  date: string;
  startedAt: Date;
  /** null while IN_PROGRESS. */
  endedAt: Date | null;
}

/** `secrets` seals the secrets the demo stores (its webhook's, its AI provider's key) as the server will open them. */
export async function seedDemo(db: Trx, now: Date, secrets: SecretBox): Promise<DemoOrganization> {
  const { count } = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .executeTakeFirstOrThrow();
  if (Number(count) > 0) throw new DatabaseNotEmpty(Number(count));

  // The calendar, in the organization's time zone.
  const today = dayInTimeZone(now, DEMO_TIME_ZONE);
  const thisMonday = mondayOf(today);
  const quarter = quarterOf(today);
  const quarterStart = firstDayOfQuarter(quarter);
  const lastQuarter = quarterOf(addDays(quarterStart, -1));
  // Rocks are set at the planning day ten days before their quarter starts.
  const planningOf = (start: string) => localTime(addDays(start, -10), '14:00');
  // Half a year back: the organization, its people and its teams were set up then.
  const origin = localTime(addWeeks(thisMonday, -30), '08:00');
  const afterOrigin = (minutes: number) => addMinutes(origin, minutes);

  const ids = {} as Record<Person, string>;
  let minute = 0;
  for (const [person, data] of Object.entries(PEOPLE) as [Person, DemoPerson][]) {
    const { id } = await db
      .insertInto('users')
      .values({
        ...(data.id ? { id: data.id } : {}),
        email: data.email,
        name: data.name,
        timezone: data.timezone ?? null,
        system_role: data.superadmin ? 'SUPERADMIN' : 'USER',
        created_at: afterOrigin((minute += 1)),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    ids[person] = id;
  }

  const { id: orgId } = await db
    .insertInto('organizations')
    .values({
      id: SAMPLE_IDS.organization,
      name: DEMO_ORGANIZATION_NAME,
      slug: 'northwind-logistics',
      timezone: DEMO_TIME_ZONE,
      default_locale: 'en',
      created_at: afterOrigin(15),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  minute = 20;
  for (const [person, data] of Object.entries(PEOPLE) as [Person, DemoPerson][]) {
    if (data.orgRole === null) continue;
    await db
      .insertInto('organization_members')
      .values({ org_id: orgId, user_id: ids[person], role: data.orgRole, joined_at: afterOrigin((minute += 1)) })
      .execute();
  }

  const createTeam = async (name: string, slug: string, isLeadership: boolean, members: [Person, TeamRole][], at: number, teamId?: string) => {
    const { id } = await db
      .insertInto('teams')
      .values({ ...(teamId ? { id: teamId } : {}), org_id: orgId, name, slug, is_leadership: isLeadership, created_at: afterOrigin(at) })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db
      .insertInto('team_members')
      .values(members.map(([person, role], index) => ({ team_id: id, user_id: ids[person], role, joined_at: afterOrigin(at + 1 + index) })))
      .execute();
    return id;
  };
  const leadershipId = await createTeam(
    'Leadership Team',
    'leadership-team',
    true,
    [
      ['owner', 'OWNER'],
      ['admin', 'ADMIN'],
      ['salesOwner', 'MEMBER'],
      ['finance', 'MEMBER'],
    ],
    40,
    SAMPLE_IDS.team,
  );
  const salesId = await createTeam(
    'Sales',
    'sales',
    false,
    [
      ['salesOwner', 'OWNER'],
      ['salesAdmin', 'ADMIN'],
      ['salesMember', 'MEMBER'],
      ['salesViewer', 'VIEWER'],
    ],
    50,
  );
  const operationsId = await createTeam(
    'Operations',
    'operations',
    false,
    [
      ['admin', 'OWNER'],
      ['owner', 'MEMBER'],
      ['warehouse', 'MEMBER'],
    ],
    60,
  );
  // Team content that is not tied to a week (vision, chart, documents) was entered the next day.
  const settledIn = (minutes: number) => afterOrigin(24 * 60 + minutes);

  // ---- Meetings -----------------------------------------------------------------------------------

  /** A meeting held live: scheduled at `createdAt`, started and (unless still running) ended. */
  const heldMeeting = async (
    teamId: string,
    plan: { start: Date; durationMin: number | null; createdAt: Date; createdBy: Person; notes: string | null; id?: string },
  ): Promise<Meeting> => {
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
  };

  const scheduledMeeting = async (teamId: string, date: string, createdAt: Date, createdBy: Person, id?: string) => {
    await db
      .insertInto('meetings')
      .values({ ...(id ? { id } : {}), team_id: teamId, date, status: 'SCHEDULED', created_by_id: ids[createdBy], created_at: createdAt })
      .execute();
  };

  /** Weekly meetings on one weekday, oldest first, each scheduled when the one before it ended. */
  const weeklyMeetings = async (
    teamId: string,
    plan: { weekday: number; time: string; durations: number[]; createdBy: Person; notes: string[]; lastId?: string },
  ): Promise<Meeting[]> => {
    const held: Meeting[] = [];
    for (const [index, durationMin] of plan.durations.entries()) {
      const weeksBack = plan.durations.length - index;
      const start = localTime(addDays(addWeeks(thisMonday, -weeksBack), plan.weekday), plan.time);
      const before = held[index - 1];
      const createdAt = before?.endedAt ? addMinutes(before.endedAt, 10) : addMinutes(start, -7 * 24 * 60);
      const id = index === plan.durations.length - 1 ? plan.lastId : undefined;
      held.push(await heldMeeting(teamId, { start, durationMin, createdAt, createdBy: plan.createdBy, notes: plan.notes[index] ?? null, id }));
    }
    return held;
  };

  /** Ratings given in the last minutes of a meeting (or, while it runs, `minutesIn` after its start). */
  const rate = async (meeting: Meeting, ratings: RatingPlan[], minutesIn?: number) => {
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
  };

  const segue = (meeting: Meeting, person: Person, minutesIn: number, content: string) =>
    db
      .insertInto('segues')
      .values({ meeting_id: meeting.id, user_id: ids[person], content, created_at: addMinutes(meeting.startedAt, minutesIn) })
      .execute();

  const headline = (meeting: Meeting, person: Person, minutesIn: number, type: HeadlineType, content: string) =>
    db
      .insertInto('headlines')
      .values({ meeting_id: meeting.id, user_id: ids[person], type, content, created_at: addMinutes(meeting.startedAt, minutesIn) })
      .execute();

  const cascadingMessage = async (meeting: Meeting, person: Person, minutesIn: number, content: string, readBy: Person[], messageId?: string) => {
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
  };

  // ---- To-dos and issues --------------------------------------------------------------------------

  const task = (
    teamId: string,
    plan: { title: string; owner: Person; due: string; createdAt: Date; meeting?: Meeting; completedAt?: Date; id?: string },
  ) =>
    db
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

  /** A to-do decided in a meeting: entered `minutesIn` after its start, due a week after the meeting. */
  const meetingTask = (teamId: string, meeting: Meeting, minutesIn: number, plan: { title: string; owner: Person; completedAt?: Date; id?: string }) =>
    task(teamId, { ...plan, due: addDays(meeting.date, 7), createdAt: addMinutes(meeting.startedAt, minutesIn), meeting });

  const issue = (
    teamId: string,
    plan: {
      title: string;
      description?: string;
      priority: IssuePriority;
      status: IssueStatus;
      createdBy: Person;
      createdAt: Date;
      meeting?: Meeting;
      resolvedAt?: Date;
      id?: string;
    },
  ) =>
    db
      .insertInto('issues')
      .values({
        ...(plan.id ? { id: plan.id } : {}),
        team_id: teamId,
        title: plan.title,
        description: plan.description ?? null,
        priority: plan.priority,
        status: plan.status,
        meeting_id: plan.meeting?.id ?? null,
        created_by_id: ids[plan.createdBy],
        resolved_at: plan.resolvedAt ?? null,
        created_at: plan.createdAt,
      })
      .execute();

  // ---- Rocks, Scorecard, vision, chart, reviews, documents ----------------------------------------

  const goals = async (teamId: string, plans: GoalPlan[], goalQuarter: string) => {
    const start = firstDayOfQuarter(goalQuarter);
    const createdAt = planningOf(start);
    for (const [index, plan] of plans.entries()) {
      const goalCreatedAt = addMinutes(createdAt, index * 5);
      const { id } = await db
        .insertInto('goals')
        .values({
          ...(plan.id ? { id: plan.id } : {}),
          team_id: teamId,
          org_id: orgId,
          title: plan.title,
          description: plan.description,
          owner_id: ids[plan.owner],
          quarter: goalQuarter,
          level: plan.level,
          status: plan.status,
          created_at: goalCreatedAt,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await db
        .insertInto('milestones')
        .values(
          plan.milestones.map((milestone, position) => {
            const due = addDays(start, milestone.dueAfterDays);
            return {
              ...(milestone.id ? { id: milestone.id } : {}),
              goal_id: id,
              title: milestone.title,
              due_date: due,
              // Done once due, unless the goal is behind on it; a finished Rock has them all done.
              completed: plan.status === 'DONE' || (due < today && !milestone.late),
              created_at: addMinutes(goalCreatedAt, position + 1),
            };
          }),
        )
        .execute();
    }
  };

  const scorecard = async (teamId: string, plans: MetricPlan[]) => {
    for (const [index, plan] of plans.entries()) {
      const { id } = await db
        .insertInto('metrics')
        .values({
          ...(plan.id ? { id: plan.id } : {}),
          team_id: teamId,
          title: plan.title,
          goal: plan.goal,
          owner_id: ids[plan.owner],
          unit: plan.unit,
          description: plan.description,
          position: index + 1,
          created_at: settledIn(30 + index),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await db
        .insertInto('metric_values')
        .values(
          plan.values.map((value, week) => {
            const monday = addWeeks(thisMonday, week - plan.values.length);
            // Entered on the Friday afternoon of its week.
            const enteredAt = localTime(addDays(monday, 4), '16:00');
            const onTrack = judgeValue(value, plan.goal);
            if (onTrack === null) throw new Error(`The demo value ${value} cannot be judged against ${plan.goal}.`);
            return { metric_id: id, week: monday, value, on_track: onTrack, entered_by_id: ids[plan.owner], created_at: enteredAt, updated_at: enteredAt };
          }),
        )
        .execute();
    }
  };

  const seats = async (teamId: string, plans: SeatPlan[], parentId: string | null = null) => {
    for (const [index, plan] of plans.entries()) {
      const { id } = await db
        .insertInto('seats')
        .values({
          ...(plan.id ? { id: plan.id } : {}),
          team_id: teamId,
          parent_id: parentId,
          user_id: plan.person === null ? null : ids[plan.person],
          title: plan.title,
          responsibilities: plan.responsibilities,
          position: index + 1,
          created_at: settledIn(60 + index),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      if (plan.below) await seats(teamId, plan.below, id);
    }
  };

  /** Reviews at the end of last quarter, against the leadership team's core values. */
  const peopleReviews = async (
    teamId: string,
    evaluator: Person,
    reviews: { person: Person; livesValues: boolean[]; capacity: boolean; notes: string }[],
  ) => {
    const at = localTime(addDays(quarterStart, -5), '10:00');
    await db
      .insertInto('people_reviews')
      .values(
        reviews.map((review, index) => {
          const reviewedAt = addMinutes(at, index * 30);
          return {
            team_id: teamId,
            user_id: ids[review.person],
            evaluator_id: ids[evaluator],
            quarter: lastQuarter,
            core_values_scores: JSON.stringify(Object.fromEntries(LEADERSHIP_VALUES.map((value, i) => [value, review.livesValues[i] ?? true]))),
            gwc: JSON.stringify({ getsIt: true, wantsIt: true, capacityToDoIt: review.capacity }),
            notes: review.notes,
            created_at: reviewedAt,
            updated_at: reviewedAt,
          };
        }),
      )
      .execute();
  };

  const documents = (teamId: string, links: { name: string; url: string; by: Person; id?: string }[]) =>
    db
      .insertInto('documents')
      .values(
        links.map((link, index) => ({
          ...(link.id ? { id: link.id } : {}),
          team_id: teamId,
          name: link.name,
          url: link.url,
          type: 'LINK' as const,
          created_by_id: ids[link.by],
          created_at: settledIn(90 + index),
        })),
      )
      .execute();

  // ---- The Leadership Team: every area, meetings in every status -----------------------------------

  const leadership = await weeklyMeetings(leadershipId, {
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
  await rate(leadership[0]!, [
    { person: 'owner', rating: 8 },
    { person: 'admin', rating: 9 },
    { person: 'salesOwner', rating: 7 },
    { person: 'finance', rating: 8 },
  ]);
  await rate(l3, [
    { person: 'owner', rating: 9 },
    { person: 'admin', rating: 8 },
    { person: 'salesOwner', rating: 8 },
    { person: 'finance', rating: null },
  ]);
  await rate(l2, [
    { person: 'owner', rating: 7 },
    { person: 'admin', rating: 8 },
    { person: 'salesOwner', rating: 6 },
    { person: 'finance', rating: 8 },
  ]);
  await rate(l1, [
    { person: 'owner', rating: 9 },
    { person: 'admin', rating: 9 },
    { person: 'salesOwner', rating: 8 },
    { person: 'finance', rating: 9 },
  ]);
  // This week's meeting runs right now; it was scheduled when last week's ended.
  const running = await heldMeeting(leadershipId, {
    start: addMinutes(now, -35),
    durationMin: null,
    createdAt: addMinutes(l1.endedAt!, 10),
    createdBy: 'admin',
    notes: null,
    id: SAMPLE_IDS.runningMeeting,
  });
  await rate(running, [{ person: 'admin', rating: 9 }, { person: 'finance', rating: 8 }], 30);
  await scheduledMeeting(leadershipId, addDays(thisMonday, 7), addMinutes(running.startedAt, 2), 'admin', SAMPLE_IDS.nextMeeting);

  await segue(l2, 'finance', 3, 'The new invoicing run saved us two days this month.');
  await segue(l1, 'owner', 2, 'Visited the Győr depot on Friday: spotless, and the team is proud of it.');
  await segue(l1, 'salesOwner', 4, 'Two enterprise prospects asked for a site visit next week.');
  await segue(running, 'admin', 3, 'The second shift got two new forklift drivers.');
  await headline(l2, 'admin', 15, 'EMPLOYEE', 'Juraj finished the warehouse safety certification.');
  await headline(l1, 'salesOwner', 14, 'CUSTOMER', 'Košice Freight praised the live delivery tracking.');
  await headline(l1, 'finance', 16, 'EMPLOYEE', 'Eva passed the last ACCA exam.');
  await headline(running, 'owner', 12, 'CUSTOMER', 'Danubia Retail agreed to a meeting about the renewal.');
  await cascadingMessage(
    l1,
    'owner',
    80,
    'Quotes above EUR 50,000 need a margin check by Finance before they go out.',
    ['admin', 'salesOwner', 'salesAdmin'],
    SAMPLE_IDS.message,
  );

  await meetingTask(leadershipId, l2, 45, {
    title: 'Send the fuel surcharge letter to spot customers',
    owner: 'finance',
    completedAt: addMinutes(l1.startedAt, -18 * 60),
  });
  await meetingTask(leadershipId, l2, 52, {
    title: 'Get a second offer for the Vienna hall',
    owner: 'admin',
    completedAt: addMinutes(l1.startedAt, -20 * 60),
  });
  await meetingTask(leadershipId, l1, 40, { title: 'Meet the Danubia Retail buyer with Peter', owner: 'salesOwner' });
  await meetingTask(leadershipId, l1, 47, {
    title: 'Draft the job ad for two shift supervisors',
    owner: 'admin',
    completedAt: addMinutes(l1.endedAt!, 2 * 24 * 60),
  });
  await meetingTask(leadershipId, l1, 55, { title: 'Prepare the cash-flow forecast for the Vienna cross-dock', owner: 'finance', id: SAMPLE_IDS.task });
  await task(leadershipId, {
    title: 'Review the draft lease with the lawyer',
    owner: 'owner',
    due: addDays(today, 3),
    createdAt: addMinutes(running.startedAt, 20),
    meeting: running,
  });
  await task(leadershipId, {
    title: 'Book the venue for the quarterly planning day',
    owner: 'owner',
    due: addDays(today, 14),
    createdAt: localTime(addDays(thisMonday, -10), '14:00'),
  });

  await issue(leadershipId, {
    id: SAMPLE_IDS.issue,
    title: 'Second warehouse shift is not fully staffed',
    description: 'Three of eight positions are open; overtime covers them and late deliveries pile up on Mondays.',
    priority: 'HIGH',
    status: 'OPEN',
    createdBy: 'admin',
    createdAt: localTime(addDays(thisMonday, -12), '16:20'),
  });
  await issue(leadershipId, {
    title: 'Fuel surcharge is not passed on to spot customers',
    priority: 'MEDIUM',
    status: 'SOLVED',
    createdBy: 'finance',
    createdAt: addMinutes(l3.startedAt, 25),
    meeting: l3,
    resolvedAt: addMinutes(l2.startedAt, 55),
  });
  await issue(leadershipId, {
    title: 'Dates of next year’s quarterly planning days',
    priority: 'LOW',
    status: 'SOLVED',
    createdBy: 'owner',
    createdAt: localTime(addDays(l2.date, -3), '11:00'),
    resolvedAt: addMinutes(l1.startedAt, 35),
  });
  await issue(leadershipId, {
    title: 'Danubia Retail renewal depends on on-time deliveries',
    description: 'Their contract ends this quarter; they count every late delivery.',
    priority: 'HIGH',
    status: 'SOLVING',
    createdBy: 'salesOwner',
    createdAt: addMinutes(l1.startedAt, 30),
    meeting: l1,
  });
  await issue(leadershipId, {
    title: 'Terms of the Vienna lease renewal',
    priority: 'MEDIUM',
    status: 'OPEN',
    createdBy: 'owner',
    createdAt: addMinutes(running.startedAt, 25),
    meeting: running,
  });

  await goals(leadershipId, LEADERSHIP_ROCKS, quarter);
  await goals(leadershipId, LEADERSHIP_LAST_QUARTER_ROCKS, lastQuarter);
  await scorecard(leadershipId, LEADERSHIP_METRICS);

  const visionUpdatedAt = addMinutes(planningOf(quarterStart), 3 * 60);
  await db
    .insertInto('visions')
    .values({
      team_id: leadershipId,
      core_values: storedVisionValue(LEADERSHIP_VISION.coreValues),
      core_focus: storedVisionValue(LEADERSHIP_VISION.coreFocus),
      ten_year_target: storedVisionValue(LEADERSHIP_VISION.tenYearTarget),
      marketing_strategy: storedVisionValue(LEADERSHIP_VISION.marketingStrategy),
      three_year_picture: storedVisionValue(LEADERSHIP_VISION.threeYearPicture),
      one_year_plan: storedVisionValue(LEADERSHIP_VISION.oneYearPlan),
      quarterly_rocks: storedVisionValue(LEADERSHIP_ROCKS.filter((rock) => rock.level === 'COMPANY').map((rock) => rock.title)),
      issues_list: storedVisionValue(LEADERSHIP_VISION.issuesList),
      created_at: settledIn(0),
      updated_at: visionUpdatedAt,
    })
    .execute();
  await seats(leadershipId, LEADERSHIP_SEATS);
  await peopleReviews(leadershipId, 'owner', [
    { person: 'admin', livesValues: [true, true, true, true], capacity: true, notes: 'Runs the weekly meeting with a firm hand.' },
    { person: 'salesOwner', livesValues: [true, true, false, true], capacity: true, notes: 'Quotes still too complicated for small customers.' },
    { person: 'finance', livesValues: [true, true, true, true], capacity: true, notes: 'Took over the fuel contracts on top of the close.' },
  ]);
  await documents(leadershipId, [
    { name: 'Quarterly planning day agenda', url: 'https://docs.northwind.example/leadership/quarterly-planning', by: 'admin' },
    { name: 'Board report template', url: 'https://docs.northwind.example/leadership/board-report', by: 'owner', id: SAMPLE_IDS.document },
  ]);

  // ---- Sales: the team of the demo team roles ------------------------------------------------------

  const sales = await weeklyMeetings(salesId, {
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
  await rate(sales[0]!, [
    { person: 'salesOwner', rating: 8 },
    { person: 'salesAdmin', rating: 8 },
    { person: 'salesMember', rating: 7 },
  ]);
  await rate(s3, [
    { person: 'salesOwner', rating: 9 },
    { person: 'salesAdmin', rating: 7 },
    { person: 'salesMember', rating: null },
  ]);
  await rate(s2, [
    { person: 'salesOwner', rating: 8 },
    { person: 'salesAdmin', rating: 8 },
    { person: 'salesMember', rating: 8 },
  ]);
  await rate(s1, [
    { person: 'salesOwner', rating: 9 },
    { person: 'salesAdmin', rating: 8 },
    { person: 'salesMember', rating: 7 },
  ]);
  await scheduledMeeting(salesId, addDays(thisMonday, 8), addMinutes(s1.endedAt!, 10), 'salesOwner');

  await segue(s1, 'salesAdmin', 4, 'Ran my first half marathon on Sunday.');
  await headline(s1, 'salesOwner', 12, 'CUSTOMER', 'Košice Freight praised the new live delivery tracking.');
  await headline(s1, 'salesMember', 14, 'EMPLOYEE', 'Marek finished the advanced negotiation course.');
  await cascadingMessage(s1, 'salesOwner', 85, 'From Monday all quotes use the new price list in the shared drive.', ['owner']);

  await meetingTask(salesId, s2, 40, {
    title: 'Call the three lost leads from the trade fair',
    owner: 'salesMember',
    completedAt: addMinutes(s1.startedAt, -20 * 60),
  });
  await meetingTask(salesId, s1, 35, { title: 'Send the revised quote to Danubia Retail', owner: 'salesAdmin' });
  await meetingTask(salesId, s1, 42, { title: 'Clean up the CRM pipeline stages', owner: 'salesMember' });
  await meetingTask(salesId, s1, 50, {
    title: 'Plan the customer visits in Košice',
    owner: 'salesOwner',
    completedAt: addMinutes(s1.endedAt!, 29 * 60),
  });
  await task(salesId, {
    title: 'Prepare the quarterly review for Košice Freight',
    owner: 'salesOwner',
    due: addDays(today, 12),
    createdAt: localTime(addDays(thisMonday, -3), '10:00'),
  });

  await issue(salesId, {
    title: 'Quote approval takes three days',
    priority: 'MEDIUM',
    status: 'SOLVED',
    createdBy: 'salesOwner',
    createdAt: addMinutes(s2.startedAt, 35),
    meeting: s2,
    resolvedAt: addMinutes(s1.startedAt, 50),
  });
  await issue(salesId, {
    title: 'Late deliveries to Danubia Retail put the renewal at risk',
    description: 'Three late deliveries in the last month; their buyer asked for a call.',
    priority: 'HIGH',
    status: 'OPEN',
    createdBy: 'salesAdmin',
    createdAt: addMinutes(s1.startedAt, 30),
    meeting: s1,
  });
  await issue(salesId, {
    title: 'Duplicate companies in the CRM after the import',
    priority: 'LOW',
    status: 'SOLVING',
    createdBy: 'salesMember',
    createdAt: localTime(addDays(thisMonday, -11), '11:00'),
  });

  await goals(salesId, SALES_ROCKS, quarter);
  await scorecard(salesId, SALES_METRICS);
  await seats(salesId, SALES_SEATS);
  await peopleReviews(salesId, 'salesOwner', [
    { person: 'salesAdmin', livesValues: [true, true, true, true], capacity: true, notes: 'Keeps every key account informed.' },
    { person: 'salesMember', livesValues: [true, false, true, true], capacity: true, notes: 'Follow-ups slip when the week gets busy.' },
  ]);
  await documents(salesId, [{ name: 'Price list', url: 'https://docs.northwind.example/sales/price-list', by: 'salesAdmin' }]);

  // ---- Operations: a smaller team -----------------------------------------------------------------

  const operations = await weeklyMeetings(operationsId, {
    weekday: 2,
    time: '13:00',
    durations: [60, 55],
    createdBy: 'admin',
    notes: ['Dock plan for the morning wave drafted.', 'Dock 3 door broke down again; service called.'],
  });
  const [o2, o1] = operations as [Meeting, Meeting];
  await rate(o2, [
    { person: 'admin', rating: 8 },
    { person: 'owner', rating: 7 },
    { person: 'warehouse', rating: 8 },
  ]);
  await rate(o1, [
    { person: 'admin', rating: 7 },
    { person: 'owner', rating: 8 },
    { person: 'warehouse', rating: 9 },
  ]);
  await scheduledMeeting(operationsId, addDays(thisMonday, 9), addMinutes(o1.endedAt!, 10), 'admin');
  await meetingTask(operationsId, o1, 30, { title: 'Train two new forklift drivers', owner: 'warehouse' });
  await task(operationsId, {
    title: 'Renew the forklift maintenance contract',
    owner: 'admin',
    due: addDays(today, 14),
    createdAt: addMinutes(o2.startedAt, -2 * 24 * 60),
  });
  await issue(operationsId, {
    title: 'Dock 3 door breaks down every week',
    priority: 'HIGH',
    status: 'OPEN',
    createdBy: 'warehouse',
    createdAt: addMinutes(o1.startedAt, 20),
    meeting: o1,
  });
  await goals(operationsId, OPERATIONS_ROCKS, quarter);
  await scorecard(operationsId, OPERATIONS_METRICS);
  await seats(operationsId, OPERATIONS_SEATS);

  await seedSampleRecords(db, { origin, secrets });

  return {
    organizationId: orgId,
    firstTeam: { id: leadershipId, name: 'Leadership Team' },
    people: (Object.entries(PEOPLE) as [Person, DemoPerson][]).flatMap(([person, data]) =>
      data.role === null ? [] : [{ role: data.role, email: data.email, userId: ids[person], superadmin: data.superadmin === true }],
    ),
  };
}

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
 * What it holds is plain data in demo/content.ts; the code that writes it is split by area as the
 * queries are (demo/meetings.ts, tasks.ts, issues.ts, goals.ts, metrics.ts, vision.ts, orgChart.ts,
 * peopleReviews.ts, documents.ts), each taking the seeding's context (demo/context.ts: the
 * transaction, the organization, its people's ids and the calendar of demo/calendar.ts), and each
 * team's story (demo/leadership.ts, sales.ts, operations.ts) calls them. The records the docs page's
 * samples name carry the contract's example ids (demo/sampleIds.ts), and demo/sampleRecords.ts adds
 * what only the samples need, so that each sample runs as written with the Owner's demo key.
 */
import type { SecretBox } from '../auth/secrets.js';
import { demoCalendar } from './demo/calendar.js';
import { PEOPLE, type DemoPerson, type Person } from './demo/content.js';
import type { Trx } from './demo/context.js';
import { seedLeadershipTeam } from './demo/leadership.js';
import { seedOperationsTeam } from './demo/operations.js';
import { seedOrganization } from './demo/organization.js';
import { seedSalesTeam } from './demo/sales.js';
import { seedSampleRecords } from './demo/sampleRecords.js';

export { DEMO_TIME_ZONE } from './demo/calendar.js';
export { DEMO_ORGANIZATION_NAME } from './demo/organization.js';

/** seed-demo writes only into a database without accounts. */
export class DatabaseNotEmpty extends Error {
  constructor(users: number) {
    super(`seed-demo needs an empty database, but it already has ${users} user(s).`);
  }
}

export interface DemoOrganization {
  organizationId: string;
  /** The team GET /orgs/{orgId}/teams lists first, with content in every area. */
  firstTeam: { id: string; name: string };
  /** The people with a demo role, in output order. */
  people: { role: string; email: string; userId: string; superadmin: boolean }[];
}

/** `secrets` seals the secrets the demo stores (its webhook's, its AI provider's key) as the server will open them. */
export async function seedDemo(db: Trx, now: Date, secrets: SecretBox): Promise<DemoOrganization> {
  const { count } = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .executeTakeFirstOrThrow();
  if (Number(count) > 0) throw new DatabaseNotEmpty(Number(count));

  const calendar = demoCalendar(now);
  const { context, teams } = await seedOrganization(db, calendar);
  await seedLeadershipTeam(context, teams.leadership);
  await seedSalesTeam(context, teams.sales);
  await seedOperationsTeam(context, teams.operations);
  await seedSampleRecords(db, { origin: calendar.origin, now, secrets });

  return {
    organizationId: context.orgId,
    firstTeam: { id: teams.leadership, name: 'Leadership Team' },
    people: (Object.entries(PEOPLE) as [Person, DemoPerson][]).flatMap(([person, data]) =>
      data.role === null ? [] : [{ role: data.role, email: data.email, userId: context.ids[person], superadmin: data.superadmin === true }],
    ),
  };
}

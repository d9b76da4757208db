/**
 * The demo organization itself, set up half a year before `now`: its people, Northwind Logistics with
 * its members, and its three teams.
 */
import type { TeamRole } from '../../db/database.js';
import { DEMO_TIME_ZONE, type DemoCalendar } from './calendar.js';
import { PEOPLE, type DemoPerson, type Person } from './content.js';
import type { DemoContext, Trx } from './context.js';
import { SAMPLE_IDS } from './sampleIds.js';

export const DEMO_ORGANIZATION_NAME = 'Northwind Logistics';

/** The ids of the organization's teams. */
export interface DemoTeams {
  leadership: string;
  sales: string;
  operations: string;
}

/** Writes the people, the organization and its teams; returns the context the teams' content is written with. */
export async function seedOrganization(db: Trx, calendar: DemoCalendar): Promise<{ context: DemoContext; teams: DemoTeams }> {
  const { afterOrigin } = calendar;
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

  const context: DemoContext = { db, orgId, ids, calendar };
  const leadership = await createTeam(
    context,
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
  const sales = await createTeam(
    context,
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
  const operations = await createTeam(
    context,
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
  return { context, teams: { leadership, sales, operations } };
}

async function createTeam(
  { db, orgId, ids, calendar }: DemoContext,
  name: string,
  slug: string,
  isLeadership: boolean,
  members: [Person, TeamRole][],
  at: number,
  teamId?: string,
): Promise<string> {
  const { afterOrigin } = calendar;
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
}

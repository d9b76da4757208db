/** The bench's database contents: an organization, a team, its keys, tasks, lists, a Scorecard, a meeting and an event log. */
import { randomBytes, randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import pino from 'pino';
import { createApp } from '../../src/app.js';
import { generateKey } from '../../src/auth/apiKeys.js';
import { createSecretBox } from '../../src/auth/secrets.js';
import type { Database } from '../../src/db/database.js';
import type { Listen } from '../../src/db/listen.js';
import { toTask } from '../../src/records/tasks.js';
import { addWeeks, currentWeekMonday } from '../../src/time.js';
import { deliveryBody, eventText } from '../../src/events/outbox.js';

/** Rows in each of the other lists the bench pages through: issues, meetings, organization members. */
const listRows = 200;
export const metricCount = 10;
export const weeksOfValues = 260;
export const zone = 'Europe/Bratislava';

export interface World {
  userId: string;
  orgId: string;
  teamId: string;
  ownerIds: string[];
  readKey: string;
  writeKey: string;
}

export async function seedWorld(db: Kysely<Database>): Promise<World> {
  const user = await db.insertInto('users').values({ email: 'bench@example.com', name: 'Bench Person', timezone: zone }).returning('id').executeTakeFirstOrThrow();
  const org = await db
    .insertInto('organizations')
    .values({ name: 'Bench Org', slug: 'bench-org', timezone: zone, default_locale: 'en' })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db.insertInto('organization_members').values({ org_id: org.id, user_id: user.id, role: 'OWNER' }).execute();
  const keys: string[] = [];
  for (const scopes of [['read'], ['write']] as const) {
    const { key, prefix, hash } = generateKey();
    await db
      .insertInto('api_keys')
      .values({ user_id: user.id, name: `bench ${scopes[0]}`, prefix, key_hash: hash, scopes: [...scopes], expires_at: new Date(Date.now() + 86_400_000) })
      .execute();
    keys.push(key);
  }
  const team = await db.insertInto('teams').values({ org_id: org.id, name: 'Operations', slug: 'operations' }).returning('id').executeTakeFirstOrThrow();
  const colleagues = await db
    .insertInto('users')
    .values(['Jana Kováčová', 'Peter Novák', 'Eva Horváthová'].map((person, index) => ({ email: `colleague${index}@example.com`, name: person, timezone: zone })))
    .returning('id')
    .execute();
  const ownerIds = [user.id, ...colleagues.map((colleague) => colleague.id)];
  await db
    .insertInto('organization_members')
    .values(colleagues.map((colleague) => ({ org_id: org.id, user_id: colleague.id, role: 'MEMBER' as const })))
    .execute();
  await db.insertInto('team_members').values(ownerIds.map((ownerId) => ({ team_id: team.id, user_id: ownerId, role: 'MEMBER' }))).execute();
  return { userId: user.id, orgId: org.id, teamId: team.id, ownerIds, readKey: keys[0]!, writeKey: keys[1]! };
}

/**
 * The team's tasks in one statement: distinct creation instants a millisecond apart (the list's sort
 * key), four owners taking turns in runs of three, every fourth task completed, due dates spread over a year.
 */
export async function seedTasks(db: Kysely<Database>, world: World, count: number) {
  await sql`
    insert into tasks (team_id, title, owner_id, due_date, completed, completed_at, created_at)
    select
      ${world.teamId},
      (array['Prepare', 'Review', 'Send', 'Draft', 'Follow up on', 'Schedule', 'Update', 'Close'])[1 + n % 8]
        || ' ' || (array['the freight quote', 'the quarterly report', 'the hiring plan', 'customer feedback',
                        'the supplier contract', 'the onboarding checklist', 'the budget forecast'])[1 + n % 7]
        || ' #' || n,
      (${world.ownerIds}::text[])[1 + (n / 3) % ${world.ownerIds.length}],
      date '2026-01-05' + (n % 365)::int,
      n % 4 = 0,
      case when n % 4 = 0 then timestamptz '2026-01-05T08:00:00Z' + n * interval '1 millisecond' + interval '2 days' end,
      timestamptz '2026-01-05T08:00:00Z' + n * interval '1 millisecond'
    from generate_series(1, ${count}) as n
  `.execute(db);
}

/** A Scorecard: `metricCount` metrics in order with `weeksOfValues` weekly values each, the newest this week. */
export async function seedScorecard(db: Kysely<Database>, world: World) {
  const lastWeek = currentWeekMonday(new Date(), zone);
  await sql`
    insert into metrics (team_id, title, goal, owner_id, unit, position)
    select ${world.teamId}, 'Measurable #' || n, '>=' || (n * 10), (${world.ownerIds}::text[])[1 + n % ${world.ownerIds.length}], case when n % 3 = 0 then '%' end, n
    from generate_series(1, ${metricCount}) as n
  `.execute(db);
  await sql`
    insert into metric_values (metric_id, week, value, on_track, entered_by_id)
    select m.id, ${lastWeek}::date - 7 * w, (m.position * 10 + w % 7 - 3)::text, w % 7 >= 3, m.owner_id
    from metrics m cross join generate_series(0, ${weeksOfValues - 1}) as w
    where m.team_id = ${world.teamId}
  `.execute(db);
  const first = await db.selectFrom('metrics').select('id').where('team_id', '=', world.teamId).where('position', '=', 1).executeTakeFirstOrThrow();
  return { metricId: first.id, firstWeek: addWeeks(lastWeek, 1 - weeksOfValues), lastWeek };
}

/** A completed meeting rated by everyone in the team, with a segue each, two headlines and two cascading messages. */
export async function seedMeeting(db: Kysely<Database>, world: World) {
  const startedAt = new Date(Date.now() - 2 * 3_600_000);
  const meeting = await db
    .insertInto('meetings')
    .values({
      team_id: world.teamId,
      date: currentWeekMonday(startedAt, zone),
      status: 'COMPLETED',
      started_at: startedAt,
      ended_at: new Date(startedAt.getTime() + 90 * 60_000),
      duration_min: 90,
      created_by_id: world.userId,
      notes: 'Reviewed the Scorecard and the Rocks; two issues solved.',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db.insertInto('meeting_ratings').values(world.ownerIds.map((userId, index) => ({ meeting_id: meeting.id, user_id: userId, rating: 7 + (index % 4) }))).execute();
  await db.insertInto('segues').values(world.ownerIds.map((userId) => ({ meeting_id: meeting.id, user_id: userId, content: 'Good news from the week: the new warehouse opened.' }))).execute();
  await db
    .insertInto('headlines')
    .values([
      { meeting_id: meeting.id, user_id: world.userId, type: 'CUSTOMER', content: 'Baltic Trade renewed for two years.' },
      { meeting_id: meeting.id, user_id: world.ownerIds[1]!, type: 'EMPLOYEE', content: 'Eva starts as team lead on Monday.' },
    ])
    .execute();
  await db
    .insertInto('cascading_messages')
    .values([
      { meeting_id: meeting.id, org_id: world.orgId, user_id: world.userId, content: 'The office is closed on Friday.' },
      { meeting_id: meeting.id, org_id: world.orgId, user_id: world.userId, content: 'New expense policy from December.' },
    ])
    .execute();
  return meeting.id;
}

/** `count` `task.updated` events of the world's team about `task`, in one statement, each its id put in front of the same text. */
export async function insertEventsInBulk(db: Kysely<Database>, world: World, task: unknown, count: number) {
  const at = new Date();
  const stand = randomUUID();
  const afterId = deliveryBody(stand, eventText(stand, 'task.updated', at, { orgId: world.orgId, teamId: world.teamId, object: task })).slice(1);
  await sql`
    insert into webhook_events (id, org_id, team_id, type, event, created_at)
    select e.id, ${world.orgId}, ${world.teamId}, 'task.updated', '{"id":' || to_json(e.id)::text || ',' || ${afterId}::text, ${at}
    from (select gen_random_uuid()::text as id from generate_series(1, ${count}::int)) e
  `.execute(db);
}

/**
 * `count` issues in the world's team in one statement: creation instants a millisecond apart (the
 * list's sort key), cycling through the priorities and, independently of them, the statuses.
 */
export async function seedIssues(db: Kysely<Database>, world: World, count: number): Promise<void> {
  await sql`
    insert into issues (team_id, title, description, priority, status, created_by_id, resolved_at, created_at)
    select
      ${world.teamId},
      (array['Carrier keeps missing', 'Hiring pipeline is thin for', 'Invoices are late from', 'No owner for'])[1 + n % 4]
        || ' ' || (array['the Žilina route', 'the warehouse team', 'the supplier contract', 'the quarterly report'])[1 + n % 3] || ' #' || n,
      case when n % 2 = 0 then 'Raised in the weekly meeting; "urgent" per the customer.' end,
      (array['HIGH', 'MEDIUM', 'LOW'])[1 + n % 3],
      (array['OPEN', 'SOLVING', 'SOLVED'])[1 + (n / 3) % 3],
      (${world.ownerIds}::text[])[1 + n % ${world.ownerIds.length}],
      case when (n / 3) % 3 = 2 then timestamptz '2026-02-01T08:00:00Z' + n * interval '1 millisecond' end,
      timestamptz '2026-01-05T08:00:00Z' + n * interval '1 millisecond'
    from generate_series(1, ${count}::int) as n
  `.execute(db);
}

/**
 * More than a page of 50 in the other lists the bench reads: issues, weekly meetings rated by the
 * team (before the seeded meeting's week), and members of the organization; and an event log of
 * `logEvents` events, so that the feed is read from a log of some size, as the changes measured
 * before it make it anyway.
 */
export async function seedLists(db: Kysely<Database>, world: World, logEvents: number) {
  const sample = await db.selectFrom('tasks').selectAll().where('team_id', '=', world.teamId).limit(1).executeTakeFirstOrThrow();
  await insertEventsInBulk(db, world, toTask(sample), logEvents);
  const lastWeek = currentWeekMonday(new Date(), zone);
  await seedIssues(db, world, listRows);
  await sql`
    insert into meetings (team_id, date, status, started_at, ended_at, duration_min, created_by_id, created_at)
    select ${world.teamId}, ${lastWeek}::date - 7 * n, 'COMPLETED',
      (${lastWeek}::date - 7 * n) + time '09:00' at time zone ${zone},
      (${lastWeek}::date - 7 * n) + time '10:30' at time zone ${zone},
      90, ${world.userId}, (${lastWeek}::date - 7 * n) + time '08:00' at time zone ${zone}
    from generate_series(1, ${listRows}) as n
  `.execute(db);
  await sql`
    insert into meeting_ratings (meeting_id, user_id, rating)
    select m.id, u.id, 6 + (ascii(m.id) + ascii(u.id)) % 5
    from meetings m cross join unnest(${world.ownerIds}::text[]) as u(id)
    where m.team_id = ${world.teamId} and m.date < ${lastWeek}::date
  `.execute(db);
  await sql`
    insert into users (email, name, timezone)
    select 'member' || n || '@example.com', (array['Jana', 'Peter', 'Eva', 'Marek', 'Zuzana'])[1 + n % 5] || ' Member ' || n, ${zone}
    from generate_series(1, ${listRows}) as n
  `.execute(db);
  await sql`
    insert into organization_members (org_id, user_id, role, joined_at)
    select ${world.orgId}, u.id, case when u.email like '%0@example.com' then 'ADMIN' else 'MEMBER' end, u.created_at
    from users u where u.email like 'member%@example.com'
  `.execute(db);
}

/** The task list's order, as src/db/queries/tasks.ts pages it: (created_at instant, id string) ascending. */
export function tasksInOrder(db: Kysely<Database>, teamId: string, completed?: boolean) {
  let query = db.selectFrom('tasks').selectAll('tasks').where('tasks.team_id', '=', teamId);
  if (completed !== undefined) query = query.where('tasks.completed', '=', completed);
  return query.orderBy('tasks.created_at', 'asc').orderBy('tasks.id', 'asc');
}

/** A primary-key query straight through the database's own driver, as a prepared statement. */
type RawQuery = (name: string, text: string, values: unknown[]) => Promise<unknown[]>;

export interface Stack {
  label: string;
  db: Kysely<Database>;
  raw: RawQuery;
  /** The same, inside `begin` … `commit` on one connection: the floor of a change. */
  rawChange: RawQuery;
  world: World;
  taskId: string;
  meetingId: string;
  metricId: string;
  /** The database's notifications, by which the API's apps keep callers in memory as production does (AUTH_CACHE on). */
  subscribe: Listen;
}

/** The whole API over a stack's database, silent and with a rate limit no bench reaches. */
export const apiOf = (stack: Stack) =>
  createApp({
    db: stack.db,
    config: { rateLimitPerMinute: 10_000_000, redisUrl: undefined },
    logger: pino({ level: 'silent' }),
    secrets: createSecretBox(randomBytes(32)),
    callerCache: { subscribe: stack.subscribe },
  });

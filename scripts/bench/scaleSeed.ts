/**
 * Seeding for `npm run bench:scale` (scripts/bench/scale.ts): each area's data at a given size, by SQL
 * (`generate_series`), never through the API, so that a million rows take seconds. Works on PostgreSQL
 * and PGlite alike; the organization, its Owner, keys and team are the main bench's (`seedWorld`).
 */
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { generateKey } from '../../src/auth/apiKeys.js';
import type { Database } from '../../src/db/database.js';
import { toTask } from '../../src/records/tasks.js';
import { addWeeks, currentWeekMonday } from '../../src/time.js';
import { deliveryBody, eventText } from '../../src/events/outbox.js';
import { seedIssues, seedTasks, type World } from './seed.js';

const zone = 'Europe/Bratislava';

/**
 * `count` tasks and `count` issues in the world's team, as the main bench seeds them (`seedTasks`,
 * `seedIssues`).
 */
export async function seedTeamItems(db: Kysely<Database>, world: World, count: number): Promise<void> {
  await seedTasks(db, world, count);
  await seedIssues(db, world, count);
}

/** Events a statement while seeding a log: each statement is one transaction, so the log holds several `txid`s. */
const eventsPerStatement = 1_000_000;

/**
 * An event log of `count` `task.updated` events of the world's team about one of its tasks, the
 * oldest `expired` of them older than `retentionDays` (what the retention's purge deletes), the rest
 * from the last day. Each event is the same text with its own id in front, as the outbox writes it.
 */
export async function seedEventLog(db: Kysely<Database>, world: World, count: number, expired: number, retentionDays: number): Promise<void> {
  const sample = await db.selectFrom('tasks').selectAll().where('team_id', '=', world.teamId).limit(1).executeTakeFirstOrThrow();
  const at = new Date();
  const stand = randomUUID();
  const afterId = deliveryBody(stand, eventText(stand, 'task.updated', at, { orgId: world.orgId, teamId: world.teamId, object: toTask(sample) })).slice(1);
  const oldest = new Date(at.getTime() - (retentionDays + 2) * 86_400_000);
  const recent = new Date(at.getTime() - 86_400_000);
  for (let first = 1; first <= count; first += eventsPerStatement) {
    const last = Math.min(count, first + eventsPerStatement - 1);
    await sql`
      insert into webhook_events (id, org_id, team_id, type, event, created_at)
      select e.id, ${world.orgId}, ${world.teamId}, 'task.updated', '{"id":' || to_json(e.id)::text || ',' || ${afterId}::text,
        case when e.n <= ${expired}::int then ${oldest}::timestamptz + e.n * interval '1 millisecond'
             else ${recent}::timestamptz + (e.n - ${expired}::int) * interval '10 microseconds' end
      from (select n, gen_random_uuid()::text as id from generate_series(${first}::int, ${last}::int) as n) e
    `.execute(db);
  }
}

/** A Scorecard: `metrics` metrics in order, each with `weeks` weekly values, the newest this week. */
export async function seedScorecard(db: Kysely<Database>, world: World, metrics: number, weeks: number): Promise<{ firstWeek: string; lastWeek: string }> {
  const lastWeek = currentWeekMonday(new Date(), zone);
  await sql`
    insert into metrics (team_id, title, goal, owner_id, unit, position)
    select ${world.teamId}, 'Measurable #' || n, '>=' || (n * 10), (${world.ownerIds}::text[])[1 + n % ${world.ownerIds.length}], case when n % 3 = 0 then '%' end, n
    from generate_series(1, ${metrics}::int) as n
  `.execute(db);
  await sql`
    insert into metric_values (metric_id, week, value, on_track, entered_by_id)
    select m.id, ${lastWeek}::date - 7 * w, (m.position * 10 + w % 7 - 3)::text, w % 7 >= 3, m.owner_id
    from metrics m cross join generate_series(0, ${weeks - 1}::int) as w
    where m.team_id = ${world.teamId}
  `.execute(db);
  return { firstWeek: addWeeks(lastWeek, 1 - weeks), lastWeek };
}

/**
 * The organization grown to `members` members, the Owner and the team's three included, with
 * `teams` further teams, and one more member who belongs to every one of those teams and holds a
 * key: the caller of `/v1/me`. Every other new member is in one of those teams.
 */
export async function seedMembers(db: Kysely<Database>, world: World, members: number, teams: number): Promise<{ memberKey: string }> {
  await sql`
    insert into teams (org_id, name, slug)
    select ${world.orgId}, 'Team ' || n, 'team-' || n from generate_series(1, ${teams}::int) as n
  `.execute(db);
  const member = await db.insertInto('users').values({ email: 'many-teams@example.com', name: 'Many Teams', timezone: zone }).returning('id').executeTakeFirstOrThrow();
  await sql`
    insert into users (email, name, timezone, created_at)
    select 'member' || n || '@example.com', (array['Jana', 'Peter', 'Eva', 'Marek', 'Zuzana'])[1 + n % 5] || ' Member ' || n, ${zone},
      timestamptz '2025-01-01T08:00:00Z' + n * interval '1 second'
    from generate_series(1, ${members - 5}::int) as n
  `.execute(db);
  await sql`
    insert into organization_members (org_id, user_id, role, joined_at)
    select ${world.orgId}, u.id, case when u.email like '%0@example.com' then 'ADMIN' else 'MEMBER' end, u.created_at
    from users u where u.email like 'member%@example.com' or u.id = ${member.id}
  `.execute(db);
  await sql`
    insert into team_members (team_id, user_id, role)
    select t.id, ${member.id}, 'MEMBER' from teams t where t.org_id = ${world.orgId} and t.slug like 'team-%'
  `.execute(db);
  await sql`
    insert into team_members (team_id, user_id, role)
    select t.id, m.id, 'MEMBER'
    from (select u.id, row_number() over (order by u.id) as n from users u where u.email like 'member%@example.com') m
    join (select t.id, row_number() over (order by t.id) - 1 as n from teams t where t.org_id = ${world.orgId} and t.slug like 'team-%') t
      on t.n = m.n % ${teams}
  `.execute(db);
  const { key, prefix, hash } = generateKey();
  await db
    .insertInto('api_keys')
    .values({ user_id: member.id, name: 'scale bench', prefix, key_hash: hash, scopes: ['read'], expires_at: new Date(Date.now() + 86_400_000) })
    .execute();
  return { memberKey: key };
}

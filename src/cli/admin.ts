/**
 * The operator command line: `npm run --silent admin -- COMMAND [options]`. It stands in for the
 * web application's account and API-key pages (see USAGE below).
 *
 * It opens the database like the server (DATABASE_URL, else the PGlite data directory DATA_DIR,
 * which it locks), migrates it to the newest schema, runs the command in one transaction and
 * closes the database again so the lock is released. The result is the last line of stdout; an
 * error is one line on stderr with exit code 1, and then nothing was written.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import { generateKey } from '../auth/apiKeys.js';
import { readConfig } from '../config.js';
import { DataDirectoryLocked, openDatabase, type OpenDatabase } from '../db/connect.js';
import type { ApiKeyScope, Database, TeamRole } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import { findUserByEmail } from '../db/queries/users.js';
import { dayInTimeZone, mondayOf, quarterOf } from '../time.js';
import { keyExpiry, parseCommandLine, UnknownCommand, UsageError, type Command } from './arguments.js';

const USAGE = `Team OS operator command line

Usage: npm run --silent admin -- COMMAND [options]

Commands:
  create-user --email E [--name N] [--timezone IANA] [--superadmin]
      Creates an account. The name defaults to the part of the e-mail before "@"; without
      --timezone the account uses its organization's time zone. IANA is a name of the tz
      database in any letter case, stored in its spelling (etc/utc → UTC). Prints the new user's id.
  update-user --email E [--name N] [--timezone IANA | --no-timezone] [--superadmin true|false]
      Changes an account found by e-mail (any letter case). Prints the user's id.
  create-key --email E --scopes SCOPES [--name N] [--expires-at INSTANT]
      Creates a personal API key. SCOPES is a comma list of read, write, platform; platform only
      for a SUPERADMIN and valid at most 90 days. INSTANT is ISO 8601 with a zone, e.g.
      2027-01-31T17:00:00+01:00 (a past instant gives an already expired key). Default expiry:
      90 days with platform, else 365 days; default name "CLI key". Prints the full key: it is
      shown only this once (only its prefix and SHA-256 hash are stored).
  revoke-key --id ID
      Revokes an API key (a key already revoked keeps its revocation time). Prints the id.
  seed-demo
      Fills an EMPTY database (no accounts) with the demo organization "Northwind Logistics":
      teams Sales, Operations and Leadership Team, people in every role and a little content.
      Prints one line per role, ROLE<TAB>email<TAB>key, with a new key for each person (write;
      platform for the SUPERADMIN operator). These keys are the output: the last lines.
      Roles: ORG_OWNER, ORG_ADMIN, ORG_IMPLEMENTER (organization roles), TEAM_OWNER, TEAM_ADMIN,
      TEAM_MEMBER, TEAM_VIEWER (organization Members with that role in Sales), SUPERADMIN.
  help, --help, -h
      Shows this text.

Environment: DATABASE_URL (PostgreSQL), else DATA_DIR (embedded PGlite, default ./data; used by one
process at a time, so stop the server first).
Output: the result alone on the last line of stdout. Errors: one line on stderr, exit code 1,
nothing written.
`;

/** A refusal that depends on the database (unknown e-mail, duplicate, wrong role): one line, exit 1. */
class CommandError extends Error {}

type Db = Kysely<Database> | Transaction<Database>;

// ---------------------------------------------------------------------------------------------------
// Accounts and keys

async function requireUser(db: Db, email: string) {
  const user = await findUserByEmail(db, email);
  if (user === undefined) throw new CommandError(`No user with e-mail ${email}.`);
  return user;
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '23505';
}

async function createUser(db: Db, command: Extract<Command, { command: 'create-user' }>): Promise<string> {
  if ((await findUserByEmail(db, command.email)) !== undefined) {
    throw new CommandError(`A user with e-mail ${command.email} already exists.`);
  }
  try {
    const { id } = await db
      .insertInto('users')
      .values({
        email: command.email,
        name: command.name,
        timezone: command.timezone,
        system_role: command.superadmin ? 'SUPERADMIN' : 'USER',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return id;
  } catch (error) {
    // Another process created the same e-mail between the check and the insert.
    if (isUniqueViolation(error)) throw new CommandError(`A user with e-mail ${command.email} already exists.`);
    throw error;
  }
}

async function updateUser(db: Db, command: Extract<Command, { command: 'update-user' }>): Promise<string> {
  const user = await requireUser(db, command.email);
  const { name, timezone, superadmin } = command.changes;
  await db
    .updateTable('users')
    .set({
      ...(name === undefined ? {} : { name }),
      ...(timezone === undefined ? {} : { timezone }),
      ...(superadmin === undefined ? {} : { system_role: superadmin ? 'SUPERADMIN' : 'USER' }),
    })
    .where('id', '=', user.id)
    .execute();
  return user.id;
}

/** Stores a new key (only its prefix and hash) and returns the full key. */
async function insertKey(
  db: Db,
  key: { userId: string; name: string; scopes: ApiKeyScope[]; expiresAt: Date },
): Promise<string> {
  const generated = generateKey();
  await db
    .insertInto('api_keys')
    .values({
      user_id: key.userId,
      name: key.name,
      prefix: generated.prefix,
      key_hash: generated.hash,
      scopes: key.scopes,
      expires_at: key.expiresAt,
    })
    .execute();
  return generated.key;
}

async function createKey(db: Db, command: Extract<Command, { command: 'create-key' }>): Promise<string> {
  const user = await requireUser(db, command.email);
  if (command.scopes.includes('platform') && user.system_role !== 'SUPERADMIN') {
    throw new CommandError(`Only a platform operator (SUPERADMIN) may have a platform key; ${command.email} is not one.`);
  }
  return insertKey(db, { userId: user.id, name: command.name, scopes: command.scopes, expiresAt: command.expiresAt });
}

async function revokeKey(db: Db, id: string): Promise<string> {
  const revoked = await db
    .updateTable('api_keys')
    .set({ revoked_at: sql<Date>`coalesce(revoked_at, now())` })
    .where('id', '=', id)
    .returning('id')
    .executeTakeFirst();
  if (revoked === undefined) throw new CommandError(`No API key with id ${id}.`);
  return revoked.id;
}

// ---------------------------------------------------------------------------------------------------
// The demo organization

const DAY_MS = 24 * 60 * 60 * 1000;
const ORG_TIME_ZONE = 'Europe/Bratislava';

function addDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

function firstDayOfQuarter(quarter: string): string {
  const year = quarter.slice(0, 4);
  const month = (Number(quarter.slice(6)) - 1) * 3 + 1;
  return `${year}-${String(month).padStart(2, '0')}-01`;
}

interface DemoPerson {
  role: string;
  email: string;
  name: string;
  timezone?: string;
  superadmin?: boolean;
}

// Output order = this order: organization roles, team roles in Sales, the platform operator.
const PEOPLE = {
  owner: { role: 'ORG_OWNER', email: 'martina.kovacova@northwind.example', name: 'Martina Kováčová' },
  admin: { role: 'ORG_ADMIN', email: 'peter.novak@northwind.example', name: 'Peter Novák' },
  implementer: {
    role: 'ORG_IMPLEMENTER',
    email: 'jana.horvathova@tractioncoach.example',
    name: 'Jana Horváthová',
    timezone: 'Europe/Vienna',
  },
  salesOwner: { role: 'TEAM_OWNER', email: 'tomas.varga@northwind.example', name: 'Tomáš Varga' },
  salesAdmin: { role: 'TEAM_ADMIN', email: 'lucia.bartosova@northwind.example', name: 'Lucia Bartošová' },
  salesMember: { role: 'TEAM_MEMBER', email: 'marek.szabo@northwind.example', name: 'Marek Szabó' },
  salesViewer: { role: 'TEAM_VIEWER', email: 'zuzana.tothova@northwind.example', name: 'Zuzana Tóthová' },
  operator: { role: 'SUPERADMIN', email: 'operator@teamos.example', name: 'Platform Operator', superadmin: true },
} satisfies Record<string, DemoPerson>;

type PersonKey = keyof typeof PEOPLE;

async function seedDemo(db: Db, now: Date): Promise<string[]> {
  const { count } = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .executeTakeFirstOrThrow();
  if (Number(count) > 0) {
    throw new CommandError(`seed-demo needs an empty database, but it already has ${count} user(s).`);
  }

  const ids = {} as Record<PersonKey, string>;
  for (const [key, person] of Object.entries(PEOPLE) as [PersonKey, DemoPerson][]) {
    const { id } = await db
      .insertInto('users')
      .values({
        email: person.email,
        name: person.name,
        timezone: person.timezone ?? null,
        system_role: person.superadmin ? 'SUPERADMIN' : 'USER',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    ids[key] = id;
  }

  const { id: orgId } = await db
    .insertInto('organizations')
    .values({ name: 'Northwind Logistics', slug: 'northwind-logistics', timezone: ORG_TIME_ZONE, default_locale: 'en' })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db
    .insertInto('organization_members')
    .values([
      { org_id: orgId, user_id: ids.owner, role: 'OWNER' },
      { org_id: orgId, user_id: ids.admin, role: 'ADMIN' },
      { org_id: orgId, user_id: ids.implementer, role: 'IMPLEMENTER' },
      { org_id: orgId, user_id: ids.salesOwner, role: 'MEMBER' },
      { org_id: orgId, user_id: ids.salesAdmin, role: 'MEMBER' },
      { org_id: orgId, user_id: ids.salesMember, role: 'MEMBER' },
      { org_id: orgId, user_id: ids.salesViewer, role: 'MEMBER' },
    ])
    .execute();

  const team = async (name: string, slug: string, isLeadership: boolean, members: [PersonKey, TeamRole][]) => {
    const { id } = await db
      .insertInto('teams')
      .values({ org_id: orgId, name, slug, is_leadership: isLeadership })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db
      .insertInto('team_members')
      .values(members.map(([person, role]) => ({ team_id: id, user_id: ids[person], role })))
      .execute();
    return id;
  };
  const leadershipId = await team('Leadership Team', 'leadership-team', true, [
    ['owner', 'OWNER'],
    ['admin', 'ADMIN'],
    ['salesOwner', 'MEMBER'],
  ]);
  const salesId = await team('Sales', 'sales', false, [
    ['salesOwner', 'OWNER'],
    ['salesAdmin', 'ADMIN'],
    ['salesMember', 'MEMBER'],
    ['salesViewer', 'VIEWER'],
  ]);
  const operationsId = await team('Operations', 'operations', false, [
    ['admin', 'OWNER'],
    ['owner', 'MEMBER'],
  ]);

  // Dates relative to today in the organization's zone, so the demo always looks current.
  const today = dayInTimeZone(now, ORG_TIME_ZONE);
  const thisMonday = mondayOf(today);
  const quarter = quarterOf(today);
  const quarterStart = firstDayOfQuarter(quarter);

  // Last week's Sales L10: Tuesday 09:00 to 10:30 in Bratislava (07:00 UTC is 08:00 or 09:00 there).
  const meetingDay = addDays(thisMonday, -6);
  const startedAt = new Date(`${meetingDay}T07:00:00Z`);
  const endedAt = new Date(startedAt.getTime() + 90 * 60_000);
  const { id: meetingId } = await db
    .insertInto('meetings')
    .values({
      team_id: salesId,
      date: meetingDay,
      status: 'COMPLETED',
      started_at: startedAt,
      ended_at: endedAt,
      duration_min: 90,
      created_by_id: ids.salesOwner,
      notes: 'Pipeline review: two enterprise quotes waiting for approval. Danubia Retail renewal at risk.',
      ratings_revealed_at: endedAt,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db
    .insertInto('meeting_ratings')
    .values([
      { meeting_id: meetingId, user_id: ids.salesOwner, rating: 9 },
      { meeting_id: meetingId, user_id: ids.salesAdmin, rating: 8 },
      { meeting_id: meetingId, user_id: ids.salesMember, rating: 7 },
    ])
    .execute();
  await db
    .insertInto('segues')
    .values({ meeting_id: meetingId, user_id: ids.salesAdmin, content: 'Signed the Vienna cross-dock contract on Friday.' })
    .execute();
  await db
    .insertInto('headlines')
    .values([
      {
        meeting_id: meetingId,
        user_id: ids.salesOwner,
        type: 'CUSTOMER',
        content: 'Košice Freight praised the new live delivery tracking.',
      },
      {
        meeting_id: meetingId,
        user_id: ids.salesMember,
        type: 'EMPLOYEE',
        content: 'Marek finished the advanced negotiation course.',
      },
    ])
    .execute();
  await db
    .insertInto('cascading_messages')
    .values({
      meeting_id: meetingId,
      org_id: orgId,
      user_id: ids.salesOwner,
      content: 'From Monday all quotes use the new price list in the shared drive.',
    })
    .execute();

  await db
    .insertInto('tasks')
    .values([
      {
        team_id: salesId,
        title: 'Send the revised quote to Danubia Retail',
        owner_id: ids.salesAdmin,
        due_date: addDays(today, 3),
        meeting_id: meetingId,
      },
      {
        team_id: salesId,
        title: 'Clean up the CRM pipeline stages',
        owner_id: ids.salesMember,
        due_date: addDays(today, 7),
        meeting_id: meetingId,
      },
      {
        team_id: salesId,
        title: 'Plan the customer visits in Košice',
        owner_id: ids.salesOwner,
        due_date: addDays(today, -2),
        completed: true,
        completed_at: new Date(now.getTime() - 2 * DAY_MS),
        meeting_id: meetingId,
      },
      {
        team_id: operationsId,
        title: 'Renew the forklift maintenance contract',
        owner_id: ids.admin,
        due_date: addDays(today, 14),
      },
    ])
    .execute();

  await db
    .insertInto('issues')
    .values([
      {
        team_id: salesId,
        title: 'Late deliveries to Danubia Retail put the renewal at risk',
        description: 'Three late deliveries in the last month; their buyer asked for a call.',
        priority: 'HIGH',
        meeting_id: meetingId,
        created_by_id: ids.salesAdmin,
      },
      {
        team_id: salesId,
        title: 'Quote approval takes three days',
        priority: 'MEDIUM',
        status: 'SOLVED',
        meeting_id: meetingId,
        created_by_id: ids.salesOwner,
        resolved_at: new Date(endedAt.getTime() - 15 * 60_000),
      },
      {
        team_id: leadershipId,
        title: 'Second warehouse shift is not fully staffed',
        priority: 'HIGH',
        created_by_id: ids.admin,
      },
    ])
    .execute();

  const { id: goalId } = await db
    .insertInto('goals')
    .values({
      team_id: leadershipId,
      org_id: orgId,
      title: 'Win 5 new enterprise logistics accounts',
      description: 'Focus on retail and automotive customers between Bratislava and Vienna.',
      owner_id: ids.salesOwner,
      quarter,
      level: 'COMPANY',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db
    .insertInto('milestones')
    .values([
      { goal_id: goalId, title: 'Shortlist 20 target accounts', due_date: addDays(quarterStart, 20), completed: true },
      { goal_id: goalId, title: 'Hold 10 discovery meetings', due_date: addDays(quarterStart, 50) },
      { goal_id: goalId, title: 'Sign 5 contracts', due_date: addDays(quarterStart, 85) },
    ])
    .execute();

  const metric = async (
    position: number,
    values: { title: string; goal: string; unit: string | null; owner: PersonKey; description: string },
    weekly: [string, boolean][],
  ) => {
    const { id } = await db
      .insertInto('metrics')
      .values({
        team_id: salesId,
        title: values.title,
        goal: values.goal,
        owner_id: ids[values.owner],
        unit: values.unit,
        description: values.description,
        position,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db
      .insertInto('metric_values')
      .values(
        weekly.map(([value, onTrack], index) => ({
          metric_id: id,
          week: addDays(thisMonday, -7 * (weekly.length - index)),
          value,
          on_track: onTrack,
          entered_by_id: ids[values.owner],
        })),
      )
      .execute();
  };
  await metric(
    1,
    { title: 'New qualified leads', goal: '>=25', unit: null, owner: 'salesMember', description: 'Leads accepted by sales this week.' },
    [
      ['27', true],
      ['22', false],
      ['31', true],
      ['26', true],
    ],
  );
  await metric(
    2,
    { title: 'Quoted revenue', goal: '>=120000', unit: 'EUR', owner: 'salesAdmin', description: 'Value of quotes sent this week.' },
    [
      ['134500', true],
      ['118000', false],
      ['126250', true],
      ['141000', true],
    ],
  );

  const lines: string[] = [];
  for (const [key, person] of Object.entries(PEOPLE) as [PersonKey, DemoPerson][]) {
    const scopes: ApiKeyScope[] = person.superadmin ? ['platform'] : ['write'];
    const apiKey = await insertKey(db, {
      userId: ids[key],
      name: 'Demo key',
      scopes,
      expiresAt: keyExpiry(scopes, undefined, now),
    });
    lines.push(`${person.role}\t${person.email}\t${apiKey}`);
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------------
// Running a command

async function execute(db: Kysely<Database>, command: Exclude<Command, { command: 'help' }>, now: Date): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    switch (command.command) {
      case 'create-user':
        return [await createUser(trx, command)];
      case 'update-user':
        return [await updateUser(trx, command)];
      case 'create-key':
        return [await createKey(trx, command)];
      case 'revoke-key':
        return [await revokeKey(trx, command.id)];
      case 'seed-demo':
        return seedDemo(trx, now);
    }
  });
}

/** One line: the message, or for errors without one (e.g. an AggregateError of connections) the code. */
function describeError(error: unknown): string {
  if (error instanceof Error) {
    const message = error.message || (error as { code?: string }).code || error.name;
    return message.replace(/\s*\n\s*/g, ' ');
  }
  return String(error);
}

async function main(argv: string[]): Promise<number> {
  const now = new Date();
  let command: Command;
  try {
    command = parseCommandLine(argv, now);
  } catch (error) {
    if (error instanceof UnknownCommand) {
      process.stderr.write(`${error.message}\n\n${USAGE}`);
      return 1;
    }
    if (error instanceof UsageError) {
      process.stderr.write(`Error: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
  if (command.command === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }

  let database: OpenDatabase;
  try {
    database = await openDatabase(readConfig());
  } catch (error) {
    process.stderr.write(error instanceof DataDirectoryLocked ? `${error.message}\n` : `Error: ${describeError(error)}\n`);
    return 1;
  }
  try {
    await migrateToLatest(database.db);
    const lines = await execute(database.db, command, now);
    process.stdout.write(lines.map((line) => `${line}\n`).join(''));
    return 0;
  } catch (error) {
    process.stderr.write(`Error: ${describeError(error)}\n`);
    return 1;
  } finally {
    await database.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    // Let stdout drain and exit on its own; should a handle linger, still stop shortly after.
    setTimeout(() => process.exit(), 5_000).unref();
  },
  (error: unknown) => {
    process.stderr.write(`Error: ${describeError(error)}\n`);
    process.exit(1);
  },
);

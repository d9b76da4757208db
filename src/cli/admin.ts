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
import { createSecretBox, loadSecretsKey, type SecretBox } from '../auth/secrets.js';
import { readConfig } from '../config.js';
import { DataDirectoryLocked, openDatabase, type OpenDatabase } from '../db/connect.js';
import type { ApiKeyScope, Database, NewUser } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import { createOrganizationWithOwner } from '../db/queries/platform.js';
import { findUserByEmail } from '../db/queries/users.js';
import { keyExpiry, parseCommandLine, UnknownCommand, UsageError, type Command } from './arguments.js';
import { DEMO_ORGANIZATION_NAME, seedDemo } from './demo.js';

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
  create-org --name N --owner-email E [--owner-name N] --timezone IANA --locale en|sk
      Creates an organization with its first Owner, as POST /v1/platform/orgs does: the slug comes
      from the name (with a number when taken); --locale is the language of its new accounts. An
      account with the e-mail (any letter case) becomes Owner unchanged; an unknown e-mail gets a new
      account, as create-user makes one, named --owner-name (default: the part before "@"). Prints
      the organization's id; then create-key for the owner gives the first key.
  seed-demo
      Fills an EMPTY database (no accounts) with the demo organization "Northwind Logistics": teams
      Leadership Team, Operations and Sales with half a year of history counted back from today,
      people in every role. Prints ORGANIZATION<TAB>id<TAB>name and TEAM<TAB>id<TAB>name (the team
      GET /v1/orgs/{orgId}/teams lists first, with content in every area), then one line per role,
      ROLE<TAB>email<TAB>key, with a new key for each person (write; platform for the SUPERADMIN
      operator). These keys are the output: the last lines. The records the docs page's samples
      name carry the samples' ids, so each sample runs as written with the ORG_OWNER key (the
      /platform ones with the SUPERADMIN key). Needs the server's secrets key (SECRETS_KEY; on the
      embedded database its key file, made here when missing) for the secrets it stores.
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
// Organizations

async function createOrganization(trx: Transaction<Database>, command: Extract<Command, { command: 'create-org' }>): Promise<string> {
  // An unknown owner gets an account as create-user makes one, in the organization's language.
  const owner: { id: string } | { account: NewUser } = (await findUserByEmail(trx, command.owner.email)) ?? {
    account: { email: command.owner.email, name: command.owner.name, locale: command.locale },
  };
  try {
    const organization = await createOrganizationWithOwner(
      trx,
      { name: command.name, timezone: command.timezone, defaultLocale: command.locale },
      owner,
    );
    return organization.id;
  } catch (error) {
    // Another writer took the slug or created the owner's e-mail between the reads and the inserts.
    if (isUniqueViolation(error)) {
      throw new CommandError('Another process created the same organization slug or owner at the same moment; run the command again.');
    }
    throw error;
  }
}

/**
 * The demo organization and a new key for each demo person: first the organization's id and the id of
 * the team to start from, then ROLE<TAB>email<TAB>key per role (the last lines).
 */
async function seedDemoWithKeys(trx: Transaction<Database>, now: Date, secrets: SecretBox): Promise<string[]> {
  const demo = await seedDemo(trx, now, secrets);
  const lines = [`ORGANIZATION\t${demo.organizationId}\t${DEMO_ORGANIZATION_NAME}`, `TEAM\t${demo.firstTeam.id}\t${demo.firstTeam.name}`];
  for (const person of demo.people) {
    const scopes: ApiKeyScope[] = person.superadmin ? ['platform'] : ['write'];
    const apiKey = await insertKey(trx, { userId: person.userId, name: 'Demo key', scopes, expiresAt: keyExpiry(scopes, undefined, now) });
    lines.push(`${person.role}\t${person.email}\t${apiKey}`);
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------------
// Running a command

/** `secrets`: the server's secrets key, read only by the command that stores secrets (seed-demo). */
async function execute(
  db: Kysely<Database>,
  command: Exclude<Command, { command: 'help' }>,
  now: Date,
  secrets: () => Promise<SecretBox>,
): Promise<string[]> {
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
      case 'create-org':
        return [await createOrganization(trx, command)];
      case 'seed-demo':
        return seedDemoWithKeys(trx, now, await secrets());
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

  const config = readConfig();
  let database: OpenDatabase;
  try {
    database = await openDatabase(config);
  } catch (error) {
    process.stderr.write(error instanceof DataDirectoryLocked ? `${error.message}\n` : `Error: ${describeError(error)}\n`);
    return 1;
  }
  try {
    await migrateToLatest(database.db);
    // As the server reads it (SECRETS_KEY, else the data directory's key file, made now if missing), once the directory is locked.
    const lines = await execute(database.db, command, now, async () => createSecretBox(await loadSecretsKey(config)));
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

/**
 * The pure half of the operator command line (src/cli/admin.ts): it turns the words after the
 * command name into one checked command, or throws a `UsageError` whose message is one line for
 * stderr. Nothing here reads the database; the checks that need it (a known e-mail, a SUPERADMIN
 * for a platform key) are made by the command itself.
 */
import { parseArgs } from 'node:util';
import type { ApiKeyScope, Locale } from '../db/database.js';
import { canonicalTimeZone } from '../time.js';

/** Wrong use of the command line: shown as one line on stderr, exit code 1. */
export class UsageError extends Error {}

/** A command name the tool does not know: the usage text follows the message. */
export class UnknownCommand extends UsageError {
  constructor(readonly command: string) {
    super(`Unknown command "${command}".`);
  }
}

export const SCOPES: readonly ApiKeyScope[] = ['read', 'write', 'platform'];
/** A platform key is valid at most this many days (api-reference, Limits). */
export const PLATFORM_KEY_MAX_DAYS = 90;
/** Validity of a key without `platform` when no expiry is given. */
export const DEFAULT_KEY_DAYS = 365;
export const DEFAULT_KEY_NAME = 'CLI key';
/** The API's limit on a member name. */
export const NAME_MAX_LENGTH = 200;
// Longest address SMTP can deliver to (RFC 5321: 256 octets of path minus the angle brackets).
const EMAIL_MAX_LENGTH = 254;
const DAY_MS = 24 * 60 * 60 * 1000;

// ---------------------------------------------------------------------------------------------------
// Single values

/** Something `local@domain.tld`: no spaces, one `@`, a domain of non-empty dot-separated labels. */
export function isEmail(value: string): boolean {
  return value.length <= EMAIL_MAX_LENGTH && /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/.test(value);
}

export function parseEmail(raw: string): string {
  const email = raw.trim();
  if (!isEmail(email)) throw new UsageError(`"${raw}" does not look like an e-mail address.`);
  return email;
}

/** The default display name of a new account: the part of the e-mail before `@`. */
export function nameFromEmail(email: string): string {
  return email.slice(0, email.indexOf('@'));
}

export function parseName(raw: string, option = '--name'): string {
  const name = raw.trim();
  if (name === '') throw new UsageError(`${option} must not be empty.`);
  if (name.length > NAME_MAX_LENGTH) throw new UsageError(`${option} must be at most ${NAME_MAX_LENGTH} characters.`);
  return name;
}

export const LOCALES: readonly Locale[] = ['en', 'sk'];

/** The language of an organization's new accounts, as the API spells it. */
export function parseLocale(raw: string): Locale {
  const locale = LOCALES.find((known) => known === raw);
  if (locale === undefined) throw new UsageError(`--locale takes ${LOCALES.join(' or ')}, not "${raw}".`);
  return locale;
}

/** A time zone in any letter case, given back in the spelling the server stores (src/time.ts). */
export function parseTimeZone(raw: string): string {
  const zone = canonicalTimeZone(raw);
  if (zone === undefined) throw new UsageError(`"${raw}" is not an IANA time zone (for example Europe/Bratislava).`);
  return zone;
}

export function parseBooleanWord(raw: string, option: string): boolean {
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw new UsageError(`${option} takes true or false, not "${raw}".`);
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}

/**
 * A comma list of known scopes without repeats, e.g. `read,write`. Spaces around an item are
 * ignored; an empty item (`read,,write`, a trailing comma) is refused.
 */
export function parseScopes(raw: string): ApiKeyScope[] {
  const items = raw.split(',').map((item) => item.trim());
  const scopes: ApiKeyScope[] = [];
  for (const item of items) {
    if (item === '') throw new UsageError(`--scopes needs a comma list of ${SCOPES.join(', ')} without empty items.`);
    const scope = SCOPES.find((known) => known === item);
    if (scope === undefined) throw new UsageError(`Unknown scope "${item}": use ${SCOPES.join(', ')}.`);
    if (scopes.includes(scope)) throw new UsageError(`Scope "${scope}" is given twice.`);
    scopes.push(scope);
  }
  return scopes;
}

// `YYYY-MM-DDTHH:MM[:SS[.fraction]]` and a zone: `Z` or an offset `±HH:MM`, `±HHMM` or `±HH`.
const INSTANT_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)$/;

// Expiry dates outside this range are far more likely typos than intended (and PostgreSQL has no year 0).
const MIN_YEAR = 2000;
const MAX_YEAR = 2100;

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/**
 * An ISO 8601 instant with its zone, e.g. `2027-01-31T17:00:00+01:00` or `2027-01-31T16:00Z`.
 * Checked field by field, because `Date` quietly rolls 2027-02-30 over to March.
 */
export function parseInstant(raw: string): Date {
  const refuse = (why: string): never => {
    throw new UsageError(`--expires-at "${raw}" ${why}`);
  };
  const match = INSTANT_PATTERN.exec(raw);
  if (match === null) {
    return refuse('is not an ISO 8601 instant with a zone (for example 2027-01-31T17:00:00+01:00 or 2027-01-31T16:00:00Z).');
  }
  const [, y, mo, d, h, mi, s = '00', fraction = '', , sign, offsetHours = '00', offsetMinutes = '00'] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (year < MIN_YEAR || year > MAX_YEAR) return refuse(`has a year outside ${MIN_YEAR}-${MAX_YEAR}.`);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return refuse('is not a calendar day.');
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return refuse('is not a time of day.');
  if (Number(offsetHours) > 23 || Number(offsetMinutes) > 59) return refuse('has an impossible zone offset.');
  const zone = sign === undefined ? 'Z' : `${sign}${offsetHours}:${offsetMinutes}`;
  const milliseconds = fraction.padEnd(3, '0').slice(0, 3);
  return new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}.${milliseconds}${zone}`);
}

/**
 * When a new key expires. Without `expiresAt`: 90 days for a key with `platform`, else 365 days.
 * A platform key may not be valid longer than 90 days from `now`; an instant in the past is
 * accepted (it gives a key that is already expired).
 */
export function keyExpiry(scopes: readonly ApiKeyScope[], expiresAt: Date | undefined, now: Date): Date {
  const platform = scopes.includes('platform');
  if (expiresAt === undefined) {
    return new Date(now.getTime() + (platform ? PLATFORM_KEY_MAX_DAYS : DEFAULT_KEY_DAYS) * DAY_MS);
  }
  const latest = new Date(now.getTime() + PLATFORM_KEY_MAX_DAYS * DAY_MS);
  if (platform && expiresAt.getTime() > latest.getTime()) {
    throw new UsageError(
      `A platform key is valid at most ${PLATFORM_KEY_MAX_DAYS} days: --expires-at must be no later than ${latest.toISOString()}.`,
    );
  }
  return expiresAt;
}

// ---------------------------------------------------------------------------------------------------
// Whole command lines

export type Command =
  | { command: 'help' }
  | { command: 'create-user'; email: string; name: string; timezone: string | null; superadmin: boolean }
  | {
      command: 'update-user';
      email: string;
      /** Only the fields to change; at least one. */
      changes: { name?: string; timezone?: string | null; superadmin?: boolean };
    }
  | { command: 'create-key'; email: string; scopes: ApiKeyScope[]; name: string; expiresAt: Date }
  | { command: 'revoke-key'; id: string }
  | {
      command: 'create-org';
      name: string;
      timezone: string;
      locale: Locale;
      /** `name` is used only when no account has the e-mail yet. */
      owner: { email: string; name: string };
    }
  | { command: 'seed-demo' };

export const COMMANDS = ['create-user', 'update-user', 'create-key', 'revoke-key', 'create-org', 'seed-demo'] as const;

type OptionSpec = NonNullable<Parameters<typeof parseArgs>[0]>['options'];

const help = { help: { type: 'boolean', short: 'h' } } as const satisfies OptionSpec;

const optionsOf = {
  'create-user': {
    ...help,
    email: { type: 'string' },
    name: { type: 'string' },
    timezone: { type: 'string' },
    superadmin: { type: 'boolean' },
  },
  'update-user': {
    ...help,
    email: { type: 'string' },
    name: { type: 'string' },
    timezone: { type: 'string' },
    'no-timezone': { type: 'boolean' },
    superadmin: { type: 'string' },
  },
  'create-key': {
    ...help,
    email: { type: 'string' },
    scopes: { type: 'string' },
    name: { type: 'string' },
    'expires-at': { type: 'string' },
  },
  'revoke-key': { ...help, id: { type: 'string' } },
  'create-org': {
    ...help,
    name: { type: 'string' },
    'owner-email': { type: 'string' },
    'owner-name': { type: 'string' },
    timezone: { type: 'string' },
    locale: { type: 'string' },
  },
  'seed-demo': { ...help },
} as const satisfies Record<(typeof COMMANDS)[number], OptionSpec>;

function isCommandName(value: string): value is (typeof COMMANDS)[number] {
  return (COMMANDS as readonly string[]).includes(value);
}

function required(value: string | undefined, command: string, option: string): string {
  if (value === undefined) throw new UsageError(`${command} needs --${option}.`);
  return value;
}

function parseOptions<T extends OptionSpec>(command: string, args: string[], options: T) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    // node:util's messages are single sentences such as "Unknown option '--foo'. To specify …".
    throw new UsageError(`${command}: ${(error as Error).message}`);
  }
}

/**
 * The command in `argv` (the words after the program), fully checked. `now` is the moment expiry
 * defaults and the platform limit count from. No words, `help`, `--help` or `-h` anywhere give `help`.
 */
export function parseCommandLine(argv: readonly string[], now: Date): Command {
  const [name, ...args] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') return { command: 'help' };
  if (!isCommandName(name)) throw new UnknownCommand(name);
  if (args.includes('--help') || args.includes('-h')) return { command: 'help' };

  switch (name) {
    case 'create-user': {
      const values = parseOptions(name, args, optionsOf[name]);
      const email = parseEmail(required(values.email, name, 'email'));
      return {
        command: name,
        email,
        name: values.name === undefined ? nameFromEmail(email) : parseName(values.name),
        timezone: values.timezone === undefined ? null : parseTimeZone(values.timezone),
        superadmin: values.superadmin ?? false,
      };
    }
    case 'update-user': {
      const values = parseOptions(name, args, optionsOf[name]);
      const email = parseEmail(required(values.email, name, 'email'));
      if (values.timezone !== undefined && values['no-timezone']) {
        throw new UsageError('update-user takes either --timezone or --no-timezone, not both.');
      }
      const changes: Extract<Command, { command: 'update-user' }>['changes'] = {};
      if (values.name !== undefined) changes.name = parseName(values.name);
      if (values.timezone !== undefined) changes.timezone = parseTimeZone(values.timezone);
      if (values['no-timezone']) changes.timezone = null;
      if (values.superadmin !== undefined) changes.superadmin = parseBooleanWord(values.superadmin, '--superadmin');
      if (Object.keys(changes).length === 0) {
        throw new UsageError('update-user needs something to change: --name, --timezone, --no-timezone or --superadmin.');
      }
      return { command: name, email, changes };
    }
    case 'create-key': {
      const values = parseOptions(name, args, optionsOf[name]);
      const email = parseEmail(required(values.email, name, 'email'));
      const scopes = parseScopes(required(values.scopes, name, 'scopes'));
      const expiresAt = values['expires-at'] === undefined ? undefined : parseInstant(values['expires-at']);
      return {
        command: name,
        email,
        scopes,
        name: values.name === undefined ? DEFAULT_KEY_NAME : parseName(values.name),
        expiresAt: keyExpiry(scopes, expiresAt, now),
      };
    }
    case 'revoke-key': {
      const values = parseOptions(name, args, optionsOf[name]);
      const id = required(values.id, name, 'id').trim();
      if (!isUuid(id)) throw new UsageError(`"${id}" is not an API key id (a UUID).`);
      return { command: name, id: id.toLowerCase() };
    }
    case 'create-org': {
      const values = parseOptions(name, args, optionsOf[name]);
      const orgName = parseName(required(values.name, name, 'name'));
      const email = parseEmail(required(values['owner-email'], name, 'owner-email'));
      const timezone = parseTimeZone(required(values.timezone, name, 'timezone'));
      const locale = parseLocale(required(values.locale, name, 'locale'));
      const ownerName = values['owner-name'] === undefined ? nameFromEmail(email) : parseName(values['owner-name'], '--owner-name');
      return { command: name, name: orgName, timezone, locale, owner: { email, name: ownerName } };
    }
    case 'seed-demo':
      parseOptions(name, args, optionsOf[name]);
      return { command: name };
  }
}

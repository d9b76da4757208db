/**
 * 0002_canonical_time_zones: stored time zones in the tz database's spelling.
 *
 * Frozen in time: once released this file never changes, and it imports nothing from the application,
 * only `kysely` (the rule is copied from src/time.ts as it stood, and Intl is the one it used).
 *
 * Until now a time zone was stored as sent, in any letter case (`EUROPE/PRAGUE`, `etc/utc`), and ICU's
 * own names (`PST`) were accepted; Java's ZoneId and Python's zoneinfo refuse both. Every stored name of
 * organizations and users is rewritten as the API now stores it: every name of UTC as `UTC`, any other
 * name of the tz database in its spelling (a link stays the link). A name of ICU that is not in the tz
 * database becomes the zone ICU resolves it to (`PST` → `America/Los_Angeles`, the same rules); a name
 * that cannot be mapped either way (unknown to this Intl, or a SystemV zone) is left as it is.
 */
import type { Kysely } from 'kysely';

const NOT_IN_TZ_DATABASE = new Set(
  [
    'ACT', 'AET', 'AGT', 'ART', 'AST', 'BET', 'BST', 'CAT', 'CNT', 'CST', 'CTT', 'EAT', 'ECT', 'IET', 'IST', 'JST',
    'MIT', 'NET', 'NST', 'PLT', 'PNT', 'PRT', 'PST', 'SST', 'VST', 'US/Pacific-New', 'Canada/East-Saskatchewan',
  ].map((name) => name.toLowerCase()),
);

const SPELLED_APART = new Map(
  [
    'ACT', 'LHI', 'NSW', 'US', 'GB-Eire', 'Dar_es_Salaam', 'Port_of_Spain', 'Port-au-Prince', 'Isle_of_Man',
    'ComodRivadavia', 'Knox_IN', 'DumontDUrville', 'McMurdo', 'DeNoronha', 'EasterIsland', 'BajaNorte', 'BajaSur',
  ].map((word) => [word.toLowerCase(), word]),
);

const inTzDatabase = (name: string): boolean => !NOT_IN_TZ_DATABASE.has(name.toLowerCase()) && !/^systemv\//i.test(name);

const capitalized = (word: string): string =>
  word.replace(/(^|[_\-])([a-z])/g, (_match, before: string, letter: string) => before + letter.toUpperCase());

function tzDatabaseSpelling(name: string): string {
  const segments = name.toLowerCase().split('/');
  const [first, ...rest] = segments as [string, ...string[]];
  if (rest.length === 0) {
    return SPELLED_APART.get(first) ?? (first.length <= 3 || /[\d-]/.test(first) ? first.toUpperCase() : capitalized(first));
  }
  if (first === 'etc') return `Etc/${rest.join('/').toUpperCase()}`;
  return segments.map((segment) => SPELLED_APART.get(segment) ?? capitalized(segment)).join('/');
}

/** The name as stored from now on, or undefined to leave it. */
function storedForm(name: string): string | undefined {
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
  if (resolved === 'UTC') return 'UTC';
  const source = inTzDatabase(name) ? name : resolved;
  return inTzDatabase(source) ? tzDatabaseSpelling(source) : undefined;
}

async function respell(db: Kysely<any>, table: 'organizations' | 'users'): Promise<void> {
  const rows: { timezone: string }[] = await db.selectFrom(table).select('timezone').distinct().where('timezone', 'is not', null).execute();
  for (const { timezone } of rows) {
    const stored = storedForm(timezone);
    if (stored !== undefined && stored !== timezone) {
      await db.updateTable(table).set({ timezone: stored }).where('timezone', '=', timezone).execute();
    }
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  await respell(db, 'organizations');
  await respell(db, 'users');
}

// The new spellings stay: they name the same zones, and the code before this migration accepted them too.
export async function down(_db: Kysely<any>): Promise<void> {}

/**
 * Instants, calendar days, ISO weeks, quarters and time zones.
 *
 * Days are plain `YYYY-MM-DD` strings. Calendar rules (month lengths, leap years, weekdays, zone
 * offsets and DST) are left to `Date` and `Intl` so they are never re-implemented here: a day is
 * handled as UTC midnight of that date, which has no DST and therefore no skipped or doubled hours.
 */

const DAY_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;
const QUARTER_PATTERN = /^(\d{4})-Q([1-4])$/;
const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;

// The product only deals with this century; outside it a value is far more likely a typo than intended.
const MIN_YEAR = 2000;
const MAX_YEAR = 2100;

/** UTC midnight of a `YYYY-MM-DD` day that exists, or null. Any four-digit year is accepted. */
function parseDay(value: string): Date | null {
  if (!DAY_PATTERN.test(value)) return null;
  const date = new Date(`${value}T00:00:00.000Z`);
  // `Date` rolls 2026-02-30 over to March; a round trip exposes days that do not exist.
  if (Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== value) return null;
  return date;
}

function requireDay(value: string): Date {
  const date = parseDay(value);
  if (date === null) throw new RangeError(`Not a calendar day: ${JSON.stringify(value)}`);
  return date;
}

const formatDay = (utcMidnight: Date): string => utcMidnight.toISOString().slice(0, 10);

const inYearRange = (year: number): boolean => year >= MIN_YEAR && year <= MAX_YEAR;

export function toInstant(date: Date): string {
  return date.toISOString();
}

export function isDay(value: string): boolean {
  return parseDay(value) !== null && inYearRange(Number(value.slice(0, 4)));
}

// Newer engines accept UTC offsets such as `+02:00` as time zones; stored zones must be IANA names,
// which always start with a letter.
const ZONE_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_+\-/]*$/;

// Names ICU (and so Intl) knows that are not in the tz database, so that Java's ZoneId and Python's
// zoneinfo reject them: Java's old three-letter ids (PST, IST, CST… each ambiguous too), the SystemV
// zones, and two names the tz database has removed.
const NOT_IN_TZ_DATABASE = new Set(
  [
    'ACT', 'AET', 'AGT', 'ART', 'AST', 'BET', 'BST', 'CAT', 'CNT', 'CST', 'CTT', 'EAT', 'ECT', 'IET', 'IST', 'JST',
    'MIT', 'NET', 'NST', 'PLT', 'PNT', 'PRT', 'PST', 'SST', 'VST', 'US/Pacific-New', 'Canada/East-Saskatchewan',
  ].map((name) => name.toLowerCase()),
);
const SYSTEM_V = /^systemv\//;

// Words of tz database names not written the usual way (each word capitalized), in lower case → as written.
const SPELLED_APART = new Map(
  [
    'ACT', 'LHI', 'NSW', 'US', 'GB-Eire', 'Dar_es_Salaam', 'Port_of_Spain', 'Port-au-Prince', 'Isle_of_Man',
    'ComodRivadavia', 'Knox_IN', 'DumontDUrville', 'McMurdo', 'DeNoronha', 'EasterIsland', 'BajaNorte', 'BajaSur',
  ].map((word) => [word.toLowerCase(), word]),
);

const capitalized = (word: string): string =>
  word.replace(/(^|[_\-])([a-z])/g, (_match, before: string, letter: string) => before + letter.toUpperCase());

/**
 * The tz database's spelling of a name it holds, from the name in any letter case. `Intl` cannot give
 * it: it answers with the zone a link points to (`asia/kolkata` → `Asia/Calcutta` on Node 20), and
 * which names ICU counts as links differs from the tz database and between versions. Each word is
 * capitalized, except the few written otherwise; a name of one segment is all capitals when it is
 * short or holds a digit or dash (`EST5EDT`, `NZ-CHAT`, `ROK`), and so is what follows `Etc/` (its
 * exceptions, `Etc/Zulu`, `Etc/Greenwich` and `Etc/Universal`, are names of UTC).
 */
function tzDatabaseSpelling(name: string): string {
  const segments = name.toLowerCase().split('/');
  const [first, ...rest] = segments as [string, ...string[]];
  if (rest.length === 0) {
    return SPELLED_APART.get(first) ?? (first.length <= 3 || /[\d-]/.test(first) ? first.toUpperCase() : capitalized(first));
  }
  if (first === 'etc') return `Etc/${rest.join('/').toUpperCase()}`;
  return segments.map((segment) => SPELLED_APART.get(segment) ?? capitalized(segment)).join('/');
}

/**
 * The stored form of a time zone name, accepted in any letter case; undefined for a name that is not
 * in the tz database (or that this server's Intl does not know). Every name of UTC (`Etc/UTC`, `utc`,
 * `GMT`, `Zulu`, …) becomes `UTC`; any other name keeps the tz database's spelling of the name sent —
 * a link is not replaced by the zone it points to, so `Asia/Kolkata` stays `Asia/Kolkata` although
 * Node 20's ICU calls the zone `Asia/Calcutta`, and `US/Pacific` stays `US/Pacific`. Java's `ZoneId.of`
 * and Python's `zoneinfo` accept every name it returns.
 */
export function canonicalTimeZone(name: string): string | undefined {
  const lower = name.toLowerCase();
  if (!ZONE_NAME_PATTERN.test(name) || NOT_IN_TZ_DATABASE.has(lower) || SYSTEM_V.test(lower)) return undefined;
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
  return resolved === 'UTC' ? 'UTC' : tzDatabaseSpelling(name);
}

// Building a DateTimeFormat is far slower than using one, and a server sees only a few zones.
const dayFormatters = new Map<string, Intl.DateTimeFormat>();

function dayFormatter(timeZone: string): Intl.DateTimeFormat {
  let formatter = dayFormatters.get(timeZone);
  if (formatter === undefined) {
    // Gregorian calendar and Latin digits are pinned so the parts are ISO numbers whatever the locale data.
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      calendar: 'gregory',
      numberingSystem: 'latn',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
    });
    dayFormatters.set(timeZone, formatter);
  }
  return formatter;
}

/** Throws a RangeError for a zone `Intl` does not know. */
export function dayInTimeZone(instant: Date, timeZone: string): string {
  const parts = dayFormatter(timeZone).formatToParts(instant);
  const part = (type: Intl.DateTimeFormatPartTypes): string => {
    const found = parts.find((p) => p.type === type);
    if (found === undefined) throw new RangeError(`No ${type} in the formatted day`);
    return found.value;
  };
  return `${part('year').padStart(4, '0')}-${part('month')}-${part('day')}`;
}

export function callerTimeZone(profileTimeZone: string | null, organizationTimeZone: string): string {
  return profileTimeZone ?? organizationTimeZone;
}

/** False for anything that is not an existing day. */
export function isMonday(day: string): boolean {
  const date = parseDay(day);
  return date !== null && date.getUTCDay() === 1;
}

/** Throws a RangeError for a value that is not an existing day. */
export function mondayOf(day: string): string {
  const date = requireDay(day);
  // getUTCDay counts from Sunday = 0; ISO weeks start on Monday.
  const daysSinceMonday = (date.getUTCDay() + 6) % 7;
  return formatDay(new Date(date.getTime() - daysSinceMonday * DAY_MS));
}

/** The day `weeks` weeks after (or, when negative, before) a day. Throws a RangeError for a value that is not an existing day. */
export function addWeeks(day: string, weeks: number): string {
  return formatDay(new Date(requireDay(day).getTime() + weeks * 7 * DAY_MS));
}

export function currentWeekMonday(now: Date, timeZone: string): string {
  return mondayOf(dayInTimeZone(now, timeZone));
}

/** Throws a RangeError for a value that is not an existing day. */
export function quarterOf(day: string): string {
  const date = requireDay(day);
  return `${day.slice(0, 4)}-Q${Math.floor(date.getUTCMonth() / 3) + 1}`;
}

/** The quarter before a quarter (`2026-Q1` → `2025-Q4`). */
export function previousQuarter(quarter: string): string {
  const [year, number] = [Number(quarter.slice(0, 4)), Number(quarter.slice(6))];
  return number === 1 ? `${year - 1}-Q4` : `${year}-Q${number - 1}`;
}

export function isQuarter(value: string): boolean {
  const match = QUARTER_PATTERN.exec(value);
  return match !== null && inYearRange(Number(match[1]));
}

export function addMinutes(instant: Date, minutes: number): Date {
  return new Date(instant.getTime() + minutes * MINUTE_MS);
}

export function minutesBetween(start: Date, end: Date): number {
  // `+ 0` turns the -0 that Math.round gives for small negative spans into 0.
  return Math.round((end.getTime() - start.getTime()) / MINUTE_MS) + 0;
}

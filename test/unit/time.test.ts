import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  addMinutes,
  callerTimeZone,
  canonicalTimeZone,
  currentWeekMonday,
  dayInTimeZone,
  isDay,
  isMonday,
  isQuarter,
  minutesBetween,
  mondayOf,
  quarterOf,
  toInstant,
} from '../../src/time.js';

const at = (iso: string) => new Date(iso);

describe('toInstant', () => {
  it('writes UTC with milliseconds', () => {
    expect(toInstant(at('2026-11-16T10:00:00+01:00'))).toBe('2026-11-16T09:00:00.000Z');
    expect(toInstant(at('2028-02-29T23:59:59.999Z'))).toBe('2028-02-29T23:59:59.999Z');
  });

  it('refuses an invalid date', () => {
    expect(() => toInstant(new Date('nonsense'))).toThrow(RangeError);
  });
});

describe('isDay', () => {
  it.each(['2026-11-16', '2028-02-29', '2000-01-01', '2100-12-31', '2026-12-31'])('accepts %s', (day) => {
    expect(isDay(day)).toBe(true);
  });

  it.each([
    '2026-02-30',
    '2026-02-29',
    '2100-02-29', // 2100 is not a leap year
    '2026-04-31',
    '2026-13-01',
    '2026-00-10',
    '2026-11-00',
    '1999-12-31',
    '2101-01-01',
    '2026-1-16',
    '2026-11-16T00:00:00Z',
    ' 2026-11-16',
    '',
    'tomorrow',
  ])('rejects %j', (value) => {
    expect(isDay(value)).toBe(false);
  });
});

describe('canonicalTimeZone', () => {
  const tzDatabase = readFileSync(new URL('../fixtures/tz-database-names.txt', import.meta.url), 'utf8')
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'));
  const namesOfUtc = new Set([
    ...['Etc/GMT', 'Etc/GMT+0', 'Etc/GMT-0', 'Etc/GMT0', 'Etc/Greenwich', 'Etc/UCT', 'Etc/UTC', 'Etc/Universal', 'Etc/Zulu'],
    ...['GMT', 'GMT+0', 'GMT-0', 'GMT0', 'Greenwich', 'UCT', 'UTC', 'Universal', 'Zulu'],
  ]);

  it.each([
    ['EUROPE/PRAGUE', 'Europe/Prague'],
    ['europe/bratislava', 'Europe/Bratislava'],
    ['etc/utc', 'UTC'],
    ['Etc/UTC', 'UTC'],
    ['UTC', 'UTC'],
    ['utc', 'UTC'],
    ['GMT', 'UTC'],
    ['zulu', 'UTC'],
    ['etc/gmt+5', 'Etc/GMT+5'],
    ['Asia/Calcutta', 'Asia/Calcutta'],
    ['asia/kolkata', 'Asia/Kolkata'],
    ['Europe/Kyiv', 'Europe/Kyiv'],
    ['US/Pacific', 'US/Pacific'],
    ['america/argentina/buenos_aires', 'America/Argentina/Buenos_Aires'],
    ['america/port-au-prince', 'America/Port-au-Prince'],
    ['est5edt', 'EST5EDT'],
  ])('stores %s as %s', (sent, stored) => {
    expect(canonicalTimeZone(sent)).toBe(stored);
  });

  it('spells every name of the tz database as the tz database does, whatever the letter case sent; the names of UTC as UTC', () => {
    expect(tzDatabase.length).toBeGreaterThan(590);
    const misspelt = tzDatabase.flatMap((name) => {
      const expected = namesOfUtc.has(name) ? 'UTC' : name;
      return [name, name.toLowerCase(), name.toUpperCase()]
        .map((sent) => [sent, canonicalTimeZone(sent)])
        .filter(([, stored]) => stored !== expected);
    });
    expect(misspelt).toEqual([]);
  });

  it.each(['Mars/Olympus', '', ' ', '+02:00', '-05:00', '+0200', 'Z', ' UTC', 'Europe/', 'GMT+2', 'Factory'])('refuses %j', (zone) => {
    expect(canonicalTimeZone(zone)).toBeUndefined();
  });

  it.each(['PST', 'ist', 'CST', 'SystemV/AST4', 'US/Pacific-New', 'Canada/East-Saskatchewan'])(
    'refuses %s, which Intl knows but the tz database does not',
    (zone) => {
      expect(() => new Intl.DateTimeFormat('en-US', { timeZone: zone })).not.toThrow();
      expect(canonicalTimeZone(zone)).toBeUndefined();
    },
  );
});

describe('dayInTimeZone', () => {
  it('moves a late-evening UTC instant to the next day east of Greenwich', () => {
    expect(dayInTimeZone(at('2026-11-15T23:30:00Z'), 'Europe/Bratislava')).toBe('2026-11-16');
    expect(dayInTimeZone(at('2026-11-15T23:30:00Z'), 'UTC')).toBe('2026-11-15');
  });

  it('moves an early UTC instant to the previous day west of Greenwich', () => {
    expect(dayInTimeZone(at('2026-11-16T03:00:00Z'), 'America/New_York')).toBe('2026-11-15');
  });

  it('follows summer time in Bratislava (UTC+2 until 2026-10-25)', () => {
    // 22:30Z is 00:30 the next day in summer time (+2) but 23:30 the same day in winter time (+1).
    expect(dayInTimeZone(at('2026-10-24T22:30:00Z'), 'Europe/Bratislava')).toBe('2026-10-25');
    expect(dayInTimeZone(at('2026-10-25T22:30:00Z'), 'Europe/Bratislava')).toBe('2026-10-25');
  });

  it('follows the switch to summer time in Bratislava on 2026-03-29', () => {
    expect(dayInTimeZone(at('2026-03-28T22:30:00Z'), 'Europe/Bratislava')).toBe('2026-03-28');
    expect(dayInTimeZone(at('2026-03-29T22:30:00Z'), 'Europe/Bratislava')).toBe('2026-03-30');
  });

  it('crosses year ends and leap days', () => {
    expect(dayInTimeZone(at('2026-12-31T23:30:00Z'), 'Europe/Bratislava')).toBe('2027-01-01');
    expect(dayInTimeZone(at('2027-01-01T04:00:00Z'), 'America/Los_Angeles')).toBe('2026-12-31');
    expect(dayInTimeZone(at('2028-02-28T23:30:00Z'), 'Europe/Bratislava')).toBe('2028-02-29');
    expect(dayInTimeZone(at('2028-02-29T23:30:00Z'), 'Europe/Bratislava')).toBe('2028-03-01');
  });

  it('throws for an unknown zone', () => {
    expect(() => dayInTimeZone(at('2026-11-16T09:00:00Z'), 'Mars/Olympus')).toThrow(RangeError);
  });
});

describe('callerTimeZone', () => {
  it("prefers the profile's zone", () => {
    expect(callerTimeZone('America/New_York', 'Europe/Bratislava')).toBe('America/New_York');
  });

  it("falls back to the organization's zone", () => {
    expect(callerTimeZone(null, 'Europe/Bratislava')).toBe('Europe/Bratislava');
  });
});

describe('isMonday', () => {
  it('knows Mondays', () => {
    expect(isMonday('2026-11-16')).toBe(true);
    expect(isMonday('2026-11-23')).toBe(true);
    expect(isMonday('2026-12-28')).toBe(true);
  });

  it('knows other days', () => {
    expect(isMonday('2026-11-15')).toBe(false);
    expect(isMonday('2026-11-17')).toBe(false);
    expect(isMonday('2028-02-29')).toBe(false);
  });

  it('is false for invalid input', () => {
    expect(isMonday('2026-02-30')).toBe(false);
    expect(isMonday('not a day')).toBe(false);
    expect(isMonday('')).toBe(false);
  });
});

describe('mondayOf', () => {
  it('keeps a Monday', () => {
    expect(mondayOf('2026-11-16')).toBe('2026-11-16');
  });

  it('goes back to Monday from the rest of the week, Sunday included', () => {
    expect(mondayOf('2026-11-17')).toBe('2026-11-16');
    expect(mondayOf('2026-11-21')).toBe('2026-11-16');
    expect(mondayOf('2026-11-22')).toBe('2026-11-16');
  });

  it('crosses year ends', () => {
    expect(mondayOf('2027-01-01')).toBe('2026-12-28');
    expect(mondayOf('2027-01-03')).toBe('2026-12-28');
    expect(mondayOf('2000-01-01')).toBe('1999-12-27');
  });

  it('crosses the leap day', () => {
    expect(mondayOf('2028-03-01')).toBe('2028-02-28');
    expect(mondayOf('2028-03-05')).toBe('2028-02-28');
  });

  it('is not moved by DST changes', () => {
    expect(mondayOf('2026-03-29')).toBe('2026-03-23');
    expect(mondayOf('2026-03-30')).toBe('2026-03-30');
    expect(mondayOf('2026-10-25')).toBe('2026-10-19');
  });

  it('throws for invalid input', () => {
    expect(() => mondayOf('2026-02-30')).toThrow(RangeError);
    expect(() => mondayOf('garbage')).toThrow(RangeError);
  });
});

describe('currentWeekMonday', () => {
  it("uses the zone's day, not the UTC day", () => {
    // Sunday 23:30 UTC is already Monday in Bratislava.
    expect(currentWeekMonday(at('2026-11-22T23:30:00Z'), 'Europe/Bratislava')).toBe('2026-11-23');
    expect(currentWeekMonday(at('2026-11-22T23:30:00Z'), 'UTC')).toBe('2026-11-16');
    // Monday 03:00 UTC is still Sunday in New York.
    expect(currentWeekMonday(at('2026-11-23T03:00:00Z'), 'America/New_York')).toBe('2026-11-16');
  });

  it('handles the weekends of the DST changes in Bratislava', () => {
    // 2026-03-29 (Sunday) is the spring change; 22:30Z that evening is already Monday 00:30 (+2).
    expect(currentWeekMonday(at('2026-03-29T21:30:00Z'), 'Europe/Bratislava')).toBe('2026-03-23');
    expect(currentWeekMonday(at('2026-03-29T22:30:00Z'), 'Europe/Bratislava')).toBe('2026-03-30');
    // 2026-10-25 (Sunday) is the autumn change; from then on midnight is 23:00Z.
    expect(currentWeekMonday(at('2026-10-25T22:30:00Z'), 'Europe/Bratislava')).toBe('2026-10-19');
    expect(currentWeekMonday(at('2026-10-25T23:00:00Z'), 'Europe/Bratislava')).toBe('2026-10-26');
  });

  it('crosses a year end', () => {
    expect(currentWeekMonday(at('2026-12-31T23:30:00Z'), 'Europe/Bratislava')).toBe('2026-12-28');
  });
});

describe('quarterOf', () => {
  it.each([
    ['2026-01-01', '2026-Q1'],
    ['2026-03-31', '2026-Q1'],
    ['2026-04-01', '2026-Q2'],
    ['2026-06-30', '2026-Q2'],
    ['2026-07-01', '2026-Q3'],
    ['2026-09-30', '2026-Q3'],
    ['2026-10-01', '2026-Q4'],
    ['2026-11-16', '2026-Q4'],
    ['2026-12-31', '2026-Q4'],
    ['2028-02-29', '2028-Q1'],
  ])('%s is in %s', (day, quarter) => {
    expect(quarterOf(day)).toBe(quarter);
  });

  it('throws for invalid input', () => {
    expect(() => quarterOf('2026-02-30')).toThrow(RangeError);
    expect(() => quarterOf('2026-Q4')).toThrow(RangeError);
  });
});

describe('isQuarter', () => {
  it.each(['2026-Q1', '2026-Q4', '2000-Q1', '2100-Q4'])('accepts %s', (value) => {
    expect(isQuarter(value)).toBe(true);
  });

  it.each(['2026-Q0', '2026-Q5', '1999-Q4', '2101-Q1', '2026-q4', '2026Q4', '26-Q4', '2026-Q4 ', ''])(
    'rejects %j',
    (value) => {
      expect(isQuarter(value)).toBe(false);
    },
  );
});

describe('addMinutes', () => {
  it('adds and subtracts minutes', () => {
    expect(addMinutes(at('2026-11-16T08:00:00.000Z'), 88).toISOString()).toBe('2026-11-16T09:28:00.000Z');
    expect(addMinutes(at('2026-11-16T08:00:00.000Z'), -30).toISOString()).toBe('2026-11-16T07:30:00.000Z');
  });

  it('crosses a year end', () => {
    expect(addMinutes(at('2026-12-31T23:30:00.000Z'), 45).toISOString()).toBe('2027-01-01T00:15:00.000Z');
  });

  it('counts elapsed time across a DST change, not wall-clock time', () => {
    // 01:30 local (+1) on 2026-03-29 plus 60 minutes is 03:30 local (+2): the clock skipped 02:00-03:00.
    const later = addMinutes(at('2026-03-29T00:30:00.000Z'), 60);
    expect(later.toISOString()).toBe('2026-03-29T01:30:00.000Z');
  });

  it('does not change its argument', () => {
    const start = at('2026-11-16T08:00:00.000Z');
    addMinutes(start, 10);
    expect(start.toISOString()).toBe('2026-11-16T08:00:00.000Z');
  });
});

describe('minutesBetween', () => {
  it('counts whole minutes', () => {
    expect(minutesBetween(at('2026-11-16T08:00:00Z'), at('2026-11-16T09:28:00Z'))).toBe(88);
  });

  it('rounds to the nearest minute', () => {
    expect(minutesBetween(at('2026-11-16T08:00:00Z'), at('2026-11-16T08:00:29.999Z'))).toBe(0);
    expect(minutesBetween(at('2026-11-16T08:00:00Z'), at('2026-11-16T08:00:30Z'))).toBe(1);
    expect(minutesBetween(at('2026-11-16T08:00:00Z'), at('2026-11-16T08:10:44Z'))).toBe(11);
  });

  it('returns 0, not -0, for a tiny negative span', () => {
    expect(Object.is(minutesBetween(at('2026-11-16T08:00:10Z'), at('2026-11-16T08:00:00Z')), 0)).toBe(true);
  });

  it('is negative when the end is before the start', () => {
    expect(minutesBetween(at('2026-11-16T09:00:00Z'), at('2026-11-16T08:00:00Z'))).toBe(-60);
  });

  it('counts real elapsed minutes across DST changes in Bratislava', () => {
    // Local 01:00 to 04:00 on 2026-03-29 is only two hours; on 2026-10-25 it is four.
    expect(minutesBetween(at('2026-03-29T01:00:00+01:00'), at('2026-03-29T04:00:00+02:00'))).toBe(120);
    expect(minutesBetween(at('2026-10-25T01:00:00+02:00'), at('2026-10-25T04:00:00+01:00'))).toBe(240);
  });

  it('spans a year end and a leap day', () => {
    expect(minutesBetween(at('2026-12-31T23:30:00Z'), at('2027-01-01T00:15:00Z'))).toBe(45);
    expect(minutesBetween(at('2028-02-28T12:00:00Z'), at('2028-03-01T12:00:00Z'))).toBe(2 * 24 * 60);
  });
});

/**
 * The demo's calendar: every day and instant of the demo is counted back from `now`, in the
 * organization's time zone, so the demo always looks current whatever day it is seeded.
 */
import { addMinutes, addWeeks, dayInTimeZone, mondayOf, quarterOf } from '../../time.js';

export const DEMO_TIME_ZONE = 'Europe/Bratislava';

// ---------------------------------------------------------------------------------------------------
// Days and local times

const DAY_MS = 24 * 60 * 60 * 1000;

export function addDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

export function firstDayOfQuarter(quarter: string): string {
  const month = (Number(quarter.slice(6)) - 1) * 3 + 1;
  return `${quarter.slice(0, 4)}-${String(month).padStart(2, '0')}-01`;
}

const wallClock = new Intl.DateTimeFormat('en-US', {
  timeZone: DEMO_TIME_ZONE,
  calendar: 'gregory',
  numberingSystem: 'latn',
  hourCycle: 'h23',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});

/** How far the organization's wall clock is ahead of UTC at an instant (whole seconds). */
function zoneOffsetMs(instant: number): number {
  const whole = instant - (((instant % 1000) + 1000) % 1000);
  const parts = Object.fromEntries(wallClock.formatToParts(new Date(whole)).map((part) => [part.type, part.value]));
  const wall = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second));
  return wall - whole;
}

/** The instant the organization's clocks show `time` (HH:MM) on `day`; the demo's times are never in a DST gap. */
export function localTime(day: string, time: string): Date {
  const wall = Date.parse(`${day}T${time}:00.000Z`);
  // The offset at the first guess may differ from the one at the answer when a DST change lies between.
  return new Date(wall - zoneOffsetMs(wall - zoneOffsetMs(wall)));
}

/** Rocks are set at the planning day ten days before their quarter starts. */
export const planningOf = (quarterStart: string): Date => localTime(addDays(quarterStart, -10), '14:00');

// ---------------------------------------------------------------------------------------------------
// The calendar of one seeding

export interface DemoCalendar {
  now: Date;
  /** Today, in the organization's time zone. */
  today: string;
  thisMonday: string;
  quarter: string;
  quarterStart: string;
  lastQuarter: string;
  /** Half a year back: the organization, its people and its teams were set up then. */
  origin: Date;
  /** `minutes` after the set-up. */
  afterOrigin(minutes: number): Date;
  /** Team content that is not tied to a week (vision, chart, documents) was entered the day after the set-up. */
  settledIn(minutes: number): Date;
}

export function demoCalendar(now: Date): DemoCalendar {
  const today = dayInTimeZone(now, DEMO_TIME_ZONE);
  const thisMonday = mondayOf(today);
  const quarter = quarterOf(today);
  const quarterStart = firstDayOfQuarter(quarter);
  const origin = localTime(addWeeks(thisMonday, -30), '08:00');
  const afterOrigin = (minutes: number) => addMinutes(origin, minutes);
  return {
    now,
    today,
    thisMonday,
    quarter,
    quarterStart,
    lastQuarter: quarterOf(addDays(quarterStart, -1)),
    origin,
    afterOrigin,
    settledIn: (minutes) => afterOrigin(24 * 60 + minutes),
  };
}

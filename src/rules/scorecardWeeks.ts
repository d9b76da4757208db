/**
 * The weeks the Scorecard view shows. A range covers whole weeks: from the Monday of `from`'s week to
 * the Monday of `to`'s week. Without bounds it is the 13 weeks up to the current week; with only
 * `from`, the 13 weeks that start there; with only `to`, the 13 weeks that end there.
 */
import { addWeeks, isDay, mondayOf } from '../time.js';

export const SCORECARD_DEFAULT_WEEKS = 13;
export const SCORECARD_MAX_WEEKS = 104;

export interface ScorecardWeeks {
  from: string;
  to: string;
  /** The Monday of every week shown, oldest first. */
  weeks: string[];
}

/**
 * The weeks of the requested range, or null when the range is empty (`from` after `to`), longer than
 * SCORECARD_MAX_WEEKS or reaches outside the days the API accepts. `currentWeek` is asked only when needed.
 */
export function scorecardWeeks(requested: { from?: string; to?: string }, currentWeek: () => string): ScorecardWeeks | null {
  const span = SCORECARD_DEFAULT_WEEKS - 1;
  const from = requested.from === undefined ? undefined : mondayOf(requested.from);
  const to = requested.to !== undefined ? mondayOf(requested.to) : from !== undefined ? addWeeks(from, span) : currentWeek();
  const first = from ?? addWeeks(to, -span);
  if (first > to || !isDay(first) || !isDay(to)) return null;
  const weeks: string[] = [];
  for (let week = first; week <= to && weeks.length <= SCORECARD_MAX_WEEKS; week = addWeeks(week, 1)) weeks.push(week);
  return weeks.length > SCORECARD_MAX_WEEKS ? null : { from: first, to, weeks };
}

/**
 * A Scorecard week in one request (`PUT /teams/{teamId}/scorecard/weeks/{week}`): every item is judged
 * before anything is written, with the rules of a single value, and every bad item named by its index
 * and field, so that one answer lists all that must be fixed.
 */
import type { ValidationIssue } from '../errors.js';
import { judgeValue } from './metricValues.js';

export interface WeekItem {
  metricId: string;
  value: string;
  onTrack?: boolean | undefined;
}

export interface JudgedValue {
  metricId: string;
  value: string;
  onTrack: boolean;
}

const issue = (index: number, field: string, code: string, message: string): ValidationIssue => ({
  origin: 'body',
  code,
  path: ['values', String(index), field],
  message,
});

/**
 * The values to save, each with its `onTrack` (sent, or judged against its metric's goal), or the
 * issues of the bad items: a metric not of the team (`goals` holds the team's metrics by id), one named
 * a second time, a value that cannot be judged without `onTrack`.
 */
export function judgeWeek(items: readonly WeekItem[], goals: ReadonlyMap<string, string>): { values: JudgedValue[] } | { issues: ValidationIssue[] } {
  const issues: ValidationIssue[] = [];
  const firstIndex = new Map<string, number>();
  const values: JudgedValue[] = [];
  items.forEach((item, index) => {
    const goal = goals.get(item.metricId);
    if (goal === undefined) {
      issues.push(issue(index, 'metricId', 'invalid_value', 'Not a metric of this team.'));
      return;
    }
    const first = firstIndex.get(item.metricId);
    if (first !== undefined) {
      issues.push(issue(index, 'metricId', 'invalid_value', `The metric is named already, by item ${first}; each metric at most once.`));
      return;
    }
    firstIndex.set(item.metricId, index);
    const onTrack = item.onTrack ?? judgeValue(item.value, goal);
    if (onTrack === null) {
      issues.push(issue(index, 'onTrack', 'invalid_type', `The value "${item.value}" cannot be judged against the goal "${goal}"; send onTrack with it.`));
      return;
    }
    values.push({ metricId: item.metricId, value: item.value, onTrack });
  });
  return issues.length > 0 ? { issues } : { values };
}

/**
 * The rows of a CSV import judged as a whole (issue 45), once the file is read (src/rules/csvFile.ts)
 * and the team's people or metrics are known: what would be written, or every bad cell named by its
 * row and column. Nothing here reads or writes: the handler writes what these rules accept.
 */
import type { ValidationIssue } from '../errors.js';
import { isDay, isMonday } from '../time.js';
import { cellIssue, type CsvColumns, type CsvRecord, type CsvSheet } from './csvFile.js';
import { judgeWeek } from './scorecardWeek.js';

const TITLE_MAX = 500;
const DESCRIPTION_MAX = 5000;
const VALUE_MAX = 50;

/** An instant as the exports write it (ISO 8601 with `Z` or an offset); Excel's own formats are not guessed at. */
const instantPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:\d{2})$/;

/** The checks of one row's cells, collecting the issues of the whole file. */
class Cells {
  constructor(
    private readonly record: CsvRecord,
    private readonly issues: ValidationIssue[],
  ) {}

  issue(column: string, code: string, message: string, extra: Partial<ValidationIssue> = {}) {
    this.issues.push(cellIssue(this.record.row, column, code, message, extra));
  }

  text(column: string, max: number, required: boolean): string | null {
    const value = this.record.cells[column] ?? '';
    if (value === '') {
      if (required) this.issue(column, 'invalid_type', 'a value is required.');
      return null;
    }
    if (value.length > max) this.issue(column, 'too_big', `must be at most ${max} characters.`, { maximum: max, inclusive: true });
    return value;
  }

  day(column: string): string | null {
    const value = this.text(column, 10, true);
    if (value !== null && !isDay(value)) this.issue(column, 'invalid_format', `"${value}" is not a day written YYYY-MM-DD.`, { format: 'date' });
    return value;
  }

  instant(column: string): Date | null {
    const value = this.record.cells[column] ?? '';
    if (value === '') return null;
    const instant = new Date(value);
    if (!instantPattern.test(value) || Number.isNaN(instant.getTime())) {
      this.issue(column, 'invalid_format', `"${value}" is not an instant written as ISO 8601 (2026-11-16T09:42:10.512Z).`, { format: 'date-time' });
      return null;
    }
    return instant;
  }

  boolean(column: string): boolean {
    const value = (this.record.cells[column] ?? '').toLowerCase();
    if (value === '' || value === 'false') return false;
    if (value === 'true') return true;
    this.issue(column, 'invalid_value', `"${this.record.cells[column]}" is neither true nor false.`, { values: [true, false] });
    return false;
  }

  choice<T extends string>(column: string, values: readonly T[], fallback: T): T {
    const value = this.record.cells[column] ?? '';
    if (value === '') return fallback;
    if ((values as readonly string[]).includes(value)) return value as T;
    this.issue(column, 'invalid_value', `"${value}" is not one of ${values.join(', ')}.`, { values: [...values] });
    return fallback;
  }

  /** The person of an e-mail address among the team's members (`people`, by lower-case address). */
  person(column: string, people: ReadonlyMap<string, string>, required: boolean): string | null {
    const email = this.text(column, 320, required);
    if (email === null) return null;
    const userId = people.get(email.toLowerCase());
    if (userId === undefined) this.issue(column, 'invalid_value', `no member of the team has the e-mail address ${email}.`);
    return userId ?? null;
  }

  /** That a column which only goes with another state is empty otherwise. */
  emptyUnless(column: string, allowed: boolean, why: string) {
    if (!allowed && (this.record.cells[column] ?? '') !== '') this.issue(column, 'invalid_value', why);
  }
}

/**
 * Rows that repeat an earlier one: the same `id` when the file has ids, else the same cells in every
 * column. Each repeat is an issue naming the first.
 */
function duplicates(sheet: CsvSheet, issues: ValidationIssue[]) {
  const seen = new Map<string, number>();
  for (const record of sheet.records) {
    const id = record.cells.id ?? '';
    const key = id !== '' ? `id\n${id}` : JSON.stringify(sheet.columns.map((column) => record.cells[column] ?? ''));
    const first = seen.get(key);
    if (first === undefined) seen.set(key, record.row);
    else issues.push(cellIssue(record.row, id !== '' ? 'id' : undefined, 'duplicate', `repeats row ${first}; each ${id !== '' ? 'id' : 'row'} at most once.`));
  }
}

const taskColumns = ['id', 'title', 'ownerEmail', 'dueDate', 'completed', 'completedAt', 'createdAt'];

/** The columns a task import takes: those of the export. */
export const taskCsvImport: CsvColumns = { known: (column) => taskColumns.includes(column), required: ['title', 'ownerEmail', 'dueDate'] };

export interface ImportedTask {
  title: string;
  ownerId: string;
  dueDate: string;
  completed: boolean;
  completedAt: Date | null;
  createdAt: Date | null;
}

/** The tasks of the rows, owners found among the team's members by e-mail (`people`), or every bad cell. */
export function judgeTaskRows(sheet: CsvSheet, people: ReadonlyMap<string, string>): { tasks: ImportedTask[] } | { issues: ValidationIssue[] } {
  const issues: ValidationIssue[] = [];
  const tasks = sheet.records.map((record) => {
    const cells = new Cells(record, issues);
    const completed = cells.boolean('completed');
    cells.emptyUnless('completedAt', completed, 'only a completed task has a completion time.');
    return {
      title: cells.text('title', TITLE_MAX, true)!,
      ownerId: cells.person('ownerEmail', people, true)!,
      dueDate: cells.day('dueDate')!,
      completed,
      completedAt: cells.instant('completedAt'),
      createdAt: cells.instant('createdAt'),
    };
  });
  duplicates(sheet, issues);
  return issues.length > 0 ? { issues } : { tasks };
}

const issueColumns = ['id', 'title', 'description', 'priority', 'status', 'createdByEmail', 'resolvedAt', 'createdAt'];

/** The columns an issue import takes: those of the export. */
export const issueCsvImport: CsvColumns = { known: (column) => issueColumns.includes(column), required: ['title'] };

export interface ImportedIssue {
  title: string;
  description: string | null;
  priority: 'HIGH' | 'MEDIUM' | 'LOW';
  status: 'OPEN' | 'SOLVING' | 'SOLVED';
  createdById: string;
  resolvedAt: Date | null;
  createdAt: Date | null;
}

/** The issues of the rows, who raised each found among the team's members by e-mail (`people`; the caller when empty), or every bad cell. */
export function judgeIssueRows(sheet: CsvSheet, people: ReadonlyMap<string, string>, callerId: string): { issues: ImportedIssue[] } | { problems: ValidationIssue[] } {
  const problems: ValidationIssue[] = [];
  const issues = sheet.records.map((record) => {
    const cells = new Cells(record, problems);
    const status = cells.choice('status', ['OPEN', 'SOLVING', 'SOLVED'] as const, 'OPEN');
    cells.emptyUnless('resolvedAt', status === 'SOLVED', 'only a SOLVED issue has a resolution time.');
    return {
      title: cells.text('title', TITLE_MAX, true)!,
      description: cells.text('description', DESCRIPTION_MAX, false),
      priority: cells.choice('priority', ['HIGH', 'MEDIUM', 'LOW'] as const, 'MEDIUM'),
      status,
      createdById: cells.person('createdByEmail', people, false) ?? callerId,
      resolvedAt: cells.instant('resolvedAt'),
      createdAt: cells.instant('createdAt'),
    };
  });
  duplicates(sheet, problems);
  return problems.length > 0 ? { problems } : { issues };
}

export interface ScorecardMetric {
  id: string;
  title: string;
  goal: string;
}

/** The columns a Scorecard import takes: `week` and the titles of the team's metrics. */
export const scorecardCsvImport = (metrics: readonly ScorecardMetric[]): CsvColumns => ({
  known: (column) => column === 'week' || metrics.some((metric) => metric.title === column),
  required: ['week'],
});

export interface ImportedValue {
  metricId: string;
  week: string;
  value: string;
  onTrack: boolean;
}

/**
 * The values of a weeks × metrics table, each judged as `PUT /teams/{teamId}/scorecard/weeks/{week}`
 * judges a value without `onTrack` (`judgeWeek`), or every bad cell. A column whose title two of the
 * team's metrics share cannot say which it means.
 */
export function judgeScorecardRows(sheet: CsvSheet, metrics: readonly ScorecardMetric[]): { values: ImportedValue[] } | { issues: ValidationIssue[] } {
  const issues: ValidationIssue[] = [];
  const byTitle = new Map<string, ScorecardMetric[]>();
  for (const metric of metrics) byTitle.set(metric.title, [...(byTitle.get(metric.title) ?? []), metric]);
  const columns = sheet.columns.filter((column) => column !== 'week');
  for (const column of columns) {
    if (byTitle.get(column)!.length > 1) issues.push(cellIssue(1, column, 'invalid_value', 'two metrics of the team have this title; rename one to import its values.'));
  }
  const goals = new Map(metrics.map((metric) => [metric.id, metric.goal]));
  const firstOfWeek = new Map<string, number>();
  const values: ImportedValue[] = [];
  for (const record of sheet.records) {
    const cells = new Cells(record, issues);
    const week = cells.day('week');
    if (week !== null && isDay(week)) {
      if (!isMonday(week)) cells.issue('week', 'invalid_value', `${week} is not a Monday; a week is given by its Monday.`);
      const first = firstOfWeek.get(week);
      if (first !== undefined) issues.push(cellIssue(record.row, 'week', 'duplicate', `repeats the week of row ${first}; each week at most once.`));
      else firstOfWeek.set(week, record.row);
    }
    const filled = columns.filter((column) => (record.cells[column] ?? '') !== '' && byTitle.get(column)!.length === 1);
    for (const column of filled) cells.text(column, VALUE_MAX, true);
    const judged = judgeWeek(
      filled.map((column) => ({ metricId: byTitle.get(column)![0]!.id, value: record.cells[column]! })),
      goals,
    );
    if ('issues' in judged) {
      for (const problem of judged.issues) issues.push(cellIssue(record.row, filled[Number(problem.path[1])], 'invalid_value', `${problem.message.replace(/; send onTrack with it\.$/, '')}: write a value the goal can judge.`));
    } else if (week !== null) {
      values.push(...judged.values.map((value) => ({ ...value, week })));
    }
  }
  return issues.length > 0 ? { issues } : { values };
}

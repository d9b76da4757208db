/**
 * A CSV file of an import read into rows (issue 45), before anything is looked up: the structure
 * (malformed CSV, the header's columns, too many rows) and each cell's own shape (a formula, the
 * neutralisation undone, trimmed). Every problem is an issue naming the row as a spreadsheet numbers
 * it (the header is row 1) and the column, so that one answer lists all that must be fixed.
 */
import { CsvError, parse } from 'csv-parse/sync';
import { PayloadTooLarge, type ValidationIssue } from '../errors.js';
import { isFormula, restoreCell } from './csvCells.js';

/** The most rows below the header an import takes: an event log and a transaction of bounded size. */
export const CSV_MAX_ROWS = 10_000;

/** One row of the file: its number as a spreadsheet shows it, and its cells by column. */
export interface CsvRecord {
  row: number;
  cells: Record<string, string>;
}

export interface CsvSheet {
  columns: string[];
  records: CsvRecord[];
}

/** The columns an import takes: which names it knows, and which must be there. */
export interface CsvColumns {
  known: (column: string) => boolean;
  required: readonly string[];
}

/** An issue of the cell at `row` and `column` (the whole row without a column). */
export const cellIssue = (row: number, column: string | undefined, code: string, message: string, extra: Partial<ValidationIssue> = {}): ValidationIssue => ({
  origin: 'body',
  code,
  path: column === undefined ? ['rows', String(row)] : ['rows', String(row), column],
  message: column === undefined ? `Row ${row}: ${message}` : `Row ${row}, column ${column}: ${message}`,
  ...extra,
});

const formulaMessage = 'a spreadsheet would run this as a formula; to store the text, start it with a single quote (\'=…).';

/**
 * The rows of `text` with their cells (a formula's neutralisation undone, trimmed), or the issues of
 * the file's structure and cells. Throws 413 for more than `CSV_MAX_ROWS` rows. Blank lines are skipped.
 */
export function readCsv(text: string, columns: CsvColumns): CsvSheet | { issues: ValidationIssue[] } {
  let raw: string[][];
  try {
    raw = parse(text, { bom: true, skip_empty_lines: true, to: CSV_MAX_ROWS + 2 }) as string[][];
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    // The parser stops at the first break of the format: the row it was reading is named.
    const row = ((error as CsvError & { records?: number }).records ?? 0) + 1;
    return { issues: [cellIssue(row, undefined, 'invalid_csv', `${error.message.replace(/ (at|on) line \d+.*$/, '')}.`)] };
  }
  if (raw.length > CSV_MAX_ROWS + 1) throw new PayloadTooLarge(`The CSV holds more than ${CSV_MAX_ROWS.toLocaleString('en')} rows; split it into several imports.`);
  const [header, ...rows] = raw;
  if (header === undefined) return { issues: [{ origin: 'body', code: 'too_small', path: ['rows'], message: 'The CSV is empty: it needs a header row and at least one row.', minimum: 1, inclusive: true }] };

  const issues: ValidationIssue[] = [];
  const names = header.map((cell, index) => {
    if (isFormula(cell)) issues.push(cellIssue(1, cell, 'formula', formulaMessage));
    const name = restoreCell(cell).trim();
    if (header.slice(0, index).some((other) => restoreCell(other).trim() === name)) issues.push(cellIssue(1, name, 'duplicate', 'the column is named twice.'));
    else if (!columns.known(name)) issues.push(cellIssue(1, name, 'unrecognized_keys', 'this import takes no such column.', { keys: [name] }));
    return name;
  });
  for (const name of columns.required) {
    if (!names.includes(name)) issues.push(cellIssue(1, name, 'invalid_type', 'the column is missing; it is required.'));
  }
  if (rows.length === 0) {
    issues.push({ origin: 'body', code: 'too_small', path: ['rows'], message: 'The CSV holds a header row only; it needs at least one row below it.', minimum: 1, inclusive: true });
  }

  const records = rows.map((cells, index) => {
    const row = index + 2;
    const record: Record<string, string> = {};
    cells.forEach((cell, at) => {
      const name = names[at]!;
      if (isFormula(cell)) issues.push(cellIssue(row, name, 'formula', formulaMessage));
      else record[name] = restoreCell(cell).trim();
    });
    return { row, cells: record };
  });
  return issues.length > 0 ? { issues } : { columns: names, records };
}

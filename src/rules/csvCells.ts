/**
 * The cells of a CSV export and import (issue 45): what a spreadsheet would run as a formula is
 * neutralised on the way out and restored on the way in, so that a file opened in a spreadsheet runs
 * nothing and a round trip gives back exactly the text that went out (OWASP, "CSV Injection").
 */

/** The characters that make a spreadsheet read a cell as a formula (or, for tab and CR, hide one). */
const trigger = /^[=+\-@\t\r]/;
/** A plain number, such as a Scorecard value `-5` or `+1.5`: a spreadsheet computes nothing from it. */
const plainNumber = /^[+-]?\d+(?:[.,]\d+)?$/;
/** A cell that begins with single quotes before a trigger: neutralised text, or text that would look so. */
const quotedTrigger = /^'+[=+\-@\t\r]/;

/**
 * The cell as it goes out: text that a spreadsheet would run (a leading `=`, `+`, `-`, `@`, tab or
 * carriage return, unless the whole cell is a plain number) gets a leading single quote, which
 * spreadsheets show as text. Text that already begins with quotes before such a character gets one
 * more, so that `restoreCell` can always take exactly one away.
 */
export function neutraliseCell(text: string): string {
  if (trigger.test(text) && !plainNumber.test(text)) return `'${text}`;
  return quotedTrigger.test(text) ? `'${text}` : text;
}

/** The text a cell of an export stood for: `neutraliseCell` undone. */
export function restoreCell(cell: string): string {
  return quotedTrigger.test(cell) ? cell.slice(1) : cell;
}

/** Whether a cell of an import is a formula a spreadsheet would run: one that was never neutralised. */
export const isFormula = (cell: string): boolean => trigger.test(cell) && !plainNumber.test(cell);

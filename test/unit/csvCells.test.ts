/** The cells of a CSV export and import: formulas neutralised on the way out, restored exactly on the way in. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isFormula, neutraliseCell, restoreCell } from '../../src/rules/csvCells.js';

/** Text rich in what matters here: the trigger characters and single quotes, at the start above all. */
const cellText = fc.oneof(
  fc.string(),
  fc.tuple(fc.constantFrom('', "'", "''"), fc.constantFrom('=', '+', '-', '@', '\t', '\r', "'", 'a', '1'), fc.string()).map((parts) => parts.join('')),
);

describe('CSV cells', () => {
  it('prefixes a single quote to a cell starting with =, +, -, @, tab or carriage return', () => {
    for (const text of ['=SUM(A1)', '+1+1', '-2+3', '@SUM(A1)', '\tx', '\rx']) expect(neutraliseCell(text)).toBe(`'${text}`);
  });

  it('leaves a plain number alone, signed or with a decimal comma or point', () => {
    for (const text of ['-5', '+1.5', '-94,5', '42']) expect(neutraliseCell(text)).toBe(text);
  });

  it('adds one more quote to text that already starts with quotes before a trigger', () => {
    expect(neutraliseCell("'=x")).toBe("''=x");
    expect(neutraliseCell("'plain")).toBe("'plain");
  });

  it('gives back exactly the text that went out, whatever it is', () => {
    fc.assert(fc.property(cellText, (text) => restoreCell(neutraliseCell(text)) === text));
  });

  it('never lets a cell go out that a spreadsheet would run', () => {
    fc.assert(fc.property(cellText, (text) => !isFormula(neutraliseCell(text))));
  });
});

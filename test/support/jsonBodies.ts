/**
 * The lists' bodies written by PostgreSQL (src/db/json.ts) against what the mappers write: each page
 * must be byte for byte `JSON.stringify({ data: rows.map(mapper), nextCursor })`, the rows read from
 * the database in the list's order and the cursor made from the page's last row, as the lists made
 * them before PostgreSQL wrote their JSON.
 */
import { expect } from 'vitest';
import { encodeCursor, type SortValue } from '../../src/db/pagination.js';
import type { TestApp } from './testApp.js';

/**
 * Texts that exercise JSON's escaping: every control character, quotes and backslashes, DEL,
 * U+2028/9, characters outside the BMP, and `%` and `'`, which the SQL's `format` template and
 * literals must leave alone.
 */
export const trickyTexts = [
  Array.from({ length: 31 }, (_, code) => String.fromCharCode(code + 1)).join(''),
  `"quoted" \\ back\\slash / slash \u007f del`,
  'line\u2028separator\u2029paragraph',
  'Žilina 🚚 𝄞 e\u0301 日本語',
  "%s %% %1$s 'single' ''",
  '  spaced  ',
];

/**
 * Instants with every count of trailing zeros in their milliseconds, at the hours a 12-hour clock
 * writes otherwise (midnight and its first millisecond, the afternoon, the day's last millisecond)
 * and one it writes alike, and a year of fewer than four digits. The first four hold both kinds of
 * hour, for the lists that take only those: whether a list's test sees a wrong hour must not depend
 * on the hour the suite runs, which stamps the rows a test leaves to the database.
 */
export const trickyInstants = [
  '2026-11-24T00:00:00.000Z',
  '2026-11-24T13:00:00.100Z',
  '2026-11-24T08:00:00.120Z',
  '2026-11-24T23:59:59.999Z',
  '2026-11-25T00:00:00.001Z',
  '2026-11-24T12:30:00.123Z',
  '0999-01-02T03:04:05.006Z',
].map((text) => new Date(text));

export interface MappedList<Row> {
  /** The list's path, with a query string of its own if any. */
  path: string;
  key: string;
  /** Every row of the list, in its order. */
  rows: Row[];
  /** The list's mapper, as its single reads use it. */
  map: (row: Row) => unknown;
  /** The sort key values of a row, as the list's cursor holds them. */
  cursorOf: (row: Row) => SortValue[];
  /** The values a sealed cursor holds (the event feed's), when the list's cursors are not plain sort keys. */
  openCursor?: (cursor: string) => SortValue[];
}

/** Every page of the list (at `limit` per page, and once whole) equals, byte for byte, what the mapper writes. */
export async function expectPagesAsMapped<Row>(app: TestApp, list: MappedList<Row>, limit: number) {
  const separator = list.path.includes('?') ? '&' : '?';
  for (const size of [limit, 100]) {
    let cursor: string | null = null;
    let offset = 0;
    do {
      const url: string = `${list.path}${separator}limit=${size}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
      const response = await app.request('GET', url, { key: list.key });
      expect(response.status, url).toBe(200);
      const rows = list.rows.slice(offset, offset + size);
      const more = offset + size < list.rows.length;
      const cursorText = list.openCursor && more ? (response.body.nextCursor as string) : undefined;
      const expected = JSON.stringify({ data: rows.map(list.map), nextCursor: more ? (cursorText ?? encodeCursor(list.cursorOf(rows.at(-1)!))) : null });
      expect(response.text, url).toBe(expected);
      if (cursorText !== undefined) expect(list.openCursor!(cursorText), url).toEqual(list.cursorOf(rows.at(-1)!));
      cursor = response.body.nextCursor;
      offset += size;
    } while (cursor !== null);
    expect(offset, `${list.path}: the walk covers every row`).toBeGreaterThanOrEqual(list.rows.length);
  }
}

/**
 * Keyset (cursor) pagination. A page starts strictly after the sort-key values of the previous
 * page's last row, so pages stay stable and cheap however deep a client walks, unlike OFFSET, which
 * rescans skipped rows and repeats or skips rows when the table changes between requests.
 *
 * Preconditions for the caller, which this module cannot check:
 * - the keys identify a row uniquely (end with `id`) and none of them is nullable;
 * - the query has no ORDER BY of its own;
 * - `instant` columns hold millisecond precision (e.g. `timestamptz(3)`): a cursor carries a JS `Date`,
 *   and a stored microsecond remainder would make `col > cursor` true again for the cursor's own row.
 */
import { sql, type Expression, type Kysely, type SelectQueryBuilder, type SqlBool, type Transaction } from 'kysely';
import type { Database } from './database.js';
import { factColumns, factsOf, jsonRecord, type JsonShape } from './json.js';
import { prepared } from './prepared.js';
import { FormatError } from '../errors.js';

/**
 * How a sort key's values are held in a cursor: `bigint` is a 64-bit integer column (`bigint`,
 * `xid8`) as its decimal text, which JavaScript's numbers cannot hold exactly past 2^53.
 */
export type SortKeyType = 'string' | 'number' | 'instant' | 'day' | 'bigint';
export type SortValue = string | number | Date;

export interface SortKey {
  /** A column reference as used in the query, e.g. `tasks.created_at`. */
  column: string;
  direction: 'asc' | 'desc';
  type: SortKeyType;
}

export const DEFAULT_PAGE_LIMIT = 50;

export const pageLimit = (limit: number | undefined): number => limit ?? DEFAULT_PAGE_LIMIT;

// Years 0001-9999: ISO 8601 has a year 0000 (1 BC), which JavaScript reads but PostgreSQL refuses.
const INSTANT_PATTERN = /^(?!0000)\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const DAY_PATTERN = /^(?!0000)\d{4}-\d{2}-\d{2}$/;
const BASE64URL_PATTERN = /^[A-Za-z0-9_-]+$/;
// Unsigned, as `xid8` is: up to 2^64 - 1 (20 digits), without leading zeros.
const BIGINT_PATTERN = /^(0|[1-9]\d{0,19})$/;
const BIGINT_LIMIT = 2n ** 64n;

// A round trip through toISOString rejects values Date.parse would roll over (2026-02-30).
const isIsoInstant = (value: string): boolean =>
  INSTANT_PATTERN.test(value) && !Number.isNaN(Date.parse(value)) && new Date(value).toISOString() === value;

// Not time.ts's isDay: its 2000-2100 range guards input, but a stored day outside it must still page.
const isIsoDay = (value: string): boolean =>
  DAY_PATTERN.test(value) && !Number.isNaN(Date.parse(value)) && new Date(value).toISOString().slice(0, 10) === value;

/** Whether a value is of a sort key's declared type (instants as Date, days as `YYYY-MM-DD`). */
function isSortValue(type: SortKeyType, value: unknown): value is SortValue {
  switch (type) {
    case 'string':
      // No stored text holds NUL, and PostgreSQL refuses to compare with such text.
      return typeof value === 'string' && !value.includes('\u0000');
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'instant':
      return value instanceof Date && !Number.isNaN(value.getTime());
    case 'day':
      return typeof value === 'string' && isIsoDay(value);
    case 'bigint':
      return typeof value === 'string' && BIGINT_PATTERN.test(value) && BigInt(value) < BIGINT_LIMIT;
  }
}

const invalidCursor = (): FormatError =>
  new FormatError([
    {
      origin: 'query',
      code: 'invalid_format',
      path: ['cursor'],
      message: 'The cursor is not valid.',
      format: 'cursor',
    },
  ]);

export function encodeCursor(values: readonly SortValue[]): string {
  const json = JSON.stringify(values.map((value) => (value instanceof Date ? value.toISOString() : value)));
  return Buffer.from(json, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string, types: readonly SortKeyType[]): SortValue[] {
  // Buffer's decoder skips characters outside the alphabet, so the alphabet is checked first.
  if (!BASE64URL_PATTERN.test(cursor)) throw invalidCursor();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  if (!Array.isArray(parsed) || parsed.length !== types.length) throw invalidCursor();
  return types.map((type, index) => {
    const value: unknown = parsed[index];
    // Instants travel as ISO text and come back as Date.
    const decoded = type === 'instant' && typeof value === 'string' && isIsoInstant(value) ? new Date(value) : value;
    if (!isSortValue(type, decoded)) throw invalidCursor();
    return decoded;
  });
}

/**
 * A sort key's value in the page's last row, checked against the key's declared type so that a wrong
 * column fails on the first page instead of producing a cursor the next request rejects.
 */
function cursorValue(key: SortKey, value: unknown): SortValue {
  if (isSortValue(key.type, value)) return value;
  throw new TypeError(`Sort key ${key.column} is declared ${key.type} but the row holds ${String(value)}`);
}

/** The condition "the row sorts strictly after the cursor" for these keys. */
function afterCursor(order: readonly SortKey[], values: readonly SortValue[]): Expression<SqlBool> {
  const refs = order.map((key) => sql.ref(key.column));
  const vals = values.map((value) => sql.val(value));
  const comparator = (key: SortKey) => sql.raw(key.direction === 'asc' ? '>' : '<');

  // One direction: a row-value comparison, which PostgreSQL can answer with a single index range scan.
  const first = order[0];
  if (first !== undefined && order.every((key) => key.direction === first.direction)) {
    return sql<SqlBool>`(${sql.join(refs)}) ${comparator(first)} (${sql.join(vals)})`;
  }

  // Mixed directions have no row-value form: k1 > v1 OR (k1 = v1 AND k2 < v2) OR ...
  const branches = order.map((key, index) => {
    const equalities = refs.slice(0, index).map((ref, i) => sql`${ref} = ${vals[i]}`);
    const strict = sql`${refs[index]} ${comparator(key)} ${vals[index]}`;
    return sql`(${sql.join([...equalities, strict], sql` and `)})`;
  });
  return sql<SqlBool>`(${sql.join(branches, sql` or `)})`;
}

function checkPage(order: readonly SortKey[], limit: number) {
  if (order.length === 0) throw new RangeError('A page needs at least one sort key');
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`Invalid page limit: ${limit}`);
}

type Db<DB = Database> = Kysely<DB> | Transaction<DB>;

/** A page whose records PostgreSQL wrote as JSON text (src/db/json.ts). */
interface JsonPage<Facts> {
  /** The records, comma-separated: what goes between the brackets of `data`. */
  records: string;
  nextCursor: string | null;
  /** The columns `facts` names, from the page's first row; undefined on an empty page. */
  facts: Facts | undefined;
}

/**
 * A list read on many requests, one page per statement, built and compiled once for each shape (see
 * prepared.ts): `build` gives the filtered rows for its arguments, to which the cursor's condition,
 * the order and one row more than the page are added (the cursor's values and the page size are
 * bound as values). Around them the statement writes the page's records with `shape` (src/db/json.ts),
 * counts the rows and returns the sort keys of the page's last row for the next cursor, and the
 * `facts` columns (alike on every row, such as `standingColumns`).
 */
export function preparedJsonPages<A extends Record<string, unknown>, TB extends keyof DB, O, R, DB = Database, F extends keyof O & string = never>(
  build: (db: Db<DB>, args: A) => SelectQueryBuilder<DB, TB, O>,
  order: SortKey[],
  shape: JsonShape<O, R>,
  facts: readonly F[] = [],
) {
  const after = order.map((_, index) => `after${index}`);
  const keyAlias = (index: number) => `__key${index}`;
  const run = prepared((db: Db<DB>, args: A & { fetch: number; limit: number } & Record<string, unknown>) => {
    let rows = build(db, args);
    if (args[after[0]!] !== undefined) rows = rows.where(afterCursor(order, after.map((name) => args[name] as SortValue)));
    const orderBy = sql.join(order.map((key) => sql`${sql.ref(key.column)} ${sql.raw(key.direction)}`));
    let numbered = rows.select([
      sql<number>`row_number() over (order by ${orderBy})`.as('__n'),
      // A 64-bit integer is read as its text: drivers differ (pg gives text, PGlite a number that rounds past 2^53).
      ...order.map((key, index) => (key.type === 'bigint' ? sql`${sql.ref(key.column)}::text` : sql.ref(key.column)).as(keyAlias(index))),
    ]);
    for (const key of order) numbered = numbered.orderBy(sql.ref(key.column), key.direction);
    const last = sql`p.__n = ${args.limit}`;
    // Every column of the outer select is SQL of its own: Kysely's inference over a subquery of a
    // generic database adds nothing but a type error.
    return (db as unknown as Kysely<Record<string, never>>).selectFrom(numbered.limit(args.fetch).as('p') as never).select([
      sql<string>`coalesce(string_agg(${jsonRecord(shape, 'p')}, ',' order by p.__n) filter (where p.__n <= ${args.limit}), '')`.as('records'),
      sql<number>`count(*)::int`.as('fetched'),
      ...order.map((_, index) => sql<SortValue>`(array_agg(${sql.ref(`p.${keyAlias(index)}`)}) filter (where ${last}))[1]`.as(keyAlias(index))),
      ...factColumns(facts, 'p'),
    ]);
  });
  return async (db: Db<DB>, args: A, page: { limit: number; cursor?: string | undefined }): Promise<JsonPage<Pick<O, F>>> => {
    checkPage(order, page.limit);
    const values = page.cursor === undefined ? undefined : decodeCursor(page.cursor, order.map((key) => key.type));
    const bound: Record<string, unknown> = { ...args, fetch: page.limit + 1, limit: page.limit };
    after.forEach((name, index) => (bound[name] = values?.[index]));
    const [row] = (await run(db, bound as A & { fetch: number; limit: number })) as unknown as Record<string, unknown>[];
    const fetched = Number(row?.fetched ?? 0);
    const nextCursor = fetched > page.limit ? encodeCursor(order.map((key, index) => cursorValue(key, row![keyAlias(index)]))) : null;
    return { records: String(row?.records ?? ''), nextCursor, facts: factsOf<Pick<O, F>>(row, facts, fetched) };
  };
}

/**
 * Where a walk over a whole set in creation order stands (a CSV export, src/api/csvBody.ts): the last
 * row's `created_at`, as PostgreSQL's text (its microseconds, which a JavaScript Date would cut to
 * milliseconds and so repeat rows), and its id.
 */
export interface CreationKey {
  at: string;
  id: string;
}

/** How many rows an export reads per statement: a few hundred KB of memory, a thousand statements for a million rows. */
export const EXPORT_BATCH_ROWS = 1000;

/** The condition of the rows after `after` in the order `created_at, id` of `table`; every row when there is none. */
export const afterCreation = (table: string, after: CreationKey | undefined) =>
  after === undefined
    ? sql<SqlBool>`true`
    : sql<SqlBool>`(${sql.ref(`${table}.created_at`)}, ${sql.ref(`${table}.id`)}) > (${after.at}::timestamptz, ${after.id})`;

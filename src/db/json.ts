/**
 * Records written as JSON text by PostgreSQL (PostgREST's design), for the lists: a page of 50 rows
 * read as 50 × 11 fields, each decoded, parsed and turned into an object, then serialised again,
 * costs the server about half of a page request's CPU; the same page as one text field costs a
 * fraction of it.
 *
 * A `JsonShape` lists a record's fields in the order of the area's mapper (src/records/), each with
 * the row's column it comes from and how it is written. The text is byte for byte what
 * `JSON.stringify` writes for the mapper's record of the same row, to which each list's test holds it
 * (`test/support/jsonBodies.ts`):
 * - `text`: PostgreSQL's `to_json` escapes exactly the characters `JSON.stringify` escapes (`"`,
 *   `\`, the control characters below U+0020, with the same short forms and lowercase `\u00xx`);
 *   U+2028/9 and characters outside the BMP stay as they are in both, and text holds no lone surrogate;
 * - `instant`: `timestamptz(3)` in UTC as `toISOString` writes it, always with three fraction digits;
 * - `id`, `enum`: a key the database made (`gen_random_uuid()::text`) or an enum's value, quoted:
 *   neither holds a character to escape;
 * - `day`: a `date` as its text (`YYYY-MM-DD`), as the driver hands it to the mapper;
 * - `boolean`, `integer`: their text (`true`, `42`); `texts`: a text array as a JSON array;
 * - `number`: as a `float8`, whose text since PostgreSQL 12 is the shortest that reads back exactly,
 *   as JavaScript writes a number (`7.5`, not numeric's `7.50`);
 * - `json`: a column the row query already wrote as JSON text (a nested record, made with
 *   `jsonRecord` over its own columns, never `json_build_object`, whose text has other spacing).
 * Every field is `null` when its column is.
 */
import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder, type Transaction } from 'kysely';
import type { Database } from './database.js';
import { prepared } from './prepared.js';

export type JsonKind = 'text' | 'id' | 'enum' | 'instant' | 'day' | 'boolean' | 'integer' | 'number' | 'texts' | 'json';

/** Each field of the contract's record `Record`, in the mapper's order: [how it is written, the column of `Row`]. */
export type JsonShape<Row, Record> = { readonly [Field in keyof Record]-?: readonly [JsonKind, keyof Row & string] };

const isoInstant = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

function valueOf(kind: JsonKind, column: string): string {
  switch (kind) {
    case 'text':
    case 'texts':
      return `to_json(${column})::text`;
    case 'id':
    case 'enum':
    case 'day':
      return `'"' || ${column}::text || '"'`;
    case 'instant':
      return `'"' || to_char(${column} at time zone 'UTC', ${isoInstant}) || '"'`;
    case 'boolean':
    case 'integer':
      return `${column}::text`;
    case 'number':
      return `${column}::float8::text`;
    case 'json':
      return column;
  }
}

const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

/**
 * The SQL of one record's JSON text, its columns read from the relation `alias` (a page's subquery).
 * One `format` call with a value per field: measured on PostgreSQL 15, it costs about 60 % of the
 * same text joined with `||`, and a fifth of `json_build_object` (which also writes other spacing).
 */
export function jsonRecord<Row, Record>(shape: JsonShape<Row, Record>, alias: string): RawBuilder<string> {
  const fields = Object.entries(shape as { [field: string]: readonly [JsonKind, string] });
  const template = fields.map(([field], index) => `${index === 0 ? '{' : ','}${JSON.stringify(field)}:%s`).join('') + '}';
  const values = fields.map(([, [kind, column]]) => {
    if (!/^[a-z_][a-z0-9_]*$/.test(column)) throw new TypeError(`A JSON shape names the column ${JSON.stringify(column)}`);
    return `coalesce(${valueOf(kind, `${alias}."${column}"`)}, 'null')`;
  });
  return sql.raw<string>(`format(${literal(template.replaceAll('%', '%%').replaceAll('%%s', '%s'))}, ${values.join(', ')})`);
}

type Db = Kysely<Database> | Transaction<Database>;

/**
 * The `facts` columns of a statement over the rows `alias`: alike on every row (the caller's access,
 * `teamFactsOf`), so any row's value will do and no order is needed.
 */
export const factColumns = (facts: readonly string[], alias: string) => facts.map((fact) => sql`(array_agg(${sql.ref(`${alias}.${fact}`)}))[1]`.as(fact));

/** The facts read back from the statement's one row; undefined when it saw no row. */
export const factsOf = <F>(row: Record<string, unknown> | undefined, facts: readonly string[], rowCount: number): F | undefined =>
  rowCount > 0 ? (Object.fromEntries(facts.map((fact) => [fact, row![fact]])) as F) : undefined;

/**
 * Every row of `build`'s query (no order of its own), in `order`, written as JSON records by `shape`
 * in one statement: what goes between the brackets of a JSON array, and the `facts` columns (alike
 * on every row, such as `teamFactsOf`) from the first row, undefined when there is none.
 */
export function preparedJsonList<A extends Record<string, unknown>, TB extends keyof Database, O, R, F extends keyof O & string = never>(
  build: (db: Db, args: A) => SelectQueryBuilder<Database, TB, O>,
  order: readonly { column: string; direction: 'asc' | 'desc' }[],
  shape: JsonShape<NoInfer<O>, R>,
  facts: readonly F[] = [],
) {
  const orderBy = sql.join(order.map((key) => sql`${sql.ref(key.column)} ${sql.raw(key.direction)}`));
  const run = prepared((db, args: A) =>
    db.selectFrom(build(db, args).select(sql<number>`row_number() over (order by ${orderBy})`.as('__n')).as('p')).select([
      sql<string>`coalesce(string_agg(${jsonRecord(shape, 'p')}, ',' order by p.__n), '')`.as('records'),
      sql<number>`count(*)::int`.as('count'),
      ...factColumns(facts, 'p'),
    ]),
  );
  return async (db: Db, args: A): Promise<{ records: string; facts: Pick<O, F> | undefined }> => {
    const [row] = (await run(db, args)) as unknown as Record<string, unknown>[];
    return { records: String(row?.records ?? ''), facts: factsOf<Pick<O, F>>(row, facts, Number(row?.count ?? 0)) };
  };
}

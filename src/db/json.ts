/**
 * Records written as JSON text by PostgreSQL (PostgREST's design), for the lists: a page of 50 rows
 * read as 50 × 11 fields, each decoded, parsed and turned into an object, then serialised again,
 * costs the server about half of a page request's CPU; the same page as one text field costs a
 * fraction of it.
 *
 * A record is declared once (`declareRecord`, in src/records/): its fields in the contract's order,
 * each with the row's column it comes from and its kind. From that one declaration come its
 * `JsonShape`, from which PostgreSQL writes the lists' records, and the mapper of single reads and
 * changes, whose record `JSON.stringify` writes. Each kind's SQL and JavaScript stand side by side in
 * `kinds`, so that both write the same bytes; each list's test holds them to it
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
 *   as JavaScript writes a number (`7.5`, not numeric's `7.50`), for 0 and magnitudes from 1e-4 to
 *   below 1e15 (a rating's average); beyond them PostgreSQL writes `1e-05` and `1e+15` where
 *   JavaScript writes `0.00001` and `1000000000000000`;
 * - `json`: a nested value. In a list's row its column holds the JSON text the row query already
 *   wrote (a nested record made with `jsonRecord` over its own columns, never `json_build_object`,
 *   whose text has other spacing); in a single read's row the same column holds the value, which the
 *   nested record's mapper turns into the contract's (an array: each element), or which already is.
 * Every field is `null` when its column is.
 */
import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder, type Transaction } from 'kysely';
import type { Database } from './database.js';
import { prepared } from './prepared.js';

export type JsonKind = 'text' | 'id' | 'enum' | 'instant' | 'day' | 'boolean' | 'integer' | 'number' | 'texts' | 'json';

/** Each field of the contract's record `Record`, in the contract's order: [how it is written, the column of `Row`]. */
export type JsonShape<Row, Record> = { readonly [Field in keyof Record]-?: readonly [JsonKind, keyof Row & string] };

/** A record declared once: its shape for PostgreSQL and the mapper derived from the same declaration. */
export interface DeclaredRecord<Row, Record> {
  readonly shape: JsonShape<Row, Record>;
  readonly toRecord: (row: Row) => Record;
}

const isoInstant = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;
const nullOr = (value: string, converted: string) => `(${value} == null ? null : ${converted})`;

/**
 * Each kind as PostgreSQL writes it from a column (SQL null for `null`), and as the mapper reads it
 * from the row's value: a JavaScript expression over the expression `value`.
 */
const kinds: { readonly [Kind in JsonKind]: { readonly sql: (column: string) => string; readonly js: (value: string) => string } } = {
  text: { sql: (column) => `to_json(${column})::text`, js: (value) => value },
  texts: { sql: (column) => `to_json(${column})::text`, js: (value) => value },
  id: { sql: (column) => `'"' || ${column}::text || '"'`, js: (value) => value },
  enum: { sql: (column) => `'"' || ${column}::text || '"'`, js: (value) => value },
  day: { sql: (column) => `'"' || ${column}::text || '"'`, js: (value) => value },
  instant: { sql: (column) => `'"' || to_char(${column} at time zone 'UTC', ${isoInstant}) || '"'`, js: (value) => nullOr(value, `${value}.toISOString()`) },
  boolean: { sql: (column) => `${column}::text`, js: (value) => value },
  // A count (bigint) reaches JavaScript as text, number or bigint, depending on the driver.
  integer: { sql: (column) => `${column}::text`, js: (value) => nullOr(value, `Number(${value})`) },
  number: { sql: (column) => `${column}::float8::text`, js: (value) => nullOr(value, `Number(${value})`) },
  json: { sql: (column) => column, js: (value) => value },
};

type Nullable<Value, T> = null extends Value ? T | null : T;
type Elements<T> = [T] extends [readonly (infer Element)[]] ? Element : never;

/**
 * The kinds that turn a column holding `Value` into a field of type `Field` as the derived mapper
 * does: the same value (`text`, `id`, `day`, `boolean`, a parsed `json` object or array), strings the database's
 * checks hold to the contract's values (`enum`, `texts`), a number, an instant as text.
 */
type KindsFor<Value, Field> =
  | ([Value] extends [Field]
      ?
          | ([Value] extends [string | null] ? 'text' | 'id' | 'day' : never)
          | ([Value] extends [boolean | null] ? 'boolean' : never)
          | ([Value] extends [object | null] ? 'json' : never)
      : never)
  | ([Value] extends [string | null] ? Narrowed<Value, Field, string, 'enum'> : never)
  | ([Value] extends [readonly string[] | null] ? Narrowed<Value, Field, readonly string[], 'texts'> : never)
  | ([Value] extends [number | string | bigint | null] ? ([Nullable<Value, number>] extends [Field] ? 'integer' | 'number' : never) : never)
  | ([Value] extends [Date | null] ? ([Nullable<Value, string>] extends [Field] ? 'instant' : never) : never);

/** `Kind` where the field takes values of `Base` (and null wherever the column may be null). */
type Narrowed<Value, Field, Base, Kind> = [Extract<Field, Base>] extends [never] ? never : [Nullable<Value, Extract<Field, Base>>] extends [Field] ? Kind : never;

/** The record that maps the row's nested value (each element of an array) into the field's. */
type NestedRecord<Value, Field> = [Nullable<Value, NonNullable<Field>>] extends [Field]
  ? [NonNullable<Value>] extends [readonly unknown[]]
    ? [NonNullable<Field>] extends [readonly unknown[]]
      ? DeclaredRecord<Elements<NonNullable<Value>>, Elements<NonNullable<Field>>>
      : never
    : [NonNullable<Field>] extends [readonly unknown[]]
      ? never
      : DeclaredRecord<NonNullable<Value>, NonNullable<Field>>
  : never;

type FieldDeclaration<Row, Field> = {
  [Column in keyof Row & string]: readonly [KindsFor<Row[Column], Field>, Column] | readonly ['json', Column, NestedRecord<Row[Column], Field>];
}[keyof Row & string];

/**
 * Each field of the contract's record `Record`, in the contract's order: its kind and the column of
 * `Row` it comes from, the kind being one that turns that column's type into the field's (so `tsc`
 * checks the declaration against both); a `json` field may name the record that maps its value.
 */
export type RecordDeclaration<Row, Record> = { readonly [Field in keyof Record]-?: FieldDeclaration<Row, Record[Field]> };

/**
 * The record `declaration` declares: its `JsonShape` for PostgreSQL (`jsonRecord`, the lists) and its
 * mapper for single reads and changes, compiled once into one object literal with a conversion per
 * field, so that it costs what a mapper written by hand costs.
 */
export function declareRecord<Row, Record>(declaration: RecordDeclaration<Row, Record>): DeclaredRecord<Row, Record> {
  const fields = Object.entries(declaration as { [field: string]: readonly [JsonKind, string, DeclaredRecord<unknown, unknown>?] });
  const nested: ((row: unknown) => unknown)[] = [];
  const values = fields.map(([field, [kind, column, record]]) => {
    const value = `row[${JSON.stringify(column)}]`;
    if (record === undefined) return `${JSON.stringify(field)}: ${kinds[kind].js(value)}`;
    const map = `nested${nested.push(record.toRecord) - 1}`;
    return `${JSON.stringify(field)}: ${nullOr(value, `Array.isArray(${value}) ? ${value}.map(${map}) : ${map}(${value})`)}`;
  });
  // The code holds nothing but the declaration's names, each written as a JSON string literal.
  const compile = new Function(...nested.map((_, index) => `nested${index}`), `return (row) => ({ ${values.join(', ')} });`) as (
    ...nested: unknown[]
  ) => (row: Row) => Record;
  const shape = Object.fromEntries(fields.map(([field, [kind, column]]) => [field, Object.freeze([kind, column])]));
  return Object.freeze({ shape: Object.freeze(shape) as JsonShape<Row, Record>, toRecord: compile(...nested) });
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
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(column)) throw new TypeError(`A JSON shape names the column ${JSON.stringify(column)}`);
    return `coalesce(${kinds[kind].sql(`${alias}."${column}"`)}, 'null')`;
  });
  return sql.raw<string>(`format(${literal(template.replaceAll('%', '%%').replaceAll('%%s', '%s'))}, ${values.join(', ')})`);
}

type Db = Kysely<Database> | Transaction<Database>;

/**
 * The `facts` columns of a statement over the rows `alias`: alike on every row (the caller's access,
 * `standingColumns`), so any row's value will do and no order is needed.
 */
export const factColumns = (facts: readonly string[], alias: string) => facts.map((fact) => sql`(array_agg(${sql.ref(`${alias}.${fact}`)}))[1]`.as(fact));

/** The facts read back from the statement's one row; undefined when it saw no row. */
export const factsOf = <F>(row: Record<string, unknown> | undefined, facts: readonly string[], rowCount: number): F | undefined =>
  rowCount > 0 ? (Object.fromEntries(facts.map((fact) => [fact, row![fact]])) as F) : undefined;

/**
 * Every row of `build`'s query (no order of its own), in `order`, written as JSON records by `shape`
 * in one statement: what goes between the brackets of a JSON array, and the `facts` columns (alike
 * on every row, such as `standingColumns`) from the first row, undefined when there is none.
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

/**
 * Queries that Kysely builds and compiles once, then runs with each request's values. Building and
 * compiling a query costs more than running it for the hot reads (about 50 µs for a meeting with
 * its ratings, segues, headlines and messages), and the same SQL text object on every run also lets
 * the driver find its prepared statement without hashing the text again.
 *
 * The query is built with a stand-in for each argument; the compiled parameters that are stand-ins
 * are replaced by the request's values when it runs. Arguments may therefore be used only as values
 * of the query (comparisons, `sql` template values), never to decide its shape: an argument that is
 * `undefined` makes a shape of its own (an optional filter), and anything else that changes the
 * SQL (a computed limit, a list of values) must be an argument's value, not arithmetic on one.
 */
import { CompiledQuery, type Compilable, type Kysely, type Transaction } from 'kysely';
import type { Database } from './database.js';

type Db<DB = Database> = Kysely<DB> | Transaction<DB>;
type Args = Record<string, unknown>;

const standInPrefix = '\u0000prepared:';

interface Shape<A> {
  sql: string;
  parameters: ((args: A) => unknown)[];
}

function compileShape<A extends Args, Row, DB>(db: Db<DB>, build: (db: Db<DB>, args: A) => Compilable<Row>, args: A): Shape<A> {
  const standIns = Object.fromEntries(Object.entries(args).map(([name, value]) => [name, value === undefined ? undefined : `${standInPrefix}${name}`]));
  const compiled = build(db, standIns as A);
  const { sql, parameters } = compiled.compile();
  const used = new Set<string>();
  const binders = parameters.map((parameter): ((args: A) => unknown) => {
    if (typeof parameter !== 'string' || !parameter.includes(standInPrefix)) return () => parameter;
    const name = parameter.slice(standInPrefix.length);
    if (!parameter.startsWith(standInPrefix) || !(name in args)) {
      throw new TypeError(`A prepared query used an argument inside a computed value (${JSON.stringify(parameter)}); pass the computed value as an argument`);
    }
    used.add(name);
    return (values) => values[name];
  });
  const unused = Object.keys(standIns).filter((name) => standIns[name] !== undefined && !used.has(name));
  if (unused.length > 0) throw new TypeError(`A prepared query did not use its arguments ${unused.join(', ')} as values`);
  return { sql, parameters: binders };
}

/** A query run as `run(db, args)`, built and compiled once for each set of arguments given (not `undefined`). */
export function prepared<A extends Args, Row, DB = Database>(build: (db: Db<DB>, args: A) => Compilable<Row>) {
  const shapes = new Map<string, Shape<A>>();
  return async (db: Db<DB>, args: A): Promise<Row[]> => {
    let key = '';
    for (const name in args) if (args[name] !== undefined) key += `${name},`;
    let shape = shapes.get(key);
    if (!shape) {
      shape = compileShape(db, build, args);
      shapes.set(key, shape);
    }
    const values = shape.parameters.map((bind) => bind(args));
    return (await db.executeQuery<Row>(CompiledQuery.raw(shape.sql, values))).rows;
  };
}

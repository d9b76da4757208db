import { PGlite } from '@electric-sql/pglite';
import { Kysely, sql, type SelectQueryBuilder } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FormatError } from '../../src/errors.js';
import type { JsonShape } from '../../src/db/json.js';
import { decodeCursor, encodeCursor, pageLimit, preparedJsonPages, type SortKey, type SortValue } from '../../src/db/pagination.js';

interface ItemsTable {
  id: number;
  name: string;
  grp: number;
  created_at: Date;
  day: string;
  flag: boolean;
}

/** Rows ordered by a 64-bit key (`bigint`, as the event log's `txid` and `position`). */
interface TicksTable {
  id: number;
  tick: string;
}

interface TestDatabase {
  items: ItemsTable;
  ticks: TicksTable;
}

type Item = ItemsTable;

/** A sort key with the item's value, for the order computed independently in JS. */
type ItemKey = SortKey & { value: (row: Item) => SortValue };

const itemJson: JsonShape<Item, Item> = {
  id: ['integer', 'id'],
  name: ['text', 'name'],
  grp: ['integer', 'grp'],
  created_at: ['instant', 'created_at'],
  day: ['day', 'day'],
  flag: ['boolean', 'flag'],
};

const ROW_COUNT = 250;
const BASE = Date.parse('2026-11-16T09:00:00.000Z');
const DATE_OID = 1082;

// Spread so that every sort key has plenty of ties and none follows insertion order.
const items: Item[] = Array.from({ length: ROW_COUNT }, (_, i) => ({
  id: i + 1,
  name: `n${String((i * 37) % ROW_COUNT).padStart(3, '0')}`,
  grp: (i * 7) % 5,
  created_at: new Date(BASE + ((i * 7919) % 50) * 60_000 + (i % 3) * 1),
  day: new Date(Date.UTC(2026, 10, 16 + ((i * 11) % 20))).toISOString().slice(0, 10),
  flag: i % 3 === 0,
}));

const key = {
  id: (direction: 'asc' | 'desc' = 'asc'): ItemKey => ({
    column: 'items.id',
    direction,
    type: 'number',
    value: (row) => row.id,
  }),
  name: (direction: 'asc' | 'desc' = 'asc'): ItemKey => ({
    column: 'items.name',
    direction,
    type: 'string',
    value: (row) => row.name,
  }),
  grp: (direction: 'asc' | 'desc' = 'asc'): ItemKey => ({
    column: 'items.grp',
    direction,
    type: 'number',
    value: (row) => row.grp,
  }),
  createdAt: (direction: 'asc' | 'desc' = 'asc'): ItemKey => ({
    column: 'items.created_at',
    direction,
    type: 'instant',
    value: (row) => row.created_at,
  }),
  day: (direction: 'asc' | 'desc' = 'asc'): ItemKey => ({
    column: 'items.day',
    direction,
    type: 'day',
    value: (row) => row.day,
  }),
};

/** The order the database should produce, computed independently in JS. */
function sorted(rows: Item[], order: ItemKey[]): number[] {
  const comparable = (value: string | number | Date) => (value instanceof Date ? value.getTime() : value);
  return [...rows]
    .sort((a, b) => {
      for (const k of order) {
        const x = comparable(k.value(a));
        const y = comparable(k.value(b));
        if (x !== y) return (x < y ? -1 : 1) * (k.direction === 'asc' ? 1 : -1);
      }
      return 0;
    })
    .map((row) => row.id);
}

// Around 2^53, where neighbours share one JavaScript number, and up to bigint's largest value.
const ticks: TicksTable[] = ['9007199254740991', '9007199254740992', '9007199254740993', '9007199254740994', '9223372036854775807', '1', '0'].map(
  (tick, index) => ({ id: index + 1, tick }),
);

const invalidCursorIssues = [
  {
    origin: 'query',
    code: 'invalid_format',
    path: ['cursor'],
    message: 'The cursor is not valid.',
    format: 'cursor',
  },
];

let pglite: PGlite;
let db: Kysely<TestDatabase>;
const executed: string[] = [];

beforeAll(async () => {
  // Days come back as 'YYYY-MM-DD' strings, as the application's own type parser arranges.
  pglite = new PGlite({ parsers: { [DATE_OID]: (value: string) => value } });
  db = new Kysely<TestDatabase>({
    dialect: new PGliteDialect(pglite),
    log: (event) => {
      if (event.level === 'query') executed.push(event.query.sql);
    },
  });
  await sql`
    create table items (
      id int primary key,
      name text not null unique,
      grp int not null,
      created_at timestamptz(3) not null,
      day date not null,
      flag boolean not null
    )
  `.execute(db);
  await db.insertInto('items').values(items).execute();
  await sql`create table ticks (id int primary key, tick bigint not null unique)`.execute(db);
  await db.insertInto('ticks').values(ticks).execute();
});

afterAll(async () => {
  await db.destroy();
});

/** Follows nextCursor to the end; the page sizes show where each page stopped. */
type ItemQuery = SelectQueryBuilder<TestDatabase, 'items', Item>;

/** A page as the lists read one (`preparedJsonPages`), its JSON records read back as items. */
async function paginate(query: ItemQuery, options: { order: ItemKey[]; limit: number; cursor?: string | undefined }) {
  const pages = preparedJsonPages((_db: Kysely<TestDatabase>, _args: Record<string, never>) => query, options.order, itemJson);
  const page = await pages(db, {}, { limit: options.limit, cursor: options.cursor });
  const rows = (JSON.parse(`[${page.records}]`) as (Omit<Item, 'created_at'> & { created_at: string })[]).map((row) => ({ ...row, created_at: new Date(row.created_at) }));
  return { rows, nextCursor: page.nextCursor };
}

async function walk(order: ItemKey[], limit: number, onlyFlagged = false) {
  const ids: number[] = [];
  const pageSizes: number[] = [];
  let cursor: string | undefined;
  for (let guard = 0; guard < 1000; guard++) {
    let query = db.selectFrom('items').selectAll('items');
    if (onlyFlagged) query = query.where('items.flag', '=', true);
    const page = await paginate(query, { order, limit, cursor });
    ids.push(...page.rows.map((row) => row.id));
    pageSizes.push(page.rows.length);
    if (page.nextCursor === null) return { ids, pageSizes };
    cursor = page.nextCursor;
  }
  throw new Error('The walk did not end');
}

describe('keyset pagination', () => {
  it('walks 250 rows seven at a time, returning each row once in order', async () => {
    const order = [key.createdAt(), key.id()];
    const { ids, pageSizes } = await walk(order, 7);
    expect(ids).toEqual(sorted(items, order));
    expect(new Set(ids).size).toBe(ROW_COUNT);
    expect(pageSizes).toEqual([...Array<number>(35).fill(7), 5]);
  });

  it('breaks ties in the first key with the second', async () => {
    const order = [key.grp(), key.name()];
    const { ids } = await walk(order, 7);
    expect(ids).toEqual(sorted(items, order));
    // The ties really are there: 50 rows per group.
    expect(new Set(items.map((row) => row.grp)).size).toBe(5);
  });

  it('walks in descending order', async () => {
    const order = [key.createdAt('desc'), key.id('desc')];
    const { ids } = await walk(order, 7);
    expect(ids).toEqual(sorted(items, order));
  });

  it('walks with mixed directions', async () => {
    const order = [key.day('asc'), key.createdAt('desc'), key.id('asc')];
    const { ids } = await walk(order, 7);
    expect(ids).toEqual(sorted(items, order));

    const reversed = [key.grp('desc'), key.name('asc')];
    expect((await walk(reversed, 7)).ids).toEqual(sorted(items, reversed));
  });

  it('combines a filter with the cursor', async () => {
    const order = [key.day('desc'), key.name('desc')];
    const { ids } = await walk(order, 7, true);
    const flagged = items.filter((row) => row.flag);
    expect(ids).toEqual(sorted(flagged, order));
    expect(ids).toHaveLength(84);
  });

  it('compares row values when all keys share a direction and expands the comparison otherwise', async () => {
    const first = await paginate(db.selectFrom('items').selectAll('items'), {
      order: [key.createdAt(), key.id()],
      limit: 3,
    });
    executed.length = 0;
    await paginate(db.selectFrom('items').selectAll('items'), {
      order: [key.createdAt(), key.id()],
      limit: 3,
      cursor: first.nextCursor ?? undefined,
    });
    expect(executed[0]).toMatch(/\("items"\."created_at", "items"\."id"\) > \(\$\d+, \$\d+\)/);
    expect(executed[0]).toMatch(/order by "items"\."created_at" asc, "items"\."id" asc limit \$\d+/);
    expect(executed[0]).not.toMatch(/offset/i);

    executed.length = 0;
    await paginate(db.selectFrom('items').selectAll('items'), {
      order: [key.createdAt('desc'), key.id('desc')],
      limit: 3,
      cursor: first.nextCursor ?? undefined,
    });
    expect(executed[0]).toMatch(/\("items"\."created_at", "items"\."id"\) < \(\$\d+, \$\d+\)/);

    executed.length = 0;
    await paginate(db.selectFrom('items').selectAll('items'), {
      order: [key.createdAt('desc'), key.id('asc')],
      limit: 3,
      cursor: first.nextCursor ?? undefined,
    });
    expect(executed[0]).toMatch(/\(\("items"\."created_at" < \$\d+\) or \("items"\."created_at" = \$\d+ and "items"\."id" > \$\d+\)\)/);
  });

  it('returns exactly limit rows and a null nextCursor when the last page is full', async () => {
    const query = () => db.selectFrom('items').selectAll('items').where('items.flag', '=', true);
    const order = [key.id()];

    const whole = await paginate(query(), { order, limit: 84 });
    expect(whole.rows).toHaveLength(84);
    expect(whole.nextCursor).toBeNull();

    const almost = await paginate(query(), { order, limit: 83 });
    expect(almost.rows).toHaveLength(83);
    expect(almost.nextCursor).not.toBeNull();
    const rest = await paginate(query(), { order, limit: 83, cursor: almost.nextCursor ?? undefined });
    expect(rest.rows.map((row) => row.id)).toEqual([250]);
    expect(rest.nextCursor).toBeNull();

    const roomy = await paginate(query(), { order, limit: 500 });
    expect(roomy.rows).toHaveLength(84);
    expect(roomy.nextCursor).toBeNull();
  });

  it('returns an empty last page when nothing matches', async () => {
    const page = await paginate(db.selectFrom('items').selectAll('items').where('items.id', '<', 0), {
      order: [key.id()],
      limit: 7,
    });
    expect(page).toEqual({ rows: [], nextCursor: null });
  });

  it('rejects a cursor that is not valid with the cursor FormatError', async () => {
    const order = [key.createdAt(), key.id()];
    const b64 = (text: string) => Buffer.from(text).toString('base64url');
    const bad = [
      'garbage!',
      '',
      'a b',
      b64('not json'),
      b64('{"createdAt":"2026-11-16T09:00:00.000Z","id":1}'),
      b64('null'),
      encodeCursor([new Date(BASE)]),
      encodeCursor([new Date(BASE), 1, 2]),
      encodeCursor([1, 1]),
      encodeCursor([new Date(BASE), '1']),
      b64('["2026-11-16 09:00:00+00",1]'),
      b64('["2026-02-30T09:00:00.000Z",1]'),
      b64('["2026-11-16T09:00:00.000Z",null]'),
    ];
    for (const cursor of bad) {
      const attempt = paginate(db.selectFrom('items').selectAll('items'), { order, limit: 7, cursor });
      await expect(attempt, cursor).rejects.toBeInstanceOf(FormatError);
      await expect(attempt, cursor).rejects.toMatchObject({ code: 'invalid', issues: invalidCursorIssues });
    }
  });
});

describe('keyset pagination on a 64-bit key', () => {
  it('walks keys past 2^53 one at a time, exactly, whichever number type the driver reads them as', async () => {
    const pages = preparedJsonPages(
      (database: Kysely<TestDatabase>, _args: Record<string, never>) => database.selectFrom('ticks').selectAll('ticks'),
      [{ column: 'ticks.tick', direction: 'asc', type: 'bigint' }],
      { id: ['integer', 'id'] } as JsonShape<TicksTable, { id: number }>,
    );
    const ids: number[] = [];
    const cursors: (string | null)[] = [];
    let cursor: string | undefined;
    do {
      const page = await pages(db, {}, { limit: 1, cursor });
      ids.push(...(JSON.parse(`[${page.records}]`) as { id: number }[]).map((row) => row.id));
      cursors.push(page.nextCursor);
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);

    const byTick = [...ticks].sort((a, b) => (BigInt(a.tick) < BigInt(b.tick) ? -1 : 1));
    expect(ids).toEqual(byTick.map((row) => row.id));
    expect(cursors.slice(0, -1).map((next) => decodeCursor(next!, ['bigint']))).toEqual(byTick.slice(0, -1).map((row) => [row.tick]));
  });
});

describe('cursors', () => {
  it('refuse text holding the character NUL, which no stored key holds and PostgreSQL cannot compare', () => {
    const cursor = Buffer.from(JSON.stringify(['2026-11-16T09:00:00.000Z', 'a\u0000'])).toString('base64url');
    expect(() => decodeCursor(cursor, ['instant', 'string'])).toThrow(FormatError);
  });

  it('refuse the year 0000, which ISO 8601 has and PostgreSQL has not, in days and instants', () => {
    const cursor = (values: unknown[]) => Buffer.from(JSON.stringify(values)).toString('base64url');
    expect(() => decodeCursor(cursor(['0000-01-01']), ['day'])).toThrow(FormatError);
    expect(() => decodeCursor(cursor(['0000-12-31T23:59:59.999Z', 'x']), ['instant', 'string'])).toThrow(FormatError);
    expect(decodeCursor(cursor(['0001-01-01']), ['day'])).toEqual(['0001-01-01']);
  });

  it('round-trip every key type, bringing instants back as Dates', () => {
    const values = [new Date('2026-11-16T09:00:00.123Z'), 'Kováčová "J"', 42.5, '2028-02-29'];
    const cursor = encodeCursor(values);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor, ['instant', 'string', 'number', 'day'])).toEqual(values);
  });

  it('hold a 64-bit integer as its decimal text, exactly, from 0 to 2^64 - 1 (xid8)', () => {
    const values = ['0', '9007199254740993', '18446744073709551615'];
    expect(decodeCursor(encodeCursor(values), ['bigint', 'bigint', 'bigint'])).toEqual(values);
  });

  it('refuse a 64-bit integer that is negative, too large, not plain decimal text, or a JSON number', () => {
    const cursor = (values: unknown[]) => Buffer.from(JSON.stringify(values)).toString('base64url');
    for (const value of ['18446744073709551616', '-1', '01', '1.5', '1e3', ' 1', '', 12]) {
      expect(() => decodeCursor(cursor([value]), ['bigint']), JSON.stringify(value)).toThrow(FormatError);
    }
  });

  it('refuses a day that does not exist and a number that is not finite', () => {
    expect(() => decodeCursor(encodeCursor(['2026-02-30']), ['day'])).toThrow(FormatError);
    expect(() => decodeCursor(Buffer.from('[1e999]').toString('base64url'), ['number'])).toThrow(FormatError);
  });

  it('carries the issue the API reports', () => {
    try {
      decodeCursor('%%%', ['string']);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(FormatError);
      expect((error as FormatError).issues).toEqual(invalidCursorIssues);
    }
  });
});

describe('pageLimit', () => {
  it('defaults to 50 and keeps a given limit', () => {
    expect(pageLimit(undefined)).toBe(50);
    expect(pageLimit(7)).toBe(7);
  });
});

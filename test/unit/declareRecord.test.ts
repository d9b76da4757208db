import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { declareRecord, jsonRecord } from '../../src/db/json.js';
import { createTestDatabase, databaseLabel, type TestDatabase } from '../support/database.js';
import { trickyInstants, trickyTexts } from '../support/jsonBodies.js';

interface InnerRow {
  on: boolean;
  at: Date;
}
interface Inner {
  on: boolean;
  at: string;
}
const inner = declareRecord<InnerRow, Inner>({ on: ['boolean', 'on'], at: ['instant', 'at'] });

interface Row {
  id: string;
  name: string | null;
  kind: string;
  at: Date | null;
  day: string | null;
  flag: boolean | null;
  count: number | string | bigint | null;
  ratio: number | string | null;
  tags: string[] | null;
  one: InnerRow | null;
  many: InnerRow[];
  raw: { any: number[] } | null;
  unused: string;
}
interface Rec {
  id: string;
  name: string | null;
  kind: 'A' | 'B';
  at: string | null;
  day: string | null;
  flag: boolean | null;
  count: number | null;
  ratio: number | null;
  tags: ('x' | 'y')[] | null;
  one: Inner | null;
  many: Inner[];
  raw: { any: number[] } | null;
}
const record = declareRecord<Row, Rec>({
  id: ['id', 'id'],
  name: ['text', 'name'],
  kind: ['enum', 'kind'],
  at: ['instant', 'at'],
  day: ['day', 'day'],
  flag: ['boolean', 'flag'],
  count: ['integer', 'count'],
  ratio: ['number', 'ratio'],
  tags: ['texts', 'tags'],
  one: ['json', 'one', inner],
  many: ['json', 'many', inner],
  raw: ['json', 'raw'],
});

const full: Row = {
  id: 'a1',
  name: 'Ada',
  kind: 'A',
  at: new Date('2026-11-24T13:00:00.100Z'),
  day: '2026-02-28',
  flag: false,
  count: '42',
  ratio: 7.5,
  tags: ['x', 'y'],
  one: { on: true, at: new Date('0999-01-02T03:04:05.006Z') },
  many: [
    { on: false, at: new Date('2026-11-24T00:00:00.000Z') },
    { on: true, at: new Date('2026-11-24T23:59:59.999Z') },
  ],
  raw: { any: [1, 2] },
  unused: 'left out',
};
const empty: Row = { ...full, name: null, at: null, day: null, flag: null, count: null, ratio: null, tags: null, one: null, many: [], raw: null };

describe('a declared record: its mapper', () => {
  it('writes every declared field in the declaration order, and no other column', () => {
    expect(Object.keys(record.toRecord(full))).toEqual(['id', 'name', 'kind', 'at', 'day', 'flag', 'count', 'ratio', 'tags', 'one', 'many', 'raw']);
  });

  it('gives text, ids, enums, days, booleans and text arrays as the row holds them', () => {
    const mapped = record.toRecord(full);
    expect([mapped.id, mapped.name, mapped.kind, mapped.day, mapped.flag, mapped.tags]).toEqual(['a1', 'Ada', 'A', '2026-02-28', false, ['x', 'y']]);
  });

  it('writes an instant as toISOString does, in UTC with three fraction digits', () => {
    expect(record.toRecord(full).at).toBe('2026-11-24T13:00:00.100Z');
    expect(record.toRecord({ ...full, at: new Date('0999-01-02T03:04:05.006Z') }).at).toBe('0999-01-02T03:04:05.006Z');
  });

  it('turns integers and numbers that arrive as text, number or bigint into numbers', () => {
    expect(record.toRecord({ ...full, count: '42', ratio: '7.50' })).toMatchObject({ count: 42, ratio: 7.5 });
    expect(record.toRecord({ ...full, count: 42n, ratio: 0.1 })).toMatchObject({ count: 42, ratio: 0.1 });
    expect(record.toRecord({ ...full, count: 0, ratio: 0 })).toMatchObject({ count: 0, ratio: 0 });
  });

  it('maps a nested record, and each element of a nested array, with the nested declaration', () => {
    const mapped = record.toRecord(full);
    expect(mapped.one).toEqual({ on: true, at: '0999-01-02T03:04:05.006Z' });
    expect(mapped.many).toEqual([
      { on: false, at: '2026-11-24T00:00:00.000Z' },
      { on: true, at: '2026-11-24T23:59:59.999Z' },
    ]);
  });

  it('keeps a json field without a nested declaration as the row holds it', () => {
    expect(record.toRecord(full).raw).toBe(full.raw);
  });

  it('gives null for every field whose column is null, never 0, an empty text or an invalid date', () => {
    expect(record.toRecord(empty)).toEqual({
      id: 'a1',
      name: null,
      kind: 'A',
      at: null,
      day: null,
      flag: null,
      count: null,
      ratio: null,
      tags: null,
      one: null,
      many: [],
      raw: null,
    });
  });

  it('reads fields and columns whatever characters their names hold', () => {
    const odd = declareRecord<{ 'it\'s "x"\\': string }, { '}); throw 1; ({': string }>({ '}); throw 1; ({': ['text', 'it\'s "x"\\'] });
    expect(odd.toRecord({ 'it\'s "x"\\': 'fine' })).toEqual({ '}); throw 1; ({': 'fine' });
  });

  it('gives its shape: each field with its kind and column, for PostgreSQL', () => {
    expect(Object.entries(inner.shape)).toEqual([
      ['on', ['boolean', 'on']],
      ['at', ['instant', 'at']],
    ]);
  });
});

describe(`a declared record: what PostgreSQL writes from its shape equals JSON.stringify of its mapper's record (${databaseLabel})`, () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.close());

  /** The record's text written by PostgreSQL from the row's values, each in the column type the lists read. */
  async function written(row: Row): Promise<string> {
    const innerText = (value: InnerRow) => sql`(select ${jsonRecord(inner.shape, 'i')} from (select ${value.on}::boolean as "on", ${value.at}::timestamptz(3) as at) i)`;
    const manyText = row.many.length === 0 ? sql`'[]'` : sql`'[' || ${sql.join(row.many.map(innerText), sql` || ',' || `)} || ']'`;
    const { rows } = await sql<{ text: string }>`
      select ${jsonRecord(record.shape, 'r')} as text from (
        select ${row.id}::text as id, ${row.name}::text as name, ${row.kind}::text as kind, ${row.at}::timestamptz(3) as at,
          ${row.day}::date as day, ${row.flag}::boolean as flag, ${row.count === null ? null : String(row.count)}::int8 as count,
          ${row.ratio === null ? null : String(row.ratio)}::float8 as ratio, ${row.tags}::text[] as tags,
          ${row.one === null ? sql`null` : innerText(row.one)} as one, ${manyText} as many,
          ${row.raw === null ? null : JSON.stringify(row.raw)}::text as raw
      ) r`.execute(database.db);
    return rows[0]!.text;
  }

  it('for every kind with values, tricky texts and instants included', async () => {
    for (const [index, name] of trickyTexts.entries()) {
      const row = { ...full, name, at: trickyInstants[index % trickyInstants.length]!, ratio: [7.5, 0.1, 0, 1 / 3, 12, 123456.789][index]! };
      expect(await written(row)).toBe(JSON.stringify(record.toRecord(row)));
    }
  });

  it('for every kind with null', async () => {
    expect(await written(empty)).toBe(JSON.stringify(record.toRecord(empty)));
  });
});

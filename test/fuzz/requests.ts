/**
 * Requests for one operation of the contract, as fast-check arbitraries: a caller, path parameters
 * (an existing item, an unknown id or a malformed one), query parameters (valid, hostile, unknown),
 * and a body (valid, one field removed or replaced by a hostile value, an extra field, a wrong whole
 * body, broken JSON, 64 KB ± 1, a wrong content type, and the structural extremes of extremes.ts
 * written as raw JSON text into one place of a valid body). A request is plain data, printed as is
 * when a property fails; the items it names are made when it is sent.
 */
import fc from 'fast-check';
import type { ContractOperation } from '../support/contract.js';
import { callerNames, type CallerName } from '../permissions/world.js';
import { hostileValue, resolve, slotsOf, validValue, withValueAt, type IdPool, type Schema, type Slot } from './schemaArbitraries.js';
import { valueParameters } from './fixtures.js';
import { describeFragment, fragmentArbitrary, splicedBody, type Duplicate, type Fragment } from './extremes.js';

/** A path parameter: the existing item the fixtures make, or a segment sent exactly as written (already encoded). */
export type PathValue = { existing: true } | { segment: string; valid?: true };

export type BodySpec =
  | { kind: 'none' }
  | { kind: 'json'; value: unknown; contentType?: string }
  | { kind: 'raw'; text: string; contentType?: string }
  /** A JSON body of exactly `bytes` bytes: the valid body padded with one more text field. */
  | { kind: 'sized'; bytes: number; value: unknown }
  /** JSON text of `value` with raw JSON text at `path` (the whole body when empty), its key written twice when `duplicate`. */
  | { kind: 'spliced'; value: unknown; path: (string | number)[]; fragment: Fragment; duplicate?: Duplicate };

export interface FuzzRequest {
  caller: CallerName;
  /** Chooses among fixture variants (a meeting's status, a metric with values…). */
  variant: number;
  path: Record<string, PathValue>;
  /** Query pairs, both sides already encoded. */
  query: [string, string][];
  body: BodySpec;
  /** Header fields of the contract's header parameters (Idempotency-Key, If-Match, If-None-Match). */
  headers: [string, string][];
  /** What was done to a valid request; `valid` when nothing. */
  mutation: string;
}

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: Schema;
}

const parametersOf = (op: ContractOperation): Parameter[] =>
  [...(op.pathItem.parameters ?? []), ...(op.operation.parameters ?? [])].map((parameter) => resolve(parameter as Schema) as unknown as Parameter);

export const bodySchemaOf = (op: ContractOperation): Schema | undefined =>
  (resolve(op.operation.requestBody as Schema) as { content?: Record<string, { schema?: Schema }> }).content?.['application/json']?.schema;

/** The file a CSV import's contract shows (its first request example), or undefined for an operation that takes JSON. */
export const csvExampleOf = (op: ContractOperation): string | undefined => {
  const csv = (resolve(op.operation.requestBody as Schema) as { content?: Record<string, { examples?: Record<string, Schema> }> } | undefined)?.content?.['text/csv'];
  const [example] = Object.values(csv?.examples ?? {});
  return example === undefined ? undefined : String((resolve(example) as { value?: unknown }).value);
};

const asText = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value) ?? 'undefined');
const unreserved = /[A-Za-z0-9\-_.~]/;
/** Percent-encoding of the UTF-8 bytes (a lone surrogate goes as U+FFFD, as `fetch` would send it). */
const encoded = (value: unknown) =>
  [...Buffer.from(asText(value), 'utf8')].map((byte) => (unreserved.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`)).join('');

/** Segments written as they go on the wire: malformed percent-encoding, encoded slashes, NULs. */
const rawSegments = ['%00', 'a%00b', '%FF', '%E0%A4%A', '%', '%zz', '%2F', '%C0%AE', 'a%20b', '%0A', '%u0000', '%EF%BF%BF', '%F0%9F%98%80', '%ED%A0%80'];
const rawQueryValues = ['%00', '%FF', '%', '%zz', '%E0%A4%A', '+', '%2B', '%26', '%3D', '%0D%0A', '%ED%A0%80'];
const unknownQueryNames = ['foo', 'Limit', 'LIMIT', 'limit[]', '__proto__', 'constructor', 'hasOwnProperty', 'toString', '', '%00', 'cursor ', 'q'];

const base64url = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

/**
 * Sort values of every kind a list may be ordered by, valid and hostile: instants and days at the
 * edges of what JavaScript and PostgreSQL can hold, ids with NUL, numbers past every integer range.
 */
/** A year as four digits, often at the edges: 0000 (which PostgreSQL has not), 0001, 9999. */
const sortYear = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(0, 1, 9999) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 9999 }) }).map((year) => String(year).padStart(4, '0'));
const sortInstant = fc.oneof(
  { weight: 3, arbitrary: fc.tuple(sortYear, fc.date({ min: new Date('2026-01-01T00:00:00Z'), max: new Date('2026-12-31T00:00:00Z'), noInvalidDate: true })).map(([year, date]) => `${year}${date.toISOString().slice(4)}`) },
  { weight: 1, arbitrary: fc.constantFrom('+275760-09-13T00:00:00.000Z', '-000001-01-01T00:00:00.000Z', '2026-11-16T09:00:00Z', '2026-02-30T00:00:00.000Z', '2026-11-16T09:00:00.000+01:00') },
);
const sortDay = fc.oneof(
  { weight: 3, arbitrary: fc.tuple(sortYear, fc.date({ min: new Date('2026-01-01T00:00:00Z'), max: new Date('2026-12-31T00:00:00Z'), noInvalidDate: true })).map(([year, date]) => `${year}${date.toISOString().slice(4, 10)}`) },
  { weight: 1, arbitrary: fc.constantFrom('1900-02-29', '2026-02-30', '2026-11-16T00:00:00.000Z', '+275760-09-13', '2026-1-1') },
);
const sortText = fc.oneof(fc.uuid(), fc.constantFrom('\u0000', 'a\u0000b', '', ' ', 'x'.repeat(400), '\ud800', '😀', "'", '"', '\\'), fc.string({ maxLength: 8 }));
const sortNumber = fc.oneof(fc.integer(), fc.constantFrom(1e308, -1e308, 2 ** 31, -(2 ** 31) - 1, 2 ** 63, 1.5, -1, 0));
const sortOther = fc.constantFrom(null, true, [], {}, 1e308);
const sortValue = fc.oneof(sortInstant, sortDay, sortText, sortNumber, sortOther);

/** Cursors: arrays of sort values of the shapes lists are ordered by, other JSON, random bytes, broken encodings. */
const cursorArbitrary: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.oneof(fc.tuple(sortInstant, sortText), fc.tuple(sortDay, sortInstant, sortText), fc.tuple(sortDay), fc.tuple(sortText), fc.tuple(sortNumber, sortText)).map((values) => base64url(JSON.stringify(values))) },
  { weight: 2, arbitrary: fc.array(sortValue, { minLength: 0, maxLength: 4 }).map((values) => base64url(JSON.stringify(values))) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((value) => base64url(JSON.stringify(value))) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).map((text) => Buffer.from(text, 'latin1').toString('base64url')) },
  { weight: 1, arbitrary: fc.constantFrom('', 'x', '====', 'eyJ', 'e30', 'W10', 'bnVsbA', 'x'.repeat(501), 'a+b/c=', '%00', 'W251bGxd', 'WzFdCg') },
);

/**
 * Real cursors with one sort value replaced by a hostile one of the same kind (an instant by an
 * instant at the edges, a day by a day, text by text): the shape is right, so the value reaches
 * the query unless the cursor check stops it.
 */
function mutatedCursor(real: unknown[]): fc.Arbitrary<string> {
  const kindOf = (value: unknown) =>
    typeof value !== 'string' ? sortNumber : /^\d{4}-\d\d-\d\dT/.test(value) ? sortInstant : /^\d{4}-\d\d-\d\d$/.test(value) ? sortDay : sortText;
  return fc
    .nat(real.length - 1)
    .chain((index) => fc.oneof({ weight: 4, arbitrary: kindOf(real[index]) }, { weight: 1, arbitrary: sortOther }).map((value) => real.map((item, i) => (i === index ? value : item))))
    .map((values) => base64url(JSON.stringify(values)));
}

/** A query parameter left out or sent valid (a cursor is opaque: none made up here is valid, so it is left out). */
function validQuery(parameter: Parameter, pool: IdPool): fc.Arbitrary<[string, string] | undefined> {
  if (parameter.name === 'cursor') return fc.constant(undefined);
  // A list goes as its items separated by commas, as its parameter's `style: form`, `explode: false` says.
  const value = validValue(resolve(parameter.schema), pool, parameter.name).map(
    (valid) => [encoded(parameter.name), Array.isArray(valid) ? valid.map(encoded).join(',') : encoded(valid)] as [string, string],
  );
  return fc.oneof(fc.constant(undefined), value);
}

/** A real cursor, or its sort values when the cursor is their JSON; a sealed one (the feeds') is its own text. */
export type RealCursor = unknown[] | string;

const base64urlCharacter = fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_');

/** A sealed cursor with one character changed, cut short or lengthened: none of them may open. */
function tamperedCursor(real: string): fc.Arbitrary<string> {
  return fc.oneof(
    fc.tuple(fc.nat(real.length - 1), base64urlCharacter).map(([index, character]) => real.slice(0, index) + character + real.slice(index + 1)),
    fc.nat(real.length - 1).map((length) => real.slice(0, length)),
    fc.string({ unit: base64urlCharacter, minLength: 1, maxLength: 8 }).map((tail) => real + tail),
  );
}

function hostileQuery(parameter: Parameter, realCursor?: RealCursor): fc.Arbitrary<[string, string]> {
  const name = encoded(parameter.name);
  const choices: fc.WeightedArbitrary<string>[] = [
    { weight: 3, arbitrary: hostileValue(resolve(parameter.schema)).map(encoded) },
    { weight: 1, arbitrary: fc.constantFrom(...rawQueryValues) },
  ];
  if (parameter.name === 'cursor') {
    choices.push({ weight: 4, arbitrary: cursorArbitrary.map(encoded) });
    if (typeof realCursor === 'string') choices.push({ weight: 8, arbitrary: tamperedCursor(realCursor).map(encoded) });
    else if (realCursor?.length) choices.push({ weight: 8, arbitrary: mutatedCursor(realCursor).map(encoded) });
  }
  return fc.oneof(...choices).map((value) => [name, value] as [string, string]);
}

/** Path segments refer to no item of the world (the fixtures make those), so no change can wear the world out. */
const noItems: IdPool = { any: [], byField: {} };

// `fetch` resolves `.` and `..` (also as %2e) before sending, which would send the request elsewhere.
const usable = (segment: string) => !/^(|\.|\.\.)$/.test(segment.replace(/%2e/gi, '.'));

/** The existing item, or for a parameter of values (a week, a provider type) a valid value; sometimes an unknown id. */
function validPath(parameter: Parameter): fc.Arbitrary<PathValue> {
  const schema = resolve(parameter.schema);
  if (valueParameters.includes(parameter.name)) {
    return validValue(schema, noItems, parameter.name).map((value) => ({ segment: encoded(value), valid: true }) as PathValue);
  }
  return fc.oneof({ weight: 6, arbitrary: fc.constant({ existing: true } as PathValue) }, { weight: 1, arbitrary: fc.uuid().map((id) => ({ segment: id, valid: true }) as PathValue) });
}

function hostilePath(parameter: Parameter): fc.Arbitrary<PathValue> {
  const schema = resolve(parameter.schema);
  return fc
    .oneof({ weight: 4, arbitrary: hostileValue(schema).map(encoded) }, { weight: 1, arbitrary: fc.constantFrom(...rawSegments) })
    .filter(usable)
    .map((segment) => ({ segment }) as PathValue);
}

const contentTypes = [
  'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1', 'application/json; charset=utf-16',
  'application/json; charset=UTF-8', 'application/merge-patch+json', 'application/vnd.api+json', 'application/xml', 'application/json;;', 'json', '*/*',
];
const brokenJson = ['{', '}', '{"a":}', '[1,]', "{'a':1}", 'nul', 'undefined', '{"a":1}{"b":2}', '\u0000', '{"a":"\\u00"}', '{"a":"\ud800"}', '"', '{"a":1,}', ' ', 'NaN', '{"a":Infinity}', '\ufeff{}', '{"__proto__":{"admin":true}}'];
const wholeBodies: unknown[] = [null, [], [{}], 'text', '', 0, -1, 1e308, true, false, {}];

function validBody(op: ContractOperation, pool: IdPool): fc.Arbitrary<BodySpec> {
  const csv = csvExampleOf(op);
  if (csv !== undefined) return fc.constant({ kind: 'raw', text: csv, contentType: 'text/csv' } as BodySpec);
  const schema = bodySchemaOf(op);
  return schema ? validValue(schema, pool).map((value) => ({ kind: 'json', value }) as BodySpec) : fc.constant({ kind: 'none' } as BodySpec);
}

/**
 * A valid body with a structural extreme as the whole body or at one of its places, or written as
 * a second value of one of its keys (before or after a valid one, so that either may be the one
 * read).
 */
function extremeBody(valid: fc.Arbitrary<unknown>, slots: Slot[], pool: IdPool): fc.Arbitrary<{ body: BodySpec; mutation: string }> {
  const keyed = slots.filter((slot) => typeof slot.path.at(-1) === 'string');
  const at = fc.constantFrom<(string | number)[]>([], ...slots.map((slot) => slot.path));
  const placed = fc.tuple(valid, at, fragmentArbitrary).map(([value, path, fragment]) => ({
    body: { kind: 'spliced', value, path, fragment } as BodySpec,
    mutation: `${describeFragment(fragment)} at ${path.join('.') || 'the body'}`,
  }));
  if (!keyed.length) return placed;
  const duplicated = fc
    .tuple(valid, fc.constantFrom(...keyed), fragmentArbitrary, fc.boolean())
    .chain(([value, slot, fragment, fragmentFirst]) =>
      validValue(slot.schema, pool, String(slot.path.at(-1))).map((other) => ({
        body: { kind: 'spliced', value, path: slot.path, fragment, duplicate: { other, fragmentFirst } } as BodySpec,
        mutation: `${slot.path.join('.')} twice, ${fragmentFirst ? 'first' : 'then'} as ${describeFragment(fragment)}`,
      })),
    );
  return fc.oneof({ weight: 3, arbitrary: placed }, { weight: 1, arbitrary: duplicated });
}

/** Bodies that are wrong for the operation in one way; none for a GET. */
/** CSV files broken in one way each: the format, the encoding's traces, formulas, the header. */
const brokenCsv = ['"never closed\r\n', 'title\r\na,b\r\n', 'title\r\n', '', '\ufeff', '=1+1\r\n@x\r\n', 'title\r\n"a"b\r\n', '\u0000t\u0000i', 'a,a\r\n1,2\r\n', ',,,\r\n,,,\r\n', '\r\n\r\n', 'title\r\n' + '-x\r\n'.repeat(50)];

/** A CSV import's bodies that are wrong in one way: none, a broken file, any text, another media type. */
function hostileCsv(csv: string): fc.Arbitrary<{ body: BodySpec; mutation: string }> {
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant({ body: { kind: 'none' } as BodySpec, mutation: 'no body' }) },
    { weight: 3, arbitrary: fc.constantFrom(...brokenCsv).map((text) => ({ body: { kind: 'raw', text, contentType: 'text/csv' } as BodySpec, mutation: 'a broken CSV file' })) },
    { weight: 2, arbitrary: fc.string({ maxLength: 200 }).map((text) => ({ body: { kind: 'raw', text, contentType: 'text/csv' } as BodySpec, mutation: 'any text as CSV' })) },
    { weight: 1, arbitrary: fc.constantFrom(...contentTypes).map((contentType) => ({ body: { kind: 'raw', text: csv, contentType } as BodySpec, mutation: `content type ${contentType}` })) },
  );
}

/** Bodies that are wrong for the operation in one way; none for a GET. */
function hostileBody(op: ContractOperation, pool: IdPool): fc.Arbitrary<{ body: BodySpec; mutation: string }> | undefined {
  const csv = csvExampleOf(op);
  if (csv !== undefined) return hostileCsv(csv);
  const schema = bodySchemaOf(op);
  if (op.method === 'get') return undefined;
  if (!schema) {
    return fc.oneof(
      { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((value) => ({ body: { kind: 'json', value } as BodySpec, mutation: 'a body where none is expected' })) },
      { weight: 1, arbitrary: fc.constantFrom(...brokenJson).map((text) => ({ body: { kind: 'raw', text, contentType: 'application/json' } as BodySpec, mutation: 'broken JSON where no body is expected' })) },
      { weight: 1, arbitrary: extremeBody(fc.constant(undefined), [], pool) },
    );
  }
  const valid = validValue(schema, pool);
  const slots = slotsOf(schema);
  const choices: fc.WeightedArbitrary<{ body: BodySpec; mutation: string }>[] = [
    { weight: 1, arbitrary: fc.constant({ body: { kind: 'none' }, mutation: 'no body' }) },
    { weight: 1, arbitrary: fc.tuple(valid, hostileValue({})).map(([value, extra]) => ({ body: { kind: 'json', value: withValueAt(value, ['unexpected'], extra) }, mutation: 'an extra field' })) },
    { weight: 1, arbitrary: fc.constantFrom(...wholeBodies).map((value) => ({ body: { kind: 'json', value }, mutation: 'a body of another type' })) },
    { weight: 1, arbitrary: fc.constantFrom(...brokenJson).map((text) => ({ body: { kind: 'raw', text, contentType: 'application/json' }, mutation: 'broken JSON' })) },
    {
      weight: 1,
      arbitrary: fc.tuple(valid, fc.constantFrom(65_535, 65_536, 65_537, 65_536 + 1024)).map(([value, bytes]) => ({ body: { kind: 'sized', bytes, value }, mutation: `a body of ${bytes} bytes` })),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(valid, fc.constantFrom(...contentTypes)).map(([value, contentType]) => ({ body: { kind: 'json', value, contentType }, mutation: `content type ${contentType}` })),
    },
    { weight: 5, arbitrary: extremeBody(valid, slots, pool) },
  ];
  if (slots.length) {
    const slot = fc.constantFrom(...slots);
    choices.push(
      { weight: 3, arbitrary: fc.tuple(valid, slot).map(([value, { path }]) => ({ body: { kind: 'json', value: withValueAt(value, path, undefined, true) }, mutation: `without ${path.join('.')}` })) },
      {
        weight: 10,
        arbitrary: fc
          .tuple(valid, slot)
          .chain(([value, { path, schema: at }]) =>
            hostileValue(at).map((hostile) => ({ body: { kind: 'json', value: withValueAt(value, path, hostile) } as BodySpec, mutation: `hostile ${path.join('.')}` })),
          ),
      },
      { weight: 2, arbitrary: fc.tuple(valid, slot).map(([value, { path }]) => ({ body: { kind: 'json', value: withValueAt(value, path, null) }, mutation: `null ${path.join('.')}` })) },
    );
  }
  return fc.oneof(...choices);
}

/** The callers who can get past the permission checks of an operation, asked for more often. */
const privileged = (op: ContractOperation): CallerName[] =>
  op.path.startsWith('/platform') ? ['superadmin', 'superadminMember'] : ['orgOwner', 'orgAdmin', 'teamOwner', 'teamAdmin', 'teamMember'];

type Target = { kind: 'none' | 'caller' | 'unknownQuery' | 'body' } | { kind: 'path' | 'query' | 'header'; parameter: Parameter };

/**
 * Values of the header parameters a client might send by mistake or on purpose: empty, padded, at
 * and past the key's 255 characters, quotes unbalanced or escaped, lists, weak and wildcard tags,
 * Latin-1 text, and very long values. (fetch refuses control characters other than tab and
 * characters past U+00FF, so those cannot be sent.)
 */
const hostileHeaderValues = [
  '',
  ' ',
  '\t',
  'a\tb',
  'k'.repeat(255),
  'k'.repeat(256),
  `"${'k'.repeat(255)}"`,
  `"${'k'.repeat(256)}"`,
  '"',
  '""',
  '"abc',
  'abc"',
  '"a\\"b"',
  '"a"b"',
  '*',
  '**',
  'W/"x"',
  'W/',
  '"x", W/"y"',
  ',',
  ', ,',
  '"x",,"y"',
  'ÿé',
  '"é"',
  'x'.repeat(8_000),
  `"${'x'.repeat(8_000)}"`,
];

const hex = (length: number) => fc.stringMatching(new RegExp(`^[0-9a-f]{${length}}$`));

/**
 * `traceparent` fields, sent beside whatever else a request is: well-formed ones (which are continued)
 * and every kind of malformed one (which must be ignored: never a 4xx or 5xx of its own).
 */
const traceparentArbitrary: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(hex(2), hex(32), hex(16), hex(2)).map((fields) => fields.join('-')),
  fc.tuple(hex(32), hex(16)).map(([trace, span]) => `00-${trace}-${span}-01`),
  fc.constantFrom(
    '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
    '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
    'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    '00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01',
    '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra',
    '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01,00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    '',
    '-',
    '00--',
    'ak_' + 'k'.repeat(43),
    `00-${'a'.repeat(600)}`,
    'ÿé',
  ),
  fc.stringMatching(/^[\x21-\x7e][\x20-\x7e]{0,80}$/),
);

/**
 * Requests that are valid but for at most one target: the caller, one path parameter, one query
 * parameter, an unknown query parameter, or the body. One change at a time reaches deeper than
 * many, which the first check to fail would hide. `realCursor`: the sort values of a real
 * `nextCursor` of this list, when the fuzzer could get one.
 */
export function requestArbitrary(op: ContractOperation, pool: IdPool, realCursor?: RealCursor): fc.Arbitrary<FuzzRequest> {
  const parameters = parametersOf(op);
  const pathParameters = parameters.filter((parameter) => parameter.in === 'path');
  const queryParameters = parameters.filter((parameter) => parameter.in === 'query');
  const headerParameters = parameters.filter((parameter) => parameter.in === 'header');
  const badBody = hostileBody(op, pool);
  const targets: fc.WeightedArbitrary<Target>[] = [
    { weight: 3, arbitrary: fc.constant({ kind: 'none' } as Target) },
    { weight: 1, arbitrary: fc.constant({ kind: 'caller' } as Target) },
    { weight: 1, arbitrary: fc.constant({ kind: 'unknownQuery' } as Target) },
    ...pathParameters.map((parameter) => ({ weight: 1, arbitrary: fc.constant({ kind: 'path', parameter } as Target) })),
    ...queryParameters.map((parameter) => ({ weight: parameter.name === 'cursor' ? 3 : 1, arbitrary: fc.constant({ kind: 'query', parameter } as Target) })),
    ...headerParameters.map((parameter) => ({ weight: 1, arbitrary: fc.constant({ kind: 'header', parameter } as Target) })),
    ...(badBody ? [{ weight: bodySchemaOf(op) ? 6 : 1, arbitrary: fc.constant({ kind: 'body' } as Target) }] : []),
  ];
  return fc.oneof(...targets).chain((target) => {
    const aimed = (kind: Target['kind'], parameter?: Parameter) => target.kind === kind && (!parameter || ('parameter' in target && target.parameter === parameter));
    const path = fc.record(Object.fromEntries(pathParameters.map((parameter) => [parameter.name, aimed('path', parameter) ? hostilePath(parameter) : validPath(parameter)])));
    const query = fc
      .tuple(
        fc.tuple(...queryParameters.map((parameter) => (aimed('query', parameter) ? hostileQuery(parameter, realCursor) : validQuery(parameter, pool)))),
        aimed('unknownQuery')
          ? fc.oneof(
              fc.tuple(fc.constantFrom(...unknownQueryNames), fc.string({ maxLength: 5 })).map(([name, value]) => [[encoded(name), encoded(value)]] as [string, string][]),
              fc.constantFrom(...(queryParameters.length ? queryParameters : [{ name: 'limit' }])).map((parameter) => [[parameter.name, '1'], [parameter.name, '2']] as [string, string][]),
            )
          : fc.constant([] as [string, string][]),
      )
      .map(([declared, extra]) => [...declared.filter((pair): pair is [string, string] => pair !== undefined), ...extra]);
    const headers =
      target.kind === 'header'
        ? fc.constantFrom(...hostileHeaderValues).map((value) => [[target.parameter.name, value]] as [string, string][])
        : fc.constant([] as [string, string][]);
    const caller = aimed('caller') ? fc.constantFrom(...callerNames) : fc.constantFrom(...privileged(op));
    const body = aimed('body') && badBody ? badBody : validBody(op, pool).map((spec) => ({ body: spec, mutation: 'valid' }));
    const mutation =
      target.kind === 'path' || target.kind === 'query' || target.kind === 'header' ? `hostile ${target.kind} parameter ${target.parameter.name}` : target.kind === 'none' ? 'valid' : target.kind === 'body' ? '' : `${target.kind}`;
    // A quarter of the requests carry a traceparent, valid or not: it must change no answer.
    const traceparent = fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: traceparentArbitrary });
    return fc.record({ caller, variant: fc.nat(5), path, query, body, headers, traceparent }).map(({ body: { body: spec, mutation: bodyMutation }, traceparent: trace, ...rest }) => ({
      ...rest,
      headers: trace === null ? rest.headers : [...rest.headers, ['traceparent', trace] as [string, string]],
      body: spec,
      mutation: target.kind === 'body' ? bodyMutation : mutation,
    }));
  });
}

/** The request as sent: the URL (with the existing items filled in), headers and body text. */
export function materialize(op: ContractOperation, request: FuzzRequest, existing: Record<string, string>) {
  const path = op.path.replace(/\{(\w+)\}/g, (_match, name: string) => {
    const value = request.path[name]!;
    return 'segment' in value ? value.segment : encodeURIComponent(existing[name]!);
  });
  const search = request.query.map(([name, value]) => `${name}=${value}`).join('&');
  const url = `/v1${path}${search ? `?${search}` : ''}`;
  const headers: Record<string, string> = Object.fromEntries(request.headers);
  let body: string | undefined;
  const spec = request.body;
  if (spec.kind === 'json') {
    body = JSON.stringify(spec.value) ?? '';
    headers['content-type'] = spec.contentType ?? 'application/json';
  } else if (spec.kind === 'raw') {
    body = spec.text;
    if (spec.contentType) headers['content-type'] = spec.contentType;
  } else if (spec.kind === 'sized') {
    const start = JSON.stringify(withValueAt(spec.value ?? {}, ['padding'], ''));
    const padding = Math.max(0, spec.bytes - Buffer.byteLength(start, 'utf8'));
    body = JSON.stringify(withValueAt(spec.value ?? {}, ['padding'], 'x'.repeat(padding)));
    headers['content-type'] = 'application/json';
  } else if (spec.kind === 'spliced') {
    body = splicedBody(spec.value, spec.path, spec.fragment, spec.duplicate);
    headers['content-type'] = 'application/json';
  }
  return { url, headers, body };
}

/**
 * Requests for one operation of the contract, as fast-check arbitraries: a caller, path parameters
 * (an existing item, an unknown id or a malformed one), query parameters (valid, hostile, unknown),
 * and a body (valid, one field removed or replaced by a hostile value, an extra field, a wrong whole
 * body, broken JSON, 64 KB ± 1, a wrong content type). A request is plain data, printed as is when
 * a property fails; the items it names are made when it is sent.
 */
import fc from 'fast-check';
import type { ContractOperation } from '../support/contract.js';
import { callerNames, type CallerName } from '../permissions/world.js';
import { hostileValue, resolve, slotsOf, validValue, withValueAt, type IdPool, type Schema } from './schemaArbitraries.js';
import { valueParameters } from './fixtures.js';

/** A path parameter: the existing item the fixtures make, or a segment sent exactly as written (already encoded). */
export type PathValue = { existing: true } | { segment: string; valid?: true };

export type BodySpec =
  | { kind: 'none' }
  | { kind: 'json'; value: unknown; contentType?: string }
  | { kind: 'raw'; text: string; contentType?: string }
  /** A JSON body of exactly `bytes` bytes: the valid body padded with one more text field. */
  | { kind: 'sized'; bytes: number; value: unknown };

export interface FuzzRequest {
  caller: CallerName;
  /** Chooses among fixture variants (a meeting's status, a metric with values…). */
  variant: number;
  path: Record<string, PathValue>;
  /** Query pairs, both sides already encoded. */
  query: [string, string][];
  body: BodySpec;
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

/** Cursors: random text, cursors of the right shape carrying hostile sort values, and broken encodings. */
const cursorArbitrary: fc.Arbitrary<string> = fc.oneof(
  fc.array(
    fc.oneof(
      fc.constantFrom(
        '\u0000', 'a\u0000b', '', ' ', 'x'.repeat(400), '2026-11-16T09:00:00.000Z', '0001-01-01T00:00:00.000Z', '+275760-09-13T00:00:00.000Z',
        '2026-02-30', '2026-11-16', '9999-12-31', '0000-01-01', '2026-Q4', '\ud800', '😀', "'", 1e308, -1e308, 2 ** 31, -(2 ** 31) - 1, 2 ** 63, 1.5, -1, 0, null, true, [], {},
      ),
      fc.uuid(),
      fc.integer(),
      fc.string({ maxLength: 8 }),
    ),
    { minLength: 0, maxLength: 4 },
  ).map((values) => base64url(JSON.stringify(values))),
  fc.jsonValue({ maxDepth: 2 }).map((value) => base64url(JSON.stringify(value))),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).map((text) => Buffer.from(text, 'latin1').toString('base64url')),
  fc.constantFrom('', 'x', '====', 'eyJ', 'e30', 'W10', 'bnVsbA', 'x'.repeat(501), 'a+b/c=', '%00', 'W251bGxd', 'WzFdCg'),
);

type QueryPair = { pair: [string, string]; valid: boolean };

function queryArbitrary(parameter: Parameter, pool: IdPool): fc.Arbitrary<QueryPair | undefined> {
  const name = encoded(parameter.name);
  const schema = resolve(parameter.schema);
  const pair = (valid: boolean) => (value: string): QueryPair => ({ pair: [name, value], valid });
  const choices: fc.WeightedArbitrary<QueryPair | undefined>[] = [
    { weight: 4, arbitrary: fc.constant(undefined) },
    // A cursor is opaque: none made up here is valid.
    { weight: 4, arbitrary: validValue(schema, pool, parameter.name).map((value) => pair(parameter.name !== 'cursor')(encoded(value))) },
    { weight: 3, arbitrary: hostileValue(schema).map((value) => pair(false)(encoded(value))) },
    { weight: 1, arbitrary: fc.constantFrom(...rawQueryValues).map(pair(false)) },
  ];
  if (parameter.name === 'cursor') choices.push({ weight: 4, arbitrary: cursorArbitrary.map((cursor) => pair(false)(encoded(cursor))) });
  return fc.oneof(...choices);
}

/** Path segments refer to no item of the world (the fixtures make those), so no change can wear the world out. */
const noItems: IdPool = { any: [], byField: {} };

function pathArbitrary(parameter: Parameter): fc.Arbitrary<PathValue> {
  const schema = resolve(parameter.schema);
  const pool = noItems;
  const segment = (arbitrary: fc.Arbitrary<unknown>, valid = false) => arbitrary.map((value) => (valid ? { segment: encoded(value), valid } : { segment: encoded(value) }) as PathValue);
  // `fetch` resolves `.` and `..` (also as %2e) before sending, which would send the request elsewhere.
  const usable = (value: PathValue) => !('segment' in value) || !/^(|\.|\.\.)$/.test(value.segment.replace(/%2e/gi, '.'));
  const fromSchema = valueParameters.includes(parameter.name);
  return fc
    .oneof(
      { weight: fromSchema ? 0 : 8, arbitrary: fc.constant({ existing: true } as PathValue) },
      { weight: fromSchema ? 8 : 1, arbitrary: segment(validValue(schema, pool, parameter.name), true) },
      { weight: 1, arbitrary: segment(fc.uuid(), !fromSchema) },
      { weight: 3, arbitrary: segment(hostileValue(schema)) },
      { weight: 1, arbitrary: fc.constantFrom(...rawSegments).map((value) => ({ segment: value }) as PathValue) },
    )
    .filter(usable);
}

const contentTypes = [
  'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1', 'application/json; charset=utf-16',
  'application/json; charset=UTF-8', 'application/merge-patch+json', 'application/vnd.api+json', 'application/xml', 'application/json;;', 'json', '*/*',
];
const brokenJson = ['{', '}', '{"a":}', '[1,]', "{'a':1}", 'nul', 'undefined', '{"a":1}{"b":2}', '\u0000', '{"a":"\\u00"}', '{"a":"\ud800"}', '"', '{"a":1,}', ' ', 'NaN', '{"a":Infinity}', '\ufeff{}', '{"__proto__":{"admin":true}}'];
const wholeBodies: unknown[] = [null, [], [{}], 'text', '', 0, -1, 1e308, true, false, {}];

function bodyArbitrary(op: ContractOperation, pool: IdPool): fc.Arbitrary<{ body: BodySpec; mutation: string }> {
  const schema = bodySchemaOf(op);
  const canSend = op.method !== 'get';
  if (!schema) {
    return fc.oneof(
      { weight: 8, arbitrary: fc.constant({ body: { kind: 'none' } as BodySpec, mutation: 'valid' }) },
      { weight: canSend ? 1 : 0, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((value) => ({ body: { kind: 'json', value } as BodySpec, mutation: 'a body where none is expected' })) },
      { weight: canSend ? 1 : 0, arbitrary: fc.constantFrom(...brokenJson).map((text) => ({ body: { kind: 'raw', text, contentType: 'application/json' } as BodySpec, mutation: 'broken JSON where no body is expected' })) },
    );
  }
  const valid = validValue(schema, pool);
  const slots = slotsOf(schema);
  const choices: fc.WeightedArbitrary<{ body: BodySpec; mutation: string }>[] = [
    { weight: 5, arbitrary: valid.map((value) => ({ body: { kind: 'json', value }, mutation: 'valid' })) },
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

export function requestArbitrary(op: ContractOperation, pool: IdPool): fc.Arbitrary<FuzzRequest> {
  const parameters = parametersOf(op);
  const pathParameters = parameters.filter((parameter) => parameter.in === 'path');
  const queryParameters = parameters.filter((parameter) => parameter.in === 'query');
  const path = fc.record(Object.fromEntries(pathParameters.map((parameter) => [parameter.name, pathArbitrary(parameter)])));
  const query = fc
    .tuple(
      fc.tuple(...queryParameters.map((parameter) => queryArbitrary(parameter, pool))),
      fc.oneof(
        { weight: 6, arbitrary: fc.constant([] as [string, string][]) },
        { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...unknownQueryNames), fc.string({ maxLength: 5 })).map(([name, value]) => [[encoded(name), encoded(value)]] as [string, string][]) },
        {
          weight: queryParameters.length ? 1 : 0,
          arbitrary: fc.constantFrom(...(queryParameters.length ? queryParameters : [{ name: 'x' }])).map((parameter) => [[parameter.name, '1'], [parameter.name, '2']] as [string, string][]),
        },
      ),
    )
    .map(([declared, extra]) => {
      const sent = declared.filter((pair): pair is QueryPair => pair !== undefined);
      return { pairs: [...sent.map((one) => one.pair), ...extra], valid: extra.length === 0 && sent.every((one) => one.valid) };
    });
  const caller = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...privileged(op)) }, { weight: 1, arbitrary: fc.constantFrom(...callerNames) });
  return fc
    .record({ caller, variant: fc.nat(5), path, query, body: bodyArbitrary(op, pool) })
    .map(({ body, query: { pairs, valid }, ...rest }) => {
      const pathChanged = Object.values(rest.path).some((value) => 'segment' in value && !value.valid);
      const mutation = [body.mutation, pathChanged ? 'a malformed path parameter' : '', valid ? '' : 'a hostile query'].filter(Boolean).join(', ');
      return { ...rest, query: pairs, body: body.body, mutation };
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
  const headers: Record<string, string> = {};
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
  }
  return { url, headers, body };
}

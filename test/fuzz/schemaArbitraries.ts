/**
 * fast-check arbitraries written from the contract's JSON schemas: values that satisfy a schema
 * (types, enums, consts, formats, the contract's patterns, length and range bounds, oneOf branches,
 * strict and open objects), and hostile values for one place in it (wrong types, `null`, bounds
 * and one past them, huge numbers, control characters and NUL bytes, long unicode, malformed days,
 * quarters, instants and ids). `$ref`s are followed in the bundled document.
 */
import fc from 'fast-check';
import { contract } from '../support/contract.js';

export interface Schema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  multipleOf?: number;
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  minProperties?: number;
  maxProperties?: number;
  propertyNames?: Schema;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
  'x-stored-as-sent'?: boolean;
}

/** The schema a `$ref` names (repeatedly), with `allOf` parts merged into one object schema. */
export function resolve(schema: Schema | undefined): Schema {
  let current = schema ?? {};
  while (current.$ref) {
    const pointer = current.$ref.replace(/^#\//, '').split('/');
    current = pointer.reduce<any>((node, key) => node[key.replaceAll('~1', '/').replaceAll('~0', '~')], contract) as Schema;
  }
  if (current.allOf) {
    const parts = current.allOf.map(resolve);
    return {
      type: 'object',
      properties: Object.assign({}, ...parts.map((part) => part.properties ?? {})),
      required: parts.flatMap((part) => part.required ?? []),
    };
  }
  return current;
}

/** Existing ids the valid values refer to (members, meetings, seats, providers…), by field name. */
export interface IdPool {
  any: string[];
  byField: Record<string, string[]>;
}

const zones = ['Europe/Bratislava', 'UTC', 'America/New_York', 'Asia/Kolkata', 'Pacific/Chatham', 'Australia/Lord_Howe'];
const goals = ['>=25', '< 3', '= 10 %', '<=1,5', '100', '>0,500', 'keep it green', '>= -2'];
const metricValues = ['12', '1,500', '3.5%', '-2', '1 234,5', 'on holiday', '0', '99.999'];

const words = fc.stringMatching(/^[A-Za-z][A-Za-z .,'-]{0,38}[A-Za-z.]$/);
const uuid = fc.uuid({ version: 4 });

const typesOf = (schema: Schema): string[] => (Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : []);

function stringArbitrary(schema: Schema, field: string | undefined, pool: IdPool): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0;
  const max = schema.maxLength ?? 1000;
  if (schema.format === 'date' || schema.pattern?.includes('(0[1-9]|1[0-2])')) {
    return fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-12-31T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
  }
  if (schema.format === 'date-time') {
    return fc
      .tuple(fc.date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2026-11-01T00:00:00Z'), noInvalidDate: true }), fc.constantFrom('Z', '+01:00', '-05:30', '+14:00'))
      .map(([d, zone]) => {
        const shifted = zone === 'Z' ? d : new Date(d.getTime() + offsetMinutes(zone) * 60_000);
        return shifted.toISOString().replace('Z', zone === 'Z' ? 'Z' : zone);
      });
  }
  if (schema.format === 'email') return fc.tuple(fc.stringMatching(/^[a-z][a-z0-9]{0,12}(\.[a-z0-9]{1,8})?$/), fc.constantFrom('example.com', 'northwind.example')).map(([local, host]) => `${local}@${host}`);
  if (schema.pattern?.includes('-Q[1-4]')) return fc.tuple(fc.integer({ min: 2000, max: 2100 }), fc.integer({ min: 1, max: 4 })).map(([y, q]) => `${y}-Q${q}`);
  if (schema.pattern?.includes('[Hh][Tt][Tt][Pp]')) {
    return fc.webUrl({ validSchemes: ['http', 'https'] }).filter((url) => url.length <= max && !/\s/.test(url));
  }
  if (schema.pattern) return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length >= min && s.length <= max);
  if (field && /^(id|ids|ownerId|userId|meetingId|parentId|providerId)$/.test(field)) {
    const known = pool.byField[field] ?? pool.any;
    return known.length ? fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...known) }, { weight: 1, arbitrary: uuid }) : uuid;
  }
  if (field === 'timezone') return fc.constantFrom(...zones);
  if (field === 'goal') return fc.constantFrom(...goals);
  if (field === 'value' && max === 50) return fc.constantFrom(...metricValues);
  if (field === 'password' || field === 'apiKey') return fc.stringMatching(/^[A-Za-z0-9]{12,24}$/).map((s) => `${field === 'apiKey' ? 'sk-' : 'pw-'}${s}`);
  const text = fc.oneof({ weight: 6, arbitrary: words }, { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }) }, { weight: 1, arbitrary: fc.constant('x'.repeat(Math.max(min, 1)).padEnd(Math.min(max, 20_000), 'y')) });
  return text.map((s) => s.trim() || 'x').filter((s) => s.length >= min && s.length <= max);
}

function offsetMinutes(zone: string): number {
  const sign = zone.startsWith('-') ? -1 : 1;
  const [hours, minutes] = zone.slice(1).split(':').map(Number);
  return sign * (hours! * 60 + minutes!);
}

/** Values that satisfy `schema` (as the server reads them: texts that survive trimming). */
export function validValue(raw: Schema | undefined, pool: IdPool, field?: string, depth = 0): fc.Arbitrary<unknown> {
  const schema = resolve(raw);
  if ('const' in schema) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if (schema.oneOf ?? schema.anyOf) return fc.oneof(...(schema.oneOf ?? schema.anyOf)!.map((branch) => validValue(branch, pool, field, depth)));
  const types = typesOf(schema);
  if (types.length > 1) return fc.oneof(...types.map((type) => validValue({ ...schema, type }, pool, field, depth)));
  switch (types[0]) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1000 });
    case 'number':
      return schema.multipleOf === 1
        ? fc.integer({ min: Math.ceil(schema.minimum ?? -1000), max: Math.floor(schema.maximum ?? 1000) })
        : fc.double({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1000, noNaN: true, noDefaultInfinity: true });
    case 'array': {
      const items = validValue(schema.items, pool, field, depth + 1);
      const size = { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 4, 4) };
      return schema.uniqueItems ? fc.uniqueArray(items, { ...size, selector: (item) => JSON.stringify(item) }) : fc.array(items, size);
    }
    case 'object':
      return objectValue(schema, pool, depth);
    default:
      return stringArbitrary(schema, field, pool);
  }
}

function objectValue(schema: Schema, pool: IdPool, depth: number): fc.Arbitrary<unknown> {
  const properties = schema.properties ?? {};
  if (Object.keys(properties).length === 0 && typeof schema.additionalProperties === 'object') {
    const names = validValue({ type: 'string', ...schema.propertyNames, maxLength: Math.min(schema.propertyNames?.maxLength ?? 40, 40) }, pool);
    const values = validValue(schema.additionalProperties, pool, undefined, depth + 1);
    return fc.dictionary(names as fc.Arbitrary<string>, values, { minKeys: schema.minProperties ?? 0, maxKeys: Math.min(schema.maxProperties ?? 4, 4) });
  }
  const shape = Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, validValue(property, pool, name, depth + 1)]));
  const record = fc.record(shape, { requiredKeys: schema.required ?? [] });
  const min = schema.minProperties ?? 0;
  return min ? record.filter((value) => Object.keys(value).length >= min) : record;
}

// ------------------------------------------------------------------------------------------------
// Hostile values

const controlCharacters = ['\u0000', 'a\u0000b', '\u0000'.repeat(3), '\u0001\u0002\u001f', '\u007f', '\u0008\u000b\u000c', '\u2028\u2029', '\ufeff', '\u200b', 'line\nbreak\r\n'];
const blank = ['', ' ', '   ', '\t', '\n', '\u00a0', '\u3000'];
const unicode = ['é'.repeat(300), '😀'.repeat(300), 'ﷺ'.repeat(1500), '\ud800', 'a\udfff', 'Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǧ̗͚̚o̙̔ͮ̇͐̇', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢'.repeat(80)];
const oddIds = ['not-an-id', '00000000-0000-0000-0000-000000000000', 'FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF', '-1', '0', '1e400', "'", '"', '\\', '%', '..', 'x'.repeat(101), 'x'.repeat(5000)];
const oddDays = ['2026-02-30', '2026-13-01', '2026-00-10', '2026-1-5', '1999-12-31', '2101-01-01', '0000-01-01', '9999-12-31', '275760-09-13', '-000001-01-01', '2026-11-23T00:00:00Z', '20261123', '2026-W48', '2024-02-29', '2100-12-31', '2000-01-01'];
const oddInstants = [
  '2026-11-23T10:00:00', '2026-11-23 10:00:00Z', '2026-11-23T25:00:00Z', '2026-11-23T10:60:00Z', '2026-02-30T10:00:00Z', '1970-01-01T00:00:00Z',
  '0001-01-01T00:00:00Z', '1899-12-31T23:59:59Z', '9999-12-31T23:59:59.999Z', '+275760-09-13T00:00:00Z', '2026-11-23T10:00:00.123456789Z',
  '2026-11-23T10:00:00+24:00', '2026-11-23T10:00:00+99:99', '2099-01-01T00:00:00Z', '2026-11-23T10:00:00-23:59', '2026-11-23t10:00:00z', '2100-12-31T23:00:00-12:00',
];
const oddQuarters = ['2026-Q0', '2026-Q5', '1999-Q4', '2101-Q1', '2026Q1', '2026-q1', '99999-Q1', '2026-Q1 ', '2100-Q4', '2000-Q1'];
const oddEmails = ['a@b', '@example.com', 'a@', 'a b@example.com', 'a\u0000@example.com', `${'x'.repeat(250)}@e.com`, 'UPPER@EXAMPLE.COM', 'a@[127.0.0.1]', '"quoted"@example.com'];
const oddUrls = ['javascript:alert(1)', 'https://', 'https://:443/', 'http://[::1', 'ftp://example.com', 'https://exa mple.com', `https://e.com/${'x'.repeat(2000)}`, 'HTTPS://EXAMPLE.COM', 'https://\u0000.com', 'https://%00'];
const hugeNumbers = [2 ** 31 - 1, 2 ** 31, -(2 ** 31), -(2 ** 31) - 1, 2 ** 53, 2 ** 63, -(2 ** 63), 1e308, -1e308, 1e21, -1, 0, -0, 0.5, 1e-7, 123456789.123];
const wrongTypes: unknown[] = [null, true, false, 0, 1, -1, 1.5, 'x', '1', 'true', 'null', [], [null], ['x'], {}, { a: 1 }, [[[]]]];

/** Strings exactly at, and one past, every length bound (in code points, as Ajv counts). */
function lengthEdges(schema: Schema): string[] {
  const edges: string[] = [];
  const fill = (n: number, unit = 'a') => (n < 0 ? undefined : unit.repeat(n));
  for (const n of [schema.minLength !== undefined ? schema.minLength - 1 : undefined, schema.minLength, schema.maxLength, schema.maxLength !== undefined ? schema.maxLength + 1 : undefined]) {
    if (n === undefined) continue;
    for (const unit of ['a', 'é', '😀', ' ']) {
      const value = fill(n, unit);
      if (value !== undefined) edges.push(value);
    }
  }
  return edges;
}

function rangeEdges(schema: Schema): number[] {
  const edges: number[] = [];
  for (const bound of [schema.minimum, schema.maximum]) {
    if (bound === undefined) continue;
    edges.push(bound, bound - 1, bound + 1, bound - 0.5, bound + 0.5);
  }
  return edges;
}

/** A value that is likely wrong for `schema` at this place, of any kind. */
export function hostileValue(raw: Schema | undefined): fc.Arbitrary<unknown> {
  const schema = resolve(raw);
  const specific: unknown[] = [...lengthEdges(schema), ...rangeEdges(schema)];
  const types = typesOf(schema);
  if (schema.format === 'date' || schema.pattern?.includes('(0[1-9]|1[0-2])')) specific.push(...oddDays);
  if (schema.format === 'date-time') specific.push(...oddInstants);
  if (schema.format === 'email') specific.push(...oddEmails);
  if (schema.pattern?.includes('-Q[1-4]')) specific.push(...oddQuarters);
  if (schema.pattern?.includes('[Hh][Tt][Tt][Pp]')) specific.push(...oddUrls);
  if (schema.enum) specific.push(...schema.enum.map((value) => (typeof value === 'string' ? value.toLowerCase() : value)), ` ${String(schema.enum[0])} `);
  if (types.includes('integer') || types.includes('number')) specific.push(...hugeNumbers, '5', '1e2');
  if (types.includes('string') || types.length === 0) specific.push(...oddIds);
  if (types.includes('array')) specific.push(Array.from({ length: (schema.maxItems ?? 10) + 1 }, (_, i) => `item ${i}`), [''], ['\u0000'], [1, 2]);
  if (types.includes('object')) {
    const many = Object.fromEntries(Array.from({ length: (schema.maxProperties ?? 30) + 1 }, (_, i) => [`key ${i}`, true]));
    specific.push(many, { '': true }, { '\u0000': true }, { ['k'.repeat(201)]: true }, { __proto__: { polluted: true } }, JSON.parse('{"__proto__":{"polluted":true}}'), { constructor: { prototype: {} } });
  }
  const arbitraries: fc.Arbitrary<unknown>[] = [fc.constantFrom(...wrongTypes), fc.constantFrom(...controlCharacters), fc.constantFrom(...blank), fc.constantFrom(...unicode), fc.jsonValue({ maxDepth: 2 })];
  if (specific.length) arbitraries.push(fc.constantFrom(...specific), fc.constantFrom(...specific));
  return fc.oneof(...arbitraries);
}

/** Places in a body schema: a path of property names (and array index 0) with the schema found there. */
export interface Slot {
  path: (string | number)[];
  schema: Schema;
}

export function slotsOf(raw: Schema | undefined, path: (string | number)[] = [], depth = 0): Slot[] {
  const schema = resolve(raw);
  if (depth > 3) return [];
  const branches = schema.oneOf ?? schema.anyOf;
  if (branches) return branches.flatMap((branch) => slotsOf(branch, path, depth));
  const slots: Slot[] = [];
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    slots.push({ path: [...path, name], schema: property });
    slots.push(...slotsOf(property, [...path, name], depth + 1));
  }
  const items = schema.items ? resolve(schema.items) : undefined;
  if (items) slots.push({ path: [...path, 0], schema: items }, ...slotsOf(items, [...path, 0], depth + 1));
  return slots;
}

const isObject = (value: unknown): value is Record<string | number, unknown> => typeof value === 'object' && value !== null;

/** `body` with the value at `path` replaced (or removed when `value` is `remove`); missing parents are made. */
export function withValueAt(body: unknown, path: (string | number)[], value: unknown, remove = false): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  const container = (Array.isArray(body) ? [...body] : isObject(body) ? { ...body } : typeof head === 'number' ? [] : {}) as Record<string | number, unknown>;
  if (remove && rest.length === 0) {
    if (Array.isArray(container)) (container as unknown[]).splice(head as number, 1);
    else delete container[head!];
    return container;
  }
  Object.defineProperty(container, head!, { value: withValueAt(container[head!], rest, value, remove), enumerable: true, writable: true, configurable: true });
  return container;
}

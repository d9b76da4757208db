/**
 * Structural extremes no value built from a schema reaches, written as raw JSON text into a place
 * of a valid body (or as the whole body): arrays and objects nested thousands deep or around the
 * server's limit of 32 levels, very wide arrays and objects, strings that make the body 64 KB ± 1
 * byte, numbers at and past the limits of a double (`1e400`, `-1e-400`, `-0`) and `1.0` where an
 * integer is wanted, lone surrogates as JSON escapes (`"\ud800"`), and a key written twice
 * (`{"title":"a","title":"b"}`).
 * A fragment is plain data, short to print; its text is made when the request is sent.
 */
import fc from 'fast-check';
import { withValueAt } from './schemaArbitraries.js';

export type Fragment =
  /** Arrays, objects, or both in turn, nested `depth` deep around a string. */
  | { nested: 'array' | 'object' | 'mixed'; depth: number }
  /** An array of `width` items, or an object of `width` keys, their values text and numbers in turn. */
  | { wide: 'array' | 'object'; width: number }
  /** A string of `unit` (JSON text of one character) repeated until the whole body has exactly `bodyBytes` bytes. */
  | { fill: string; bodyBytes: number }
  /** JSON text exactly as written. */
  | { text: string };

/** The second occurrence of a key: the fragment written before or after a valid value under the same key. */
export interface Duplicate {
  other: unknown;
  fragmentFirst: boolean;
}

const numbers = ['1e400', '-1e400', '1e-400', '-1e-400', '-0', '-0.0', '1.0', '2.0', '1E2', '5e-324', '1.7976931348623157e308', '9007199254740993', '123456789012345678901234567890', '0.1e1'];
const escapes = ['"\\ud800"', '"\\udfff"', '"a\\ud800b"', '"\\udc00\\ud800"', '"\\ud83d\\ude00"', '"\\u00e9t\\u00e9"', '" \\t\\n "', '{"\\ud800":"x"}', '["\\udfff"]'];

/**
 * The fragments, the likeliest to break something first (fast-check shrinks towards the start of
 * each list). The depths go far past any call stack, and as the whole body sit on the limit of 32
 * levels; the widths and fills stay within 64 KB with the rest of a body, apart from the fills one
 * byte past it.
 */
export const fragmentArbitrary: fc.Arbitrary<Fragment> = fc.oneof(
  { weight: 4, arbitrary: fc.tuple(fc.constantFrom('array', 'object', 'mixed') as fc.Arbitrary<'array' | 'object' | 'mixed'>, fc.constantFrom(2_000, 9_000, 31, 32, 33)).map(([nested, depth]) => ({ nested, depth })) },
  { weight: 1, arbitrary: fc.oneof(fc.constantFrom(1_000, 20_000).map((width) => ({ wide: 'array', width }) as Fragment), fc.constantFrom(1_000, 4_000).map((width) => ({ wide: 'object', width }) as Fragment)) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('x', 'é', '😀', ' ', '\\n', '\\u00e9'), fc.constantFrom(65_536, 65_535, 65_537)).map(([fill, bodyBytes]) => ({ fill, bodyBytes })) },
  { weight: 2, arbitrary: fc.constantFrom(...numbers, ...escapes).map((text) => ({ text })) },
);

function nestedText(kind: 'array' | 'object' | 'mixed', depth: number): string {
  const levels = Array.from({ length: depth }, (_, level) => (kind === 'array' || (kind === 'mixed' && level % 2 === 0) ? ['[', ']'] : ['{"a":', '}']));
  return `${levels.map(([open]) => open).join('')}" x "${levels.map(([, close]) => close).reverse().join('')}`;
}

/** Items (or values) alternate between text and a number, so that every other one is wrong for a list of either. */
function wideText(kind: 'array' | 'object', width: number): string {
  const items = Array.from({ length: width }, (_, index) => {
    const item = index % 2 ? '0' : '"x"';
    return kind === 'array' ? item : `"k${index}":${item}`;
  });
  return kind === 'array' ? `[${items.join(',')}]` : `{${items.join(',')}}`;
}

const marker = '\u0001fragment\u0001';

/** `body` as JSON text with `text` written at `path` (twice under the same key when `duplicate`). */
function spliced(body: unknown, path: (string | number)[], text: string, duplicate?: Duplicate): string {
  const json = JSON.stringify(withValueAt(body, path, marker));
  if (!duplicate) return json.replace(JSON.stringify(marker), () => text);
  const key = JSON.stringify(String(path.at(-1)));
  const other = JSON.stringify(duplicate.other) ?? 'null';
  return json.replace(JSON.stringify(marker), () => (duplicate.fragmentFirst ? `${text},${key}:${other}` : `${other},${key}:${text}`));
}

/** The body text: `body` with `fragment` at `path`. */
export function splicedBody(body: unknown, path: (string | number)[], fragment: Fragment, duplicate?: Duplicate): string {
  if ('nested' in fragment) return spliced(body, path, nestedText(fragment.nested, fragment.depth), duplicate);
  if ('wide' in fragment) return spliced(body, path, wideText(fragment.wide, fragment.width), duplicate);
  if ('text' in fragment) return spliced(body, path, fragment.text, duplicate);
  const room = Math.max(0, fragment.bodyBytes - Buffer.byteLength(spliced(body, path, '""', duplicate), 'utf8'));
  const unitBytes = Buffer.byteLength(fragment.fill, 'utf8');
  const units = Math.floor(room / unitBytes);
  return spliced(body, path, `"${fragment.fill.repeat(units)}${'x'.repeat(room - units * unitBytes)}"`, duplicate);
}

export function describeFragment(fragment: Fragment): string {
  if ('nested' in fragment) return `${fragment.nested === 'mixed' ? 'arrays and objects' : `${fragment.nested}s`} nested ${fragment.depth} deep`;
  if ('wide' in fragment) return `an ${fragment.wide} ${fragment.width} wide`;
  if ('fill' in fragment) return `a string of ${fragment.fill} making the body ${fragment.bodyBytes} bytes`;
  return fragment.text;
}

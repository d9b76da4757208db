/**
 * Reading weekly Scorecard values and goals as numbers, and judging a value against its goal.
 *
 * People type numbers the way their locale writes them, so both the decimal comma and the decimal
 * dot are understood, and thousands may be grouped. Whenever a text has two plausible readings the
 * answer is "not judgeable" (null) rather than a guess: the caller then states `onTrack` itself.
 *
 * Understood, after trimming:
 * - an optional sign (`+`, `-` or `−`) directly before the digits, and an optional trailing `%`
 *   (spaces may stand before it);
 * - plain digits (`1500`), with a decimal comma or dot (`99,5`, `99.5`, `.5`);
 * - thousands grouped with spaces (`1 500`, `12 345 678`, also the no-break and thin spaces), which
 *   may be followed by a decimal comma or dot (`1 500,25`);
 * - thousands grouped by a comma or a dot used at least twice (`1,500,000`, `1.500.000`).
 * A group is 1-3 digits first, then exactly 3 digits each.
 *
 * Not judgeable:
 * - a comma and a dot in one number (`1,234.5`, `1.234,5`): which one is the decimal mark is a guess;
 * - a single comma or dot followed by exactly three digits after 1-3 digits that do not start with 0
 *   (`1,500`, `1.500`, `-250,000`): one thousand five hundred or one and a half;
 * - broken groups (`1,50,000`, `1 50`), a separator at the end (`5.`), exponents, currency signs,
 *   units or any other text.
 * Numbers are compared exactly as decimals, never as floating point.
 */

/** An exact decimal: `integer` without leading zeros, `fraction` without trailing zeros; zero is never negative. */
export interface Decimal {
  negative: boolean;
  integer: string;
  fraction: string;
}

export type GoalOperator = '>' | '>=' | '<' | '<=' | '=';

export interface Goal {
  operator: GoalOperator;
  target: Decimal;
}

const SPACES = '\\u0020\\u00A0\\u2009\\u202F';
const NUMBER_SHAPE = new RegExp(`^([+\\-\\u2212]?)([0-9.,${SPACES}]+?)(?:[${SPACES}]*%)?$`);
const SPACE_GROUPED = new RegExp(`^(\\d{1,3}(?:[${SPACES}]\\d{3})+)(?:[.,](\\d+))?$`);
const PLAIN = /^(\d*)(?:[.,](\d+))?$/;
const AMBIGUOUS_SINGLE = /^[1-9]\d{0,2}[.,]\d{3}$/;
const SPACE = new RegExp(`[${SPACES}]`);
const EVERY_SPACE = new RegExp(`[${SPACES}]`, 'g');

function decimal(negative: boolean, integer: string, fraction = ''): Decimal {
  const int = integer.replace(/^0+/, '');
  const frac = fraction.replace(/0+$/, '');
  return { negative: negative && (int !== '' || frac !== ''), integer: int, fraction: frac };
}

/** The unsigned body of a number as integer and fraction digits, or null when it is not read. */
function readBody(body: string): { integer: string; fraction: string } | null {
  if (SPACE.test(body)) {
    const grouped = SPACE_GROUPED.exec(body);
    return grouped ? { integer: grouped[1]!.replace(EVERY_SPACE, ''), fraction: grouped[2] ?? '' } : null;
  }
  const hasComma = body.includes(',');
  const hasDot = body.includes('.');
  if (hasComma && hasDot) return null;
  const separator = hasComma ? ',' : '.';
  const parts = body.split(separator);
  if (parts.length > 2) {
    const [first, ...groups] = parts;
    const grouped = /^\d{1,3}$/.test(first!) && groups.every((group) => /^\d{3}$/.test(group));
    return grouped ? { integer: parts.join(''), fraction: '' } : null;
  }
  if (AMBIGUOUS_SINGLE.test(body)) return null;
  const plain = PLAIN.exec(body);
  if (!plain || (plain[1] === '' && plain[2] === undefined)) return null;
  return { integer: plain[1]!, fraction: plain[2] ?? '' };
}

/** The number a value or goal text holds, or null when it holds none or could be read two ways. */
export function parseNumber(text: string): Decimal | null {
  const shape = NUMBER_SHAPE.exec(text.trim());
  if (!shape) return null;
  const body = readBody(shape[2]!);
  return body && decimal(shape[1] === '-' || shape[1] === '\u2212', body.integer, body.fraction);
}

const GOAL_SHAPE = /^(>=|<=|>|<|=)?\s*(.*)$/s;

/** The operator and target of a goal (a bare number means `>=`), or null when the goal cannot judge values. */
export function parseGoal(goal: string): Goal | null {
  const [, operator, rest] = GOAL_SHAPE.exec(goal.trim())!;
  const target = parseNumber(rest!);
  return target && { operator: (operator as GoalOperator | undefined) ?? '>=', target };
}

function compareMagnitude(a: Decimal, b: Decimal): number {
  if (a.integer.length !== b.integer.length) return a.integer.length - b.integer.length;
  if (a.integer !== b.integer) return a.integer < b.integer ? -1 : 1;
  const length = Math.max(a.fraction.length, b.fraction.length);
  const fa = a.fraction.padEnd(length, '0');
  const fb = b.fraction.padEnd(length, '0');
  return fa === fb ? 0 : fa < fb ? -1 : 1;
}

/** Negative, zero or positive as `a` is below, equal to or above `b`. */
export function compareDecimals(a: Decimal, b: Decimal): number {
  if (a.negative !== b.negative) return a.negative ? -1 : 1;
  const magnitude = compareMagnitude(a, b);
  return a.negative ? -magnitude : magnitude;
}

/** Whether the value meets the goal; null when the value or the goal cannot be judged. */
export function judgeValue(value: string, goal: string): boolean | null {
  const target = parseGoal(goal);
  const number = parseNumber(value);
  if (!target || !number) return null;
  const order = compareDecimals(number, target.target);
  switch (target.operator) {
    case '>':
      return order > 0;
    case '>=':
      return order >= 0;
    case '<':
      return order < 0;
    case '<=':
      return order <= 0;
    case '=':
      return order === 0;
  }
}

/**
 * The vision document's fields and their shapes. Each field has a fixed kind: a list of texts, an
 * object whose values are texts or lists of texts, or a text. Every field is stored as text: a text
 * field as sent, a list or object field as its JSON text, and that stored form may hold at most
 * 20,000 characters. Older data written by the web application may still hold free text in a list or
 * object field; it is returned as that text.
 */

export type VisionField =
  | 'coreValues'
  | 'coreFocus'
  | 'tenYearTarget'
  | 'marketingStrategy'
  | 'threeYearPicture'
  | 'oneYearPlan'
  | 'quarterlyRocks'
  | 'issuesList';

export type VisionFieldKind = 'list' | 'object' | 'text';

export type VisionList = string[];
export type VisionObject = { [key: string]: string | VisionList };
export type VisionValue = VisionList | VisionObject | string;

export const visionFieldKinds: Readonly<Record<VisionField, VisionFieldKind>> = {
  coreValues: 'list',
  coreFocus: 'object',
  tenYearTarget: 'text',
  marketingStrategy: 'object',
  threeYearPicture: 'text',
  oneYearPlan: 'text',
  quarterlyRocks: 'list',
  issuesList: 'list',
};

export const VISION_STORED_MAX = 20_000;

/** The stored form of a value: a text as sent, a list or object as compact JSON text. */
export function storedVisionValue(value: VisionValue): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Whether a stored form is within the limit, counted in characters (code points), as the contract counts lengths. */
export function fitsStoredLimit(stored: string): boolean {
  if (stored.length <= VISION_STORED_MAX) return true;
  // A string of more UTF-16 units may still be short enough when it holds surrogate pairs.
  let characters = 0;
  for (const _ of stored) if (++characters > VISION_STORED_MAX) return false;
  return true;
}

const isList = (value: unknown): value is VisionList => Array.isArray(value) && value.every((item) => typeof item === 'string');

const isObject = (value: unknown): value is VisionObject =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  Object.values(value).every((item) => typeof item === 'string' || isList(item));

function parsed(stored: string): unknown {
  try {
    return JSON.parse(stored);
  } catch {
    return undefined;
  }
}

/**
 * A stored field as returned: text fields always as their text (even when it looks like JSON); list
 * and object fields parsed when the stored text is JSON of the field's shape, otherwise (older free
 * text) as the text itself.
 */
export function readVisionField(field: VisionField, stored: string | null): VisionValue | null {
  if (stored === null) return null;
  const kind = visionFieldKinds[field];
  if (kind === 'text') return stored;
  const value = parsed(stored);
  if (kind === 'list' ? isList(value) : isObject(value)) return value as VisionList | VisionObject;
  return stored;
}

/**
 * Turns Ajv's errors for one request into the reference's 422 `invalid`: problems of shape
 * become a FormatError listing every issue; a request whose only problems are bounds inside the
 * body (lengths, ranges, sizes) becomes a RuleViolation without issues, as the reference's split
 * of 422 errors asks. oneOf bodies are judged by the branch the request came closest to.
 */
import type { ErrorObject } from 'ajv';
import { FormatError, RuleViolation, type ValidationIssue } from '../errors.js';

const boundKeywords = new Set([
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'maxProperties',
]);

type Origin = ValidationIssue['origin'];
const origins: Record<string, Origin> = { requestBody: 'body', query: 'query', path: 'path', header: 'header' };

const unescape = (segment: string) => segment.replaceAll('~1', '/').replaceAll('~0', '~');

/** Node gives header names in lower case; issues name them as the contract does (`if-match` → `If-Match`). */
const headerName = (name: string) => name.replace(/(^|-)([a-z])/g, (_, dash: string, letter: string) => dash + letter.toUpperCase());

function location(instancePath: string): { origin: Origin; path: string[] } {
  const [first = '', ...rest] = instancePath.split('/').slice(1).map(unescape);
  const origin = origins[first] ?? 'body';
  return { origin, path: origin === 'header' ? rest.map(headerName) : rest };
}

/** A bound crossed inside the body; keys of objects have only length bounds (propertyNames). */
function isBodyBound(error: ErrorObject): boolean {
  if (!error.instancePath.startsWith('/requestBody')) return false;
  return boundKeywords.has(error.keyword) || error.keyword === 'propertyNames';
}

const isShape = (error: ErrorObject) => !isBodyBound(error);

const formatNames: Record<string, string> = { date: 'day', 'date-time': 'instant', email: 'email', uri: 'url' };

function formatOf(error: ErrorObject): string {
  const parent = (error.parentSchema ?? {}) as { format?: string; pattern?: string };
  if (error.keyword === 'format') return formatNames[String(error.params.format)] ?? String(error.params.format);
  if (parent.format) return formatNames[parent.format] ?? parent.format;
  if (parent.pattern?.includes('Q[1-4]')) return 'quarter';
  if (parent.pattern?.startsWith('^[Hh][Tt]')) return 'url';
  return 'pattern';
}

function describeBound(error: ErrorObject): Pick<ValidationIssue, 'code' | 'message' | 'minimum' | 'maximum' | 'inclusive'> {
  const limit = Number(error.params.limit);
  const unit =
    error.keyword.endsWith('Length') ? ' characters' : error.keyword.endsWith('Items') ? ' items' : error.keyword.endsWith('Properties') ? ' entries' : '';
  switch (error.keyword) {
    case 'minLength':
    case 'minItems':
    case 'minimum':
    case 'minProperties':
      return { code: 'too_small', message: `Must be at least ${limit}${unit}.`, minimum: limit, inclusive: true };
    case 'exclusiveMinimum':
      return { code: 'too_small', message: `Must be greater than ${limit}.`, minimum: limit, inclusive: false };
    case 'exclusiveMaximum':
      return { code: 'too_big', message: `Must be less than ${limit}.`, maximum: limit, inclusive: false };
    case 'multipleOf':
      return { code: 'not_multiple_of', message: 'Must be a whole number.' };
    default:
      return { code: 'too_big', message: `Must be at most ${limit}${unit}.`, maximum: limit, inclusive: true };
  }
}

export function toIssue(error: ErrorObject): ValidationIssue {
  if (error.keyword === 'required') {
    const missing = String(error.params.missingProperty);
    if (error.instancePath === '' && missing === 'requestBody') {
      return { origin: 'body', code: 'invalid_type', path: [], message: 'A JSON request body is required.' };
    }
    const { origin, path } = location(error.instancePath);
    return { origin, code: 'invalid_type', path: [...path, missing], message: 'Required field is missing.' };
  }
  const { origin, path } = location(error.instancePath);
  switch (error.keyword) {
    case 'type':
      return { origin, code: 'invalid_type', path, message: `Expected ${String(error.params.type).replace(',', ' or ')}.` };
    case 'enum':
      return { origin, code: 'invalid_value', path, message: 'Not one of the allowed values.', values: error.params.allowedValues as unknown[] };
    case 'const':
      return { origin, code: 'invalid_value', path, message: 'Not the allowed value.', values: [error.params.allowedValue] };
    case 'format':
    case 'pattern': {
      const format = formatOf(error);
      return { origin, code: 'invalid_format', path, message: `Not a valid ${format}.`, format };
    }
    case 'additionalProperties': {
      const key = String(error.params.additionalProperty);
      return { origin, code: 'unrecognized_keys', path, message: `Unknown field "${key}".`, keys: [key] };
    }
    case 'minProperties':
      return { origin, code: 'too_small', path, message: 'At least one known field is required.', minimum: Number(error.params.limit), inclusive: true };
    case 'propertyNames':
      return { origin, code: 'invalid_key', path, message: `The key "${String(error.params.propertyName)}" is too short or too long.` };
    case 'oneOf':
      return { origin, code: 'invalid_union', path, message: 'Matches none of the allowed shapes of this body.' };
    case 'parse':
      return { origin: 'body', code: 'invalid_json', path: [], message: 'The request body is not valid JSON.' };
    default:
      if (boundKeywords.has(error.keyword)) return { origin, path, ...describeBound(error) };
      return { origin, code: error.keyword, path, message: error.message ?? 'Not valid.' };
  }
}

type BranchSchema = { properties?: Record<string, { enum?: unknown[]; const?: unknown }> };

/**
 * The branch a discriminating field selects: the one branch whose `enum`/`const` properties hold
 * every such value the request sent, with at least one sent (the vision's `field`, a rating's `absent`).
 */
function selectedBranch(branches: unknown, data: unknown): string | undefined {
  if (!Array.isArray(branches) || typeof data !== 'object' || data === null || Array.isArray(data)) return undefined;
  const value = data as Record<string, unknown>;
  const matching = (branches as BranchSchema[]).flatMap((branch, index) => {
    const discriminators = Object.entries(branch.properties ?? {}).filter(
      ([name, property]) => name in value && (property.enum !== undefined || 'const' in property),
    );
    const holds = discriminators.every(([name, property]) =>
      property.enum ? property.enum.includes(value[name]) : property.const === value[name],
    );
    return discriminators.length > 0 && holds ? [String(index)] : [];
  });
  return matching.length === 1 ? matching[0] : undefined;
}

/**
 * Keeps, for every failed oneOf, only the errors of one branch: the branch a discriminating field
 * selects, else the branch the request came closest to (fewest problems of shape, then fewest
 * problems at all). The oneOf error itself stays only when several branches matched, or when no
 * field selected the branch and it has problems of shape.
 */
function narrowOneOf(errors: ErrorObject[]): ErrorObject[] {
  const keyOf = (instancePath: string, schemaPath: string) => `${instancePath}\n${schemaPath}`;
  const oneOfs = new Map<string, { oneOf: ErrorObject; byBranch: Map<string, ErrorObject[]>; best?: Set<ErrorObject> }>();
  for (const error of errors) {
    if (error.keyword === 'oneOf') oneOfs.set(keyOf(error.instancePath, error.schemaPath), { oneOf: error, byBranch: new Map() });
  }
  if (oneOfs.size === 0) return errors;

  // Each error belongs to the failed oneOfs above it: the schema path runs through their branch, the
  // instance path starts with theirs. Found by lookups, never by comparing errors pairwise: a wide
  // list of oneOf items fails with tens of thousands of errors.
  const owners = new Map<ErrorObject, { key: string; branch: string }[]>();
  for (const error of errors) {
    const found: { key: string; branch: string }[] = [];
    for (let at = error.schemaPath.indexOf('/oneOf/'); at >= 0; at = error.schemaPath.indexOf('/oneOf/', at + 1)) {
      const schemaPath = error.schemaPath.slice(0, at + '/oneOf'.length);
      const branch = error.schemaPath.slice(at + '/oneOf/'.length).split('/')[0]!;
      for (let instancePath = error.instancePath; ; instancePath = instancePath.slice(0, instancePath.lastIndexOf('/'))) {
        const key = keyOf(instancePath, schemaPath);
        const owner = oneOfs.get(key);
        if (owner && owner.oneOf !== error) {
          found.push({ key, branch });
          const errorsOfBranch = owner.byBranch.get(branch);
          if (errorsOfBranch) errorsOfBranch.push(error);
          else owner.byBranch.set(branch, [error]);
          break;
        }
        if (instancePath === '') break;
      }
    }
    if (found.length > 0) owners.set(error, found);
  }

  const keepsItself = new Set<ErrorObject>();
  for (const owner of oneOfs.values()) {
    const { oneOf, byBranch } = owner;
    const selected = selectedBranch(oneOf.schema, oneOf.data);
    const ranked = [...byBranch.values()].sort(
      (a, b) => a.filter(isShape).length - b.filter(isShape).length || a.length - b.length,
    );
    owner.best = new Set(selected === undefined ? (ranked[0] ?? []) : (byBranch.get(selected) ?? []));
    const bestHasShape = [...owner.best].some(isShape);
    const severalMatched = oneOf.params.passingSchemas != null;
    if (severalMatched || (selected === undefined && bestHasShape)) keepsItself.add(oneOf);
  }
  return errors.filter(
    (error) =>
      (error.keyword !== 'oneOf' || keepsItself.has(error)) &&
      (owners.get(error) ?? []).every(({ key }) => oneOfs.get(key)!.best!.has(error)),
  );
}

/** Issues with the same origin, code and path are one issue. */
const issueKey = (issue: ValidationIssue) => JSON.stringify([issue.origin, issue.code, issue.path]);

/** The error to answer for a request Ajv rejected. */
export function validationError(errors: ErrorObject[]): FormatError | RuleViolation {
  const relevant = narrowOneOf(errors);
  if (relevant.length > 0 && relevant.every(isBodyBound)) {
    const first = relevant[0]!;
    const field = location(first.instancePath).path.join('.') || 'The body';
    return new RuleViolation(`${field}: ${describeBound(first).message}`);
  }
  // An enum that tells oneOf branches apart (the vision `field`) allows the values of every branch.
  const allowed = new Map<string, unknown[]>();
  for (const error of errors.filter((candidate) => candidate.keyword === 'enum')) {
    const values = allowed.get(error.instancePath) ?? [];
    for (const value of error.params.allowedValues as unknown[]) if (!values.includes(value)) values.push(value);
    allowed.set(error.instancePath, values);
  }
  // Keyed, not compared pairwise: a 64 KB body of wrong list items has tens of thousands of issues.
  const issues = new Map<string, ValidationIssue>();
  // The allowed values are listed once, with the first issue they belong to: twenty wrong items of a
  // list of event types would otherwise repeat the 45 types twenty times (19 KB for a 60-byte query).
  const listed = new Set<string>();
  for (const error of relevant) {
    const issue = toIssue(error);
    const key = issueKey(issue);
    if (issues.has(key)) continue;
    if (error.keyword === 'enum') {
      const values = allowed.get(error.instancePath)!;
      const valuesKey = JSON.stringify(values);
      if (listed.has(valuesKey)) {
        issue.message = 'Not one of the allowed values (listed with the first issue that names them).';
        delete issue.values;
      } else {
        listed.add(valuesKey);
        issue.values = values;
      }
    }
    issues.set(key, issue);
  }
  return new FormatError([...issues.values()]);
}

const NUL = '\u0000';

/**
 * Text holding NUL (U+0000) anywhere in a request: PostgreSQL cannot store or even compare such
 * text, so it is refused with the other format errors before any query sees it. Recursive: the body
 * has passed `tooDeepAt`, and query values are strings or lists of strings.
 */
export function nulCharacterIssues(parts: { path: Record<string, string>; query: Record<string, unknown>; body: unknown }): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const visit = (origin: Origin, value: unknown, path: string[]) => {
    if (typeof value === 'string') {
      if (value.includes(NUL)) issues.push({ origin, code: 'invalid_character', path, message: 'Text must not contain the character NUL (U+0000).' });
    } else if (Array.isArray(value)) {
      value.forEach((item, index) => visit(origin, item, [...path, String(index)]));
    } else if (value && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        if (key.includes(NUL)) issues.push({ origin, code: 'invalid_character', path: [...path, key], message: 'A key must not contain the character NUL (U+0000).' });
        visit(origin, item, [...path, key]);
      }
    }
  };
  visit('path', parts.path, []);
  visit('query', parts.query, []);
  visit('body', parts.body, []);
  return issues;
}

/** An integer as a person writes it: decimal digits, a minus sign before anything but zero, no leading zeros. */
const plainInteger = /^(?:0|-?[1-9][0-9]*)$/;

export interface IntegerParameter {
  name: string;
  in: 'path' | 'query';
}

/**
 * Integer parameters written in any other way than plain decimal digits (`1e1`, `010`, `10.0`,
 * `0x10`, ` 10`): Ajv's coercion would read them as numbers, which would let a mistyped value pass.
 */
export function integerTextIssues(
  parameters: readonly IntegerParameter[],
  parts: { path: Record<string, string>; query: Record<string, unknown> },
): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const parameter of parameters) {
    const value = parameter.in === 'path' ? parts.path[parameter.name] : parts.query[parameter.name];
    if (typeof value === 'string' && !plainInteger.test(value)) {
      issues.push({ origin: parameter.in, code: 'invalid_type', path: [parameter.name], message: 'Expected an integer in plain decimal digits.' });
    }
  }
  return issues;
}

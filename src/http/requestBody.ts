/**
 * A JSON body between parsing and validation. First its nesting is bounded: every later walk over
 * the body (preparation, Ajv, the NUL check, handlers) recurses, and a body of 64 KB can nest 30,000
 * levels deep, far past the call stack, so the bound is checked first and without recursion.
 * Then it is prepared, guided by the operation's (dereferenced) body schema: text is trimmed unless
 * the schema marks it `x-stored-as-sent`, and fields a non-strict body does not declare are
 * dropped, so that a PATCH holding only unknown fields counts as empty. Strict bodies
 * (`additionalProperties: false`) keep their unknown fields for validation to refuse.
 */
type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  items?: Schema;
  oneOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  'x-stored-as-sent'?: boolean;
};

/**
 * The deepest nesting of arrays and objects a body may have: the deepest body of the contract nests
 * 3 levels (`PATCH /teams/{teamId}/vision`), so 32 leaves room for every body to come while keeping
 * each recursive walk a few dozen calls deep.
 */
export const maxBodyDepth = 32;

interface Level {
  value: object;
  depth: number;
  key: string;
  parent: Level | undefined;
}

/**
 * The path to the first array or object (in the order of its keys) nested deeper than
 * `maxBodyDepth`, where a body that is itself an array or object is level 1; undefined when there
 * is none. Depth first with a stack of its own, so that any depth costs no call stack.
 */
export function tooDeepAt(body: unknown): string[] | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const stack: Level[] = [{ value: body, depth: 1, key: '', parent: undefined }];
  for (let level = stack.pop(); level; level = stack.pop()) {
    if (level.depth > maxBodyDepth) {
      const path: string[] = [];
      for (let at: Level | undefined = level; at?.parent; at = at.parent) path.push(at.key);
      return path.reverse();
    }
    // Children are pushed last to first, so that the first is looked at first. A list's indexes
    // become keys only for the lists and objects in it.
    const { value, depth } = level;
    if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index--) {
        const child: unknown = value[index];
        if (typeof child === 'object' && child !== null) stack.push({ value: child, depth: depth + 1, key: String(index), parent: level });
      }
    } else {
      const keys = Object.keys(value);
      for (let index = keys.length - 1; index >= 0; index--) {
        const child: unknown = (value as Record<string, unknown>)[keys[index]!];
        if (typeof child === 'object' && child !== null) stack.push({ value: child, depth: depth + 1, key: keys[index]!, parent: level });
      }
    }
  }
  return undefined;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The branch of a oneOf whose enum/const properties all match the value (e.g. the vision `field`),
 * compared as they will be after trimming, so that a padded `field` still keeps its value as sent.
 */
function chooseBranch(branches: Schema[], value: Record<string, unknown>): Schema | undefined {
  return branches.find((branch) =>
    Object.entries(branch.properties ?? {}).every(([name, property]) => {
      if (!(name in value)) return true;
      const given = typeof value[name] === 'string' ? value[name].trim() : value[name];
      if (property.enum) return property.enum.includes(given);
      if ('const' in property) return property.const === given;
      return true;
    }),
  );
}

/** Recursive, as deep as the body: only for a body `tooDeepAt` has passed. */
export function prepareBody(schema: Schema | undefined, value: unknown): unknown {
  if (typeof value === 'string') return schema?.['x-stored-as-sent'] ? value : value.trim();
  if (Array.isArray(value)) return value.map((item) => prepareBody(schema?.items, item));
  if (!isObject(value) || !schema) return value;

  if (schema.oneOf) {
    const branch = chooseBranch(schema.oneOf, value);
    if (branch) return prepareBody(branch, value);
    const strict = schema.oneOf.every((candidate) => candidate.additionalProperties === false);
    const known = new Set(schema.oneOf.flatMap((candidate) => Object.keys(candidate.properties ?? {})));
    return Object.fromEntries(
      Object.entries(value)
        .filter(([name]) => strict || known.has(name))
        .map(([name, field]) => [name, prepareBody(undefined, field)]),
    );
  }

  const properties = schema.properties ?? {};
  const extra = schema.additionalProperties;
  const prepared: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(value)) {
    if (name in properties) prepared[name] = prepareBody(properties[name], field);
    else if (isObject(extra)) prepared[name] = prepareBody(extra, field);
    else if (extra === false || !schema.properties) prepared[name] = prepareBody(undefined, field);
    // otherwise an unknown field of a non-strict body: ignored, as the reference says
  }
  return prepared;
}

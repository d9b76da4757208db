/**
 * Prepares a JSON body for validation, guided by the operation's (dereferenced) body schema:
 * text is trimmed unless the schema marks it `x-stored-as-sent`, and fields a non-strict body
 * does not declare are dropped, so that a PATCH holding only unknown fields counts as empty.
 * Strict bodies (`additionalProperties: false`) keep their unknown fields for validation to refuse.
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

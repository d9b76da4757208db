/**
 * The `x-codeSamples` of every operation of the bundled contract (Redoc shows them as tabs beside the
 * request): a `curl` command and a call through `@team-os/client`, both made from the contract's own
 * examples — the first named request example, each path parameter's example, and the example of each
 * required query or header parameter. `npm run generate` adds them to generated/openapi.json, never
 * to openapi/; test/codeSamples.test.ts runs every one against the mock and the demo data.
 *
 * Both read the server's address from TEAM_OS_URL (the local server's by default) and the key from
 * TEAM_OS_API_KEY, the variables of the typed client's example.
 */
import type { OpenAPIV3_1 } from 'openapi-types';

export const DEFAULT_URL = 'http://127.0.0.1:3000/v1';

export interface CodeSample {
  lang: string;
  label: string;
  source: string;
}

/** The tab labels, which the test looks the samples up by. */
export const CURL = 'curl';
export const CLIENT = '@team-os/client';

/** The docs page's sample tabs, in order (Redoc's `codeSamples.languages`): the request's JSON body is `Payload`. */
export const codeSampleLanguages = [{ lang: CURL }, { lang: 'TypeScript', label: CLIENT }, { lang: 'Payload' }];

type Document = OpenAPIV3_1.Document;
type Parameter = OpenAPIV3_1.ParameterObject;

const methods = ['get', 'put', 'post', 'delete', 'patch'] as const;

/** The request an operation's samples send, everything taken from the contract. */
interface SampleRequest {
  method: (typeof methods)[number];
  path: string;
  pathParameters: { name: string; value: unknown }[];
  query: { name: string; value: unknown }[];
  headers: { name: string; value: unknown }[];
  body: unknown;
  /** The request body's media type: JSON, or a CSV file sent as its text. */
  bodyType: 'application/json' | 'text/csv';
  authenticated: boolean;
  /** The success answer's media type, which decides how the client reads it. */
  answers: string | undefined;
  /** The success answer's schema name (`Task`), for the client sample's variable. */
  answerName: string | undefined;
  /** What the operation changes (its summary), said in a comment of both samples; undefined for a read. */
  changes: string | undefined;
}

function resolver(document: Document) {
  return function deref<T>(value: T | OpenAPIV3_1.ReferenceObject): T {
    let node: unknown = value;
    while (node && typeof node === 'object' && '$ref' in node) {
      const ref = (node as OpenAPIV3_1.ReferenceObject).$ref;
      node = ref
        .replace(/^#\//, '')
        .split('/')
        .reduce<unknown>((parent, key) => (parent as Record<string, unknown>)[key.replaceAll('~1', '/').replaceAll('~0', '~')], document);
    }
    return node as T;
  };
}

function exampleOf(parameter: Parameter, deref: ReturnType<typeof resolver>, operationId: string): unknown {
  if (parameter.example !== undefined) return parameter.example;
  const schema = parameter.schema ? deref<OpenAPIV3_1.SchemaObject>(parameter.schema) : undefined;
  const candidate = schema?.examples?.[0] ?? schema?.enum?.[0];
  if (candidate === undefined) throw new Error(`${operationId}: parameter ${parameter.name} has no example for its code samples`);
  return candidate;
}

function requestOf(document: Document, path: string, method: SampleRequest['method']): SampleRequest {
  const deref = resolver(document);
  const item = document.paths![path]!;
  const operation = item[method]!;
  const id = operation.operationId!;
  // An operation's parameter replaces the path's of the same name and place (OpenAPI's rule): its example is the one used.
  const byPlace = new Map<string, Parameter>();
  for (const parameter of [...(item.parameters ?? []), ...(operation.parameters ?? [])].map((p) => deref<Parameter>(p))) {
    byPlace.set(`${parameter.in} ${parameter.name}`, parameter);
  }
  const parameters = [...byPlace.values()];
  const named = (where: string, all: boolean) =>
    parameters.filter((p) => p.in === where && (all || p.required)).map((p) => ({ name: p.name, value: exampleOf(p, deref, id) }));

  let body: unknown;
  let bodyType: SampleRequest['bodyType'] = 'application/json';
  if (operation.requestBody) {
    const contents = deref<OpenAPIV3_1.RequestBodyObject>(operation.requestBody).content;
    if (!contents['application/json'] && contents['text/csv']) bodyType = 'text/csv';
    const content = contents[bodyType];
    const first = Object.values(content?.examples ?? {})[0];
    if (first === undefined) throw new Error(`${id}: its request body has no named example for its code samples`);
    body = deref<OpenAPIV3_1.ExampleObject>(first).value;
  }

  const success = Object.keys(operation.responses ?? {}).filter((status) => status.startsWith('2')).sort()[0];
  const response = success ? deref<OpenAPIV3_1.ResponseObject>(operation.responses![success]!) : undefined;
  const [answers, media] = Object.entries(response?.content ?? {})[0] ?? [];
  const schema = media?.schema as OpenAPIV3_1.ReferenceObject | undefined;
  const security = operation.security ?? document.security ?? [];
  return {
    method,
    path,
    pathParameters: named('path', true),
    query: named('query', false),
    headers: named('header', false),
    body,
    bodyType,
    authenticated: security.length > 0,
    answers,
    answerName: schema?.$ref?.split('/').pop(),
    changes: method === 'get' ? undefined : (operation.summary ?? id),
  };
}

/** The comment that opens a sample that changes data, so that a reader pastes it knowingly. */
const changesNote = (request: SampleRequest) => (request.changes === undefined ? undefined : `Changes data: ${request.changes.replace(/\s+/g, ' ')}.`);

/** Quotes text for a POSIX shell: single quotes, each `'` written as `'\''`. */
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

const text = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/** Percent-encoded for the address, which stands in double quotes: `!` too, which an interactive shell there reads as history. */
const urlComponent = (value: unknown) => encodeURIComponent(text(value)).replaceAll('!', '%21');

export function curlSample(request: SampleRequest): string {
  let path = request.path;
  for (const { name, value } of request.pathParameters) path = path.replace(`{${name}}`, urlComponent(value));
  const query = request.query.map(({ name, value }) => `${urlComponent(name)}=${urlComponent(value)}`).join('&');
  const options = ['-i'];
  if (request.answers === 'text/event-stream') options.push('-N');
  if (request.method !== 'get') options.push('-X', request.method.toUpperCase());
  const lines = [`curl ${options.join(' ')} "\${TEAM_OS_URL:-${DEFAULT_URL}}${path}${query ? `?${query}` : ''}"`];
  if (request.authenticated) lines.push('-H "Authorization: Bearer $TEAM_OS_API_KEY"');
  for (const { name, value } of request.headers) lines.push(`-H ${shellQuote(`${name}: ${text(value)}`)}`);
  if (request.body !== undefined && request.bodyType === 'text/csv') {
    // A file as it would be saved: `--data-binary @tasks.csv` sends one from disk the same way.
    lines.push(`-H 'Content-Type: text/csv'`, `--data-binary ${shellQuote(String(request.body))}`);
  } else if (request.body !== undefined) {
    lines.push(`-H 'Content-Type: application/json'`, `-d ${shellQuote(JSON.stringify(request.body, null, 2).replaceAll('\n', '\n  '))}`);
  }
  const note = changesNote(request);
  return `${note === undefined ? '' : `# ${note}\n`}${lines.join(' \\\n  ')}`;
}

const identifier = /^[A-Za-z_$][\w$]*$/;

function quoted(value: string): string {
  return `'${JSON.stringify(value).slice(1, -1).replaceAll('\\"', '"').replaceAll("'", "\\'")}'`;
}

/** A value as a TypeScript literal in the style of the client's README: single quotes, bare keys where possible. */
/** A value written as code rather than as a literal (a function the sample passes). */
class Code {
  constructor(readonly source: string) {}
}

const bodyAsIs = new Code('(csv) => csv');

export function literal(value: unknown, indent = ''): string {
  if (value instanceof Code) return value.source;
  if (typeof value === 'string') return quoted(value);
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    const flat = `[${value.map((item) => literal(item, inner)).join(', ')}]`;
    if (!flat.includes('\n') && flat.length + indent.length <= 90) return flat;
    return `[\n${value.map((item) => `${inner}${literal(item, inner)},`).join('\n')}\n${indent}]`;
  }
  const entries = Object.entries(value);
  if (entries.length === 0) return '{}';
  const fields = entries.map(([key, field]) => `${identifier.test(key) ? key : quoted(key)}: ${literal(field, inner)}`);
  const flat = `{ ${fields.join(', ')} }`;
  if (!flat.includes('\n') && flat.length + indent.length <= 90) return flat;
  return `{\n${fields.map((field) => `${inner}${field},`).join('\n')}\n${indent}}`;
}

const camel = (name: string) => name.charAt(0).toLowerCase() + name.slice(1);

export function clientSample(request: SampleRequest): string {
  const params: Record<string, Record<string, unknown>> = {};
  const group = (entries: { name: string; value: unknown }[]) => Object.fromEntries(entries.map(({ name, value }) => [name, value]));
  if (request.pathParameters.length > 0) params.path = group(request.pathParameters);
  if (request.query.length > 0) params.query = group(request.query);
  if (request.headers.length > 0) params.header = group(request.headers);
  const init: Record<string, unknown> = {};
  if (Object.keys(params).length > 0) init.params = params;
  if (request.body !== undefined) init.body = request.body;
  if (request.bodyType === 'text/csv') {
    // The file's text as it is, not as a JSON string.
    init.headers = { 'Content-Type': 'text/csv' };
    init.bodySerializer = bodyAsIs;
  }
  const parseAs = request.answers === undefined || request.answers.includes('json') ? undefined : request.answers === 'text/event-stream' ? 'stream' : 'text';
  if (parseAs) init.parseAs = parseAs;
  const call = `await client.${request.method.toUpperCase()}(${[quoted(request.path), ...(Object.keys(init).length > 0 ? [literal(init)] : [])].join(', ')})`;

  const lines = [
    `import { createTeamOsClient, unwrap } from '@team-os/client';`,
    '',
    `const client = createTeamOsClient({ baseUrl: process.env.TEAM_OS_URL ?? '${DEFAULT_URL}'${request.authenticated ? ', apiKey: process.env.TEAM_OS_API_KEY' : ''} });`,
    '',
  ];
  const note = changesNote(request);
  if (note !== undefined) lines.push(`// ${note}`);
  if (request.answers === undefined) lines.push(`unwrap(${call});`);
  else if (parseAs === 'stream') {
    lines.push(`const stream = unwrap(${call});`, 'for await (const chunk of stream!.pipeThrough(new TextDecoderStream())) process.stdout.write(chunk);');
  } else {
    const name = parseAs === 'text' ? 'page' : request.answerName ? camel(request.answerName) : 'answer';
    lines.push(`const ${name} = unwrap(${call});`, `console.log(${name});`);
  }
  return lines.join('\n');
}

/** The document with `x-codeSamples` on every operation; the document given is not changed. */
export function withCodeSamples(document: Document): Document {
  const copy = structuredClone(document);
  for (const [path, item] of Object.entries(copy.paths ?? {})) {
    for (const method of methods) {
      const operation = item?.[method];
      if (!operation) continue;
      const request = requestOf(copy, path, method);
      const samples: CodeSample[] = [
        { lang: 'Shell', label: CURL, source: curlSample(request) },
        { lang: 'TypeScript', label: CLIENT, source: clientSample(request) },
      ];
      Object.assign(operation, { 'x-codeSamples': samples });
    }
  }
  return copy;
}

/**
 * The pure parts of scripts/codeSamples.ts: shell quoting, the TypeScript literals of the client
 * samples, and the samples made from small contracts of one operation. A curl sample is proved by
 * running its text with bash, `curl` replaced by a function that prints its arguments; a client
 * sample by running it with a client that records its call. test/codeSamples.test.ts runs the
 * contract's own samples against the mock and the server.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { OpenAPIV3_1 } from 'openapi-types';
import { describe, expect, it } from 'vitest';
import { CLIENT, CURL, DEFAULT_URL, literal, shellQuote, withCodeSamples, type CodeSample } from '../../scripts/codeSamples.js';

type Document = OpenAPIV3_1.Document;
type Operation = OpenAPIV3_1.OperationObject;

/** Text a reader could paste, and that each place that copes with it must keep as it is. */
const awkward = [
  "O'Brien",
  "'",
  "''",
  'Žilina',
  'a $HOME b ${PATH} $(echo no) c',
  'back`ticks` `echo no`',
  'two\nlines\r\nand a tab\t',
  'double "quotes" and \\backslashes\\ \\" \\\'',
  '!bang !! !$',
  'emoji 🎯 and U+2028 \u2028 and a lone \ud800 high surrogate',
  '',
];

/**
 * Each argument bash hands to `curl`, as the exact text of its bytes (a NUL after each), the sample
 * read as a terminal reads it pasted: with history expansion (`!`) on.
 */
function curlArguments(source: string, env: Record<string, string> = {}): string[] {
  const output = execFileSync('bash', ['--norc', '--noprofile', '-s'], {
    input: `set -o history -H\ncurl() { printf '%s\\0' "$@"; }\n${source}\n`,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    timeout: 60_000,
  });
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const parts: string[] = [];
  let start = 0;
  for (let end = output.indexOf(0); end >= 0; start = end + 1, end = output.indexOf(0, start)) parts.push(decoder.decode(output.subarray(start, end)));
  return parts;
}

/** The value given after `option` (`-d`, `-H`), each time it is given. */
const after = (args: string[], option: string) => args.flatMap((arg, index) => (index > 0 && args[index - 1] === option ? [arg] : []));

interface ClientCall {
  options: Record<string, unknown>;
  method: string;
  path: string;
  init: Record<string, unknown> | undefined;
}

/** Runs a client sample (no types in it but a stream's `!`) with a client that records the one call it makes. */
async function clientCall(source: string, env: Record<string, string> = {}): Promise<ClientCall> {
  const calls: ClientCall[] = [];
  const createTeamOsClient = (options: Record<string, unknown>) =>
    new Proxy({}, { get: (_, method: string) => async (path: string, init?: Record<string, unknown>) => void calls.push({ options, method, path, init }) });
  const body = source.replace(/^import .*\n/, '');
  expect(body).not.toContain('import ');
  const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (...args: string[]) => (...values: unknown[]) => Promise<void>;
  await new AsyncFunction('createTeamOsClient', 'unwrap', 'process', 'console', body)(createTeamOsClient, (answer: unknown) => answer, { env }, { log: () => {} });
  expect(calls).toHaveLength(1);
  return calls[0]!;
}

const evaluated = (text: string): unknown => new Function(`return (${text});`)();

/** A contract of one operation, `operation` laid over an authenticated one answering a `Task` as JSON. */
function documentOf(path: string, method: 'get' | 'post' | 'put' | 'patch' | 'delete', operation: Record<string, unknown> = {}): Document {
  const document = {
    openapi: '3.1.0',
    info: { title: 'samples', version: '1' },
    security: [{ apiKey: [] }],
    paths: {
      [path]: {
        [method]: {
          operationId: 'sample',
          responses: { '200': { description: 'The task.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Task' } } } } },
          ...operation,
        },
      },
    },
    components: {
      schemas: { Task: { type: 'object' }, Id: { type: 'string', examples: ['0d0d0000-0000-4000-8000-000000000001'] } },
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer' } },
      examples: { shared: { value: { shared: true } } },
    },
  };
  // openapi-types lacks the 3.1 schema's `examples`, which the contract gives its parameters.
  return document as Document;
}

const withBody = (body: unknown) => ({
  requestBody: { content: { 'application/json': { examples: { first: { value: body }, second: { value: 'not this one' } } } } },
});

function samplesOf(document: Document): { curl: string; client: string } {
  const item = Object.values(withCodeSamples(document).paths!)[0]!;
  const samples = (Object.values(item)[0] as Operation & { 'x-codeSamples': CodeSample[] })['x-codeSamples'];
  const source = (label: string) => samples.find((sample) => sample.label === label)!.source;
  return { curl: source(CURL), client: source(CLIENT) };
}

describe('shell quoting', () => {
  it('gives bash back each text byte for byte: quotes, $, backticks, newlines, !, non-ASCII and the empty text', () => {
    // A lone surrogate has no UTF-8: only JSON, which escapes it, can carry it (see the bodies below).
    const texts = awkward.filter((text) => !/\p{Cs}/u.test(text));
    expect(curlArguments(`curl ${texts.map(shellQuote).join(' ')}`)).toEqual(texts);
  });

  it("writes a single quote as '\\'' and nothing else differently", () => {
    expect(shellQuote("O'Brien")).toBe(`'O'\\''Brien'`);
    expect(shellQuote('Žilina $x `y`')).toBe("'Žilina $x `y`'");
  });
});

describe('the TypeScript literal of a value', () => {
  const values: [string, unknown][] = [
    ['strings with quotes, backslashes, newlines, $, backticks, non-ASCII and a lone surrogate', awkward],
    ['keys that are not identifiers', { 'Content-Type': 1, 'O\'Brien': 2, '1st': 3, 'two words': 4, 'Žilina': 5, $ok: 6, _ok: 7, '': 8, 'a"b': 9, 'a\\b': 10 }],
    ['nested arrays and objects, null, numbers and booleans', { list: [[1, [2, []]], {}, { deep: { deeper: [null, true, false, -1.5, 0, 1e21] } }], none: null }],
    ['a long object, which it breaks over lines', { title: 'Call Žilina about the Baltic expansion', description: "O'Brien's\nnotes", tags: ['sales', 'q4', 'expansion'], dueDate: '2026-11-27' }],
    ['a long array of long strings', Array.from({ length: 8 }, (_, index) => `item ${index}: 'quoted' and "double-quoted"`)],
  ];

  it.each(values)('evaluates to the value itself: %s', (_, value) => {
    expect(evaluated(literal(value))).toEqual(value);
  });

  it('writes strings in single quotes and identifier keys bare, as the client README does', () => {
    expect(literal({ title: "O'Brien \"Ž\"", 'Content-Type': 'a\nb' })).toBe(`{ title: 'O\\'Brien "Ž"', 'Content-Type': 'a\\nb' }`);
  });
});

describe('the path parameters of the samples', () => {
  it("take the operation's parameter where it replaces the path's of the same name, as OpenAPI reads them", async () => {
    const pathLevel = { name: 'id', in: 'path', required: true, schema: { type: 'string' }, example: 'from-the-path' };
    const document = documentOf('/meetings/{id}', 'get', { parameters: [{ ...pathLevel, example: 'from-the-operation' }] });
    (document.paths!['/meetings/{id}'] as Record<string, unknown>).parameters = [pathLevel];
    const { curl, client } = samplesOf(document);
    expect(curlArguments(curl)).toContain(`${DEFAULT_URL}/meetings/from-the-operation`);
    expect((await clientCall(client)).init).toEqual({ params: { path: { id: 'from-the-operation' } } });
  });
});

describe('the samples of an operation with a body', () => {
  const body = {
    title: "Call O'Brien in Žilina",
    notes: 'Costs $5 or `more`;\nsecond line\twith a tab, "quotes" and \\ a backslash',
    'x-custom key': ['a', 1, null, { nested: [true, false] }],
    empty: {},
  };
  const document = documentOf('/teams/{teamId}/tasks', 'post', {
    parameters: [{ name: 'teamId', in: 'path', required: true, schema: { $ref: '#/components/schemas/Id' } }],
    ...withBody(body),
  });
  const { curl, client } = samplesOf(document);

  it('curl sends, through bash, exactly the first named example as JSON, with its Content-Type and POST', () => {
    const args = curlArguments(curl);
    const [data, ...others] = after(args, '-d');
    expect(others).toEqual([]);
    expect(JSON.parse(data!)).toEqual(body);
    // Byte for byte, but for the whitespace between tokens that makes the sample readable.
    expect(Buffer.from(JSON.stringify(JSON.parse(data!)))).toEqual(Buffer.from(JSON.stringify(body)));
    expect(after(args, '-H')).toContain('Content-Type: application/json');
    expect(after(args, '-X')).toEqual(['POST']);
  });

  it('curl calls the default address with the path parameter example, or TEAM_OS_URL when set', () => {
    expect(curlArguments(curl)).toContain(`${DEFAULT_URL}/teams/0d0d0000-0000-4000-8000-000000000001/tasks`);
    expect(curlArguments(curl, { TEAM_OS_URL: 'http://example.test/v1' })).toContain('http://example.test/v1/teams/0d0d0000-0000-4000-8000-000000000001/tasks');
  });

  it("curl sends the key from TEAM_OS_API_KEY as it is, even holding quotes and $", () => {
    const key = "ak_'$HOME`x`\"";
    expect(after(curlArguments(curl, { TEAM_OS_API_KEY: key }), '-H')).toContain(`Authorization: Bearer ${key}`);
  });

  it('the client sample calls the operation with the example body and path parameter as values', async () => {
    const call = await clientCall(client, { TEAM_OS_URL: 'http://example.test/v1', TEAM_OS_API_KEY: 'ak_1' });
    expect(call).toEqual({
      options: { baseUrl: 'http://example.test/v1', apiKey: 'ak_1' },
      method: 'POST',
      path: '/teams/{teamId}/tasks',
      init: { params: { path: { teamId: '0d0d0000-0000-4000-8000-000000000001' } }, body },
    });
    expect(client).toContain('const task = unwrap(');
  });

  it('takes a body example given by reference', async () => {
    const byReference = documentOf('/things', 'post', {
      requestBody: { content: { 'application/json': { examples: { shared: { $ref: '#/components/examples/shared' } } } } },
    });
    const samples = samplesOf(byReference);
    expect(JSON.parse(after(curlArguments(samples.curl), '-d')[0]!)).toEqual({ shared: true });
    expect((await clientCall(samples.client)).init).toEqual({ body: { shared: true } });
  });

  it('says in a first comment of both samples that it changes data, naming the summary, and bash and the client still run them', async () => {
    const summarized = samplesOf(documentOf('/teams/{teamId}/tasks', 'post', { summary: 'Create a\n task', ...withBody(body) }));
    expect(summarized.curl.split('\n')[0]).toBe('# Changes data: Create a task.');
    expect(summarized.client).toContain('\n// Changes data: Create a task.\nconst task = unwrap(');
    expect(after(curlArguments(summarized.curl), '-X')).toEqual(['POST']);
    expect((await clientCall(summarized.client)).method).toBe('POST');
  });

  it.each(awkward.map((text) => [JSON.stringify(text), text] as const))('sends a body that is the string %s, through bash and through the client, unchanged', async (_, text) => {
    const samples = samplesOf(documentOf('/things', 'put', withBody({ [text]: text, list: [text] })));
    expect(JSON.parse(after(curlArguments(samples.curl), '-d')[0]!)).toEqual({ [text]: text, list: [text] });
    expect((await clientCall(samples.client)).init).toEqual({ body: { [text]: text, list: [text] } });
  });
});

describe('parameters', () => {
  const value = "Žilina/O'Brien $HOME `x` \"q\" 100% a?b#c&d=e !x !! (y)*~";
  const document = documentOf('/cities/{name}/people/{id}', 'get', {
    parameters: [
      { name: 'name', in: 'path', required: true, example: value, schema: { type: 'string' } },
      { name: 'id', in: 'path', required: true, schema: { type: 'integer', examples: [42] } },
      { name: 'q', in: 'query', required: true, schema: { type: 'string', examples: [value] } },
      { name: 'state', in: 'query', required: true, schema: { type: 'string', enum: ['OPEN', 'DONE'] } },
      { name: 'limit', in: 'query', schema: { type: 'integer', examples: [5] } },
      { name: 'X-Note', in: 'header', required: true, example: "O'Brien's $note", schema: { type: 'string' } },
    ],
  });
  const { curl, client } = samplesOf(document);

  it('curl substitutes each path parameter percent-encoded and adds the required query parameters only', () => {
    const url = curlArguments(curl).find((arg) => arg.startsWith(DEFAULT_URL));
    expect(url).toBeDefined();
    const { pathname, searchParams } = new URL(url!);
    expect(pathname.split('/').map(decodeURIComponent)).toEqual(['', 'v1', 'cities', value, 'people', '42']);
    expect([...searchParams]).toEqual([['q', value], ['state', 'OPEN']]);
    expect(url).toContain("/cities/%C5%BDilina%2FO'Brien%20%24HOME%20%60x%60%20%22q%22%20100%25%20a%3Fb%23c%26d%3De%20");
  });

  it('curl percent-encodes ! in the address, which a terminal would read as history in double quotes', () => {
    expect(curlArguments(curl).find((arg) => arg.startsWith(DEFAULT_URL))).not.toContain('!');
  });

  it('curl sends a required header with its example as it is', () => {
    expect(after(curlArguments(curl), '-H')).toContain("X-Note: O'Brien's $note");
  });

  it('the client sample passes path, query and header parameters as values', async () => {
    expect((await clientCall(client)).init).toEqual({
      params: { path: { name: value, id: 42 }, query: { q: value, state: 'OPEN' }, header: { 'X-Note': "O'Brien's $note" } },
    });
  });

  it('refuses a parameter without an example, naming the operation and the parameter', () => {
    const bare = documentOf('/things/{id}', 'get', { parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }] });
    expect(() => withCodeSamples(bare)).toThrow('sample: parameter id has no example');
  });
});

describe('an operation without a request body', () => {
  it('curl sends no body and no Content-Type, and GET needs no -X', () => {
    const args = curlArguments(samplesOf(documentOf('/me', 'get')).curl);
    expect(args).toEqual(['-i', `${DEFAULT_URL}/me`, '-H', 'Authorization: Bearer ']);
  });

  it('a DELETE without an answer: curl says -X DELETE, the client unwraps the call and names no result', async () => {
    const { curl, client } = samplesOf(
      documentOf('/things/{id}', 'delete', {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { $ref: '#/components/schemas/Id' } }],
        responses: { '204': { description: 'Deleted.' } },
      }),
    );
    expect(curlArguments(curl)).toEqual(['-i', '-X', 'DELETE', `${DEFAULT_URL}/things/0d0d0000-0000-4000-8000-000000000001`, '-H', 'Authorization: Bearer ']);
    expect(client).toMatch(/^unwrap\(await client\.DELETE\('\/things\/\{id\}', \{ params: \{ path: \{ id: '[^']+' \} \} \}\)\);$/m);
    expect((await clientCall(client)).init).toEqual({ params: { path: { id: '0d0d0000-0000-4000-8000-000000000001' } } });
  });

  it('the client sample of an operation without parameters passes no second argument', async () => {
    const { client } = samplesOf(documentOf('/me', 'get'));
    expect(client).toContain("await client.GET('/me')");
    expect((await clientCall(client)).init).toBeUndefined();
  });

  it('an operation open to all sends no key', async () => {
    const { curl, client } = samplesOf(documentOf('/health', 'get', { security: [] }));
    expect(curlArguments(curl)).toEqual(['-i', `${DEFAULT_URL}/health`]);
    expect((await clientCall(client, { TEAM_OS_API_KEY: 'ak_1' })).options).toEqual({ baseUrl: DEFAULT_URL });
  });
});

describe('the stream operation', () => {
  const stream = documentOf('/events/stream', 'get', {
    responses: { '200': { description: 'The events.', content: { 'text/event-stream': { schema: { type: 'string' } } } } },
  });

  it('curl reads it unbuffered (-N); a JSON answer is read without -N', () => {
    expect(curlArguments(samplesOf(stream).curl)).toEqual(['-i', '-N', `${DEFAULT_URL}/events/stream`, '-H', 'Authorization: Bearer ']);
    expect(curlArguments(samplesOf(documentOf('/me', 'get')).curl)).not.toContain('-N');
  });

  it('the client sample asks for the stream and writes each chunk as it comes', async () => {
    const { client } = samplesOf(stream);
    expect(client).toContain('for await (const chunk of stream!.pipeThrough(new TextDecoderStream())) process.stdout.write(chunk);');
    // The stream's `!` is the one TypeScript-only token: without it the sample runs as JavaScript up to the read.
    const call = await clientCall(client.replace('stream!.', 'stream.').replace(/^for await .*$/m, ''));
    expect(call.init).toEqual({ parseAs: 'stream' });
  });

  it("is so in the bundled contract's streamEvents samples", () => {
    const contract = JSON.parse(readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8')) as Document;
    const samples = (contract.paths!['/events/stream']!.get as Operation & { 'x-codeSamples': CodeSample[] })['x-codeSamples'];
    expect(samples.find((sample) => sample.label === CURL)!.source).toMatch(/^curl -i -N "/);
    expect(samples.find((sample) => sample.label === CLIENT)!.source).toContain("{ parseAs: 'stream' }");
  });
});

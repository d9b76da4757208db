/**
 * The contract-driven fuzzer: for every operation of generated/openapi.json, seeded and bounded runs
 * of requests built from its schemas (valid and hostile), sent by callers of every role at real items
 * of the permission matrix's world. On every response: no 5xx; an answer within 2 s of this process's
 * CPU time (never elapsed time, which a busy machine stretches); the status is
 * declared for the operation and the body matches the contract; where one check decides the answer
 * (a body not sent as JSON, a JSON body over 64 KB, an undeclared query parameter), exactly that
 * answer, and never 413 for a body within 64 KB; X-Request-Id is present; a 4xx answer's body is
 * at most 4 KB plus twice the request's URL and body; a 4xx
 * leaves every table exactly as it was (`api_keys.last_used_at` aside, which authentication writes
 * at most once a minute per key); no error body and no log line holds an API key, a password, a
 * provider key or SQL.
 *
 * FUZZ_RUNS (runs per operation, default 30) and FUZZ_SEED (default 20261123) make longer runs; a
 * failure prints the seed, the path fast-check replays, and the shrunk request. The operations are
 * split over two test files (`fuzz.part1` / `fuzz.part2`) so that both cores work.
 */
import fc from 'fast-check';
import { sql, type Kysely } from 'kysely';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { createLogger } from '../../src/logger.js';
import { databaseLabel, emptyDatabase } from '../support/database.js';
import { operations, type ContractOperation } from '../support/contract.js';
import { assertMatchesContract, send, startTestApp, type TestApp } from '../support/testApp.js';
import { createFuzzWorld, type FuzzWorld } from './fixtures.js';
import { bodySchemaOf, csvExampleOf, materialize, requestArbitrary, type FuzzRequest, type RealCursor } from './requests.js';

const runs = Number(process.env.FUZZ_RUNS || 30);
const seed = Number(process.env.FUZZ_SEED || 20261123);

/**
 * The most CPU time this process may spend on one answer, far above the milliseconds a request takes:
 * CPU time, not elapsed time, so a busy machine that makes the answer wait does not count against it.
 */
const answerCpuBudgetMs = 2_000;

/**
 * A 4xx answer's body is at most this plus twice the request's size (its URL and body): the fixed
 * part of an error with its 20 issues, and the request's own text, which an issue may name twice (a
 * key in its message and in its `keys` or `path`). Answers grew with what the request repeated:
 * 7,000 wrong event types in a 14 KB query were a 7 MB answer.
 */
const answerBaseBytes = 4_096;

const logLines: string[] = [];
let app: TestApp;

async function start() {
  const logger = createLogger('debug', false, { write: (line: string) => void logLines.push(line) });
  app = await startTestApp({ logger });
  const { rows } = await sql<{ table: string; columns: string }>`
    select table_name as table, string_agg('t.' || quote_ident(column_name), ', ' order by ordinal_position)
      filter (where not (table_name = 'api_keys' and column_name = 'last_used_at')) as columns
    from information_schema.columns
    where table_schema = current_schema()
      and table_name in (select table_name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE')
      and table_name <> 'idempotency_keys'
    group by table_name order by table_name`.execute(app.db);
  // Per table, what its checksum reads: the whole row, or for api_keys every column but last_used_at.
  const checksumOf = ({ table, columns }: { table: string; columns: string }) => {
    const row = table === 'api_keys' ? `row(${columns})` : 't';
    return `(select md5(coalesce(string_agg((${row})::text, ',' order by (${row})::text), '')) from "${table}" t) as "${table}"`;
  };
  // A function, because PL/pgSQL keeps the plan of its statement for the session: planning the
  // select of every table cost PGlite twice what running it did, and every request takes one or two.
  await sql
    .raw(`create function fuzz_checksums() returns json language plpgsql as $$ begin return (select row_to_json(c) from (select ${rows.map(checksumOf).join(', ')}) c); end $$`)
    .execute(app.db);
}

/**
 * A checksum of every table, one per table: the md5 of its rows as text in a fixed order.
 * `api_keys.last_used_at` is left out: authentication touches it on a key's first use in a minute,
 * whatever the answer. So is `idempotency_keys`: a rule answer (422) sent with a key is stored there
 * to be replayed, by design, while the change itself is undone.
 */
async function checksums(db: Kysely<Database>): Promise<Record<string, string>> {
  const { rows } = await sql<{ checksums: Record<string, string> }>`select fuzz_checksums() as checksums`.execute(db);
  return rows[0]!.checksums;
}

/** What must never be shown in an error body or written to the log. */
const sqlFragments = /\b(select|insert into|update \w+ set|delete from|returning|where)\b.*\b(from|values|\$\d)|syntax error|violates|duplicate key|invalid input syntax|relation "|column "|SQLSTATE|out of range for type|invalid byte sequence|unterminated|null value in column|\bpg_\w+|kysely/i;

function secretsOf(fuzz: FuzzWorld, request: FuzzRequest): string[] {
  const keys = Object.values(fuzz.world.keys).filter((key): key is string => Boolean(key));
  const sent: string[] = [];
  const collect = (value: unknown, field?: string) => {
    if (typeof value === 'string' && field && /^(password|apiKey)$/.test(field) && value.length >= 8) sent.push(value);
    else if (value && typeof value === 'object') for (const [name, inner] of Object.entries(value)) collect(inner, name);
  };
  if (request.body.kind === 'json' || request.body.kind === 'sized' || request.body.kind === 'spliced') collect(request.body.value);
  if (request.body.kind === 'spliced' && request.body.duplicate) collect({ [String(request.body.path.at(-1))]: request.body.duplicate.other });
  return [...keys, ...keys.map((key) => key.slice(-24)), ...sent];
}

function expectNoLeak(where: string, text: string, secrets: string[]) {
  for (const secret of secrets) expect(text.includes(secret), `${where} holds a secret`).toBe(false);
  expect(text, `${where} holds SQL`).not.toMatch(sqlFragments);
}

/** The contract's limit on a request body: 64 KB. */
const bodyLimitBytes = 64 * 1024;

/** Media types that are not `application/json` in any spelling: the contract answers them 415. */
const notJson = /^(text\/plain|application\/x-www-form-urlencoded|multipart\/form-data|application\/xml|application\/merge-patch\+json|application\/vnd\.api\+json)(;|$)/;

interface DecidedAnswer {
  status: number;
  code: string;
  /** A format error, which lists its issues. */
  issues?: true;
}

/**
 * The one answer the contract gives a request, where one check decides it whatever the rest of the
 * request holds: from a caller with a key, to a path that names an operation, a body not sent as
 * JSON gets 415, a JSON body larger than 64 KB 413, and an undeclared query parameter (with all
 * else valid) a format error. Undefined elsewhere, where only a declared status is asked for: "any
 * declared status" cannot see a limit that is too loose, nor a check that is missing.
 */
function decidedAnswer(op: ContractOperation, request: FuzzRequest, key: string | undefined, headers: Record<string, string>, body: string | undefined): DecidedAnswer | undefined {
  const routed = Object.values(request.path).every((value) => !('segment' in value) || value.valid);
  if (key === undefined || !routed) return undefined;
  if (request.mutation === 'unknownQuery') return { status: 422, code: 'invalid', issues: true };
  if (!bodySchemaOf(op) || body === undefined) return undefined;
  const contentType = headers['content-type'];
  if (contentType !== undefined && notJson.test(contentType)) return { status: 415, code: 'unsupportedMediaType' };
  if (contentType === 'application/json' && Buffer.byteLength(body, 'utf8') > bodyLimitBytes) return { status: 413, code: 'payloadTooLarge' };
  return undefined;
}

/** One request: its items made, sent, and its response checked; a failure shows the request as sent. */
async function check(op: ContractOperation, fuzz: FuzzWorld, request: FuzzRequest) {
  const existing = await fuzz.existing(op.path, op.method, request.variant);
  const { url, headers, body } = materialize(op, request, existing);
  const key = fuzz.world.keys[request.caller];
  const shown = `${op.method.toUpperCase()} ${url} as ${request.caller}\nheaders: ${JSON.stringify(headers)}\nbody: ${body === undefined ? '(none)' : body.length > 300 ? `${body.slice(0, 300)}… (${body.length} characters)` : body}\nmutation: ${request.mutation}`;
  const before = await checksums(app.db);
  const logFrom = logLines.length;
  const started = process.cpuUsage();
  const response = await send(app.url, op.method.toUpperCase(), url, { key, headers, rawBody: body });
  const spent = process.cpuUsage(started);
  const cpuMs = (spent.user + spent.system) / 1000;

  if (response.status >= 500) {
    const logged = logLines.slice(logFrom).map((line) => JSON.parse(line) as { err?: { message?: string } }).find((line) => line.err);
    expect.fail(`no 5xx\n${shown}\n→ ${response.status} ${response.text.slice(0, 300)}\nlogged: ${logged?.err?.message ?? '(nothing)'}`);
  }
  // Requests take milliseconds of CPU; one that takes seconds has held the event loop, and every other request with it.
  expect(cpuMs, `an answer within ${answerCpuBudgetMs} ms of CPU\n${shown}\n→ ${response.status} ${response.text.slice(0, 300)}`).toBeLessThan(answerCpuBudgetMs);
  try {
    assertMatchesContract(op.method.toUpperCase(), url, response);
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${shown}`);
  }
  const decided = decidedAnswer(op, request, key, headers, body);
  if (decided) {
    const error = response.body?.error as { code?: string; issues?: unknown[] } | undefined;
    const answered: DecidedAnswer = { status: response.status, code: String(error?.code), ...(error?.issues ? { issues: true } : {}) };
    expect(answered, `the contract's one answer\n${shown}\n→ ${response.text.slice(0, 300)}`).toEqual(decided);
  }
  if (response.status === 413) {
    expect(Buffer.byteLength(body ?? '', 'utf8'), `a body within ${bodyLimitBytes} bytes is never too large\n${shown}`).toBeGreaterThan(bodyLimitBytes);
  }
  // A CSV file's rows are judged against the team's people and metrics, which the fuzzer's example does not know.
  if (request.mutation === 'valid' && response.status === 422 && csvExampleOf(op) === undefined) {
    expect(response.body?.error?.issues, `a valid request got a format error\n${shown}\n→ ${response.text}`).toBeUndefined();
  }
  if (response.status >= 400 && response.status < 500) {
    const requestBytes = Buffer.byteLength(url, 'utf8') + Buffer.byteLength(body ?? '', 'utf8');
    const limit = answerBaseBytes + 2 * requestBytes;
    expect(Buffer.byteLength(response.text, 'utf8'), `a ${response.status} body within ${answerBaseBytes} + 2 × ${requestBytes} bytes\n${shown}\n→ ${response.text.slice(0, 300)}`).toBeLessThanOrEqual(limit);
  }
  if (response.status >= 400) {
    const after = await checksums(app.db);
    const changed = Object.keys(before).filter((table) => before[table] !== after[table]);
    expect(changed, `a ${response.status} changed tables\n${shown}`).toEqual([]);
    expectNoLeak(`the error body\n${shown}`, response.text, secretsOf(fuzz, request));
  }
  expectNoLeak(`the log\n${shown}`, logLines.slice(logFrom).join(''), secretsOf(fuzz, request));
}

/** A cursor's sort values when it is their JSON; undefined for a sealed cursor (the feeds'), which only the server opens. */
function sortValues(cursor: string): unknown[] | undefined {
  try {
    const values: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    return Array.isArray(values) ? values : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A real next cursor of a paginated list (its sort values, where it is their JSON): its first page of
 * one item, asked by callers who may read it. A cursor is opaque to clients; the fuzzer opens those it
 * can to aim at the query, and tampers with the bytes of the sealed ones.
 */
async function realCursor(op: ContractOperation, fuzz: FuzzWorld): Promise<RealCursor | undefined> {
  const parameters = [...(op.pathItem.parameters ?? []), ...(op.operation.parameters ?? [])] as { $ref?: string; name?: string }[];
  if (!parameters.some((parameter) => parameter.$ref?.endsWith('/Cursor') || parameter.name === 'cursor')) return undefined;
  const existing = await fuzz.existing(op.path, op.method, 0);
  const path = op.path.replace(/\{(\w+)\}/g, (_match, name: string) => encodeURIComponent(existing[name]!));
  for (const caller of ['teamAdmin', 'orgOwner', 'superadmin'] as const) {
    const response = await send(app.url, 'GET', `/v1${path}?limit=1`, { key: fuzz.world.keys[caller] });
    const next = (response.body as { nextCursor?: string | null } | undefined)?.nextCursor;
    if (response.status === 200 && next) return sortValues(next) ?? next;
  }
  throw new Error(`${op.operationId}: no caller got a next cursor; give the fuzz world two items of this list in test/fuzz/fixtures.ts`);
}

/** Fuzzes the operations of the contract that `part` of `parts` takes (every `parts`-th, from `part`). */
export function fuzzOperations(part: number, parts: number) {
  const mine = operations.filter((_op, index) => index % parts === part - 1);
  beforeAll(start);
  afterAll(() => app?.close());

  describe(`the contract fuzzer, part ${part} of ${parts} (${databaseLabel}, seed ${seed}, ${runs} runs per operation)`, () => {
    it('the checksum of the tables sees a changed row, but not the last use of a key', async () => {
      await emptyDatabase(app.db);
      const fuzz = await createFuzzWorld(app);
      const before = await checksums(app.db);
      await app.db.updateTable('api_keys').set({ last_used_at: new Date() }).execute();
      expect(await checksums(app.db)).toEqual(before);
      await app.db.updateTable('teams').set({ name: 'Renamed' }).where('id', '=', fuzz.world.team.id).execute();
      const after = await checksums(app.db);
      expect(Object.keys(after).filter((table) => after[table] !== before[table])).toEqual(['teams']);
    });

    it.each(mine.map((op) => [op.operationId, op] as const))('%s answers every request within the contract', async (_id, op) => {
      await emptyDatabase(app.db);
      const fuzz = await createFuzzWorld(app);
      const cursor = await realCursor(op, fuzz);
      await fc.assert(
        fc.asyncProperty(requestArbitrary(op, fuzz.pool, cursor), (request) => check(op, fuzz, request)),
        // A list's cursor is the largest space of input: lists get three times the runs.
        { seed, numRuns: cursor ? runs * 3 : runs },
      );
    }, 120_000);

    it('after all of it, no metric label holds a key, an e-mail, an id or a path: operation ids are the contract’s or unknown', async () => {
      // Paths outside the contract too, holding what must never become a label.
      for (const path of [`/v1/tasks/${randomUUID()}/x`, '/v1/ana@example.com', '/v1/ak_0123456789abcdef', '/nowhere/at/all']) {
        await send(app.url, 'GET', path, { key: 'ak_not_a_real_key_0000000000000000' });
      }
      const text = await app.metrics.registry.metrics();
      const labels = [...text.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map(([, name, value]) => ({ name: name!, value: value! }));
      const operationIds = new Set([...operations.map((op) => op.operationId), 'unknown']);
      const seen = labels.filter((label) => label.name === 'operation_id').map((label) => label.value);
      expect(seen.length).toBeGreaterThan(0);
      expect([...new Set(seen)].filter((value) => !operationIds.has(value))).toEqual([]);
      const leaking = labels.filter(({ value }) => /ak_|@|\/|[0-9a-f]{8}-[0-9a-f]{4}-/i.test(value));
      expect(leaking).toEqual([]);
    });
  });
}

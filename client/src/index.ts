/**
 * The Team OS API v1 client: openapi-fetch over the contract's own types (generated/api.ts), with
 * safe retries, page iteration, the event feed, ETags kept with what was read and typed errors.
 * Webhook verification is the entry `@team-os/client/webhooks` (src/webhooks.ts).
 *
 *   const client = createTeamOsClient({ baseUrl: 'https://teamos.example.com/v1', apiKey });
 *   for await (const task of client.pages('/teams/{teamId}/tasks', { params: { path: { teamId }, query: { completed: false } } })) …
 *   for await (const event of client.events(orgId, { after: lastEventId, follow: true })) …
 *   const live = client.live({ teamIds: [teamId], onEvent: (event) => …, signal });
 *   const job = await client.exports.wait(orgId, (await client.exports.start(orgId)).id); // then client.exports.download(orgId, job.id)
 */
import createClient, { type Client, type FetchOptions, type FetchResponse } from 'openapi-fetch';
import type { components, paths } from '../../generated/api.js';
import { unwrap } from './errors.js';
import { readEvents, type EventsOptions, type FeedEventOf, type FeedEventType } from './events.js';
import { exportsClient, type ExportsClient } from './exports.js';
import { openLive, type LiveOptions, type LiveStream } from './live.js';
import type { ItemOf, ListPath, PageOf } from './pages.js';
import { needsRequestBody, type OwnAnswer } from './ownWrites.js';
import { retryingFetch, type RetryOptions } from './retry.js';
import type { SnapshotRecords } from './localCopy.js';
import { openSync, type SyncOptions, type SyncStore } from './sync.js';

export type { components, operations, paths, webhooks } from '../../generated/api.js';
export { TeamOsError, unwrap, type ErrorBody, type ErrorCode, type ValidationIssue } from './errors.js';
export type { EventsOptions, FeedEvent, FeedEventOf, FeedEventType, FollowOptions } from './events.js';
export { ExportFailed, type ExportsClient, type OrgExport, type WaitOptions } from './exports.js';
export type { ItemOf, ListPath, PageOf, ResponseOf, StatusOf } from './pages.js';
export type { LiveEnd, LiveOptions, LiveReconnecting, LiveReconnectOptions, LiveState, LiveStream } from './live.js';
export type { CopyChange, RecordKind, SyncRecords } from './localCopy.js';
export type { SyncOptions, SyncStore, TeamSyncState } from './sync.js';
export { indexedDbStorage, memoryStorage, type SyncStorage } from './storage.js';
export { retryAfterMs, rateLimitResetMs, retryDelayMs, type RetryOptions } from './retry.js';
// verifyWebhook is `@team-os/client/webhooks`: only receivers need it and its `standardwebhooks`.
export type { HeadersLike, WebhookEvent, WebhookEventOf, WebhookEventType } from './webhooks.js';

/** A record of the contract by its schema name: `Schema<'Task'>`. */
export type Schema<Name extends keyof components['schemas']> = components['schemas'][Name];

export interface TeamOsClientOptions {
  /** The API's base URL, ending in `/v1` (the mock's: `http://127.0.0.1:4010/v1`). */
  baseUrl: string;
  /** A personal API key (`ak_…`), sent as `Authorization: Bearer`. */
  apiKey?: string;
  /** Retry settings, or `false` to send every request exactly once. */
  retry?: RetryOptions | false;
  /** The fetch to send with; `globalThis.fetch` unless given. */
  fetch?: (request: Request) => Promise<Response>;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /**
   * Told once per operation (method and path) and deprecated parameters sent, when an answer carries
   * `Deprecation`; a `console.warn` naming them unless given. `sunset` is when it may stop answering,
   * `link` where it is described.
   */
  onDeprecation?: (notice: DeprecationNotice) => void;
}

/** An operation, or parameters of it, the server says are deprecated (RFC 9745 `Deprecation`, RFC 8594 `Sunset`). */
export interface DeprecationNotice {
  /** `GET /tasks/{id}`. */
  operation: string;
  /** Whether the operation itself is deprecated, not only parameters the request sent. */
  operationDeprecated: boolean;
  /** The deprecated parameters the request sent, from the `title` of their `Link`: `query parameter completed`. */
  parameters: string[];
  /** Since when, from `Deprecation: @<unix seconds>`. */
  deprecatedAt: Date | undefined;
  sunset: Date | undefined;
  /** The `Link` with `rel="deprecation"`, as sent. */
  link: string | undefined;
}

type RequiredKeys<T> = { [Key in keyof T]-?: object extends Pick<T, Key> ? never : Key }[keyof T];
type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'options' | 'head' | 'patch' | 'trace';
type PathsWith<Method extends HttpMethod> = { [Path in keyof paths]: paths[Path] extends { [M in Method]: object } ? Path : never }[keyof paths];
type OperationOf<Path extends keyof paths, Method extends HttpMethod> = paths[Path][Method] extends infer Operation extends Record<string | number, any> ? Operation : never;
type InitOf<Operation> = RequiredKeys<FetchOptions<Operation>> extends never ? [FetchOptions<Operation>?] : [FetchOptions<Operation>];

/**
 * openapi-fetch's method, with its options typed from the operation instead of inferred from the
 * argument: a body field the contract does not have then fails to compile, as TypeScript checks
 * object literals everywhere else.
 */
export type ClientMethod<Method extends HttpMethod> = <Path extends PathsWith<Method>>(
  path: Path,
  ...init: InitOf<paths[Path][Method]>
) => Promise<FetchResponse<OperationOf<Path, Method>, object, `${string}/${string}`>>;

type Methods = 'GET' | 'PUT' | 'POST' | 'DELETE' | 'OPTIONS' | 'HEAD' | 'PATCH' | 'TRACE' | 'request';

export interface TeamOsClient extends Omit<Client<paths>, Methods> {
  GET: ClientMethod<'get'>;
  PUT: ClientMethod<'put'>;
  POST: ClientMethod<'post'>;
  DELETE: ClientMethod<'delete'>;
  PATCH: ClientMethod<'patch'>;
  OPTIONS: ClientMethod<'options'>;
  HEAD: ClientMethod<'head'>;
  TRACE: ClientMethod<'trace'>;
  /**
   * Every item of a list, page after page, following `nextCursor` until it is `null`; `params` as for
   * `GET` (a `limit` sets the page size). A failed page throws `TeamOsError`.
   */
  pages<Path extends ListPath>(
    path: Path,
    ...init: InitOf<paths[Path]['get']>
  ): AsyncGenerator<ItemOf<Path>, void, undefined>;
  /**
   * The organization's event feed, oldest first, from right after `after` (an event id; else from the
   * oldest event kept): without `follow` it ends at the end of the log, with `follow` it keeps polling
   * and never ends. Items are the contract's `Event`, narrowed to `types` when given. Keep the `id` of
   * each event processed to resume from it later. A failed page throws `TeamOsError`; 410
   * `eventsExpired` means the log no longer reaches back to `after`: resync in full. Stop it by
   * leaving the loop, or with `signal`, which also ends a wait (the loop then throws its reason).
   */
  events<Type extends FeedEventType = FeedEventType>(orgId: string, options?: EventsOptions<Type>): AsyncGenerator<FeedEventOf<Type>, void, undefined>;
  /**
   * The `ETag` that came with `data` (a result's `data`, or what `unwrap` returned), for `If-Match`:
   * `params: { header: { 'If-Match': client.etagOf(task) } }`. It throws for anything that came
   * without one (a record of a list, a milestone's create, an object built by hand): a guard that is
   * `undefined` would be dropped from the request, and the change would go through unguarded.
   */
  etagOf(data: unknown): string;
  /**
   * The live stream of every event the caller may read (`GET /events/stream`), narrowed to `teamIds`
   * and `types`: `onEvent` gets each as it happens, typed by the event union. After a lost connection
   * or a balancer's 502, 503 or 504 it reconnects by itself, with backoff, and resumes after the last
   * event delivered (`onReconnecting`, `onOpen`, `state`); `onEnd` tells when it ended for good, with
   * the API's error code and request id. Close it with `signal` or `close()`. Works in browsers and Node: the
   * key goes in `Authorization` (never in the URL); from a browser, the page's origin must be one the
   * server allows (CORS_ORIGINS).
   */
  live<Type extends FeedEventType = FeedEventType>(options: LiveOptions<Type>): LiveStream;
  /** An organization's export (Owners only): `start`, `get`, `wait` (with its progress) and `download` (the archive, streamed). */
  exports: ExportsClient;
  /**
   * A local copy of the caller's records of `teamIds`, kept exactly as their own reads would answer:
   * each team is loaded from its snapshot (or restored from `storage`) and then follows its live
   * stream; the answers of changes made with this client are applied at once. Read it with `get`,
   * its queries (`openTasks`, `openIssues`, …) and `subscribe`; stop it with `signal` or `close()`.
   * Each team holds one live stream of the key's.
   */
  sync(options: SyncOptions): SyncStore;
  /**
   * A team's tasks, issues, goals (a row per milestone) or Scorecard (weeks × metrics) as one CSV file
   * (`GET /teams/{teamId}/{kind}/csv`), streamed as the server reads it: UTF-8 with a byte-order mark,
   * commas, CRLF; cells a spreadsheet would run start with `'`. Pipe it to a file rather than holding
   * it whole. A refusal throws `TeamOsError`.
   */
  exportCsv(teamId: string, kind: CsvExportKind, options?: { signal?: AbortSignal }): Promise<ReadableStream<Uint8Array>>;
  /**
   * Imports a CSV file with the columns its export has (`POST /teams/{teamId}/{kind}/csv`): checked
   * whole, then written all or nothing, or with `dryRun` only checked. Answers what was (or would be)
   * written; a file with bad rows throws `TeamOsError` 422 whose `issues` name each bad cell by row
   * and column (`["rows", "3", "ownerEmail"]`). Retried safely with an `Idempotency-Key` (given, or a
   * new one).
   */
  importCsv(teamId: string, kind: CsvImportKind, file: string | Blob | Uint8Array, options?: { dryRun?: boolean; idempotencyKey?: string; signal?: AbortSignal }): Promise<Schema<'CsvImport'>>;
}

/** What a team's CSV export holds. */
export type CsvExportKind = 'tasks' | 'issues' | 'goals' | 'scorecard';
/** What a team's CSV import takes. */
export type CsvImportKind = Schema<'CsvImport'>['kind'];

const csvPaths = {
  tasks: '/teams/{teamId}/tasks/csv',
  issues: '/teams/{teamId}/issues/csv',
  goals: '/teams/{teamId}/goals/csv',
  scorecard: '/teams/{teamId}/scorecard/csv',
} as const;

const methods = ['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH', 'TRACE'] as const;

export function createTeamOsClient(options: TeamOsClientOptions): TeamOsClient {
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const headers: Record<string, string> = { ...options.headers };
  if (options.apiKey !== undefined) headers.Authorization = `Bearer ${options.apiKey}`;
  const inner = createClient<paths>({
    baseUrl: options.baseUrl,
    headers,
    fetch: options.retry === false ? send : retryingFetch(send, options.retry),
    // The contract's one list parameter, the feed's `types`, is comma separated (form, explode: false).
    querySerializer: { array: { style: 'form', explode: false } },
  });

  const told = new Set<string>();
  const tell =
    options.onDeprecation ??
    ((notice: DeprecationNotice) => {
      const what = [...(notice.operationDeprecated ? [notice.operation] : []), ...notice.parameters.map((parameter) => `the ${parameter} of ${notice.operation}`)].join(' and ');
      console.warn(`Team OS API: ${what} ${notice.parameters.length + Number(notice.operationDeprecated) > 1 ? 'are' : 'is'} deprecated${notice.sunset ? ` and may stop working after ${notice.sunset.toISOString()}` : ''}${notice.link ? `: ${notice.link}` : ''}`);
    });
  inner.use({
    onResponse({ request, response, schemaPath }) {
      const deprecation = response.headers.get('deprecation');
      if (deprecation === null) return;
      const links = (response.headers.get('link') ?? '').split(/,(?=\s*<)/).map((value) => value.trim()).filter((value) => /rel="?deprecation"?/.test(value));
      // A parameter's link names it in its title; the operation's has none.
      const parameters = links.flatMap((value) => /;\s*title="([^"]*)"/.exec(value)?.[1] ?? []);
      const operationDeprecated = links.length === 0 || links.some((value) => !/;\s*title=/.test(value));
      const operation = `${request.method} ${schemaPath}`;
      const key = [operation, operationDeprecated, ...parameters].join('\n');
      if (told.has(key)) return;
      told.add(key);
      const seconds = /^@(-?\d+)$/.exec(deprecation.trim())?.[1];
      const sunset = response.headers.get('sunset');
      tell({ operation, operationDeprecated, parameters, deprecatedAt: seconds === undefined ? undefined : new Date(Number(seconds) * 1000), sunset: sunset === null ? undefined : new Date(sunset), link: links[0] });
    },
  });

  // The answers of the caller's own changes, for the local copies of `sync` open now.
  const answerListeners = new Set<(answer: OwnAnswer) => void>();
  const requestBodies = new Map<string, unknown>();
  inner.use({
    async onRequest({ request, schemaPath, id }) {
      if (answerListeners.size > 0 && needsRequestBody(request.method, schemaPath)) requestBodies.set(id, await request.clone().json().catch(() => undefined));
    },
    async onResponse({ request, response, schemaPath, params, id }) {
      const requestBody = requestBodies.get(id);
      requestBodies.delete(id);
      if (answerListeners.size === 0 || request.method === 'GET' || request.method === 'HEAD' || !response.ok) return;
      const body: unknown = response.status === 204 ? undefined : await response.clone().json().catch(() => undefined);
      const answer: OwnAnswer = { method: request.method, schemaPath, path: (params.path ?? {}) as Record<string, string>, status: response.status, body, requestBody };
      for (const listener of answerListeners) listener(answer);
    },
  });

  // Kept beside the object itself, so a tag lives exactly as long as what it describes.
  const etags = new WeakMap<object, string>();
  const remember = <Result extends { data?: unknown; response: Response }>(result: Result): Result => {
    const tag = result.response.headers.get('etag');
    if (tag !== null && typeof result.data === 'object' && result.data !== null) etags.set(result.data, tag);
    return result;
  };
  type Call = (...args: unknown[]) => Promise<{ data?: unknown; response: Response }>;
  const wrap = (call: Call): Call => async (...args) => remember(await call(...args));
  const { request: _request, ...rest } = inner;
  const client = rest as unknown as TeamOsClient;
  for (const method of methods) (client as unknown as Record<string, Call>)[method] = wrap(inner[method] as unknown as Call);

  client.etagOf = (data) => {
    const tag = typeof data === 'object' && data !== null ? etags.get(data) : undefined;
    if (tag === undefined) {
      throw new TypeError(
        'client.etagOf: this value came without an ETag (only a read of one resource, a change answering it and the create of a record with its own GET carry one); read the record with GET to get its tag before a guarded change.',
      );
    }
    return tag;
  };

  client.pages = async function* (path, ...[init]) {
    const followed = new Set<string>();
    let cursor: string | null = null;
    do {
      const given = (init ?? {}) as { params?: { query?: Record<string, unknown> } };
      const query = cursor === null ? given.params?.query : { ...given.params?.query, cursor };
      const result = await (inner.GET as unknown as Call)(path, { ...given, params: { ...given.params, query } });
      const page = unwrap(result) as { data: ItemOf<typeof path>[]; nextCursor: string | null };
      yield* page.data;
      cursor = page.nextCursor;
      if (cursor !== null) {
        // A cursor that comes back would only repeat pages already given: a server that does that is broken.
        if (followed.has(cursor)) throw new Error(`${path}: the server answered a cursor already followed (${cursor})`);
        followed.add(cursor);
      }
    } while (cursor !== null);
  };
  // Typed from the contract's schema: openapi-fetch's result type drops properties typed exactly `null`
  // (`Readable` in openapi-typescript-helpers), such as `data.teamId` of the organization's own events.
  client.events = (orgId, options = {}) =>
    readEvents(async (query, signal) => unwrap(await inner.GET('/orgs/{orgId}/events', { params: { path: { orgId }, query }, signal })) as PageOf<'/orgs/{orgId}/events'>, options);
  // Each connection is one long request: never through the retries, which would read it whole.
  client.exportCsv = async (teamId, kind, { signal } = {}) =>
    unwrap(await inner.GET(csvPaths[kind], { params: { path: { teamId } }, parseAs: 'stream', signal })) as ReadableStream<Uint8Array>;
  client.importCsv = async (teamId, kind, file, { dryRun, idempotencyKey, signal } = {}) =>
    unwrap(
      await inner.POST(csvPaths[kind], {
        params: { path: { teamId }, query: dryRun === undefined ? {} : { dryRun }, header: idempotencyKey === undefined ? {} : { 'Idempotency-Key': idempotencyKey } },
        // The file as it is: openapi-fetch would write a string as JSON.
        body: file as string,
        bodySerializer: (body: unknown) => body as BodyInit,
        headers: { 'Content-Type': 'text/csv' },
        signal,
      }),
    );
  client.live = (live) => openLive(new URL(`${options.baseUrl.replace(/\/$/, '')}/events/stream`), headers, send, live);
  client.exports = exportsClient(
    {
      start: async (orgId) => unwrap(await inner.POST('/orgs/{orgId}/exports', { params: { path: { orgId } } })),
      get: async (orgId, exportId) => unwrap(await inner.GET('/orgs/{orgId}/exports/{exportId}', { params: { path: { orgId, exportId } } })),
    },
    // One long answer: never through the retries, which would read it whole.
    (path, signal) => send(new Request(`${options.baseUrl.replace(/\/$/, '')}${path}`, { headers, ...(signal ? { signal } : {}) })),
  );
  const statusOf = async (call: Promise<{ response: Response }>) => (await call).response.status;
  client.sync = (sync) =>
    openSync(
      {
        authorization: headers.Authorization,
        userId: async (signal) => (unwrap(await inner.GET('/me', { signal })) as { user: { id: string } }).user.id,
        // The contract's `TeamSnapshot`, of which the copy reads the records and the position.
        snapshot: async (teamId, signal): Promise<SnapshotRecords> => unwrap(await inner.GET('/teams/{teamId}/snapshot', { params: { path: { teamId } }, signal })),
        record: async (kind, id, teamId, signal) => {
          const result =
            kind === 'meeting'
              ? await inner.GET('/meetings/{id}', { params: { path: { id } }, signal })
              : kind === 'goal'
                ? await inner.GET('/goals/{id}', { params: { path: { id } }, signal })
                : await inner.GET('/teams/{teamId}/vision', { params: { path: { teamId } }, signal });
          return (result.response.ok ? unwrap(result as { data?: unknown; response: Response }) : result.response.status) as never;
        },
        teamStatus: (teamId, signal) => statusOf(inner.GET('/teams/{teamId}', { params: { path: { teamId } }, signal })),
        live: (live) => client.live(live),
        onAnswer(listener) {
          answerListeners.add(listener);
          return () => void answerListeners.delete(listener);
        },
      },
      sync,
    );
  return client;
}

/**
 * The real app over real HTTP on a real database, and a client that checks every response it
 * receives against the contract: the status must be declared for the operation (or be an error
 * in the reference's format for paths outside the contract), the body must match its schema,
 * every header the contract declares required for the response must be there, and X-Request-Id
 * must be present. A response outside the contract fails the test.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { pino, type Logger } from 'pino';
import { expect } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import type { DeliveryWorker } from '../../src/webhooks/worker.js';
import { createSecretBox, type SecretBox } from '../../src/auth/secrets.js';
import type { HandlerMap } from '../../src/handlers/types.js';
import { createHttpServer, type ServerTimeouts } from '../../src/http/httpServer.js';
import { checkResponse, contract, operations, type ContractOperation } from './contract.js';
import { createTestDatabase, type TestDatabase } from './database.js';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** A body sent as it is, in its own media type, where a test passes `body`: a CSV file's text or bytes. */
export class RawBody {
  constructor(
    readonly bytes: string | Uint8Array,
    readonly contentType: string,
  ) {}
}

/** A CSV file as an import takes it (`text/csv`). */
export const csvFile = (bytes: string | Uint8Array, contentType = 'text/csv') => new RawBody(bytes, contentType);

export interface RequestOptions {
  key?: string;
  body?: unknown;
  /** A raw body sent as is (with its own content type header). */
  rawBody?: string;
  headers?: Record<string, string>;
}

const templates = operations.map((op) => ({
  op,
  pattern: new RegExp(`^/v1${op.path.replace(/\{\w+\}/g, '[^/]+')}$`),
  literal: op.path.split('/').filter((segment) => !segment.startsWith('{')).length,
}));

/** The contract operation a request goes to (literal segments win, as in the server). */
export function operationFor(method: string, path: string): ContractOperation | undefined {
  const pathname = new URL(path, 'http://x').pathname;
  return templates
    .filter((candidate) => candidate.op.method === method.toLowerCase() && candidate.pattern.test(pathname))
    .sort((a, b) => b.literal - a.literal)[0]?.op;
}

const errorSchemaOperation: ContractOperation = {
  ...operations.find((op) => op.operationId === 'getMe')!,
};

export function assertMatchesContract(method: string, path: string, response: ApiResponse): void {
  expect(response.headers.get('x-request-id'), `${method} ${path}: X-Request-Id`).toBeTruthy();
  const op = operationFor(method, path);
  const contentType = response.headers.get('content-type');
  if (op) {
    const check = checkResponse(op, response.status, contentType, response.body, response.headers);
    expect(check.problems, `${method} ${path} → ${response.status} ${response.text.slice(0, 300)}`).toEqual([]);
    return;
  }
  // Outside the contract's operations (unknown path, other method): an error in the reference's format.
  expect(response.status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
  const check = checkResponse(errorSchemaOperation, 401, contentType, response.body);
  expect(check.problems, `${method} ${path} error body`).toEqual([]);
}

export interface TestApp {
  url: string;
  database: TestDatabase;
  db: TestDatabase['db'];
  /** The app's secret box, with a random key per app. */
  secrets: SecretBox;
  /** What the app's /metrics would show. */
  metrics: App['metrics'];
  /** The callers the app keeps in memory, unless the cache is off. */
  callers: App['callers'];
  /** The webhook delivery worker, when `webhooks.deliver` asked for one. */
  worker: DeliveryWorker | undefined;
  /** The log's end the app knows: its feeds read at least up to it. */
  knownLogEnd: App['knownLogEnd'];
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  close(): Promise<void>;
}

async function streamOpening(response: Response, aborting: AbortController): Promise<string> {
  // A HEAD's answer has no body at all.
  if (!response.body) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!text.includes('\n\n')) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  aborting.abort();
  return text;
}

export async function send(baseUrl: string, method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let body: string | Blob | undefined = options.rawBody;
  if (options.body instanceof RawBody) {
    headers['content-type'] ??= options.body.contentType;
    body = typeof options.body.bytes === 'string' ? options.body.bytes : new Blob([options.body.bytes as Uint8Array<ArrayBuffer>]);
  } else if (options.body !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = JSON.stringify(options.body);
  }
  const aborting = new AbortController();
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body, signal: aborting.signal });
  // A stream of server-sent events never ends by itself: its opening (up to the first empty line) stands for it.
  const text = response.headers.get('content-type')?.startsWith('text/event-stream') ? await streamOpening(response, aborting) : await response.text();
  const isJson = response.headers.get('content-type')?.includes('json');
  return { status: response.status, headers: response.headers, text, body: isJson && text ? JSON.parse(text) : text || undefined };
}

export async function startTestApp(
  options: {
    rateLimitPerMinute?: number;
    redisUrl?: string;
    /** CORS_ORIGINS: none unless given. */
    corsOrigins?: string[];
    handlers?: Partial<HandlerMap>;
    database?: TestDatabase;
    logger?: Logger;
    /** The app's clock; the real time unless given. */
    now?: () => Date;
    /** The HTTP server's timeouts; those of src/server.ts unless given. */
    serverTimeouts?: ServerTimeouts;
    /** The secret box; one with a random key unless given (a restarted server keeps its SECRETS_KEY). */
    secrets?: SecretBox;
    /** Webhook settings: private targets allowed (as `make run` has it) and no delivery worker, unless given. */
    webhooks?: Parameters<typeof createApp>[0]['webhooks'];
    /** Callers kept in memory, as the server has them by default (AUTH_CACHE=on), unless false; the lifetime of a kept caller may be given. */
    callerCache?: false | { ttlMs?: number; silenceMs?: number };
    /** Live streams' settings; the database's notifications and the server's limits unless given. */
    live?: Parameters<typeof createApp>[0]['live'];
    /** How the log's end that reads state is kept; the server's refresh unless given. */
    logPositions?: Parameters<typeof createApp>[0]['logPositions'];
    /** The bundled contract the app serves; generated/openapi.json unless given. */
    contract?: object;
    /** The export worker's settings; no export worker unless given. */
    exports?: Parameters<typeof createApp>[0]['exports'];
  } = {},
): Promise<TestApp> {
  const database = options.database ?? (await createTestDatabase());
  const logger = options.logger ?? pino({ level: 'silent' });
  const secrets = options.secrets ?? createSecretBox(randomBytes(32));
  const { app, close, worker, metrics, callers, knownLogEnd } = await createApp({
    db: database.db,
    config: { rateLimitPerMinute: options.rateLimitPerMinute ?? 10_000, redisUrl: options.redisUrl, corsOrigins: options.corsOrigins },
    logger,
    secrets,
    handlers: options.handlers,
    now: options.now,
    webhooks: options.webhooks ?? { allowPrivateTargets: true },
    callerCache: options.callerCache === false ? undefined : { subscribe: database.subscribe, ...options.callerCache },
    live: { subscribe: database.subscribe, ...options.live },
    logPositions: { subscribe: database.subscribe, ...options.logPositions },
    contract: options.contract,
    exports: options.exports,
  });
  const server: Server = await new Promise((listening) => {
    const started = createHttpServer(app, options.serverTimeouts).listen(0, '127.0.0.1', () => listening(started));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    database,
    db: database.db,
    secrets,
    worker,
    metrics,
    callers,
    knownLogEnd,
    request: async (method, path, requestOptions) => {
      const response = await send(url, method, path, requestOptions);
      assertMatchesContract(method, path, response);
      return response;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((closed) => server.close(closed));
      await close();
      if (!options.database) await database.close();
    },
  };
}

export { contract };

/**
 * Per-operation types over the generated contract types, so that a handler for an operationId
 * can only read that operation's parameters and body and can only return a status and body the
 * contract declares for it.
 */
import type { components, operations } from '../../generated/api.js';
import type { MethodOperations, TagOperations } from '../../generated/tags.js';
import type { StreamBody } from './streamBody.js';

export type OperationId = keyof operations;
/** A tag of the contract: the area an operation belongs to (src/handlers/<area>.ts). */
export type Tag = keyof TagOperations;
/** The operationIds of one or more tags. */
export type OperationOf<T extends Tag> = TagOperations[T];
/** Every operation but a GET: each changes something, so each declares the events it sends (src/events/catalog.ts). */
export type ChangingOperation = Exclude<MethodOperations[keyof MethodOperations], MethodOperations['get']>;
export type Schemas = components['schemas'];

type Operation<K extends OperationId> = operations[K];
type Parameters<K extends OperationId> = Operation<K>['parameters'];

/** Path parameters of an operation (`{}` when it has none). */
export type PathParams<K extends OperationId> =
  Parameters<K> extends { path: infer P } ? (P extends Record<string, unknown> ? P : Record<never, never>) : Record<never, never>;

/** Query parameters of an operation, all optional as sent (`{}` when it has none). */
export type QueryParams<K extends OperationId> =
  Parameters<K> extends { query?: infer Q } ? (Q extends Record<string, unknown> ? Q : Record<never, never>) : Record<never, never>;

/** The JSON request body of an operation, a CSV file's text, or `undefined` when it takes none. */
export type RequestBody<K extends OperationId> =
  Operation<K> extends { requestBody: { content: { 'application/json': infer B } } }
    ? B
    : Operation<K> extends { requestBody?: { content: { 'application/json': infer B } } }
      ? B | undefined
      : Operation<K> extends { requestBody: { content: { 'text/csv': string } } }
        ? string
        : undefined;

type Responses<K extends OperationId> = Operation<K>['responses'];

type BodyOf<R> = R extends { content: { 'application/json': infer B } }
  ? B
  : R extends { content: { 'text/html': infer H } }
    ? H
    : R extends { content: { 'text/markdown': infer M } }
      ? M
        : R extends { content: { 'text/event-stream': unknown } }
        ? StreamBody
        : R extends { content: { 'application/x-tar': unknown } }
          ? StreamBody
        : R extends { content: { 'text/csv': unknown } }
          ? StreamBody
          : undefined;

/**
 * Headers the pipeline writes itself (src/http/): never a handler's to answer, even where the contract
 * declares them on a response.
 */
export type PipelineHeader =
  | 'ETag'
  | 'Idempotent-Replayed'
  | 'X-Request-Id'
  | 'traceresponse'
  | 'RateLimit'
  | 'RateLimit-Policy'
  | 'Retry-After'
  | 'WWW-Authenticate'
  | 'Log-Position';

/**
 * The headers the contract declares on a response that only the handler knows (`Location` of a
 * create): the generated type without its index signature of any other header and without the
 * pipeline's own.
 */
export type HandlerHeaders<R> = R extends { headers: infer H }
  ? { [Name in keyof H as string extends Name ? never : Name extends PipelineHeader ? never : Name]: H[Name] }
  : Record<never, never>;

/** `headers` when the response declares some of the handler's, and no `headers` at all otherwise. */
type HeadersOf<R> = keyof HandlerHeaders<R> extends never ? { headers?: never } : { headers: HandlerHeaders<R> };

/**
 * An answer that states the log position it reflects (its response declares `Log-Position`, which the
 * router writes: src/http/router.ts) names the organization whose log that is, `logOf`, as its handler
 * decided the caller's access to it; any other answer names none.
 */
type LogOf<R> = R extends { headers: infer H }
  ? 'Log-Position' extends keyof { [Name in keyof H as string extends Name ? never : Name]: H[Name] }
    ? { logOf: string }
    : { logOf?: never }
  : { logOf?: never };

/** Every response the contract declares for an operation, as `{ status, body }`, the handler's `headers` and `logOf`. */
export type OperationResponse<K extends OperationId> = {
  [S in keyof Responses<K>]: { status: S; body: BodyOf<Responses<K>[S]> } & HeadersOf<Responses<K>[S]> & LogOf<Responses<K>[S]>;
}[keyof Responses<K>];

/** The successful (2xx) responses of an operation; errors are thrown, not returned. */
export type SuccessResponse<K extends OperationId> = Extract<OperationResponse<K>, { status: 200 | 201 | 202 | 204 }>;

/** What a handler receives: the validated path parameters, query and body of its operation. */
export interface OperationRequest<K extends OperationId> {
  params: PathParams<K>;
  query: QueryParams<K>;
  body: RequestBody<K>;
}

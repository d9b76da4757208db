/**
 * The shape of a handler: one per operationId, typed from the contract, so `tsc` fails when an
 * operation has no handler or a handler returns a status or body its operation does not declare.
 */
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { JsonText } from '../api/jsonText.js';
import type { StreamBody } from '../api/streamBody.js';
import type { OperationId, OperationOf, OperationRequest, SuccessResponse, Tag } from '../api/operations.js';
import type { Caller } from '../auth/caller.js';
import type { SecretBox } from '../auth/secrets.js';
import type { Database } from '../db/database.js';
import type { EventStamp } from '../db/queries/events.js';
import type { KnownLogEnd } from '../events/knownLogEnd.js';
import type { LiveStreams } from '../live/streams.js';

/** Operations anyone may call without a key (the contract gives them `security: []`). */
export type PublicOperationId = 'getOpenApiDocument' | 'getApiDocs' | 'getChangelog';

export interface PublicContext {
  db: Kysely<Database>;
  requestId: string;
  logger: Logger;
  /** The current instant: the real time, unless the app was given another clock (tests of time windows). */
  now: () => Date;
}

export interface RequestContext extends PublicContext {
  caller: Caller;
  /** Seals secrets before they are stored (AI provider keys, webhook signing secrets). */
  secrets: SecretBox;
  /** Whether webhooks may target non-public addresses and plain http (WEBHOOKS_ALLOW_PRIVATE_TARGETS). */
  allowPrivateWebhookTargets: boolean;
  /**
   * The event of this change, stamped by the outbox for a handler that writes its own event
   * (`writingItsEvent`) on the plain path: the handler writes it in the change's one statement
   * (src/events/outbox.ts). Absent in a transaction (Idempotency-Key, If-Match): the outbox writes it.
   */
  event?: EventStamp;
  /**
   * The W3C `traceparent` of the request: the events a change writes itself for the records it alters
   * in bulk carry it, as the outbox's do (`insertEventsOfRows`, src/db/queries/events.ts).
   */
  traceparent: string | null;
  /** The process's live event streams (src/live/streams.ts); absent only in a router built without the app (the bench's routing). */
  live?: LiveStreams;
  /** The log's end this instance knows (src/events/knownLogEnd.ts): the feeds read at least up to it. */
  knownLogEnd: Pick<KnownLogEnd, 'at'>;
}

type AsJsonText<R> = R extends { body: infer B } ? Omit<R, 'body'> & { body: JsonText<B> } : never;
type AsStream<R> = R extends { body: infer B } ? (B extends StreamBody<unknown> ? never : Omit<R, 'body'> & { body: StreamBody<B> }) : never;

/**
 * An answer may carry its body already written as JSON by PostgreSQL (src/db/json.ts): a read's page,
 * or the record a change's one statement wrote for its event and its answer; or write it itself
 * (`StreamBody`), as the team snapshot does.
 */
export type Answer<K extends OperationId> = SuccessResponse<K> | AsJsonText<SuccessResponse<K>> | AsStream<SuccessResponse<K>>;

export type Handler<K extends OperationId> = (
  request: OperationRequest<K>,
  context: K extends PublicOperationId ? PublicContext : RequestContext,
) => Promise<Answer<K>>;

export type HandlerMap = { [K in OperationId]: Handler<K> };

/**
 * The handlers of one area, exactly the operations of its tag: each area file ends with its map typed
 * so, and `tsc` names an operation without a handler there, in the file where it belongs.
 */
export type AreaHandlers<T extends Tag> = { [K in OperationOf<T>]: Handler<K> };

const writesEvent = Symbol('writes its event');

/**
 * `handler`, marked as writing its operation's event itself in the one statement of its change when
 * the context carries `event`. The mark is the handler's, not the operation's: a handler put in its
 * place (a test's) does not write the event, and gets the transaction of any other change.
 */
export function writingItsEvent<K extends OperationId>(handler: Handler<K>): Handler<K> {
  return Object.assign(handler, { [writesEvent]: true });
}

export const writesItsEvent = (handler: unknown): boolean => typeof handler === 'function' && writesEvent in handler;

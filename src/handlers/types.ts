/**
 * The shape of a handler: one per operationId, typed from the contract, so `tsc` fails when an
 * operation has no handler or a handler returns a status or body its operation does not declare.
 */
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { JsonText } from '../api/jsonText.js';
import type { OperationId, OperationOf, OperationRequest, SuccessResponse, Tag } from '../api/operations.js';
import type { Caller } from '../auth/authenticate.js';
import type { SecretBox } from '../auth/secrets.js';
import type { Database } from '../db/database.js';

/** Operations anyone may call without a key (the contract gives them `security: []`). */
export type PublicOperationId = 'getOpenApiDocument' | 'getApiDocs';

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
}

type AsJsonText<R> = R extends { status: infer S; body: infer B } ? { status: S; body: JsonText<B> } : never;

/** A read (`list…`, `get…`) may answer with its body already written as JSON by PostgreSQL (src/db/json.ts). */
export type Answer<K extends OperationId> = K extends `list${string}` | `get${string}` ? SuccessResponse<K> | AsJsonText<SuccessResponse<K>> : SuccessResponse<K>;

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

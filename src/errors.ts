/**
 * The few named errors services and handlers throw. `errorTable` maps each to its HTTP status
 * and error code; the one Express error handler (src/http/errorHandler.ts) answers with it.
 */
import type { components } from '../generated/api.js';

export type ErrorCode = components['schemas']['ErrorCode'];
export type ValidationIssue = components['schemas']['ValidationIssue'];

/** `notImplemented` answers only stubs (501) and is deliberately not part of the contract. */
export type AnyErrorCode = ErrorCode | 'notImplemented';

abstract class ApiError extends Error {
  abstract readonly code: AnyErrorCode;
}

/** A request HTTP itself forbids, such as two Authorization header fields (a singleton field). */
export class BadRequest extends ApiError {
  readonly code = 'badRequest';
}

/** Missing, malformed, expired or revoked key. */
export class Unauthenticated extends ApiError {
  readonly code = 'unauthenticated';
  constructor(message = 'A valid API key is required.') {
    super(message);
  }
}

/** The caller's roles do not allow access or this change. */
export class Forbidden extends ApiError {
  readonly code = 'forbidden';
  constructor(message = 'Your role does not allow this.') {
    super(message);
  }
}

/** The key's scopes do not allow the operation. */
export class InsufficientScope extends ApiError {
  readonly code = 'insufficientScope';
  constructor(message = 'The scopes of this API key do not allow this operation.') {
    super(message);
  }
}

/** The item does not exist or is not visible to the caller; also unknown paths. */
export class NotFound extends ApiError {
  readonly code = 'notFound';
  constructor(message = 'Not found.') {
    super(message);
  }
}

export class MethodNotAllowed extends ApiError {
  readonly code = 'methodNotAllowed';
  constructor(readonly allowed: string[]) {
    super(`This path does not accept this method; it accepts ${allowed.join(', ')}.`);
  }
}

export class OrgSuspended extends ApiError {
  readonly code = 'orgSuspended';
  constructor(message = 'The organization is suspended; changes are not allowed.') {
    super(message);
  }
}

export class RatingClosed extends ApiError {
  readonly code = 'ratingClosed';
  constructor(message = 'This meeting cannot be rated now.') {
    super(message);
  }
}

/** Another request with the same Idempotency-Key is still running. */
export class IdempotencyKeyInUse extends ApiError {
  readonly code = 'idempotencyKeyInUse';
  constructor(message = 'A request with this Idempotency-Key is still running; retry when it has finished.') {
    super(message);
  }
}

/**
 * The event feed was asked to resume after an event its organization's log no longer keeps (purged
 * after the retention period, or never its event: the two look alike). Events after it may be gone,
 * so the consumer must resync in full rather than get a page that silently lacks them.
 */
export class EventsExpired extends ApiError {
  readonly code = 'eventsExpired';
  constructor(message = 'The event log no longer reaches back to this event; read the current state again (a full resync), then follow the feed anew.') {
    super(message);
  }
}

/** The Idempotency-Key was used before for another request (another path or body). */
export class IdempotencyKeyReused extends ApiError {
  readonly code = 'idempotencyKeyReused';
  constructor(message = 'This Idempotency-Key was used for a different request; send a new key for a new request.') {
    super(message);
  }
}

/** An If-Match tag that is no longer the resource's current tag: someone changed it meanwhile. */
export class PreconditionFailed extends ApiError {
  readonly code = 'preconditionFailed';
  constructor(message = 'The resource has changed since you read it (If-Match); read it again and reapply your change.') {
    super(message);
  }
}

export class PayloadTooLarge extends ApiError {
  readonly code = 'payloadTooLarge';
  constructor(message = 'The request body is larger than 64 KB.') {
    super(message);
  }
}

export class UnsupportedMediaType extends ApiError {
  readonly code = 'unsupportedMediaType';
  constructor(message = 'The request body must be sent as application/json.') {
    super(message);
  }
}

/** A format error: the shape of the request is wrong; every problem is listed in `issues`. */
export class FormatError extends ApiError {
  readonly code = 'invalid';
  constructor(
    readonly issues: ValidationIssue[],
    message = 'The request is not valid.',
  ) {
    super(message);
  }
}

/** A rule violation: the request is well-formed but breaks a rule of the operation (no `issues`). */
export class RuleViolation extends ApiError {
  readonly code = 'invalid';
}

export class RateLimited extends ApiError {
  readonly code = 'rateLimited';
  constructor(
    readonly retryAfterSeconds: number,
    message = `Too many requests; try again in ${retryAfterSeconds} seconds.`,
  ) {
    super(message);
  }
}

/** Answered by the stub of an operation no backend developer has implemented yet (501; outside the contract). */
export class NotImplemented extends ApiError {
  readonly code = 'notImplemented';
  constructor(operationId: string) {
    super(`${operationId} is not implemented yet.`);
  }
}

export { ApiError };

/**
 * Whether an error's answer is stored under an `Idempotency-Key` and replayed to a retry
 * (src/http/idempotency.ts): `stored` always (the change ran and decided it), `rule answers` only
 * when it is a rule of the operation (a `RuleViolation`, not a `FormatError` of the same code),
 * `not stored` when decided before the change runs or by the server's failure, so the client may
 * fix what was wrong, or wait, and retry with the same key.
 */
export type Replay = 'stored' | 'rule answers' | 'not stored';

/**
 * Each error code's HTTP status and replay: the one declaration of an error besides its line in the
 * contract's `ErrorCode` (its value and, in the overview, its description); test/errorCodes.test.ts
 * holds the two, the documented error responses and docs/architecture.md's stored answers alike.
 * `internal` (500) is the answer to anything else.
 */
export const errorTable: Record<AnyErrorCode, { status: number; replay: Replay }> = {
  badRequest: { status: 400, replay: 'not stored' },
  unauthenticated: { status: 401, replay: 'not stored' },
  forbidden: { status: 403, replay: 'not stored' },
  insufficientScope: { status: 403, replay: 'not stored' },
  notFound: { status: 404, replay: 'not stored' },
  methodNotAllowed: { status: 405, replay: 'not stored' },
  orgSuspended: { status: 409, replay: 'not stored' },
  ratingClosed: { status: 409, replay: 'stored' },
  idempotencyKeyInUse: { status: 409, replay: 'not stored' },
  eventsExpired: { status: 410, replay: 'not stored' },
  preconditionFailed: { status: 412, replay: 'not stored' },
  payloadTooLarge: { status: 413, replay: 'not stored' },
  unsupportedMediaType: { status: 415, replay: 'not stored' },
  invalid: { status: 422, replay: 'rule answers' },
  idempotencyKeyReused: { status: 422, replay: 'not stored' },
  rateLimited: { status: 429, replay: 'not stored' },
  internal: { status: 500, replay: 'not stored' },
  notImplemented: { status: 501, replay: 'not stored' },
};

/** Whether the answer of `error`, thrown by a change run under an `Idempotency-Key`, is stored and replayed. */
export function isReplayed(error: unknown): error is ApiError {
  if (!(error instanceof ApiError)) return false;
  const { replay } = errorTable[error.code];
  return replay === 'stored' || (replay === 'rule answers' && error instanceof RuleViolation);
}

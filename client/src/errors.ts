import type { components } from '../../generated/api.js';

/** The reference's error body: `{ "error": { "code", "message", "issues"? } }`. */
export type ErrorBody = components['schemas']['ApiError'];
export type ErrorCode = components['schemas']['ErrorCode'];
export type ValidationIssue = components['schemas']['ValidationIssue'];

/**
 * An answer other than 2xx (or 304), as a value: the status, the reference's error code and message,
 * the format issues of a 422, and the request id to quote when reporting a problem. A 412 after
 * `If-Match` is `code: 'preconditionFailed'`: read the resource again and reapply the change.
 */
export class TeamOsError extends Error {
  override readonly name = 'TeamOsError';
  readonly status: number;
  /** The reference's error code; undefined only when the body was not the reference's format (a proxy's page). */
  readonly code: ErrorCode | undefined;
  readonly issues: ValidationIssue[];
  /** `X-Request-Id` of the answer. */
  readonly requestId: string | null;
  readonly body: unknown;
  readonly response: Response;

  constructor(response: Response, body: unknown) {
    const error = isErrorBody(body) ? body.error : undefined;
    super(error ? `${response.status} ${error.code}: ${error.message}` : `${response.status} ${response.statusText}`.trim());
    this.status = response.status;
    this.code = error?.code;
    this.issues = error?.issues ?? [];
    this.requestId = response.headers.get('x-request-id');
    this.body = body;
    this.response = response;
  }
}

function isErrorBody(body: unknown): body is ErrorBody {
  const error = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  return typeof error?.code === 'string' && typeof error.message === 'string';
}

/**
 * The data of an openapi-fetch result, or a thrown `TeamOsError` for its error:
 * `const task = unwrap(await client.GET('/tasks/{id}', …))`.
 */
export function unwrap<Data>(result: { data?: Data; error?: unknown; response: Response }): Data {
  if (result.response.ok || result.response.status === 304) return result.data as Data;
  throw new TeamOsError(result.response, result.error);
}

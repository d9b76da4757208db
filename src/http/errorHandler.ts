/**
 * The one error handler: named errors map to their status and code through `errorTable`; anything
 * else is 500 `internal`, logged with the request id (without database text, see `loggableError`) and
 * answered without details.
 */
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { ApiError, errorTable, FormatError, MethodNotAllowed, RateLimited, Unauthenticated } from '../errors.js';
import { loggableError, maskKeys } from '../logger.js';

/**
 * A format error lists at most this many of its issues, the first found: a request of a few KB can
 * hold thousands of wrong items, and an answer listing each one was megabytes (7,000 wrong event
 * types in a 14 KB query, 7 MB). Here, not where Ajv's errors are read, so that every format error
 * is bounded: the NUL check, integer texts and the handlers' own make them too.
 */
export const maxIssues = 20;

export interface ErrorAnswer {
  status: number;
  headers: Record<string, string>;
  body: { error: { code: string; message: string; issues?: unknown[]; issueCount?: number } };
}

/** The status, headers and body of a named error, in the reference's error format. */
export function errorAnswer(error: ApiError): ErrorAnswer {
  const headers: Record<string, string> = {};
  if (error instanceof Unauthenticated) headers['WWW-Authenticate'] = 'Bearer';
  if (error instanceof RateLimited) headers['Retry-After'] = String(error.retryAfterSeconds);
  if (error instanceof MethodNotAllowed) headers.Allow = error.allowed.join(', ');
  const body: ErrorAnswer['body']['error'] = { code: error.code, message: error.message };
  if (error instanceof FormatError) {
    body.issues = error.issues.slice(0, maxIssues);
    body.issueCount = error.issues.length;
  }
  return { status: errorTable[error.code].status, headers, body: { error: body } };
}

export function errorHandler(logger: Logger) {
  return (raw: unknown, req: Request, res: Response, _next: NextFunction) => {
    const error = raw instanceof ApiError ? raw : undefined;
    if (!error) {
      logger.error({ err: loggableError(raw), requestId: req.requestId, traceId: req.trace.traceId, method: req.method, path: maskKeys(req.path) }, 'internal error');
      res.status(500).json({ error: { code: 'internal', message: 'Something went wrong on our side.' } });
      return;
    }
    const answer = errorAnswer(error);
    res.set(answer.headers).status(answer.status).json(answer.body);
  };
}

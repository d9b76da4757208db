/**
 * The one error handler: named errors map to their status and code through `errorTable`; anything
 * else is 500 `internal`, logged with the request id (without database text, see `loggableError`) and
 * answered without details.
 */
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { ApiError, errorTable, FormatError, MethodNotAllowed, RateLimited, Unauthenticated } from '../errors.js';
import { loggableError, maskKeys } from '../logger.js';

export function errorHandler(logger: Logger) {
  return (raw: unknown, req: Request, res: Response, _next: NextFunction) => {
    const error = raw instanceof ApiError ? raw : undefined;
    if (!error) {
      logger.error({ err: loggableError(raw), requestId: req.requestId, method: req.method, path: maskKeys(req.path) }, 'internal error');
      res.status(500).json({ error: { code: 'internal', message: 'Something went wrong on our side.' } });
      return;
    }
    if (error instanceof RateLimited) res.set('Retry-After', String(error.retryAfterSeconds));
    if (error instanceof Unauthenticated) res.set('WWW-Authenticate', 'Bearer');
    if (error instanceof MethodNotAllowed) res.set('Allow', error.allowed.join(', '));
    const status = errorTable[error.code];
    const body: { code: string; message: string; issues?: unknown[] } = { code: error.code, message: error.message };
    if (error instanceof FormatError) body.issues = error.issues;
    res.status(status).json({ error: body });
  };
}

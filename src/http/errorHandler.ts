/**
 * The one error handler: named errors map to their status and code through `errorTable`; body
 * parser errors to 413/415/422; anything else is 500 `internal`, logged with the request id and
 * answered without details.
 */
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import {
  ApiError,
  errorTable,
  FormatError,
  MethodNotAllowed,
  PayloadTooLarge,
  RateLimited,
  UnsupportedMediaType,
} from '../errors.js';

/** Errors of express.json (body-parser) carry `type` or a 4xx `status`. */
function fromBodyParser(error: { type?: unknown; status?: unknown }): ApiError | undefined {
  switch (error.type) {
    case 'entity.too.large':
      return new PayloadTooLarge();
    case 'entity.parse.failed':
      return new FormatError(
        [{ origin: 'body', code: 'invalid_json', path: [], message: 'The request body is not valid JSON.' }],
        'The request body is not valid JSON.',
      );
    case 'charset.unsupported':
    case 'encoding.unsupported':
      return new UnsupportedMediaType('The request body must be JSON in UTF-8, without an unknown content encoding.');
  }
  if (typeof error.status === 'number' && error.status >= 400 && error.status < 500) {
    return new FormatError([{ origin: 'body', code: 'invalid_json', path: [], message: 'The request body could not be read.' }]);
  }
  return undefined;
}

export function errorHandler(logger: Logger) {
  return (raw: unknown, req: Request, res: Response, _next: NextFunction) => {
    const error = raw instanceof ApiError ? raw : fromBodyParser((raw ?? {}) as object);
    if (!error) {
      logger.error({ err: raw, requestId: req.requestId, method: req.method, path: req.path }, 'internal error');
      res.status(500).json({ error: { code: 'internal', message: 'Something went wrong on our side.' } });
      return;
    }
    if (error instanceof RateLimited) res.set('Retry-After', String(error.retryAfterSeconds));
    if (error instanceof MethodNotAllowed) res.set('Allow', error.allowed.join(', '));
    const status = errorTable[error.code];
    const body: { code: string; message: string; issues?: unknown[] } = { code: error.code, message: error.message };
    if (error instanceof FormatError) body.issues = error.issues;
    res.status(status).json({ error: body });
  };
}

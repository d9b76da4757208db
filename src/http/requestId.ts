import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

const wellFormed = /^[A-Za-z0-9._-]{1,128}$/;
/** An API key pasted into the wrong header must not be echoed or logged. */
const keyShaped = /^ak_/;

/**
 * Every response carries X-Request-Id: a well-formed incoming one is kept, otherwise (or when it
 * looks like an API key) a new one is made.
 */
export function requestId(req: Request, res: Response, next: NextFunction) {
  const incoming = req.get('x-request-id');
  req.requestId = incoming && wellFormed.test(incoming) && !keyShaped.test(incoming) ? incoming : randomUUID();
  res.set('X-Request-Id', req.requestId);
  next();
}

import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';

const wellFormed = /^[A-Za-z0-9._-]{1,128}$/;
/** An API key pasted into the wrong header must not be echoed or logged. */
const keyShaped = /^ak_/;

/**
 * Every response carries X-Request-Id: a well-formed incoming one is kept, otherwise (or when it
 * looks like an API key) a new one is made.
 */
export function requestId(req: Request, res: Response) {
  const incoming = req.headers['x-request-id'];
  req.requestId = typeof incoming === 'string' && wellFormed.test(incoming) && !keyShaped.test(incoming) ? incoming : randomUUID();
  res.setHeader('X-Request-Id', req.requestId);
}

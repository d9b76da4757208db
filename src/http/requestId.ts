import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

const wellFormed = /^[A-Za-z0-9._-]{1,128}$/;

/** Every response carries X-Request-Id: a well-formed incoming one is kept, otherwise a new one is made. */
export function requestId(req: Request, res: Response, next: NextFunction) {
  const incoming = req.get('x-request-id');
  req.requestId = incoming && wellFormed.test(incoming) ? incoming : randomUUID();
  res.set('X-Request-Id', req.requestId);
  next();
}

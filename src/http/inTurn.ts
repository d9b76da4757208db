import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * Middlewares run one after the other within one Express layer: each goes on to the next when it calls
 * `next()`, and an error (passed or thrown, or a rejected promise, as Express 5 takes them) goes to
 * the layer's `next` at once. An Express layer's dispatch costs a request some 7 µs of CPU, more than
 * several of the API's steps themselves (BENCH_ONLY=stages).
 */
export function inTurn(...steps: RequestHandler[]): RequestHandler {
  return steps.reduceRight<RequestHandler>(
    (rest, step) => (req: Request, res: Response, next: NextFunction) => {
      const result: unknown = step(req, res, (error?: unknown) => (error ? next(error) : rest(req, res, next)));
      if (result instanceof Promise) result.catch(next);
    },
    (_req, _res, next) => next(),
  );
}

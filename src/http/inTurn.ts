import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * Middlewares run one after the other within one Express layer: each goes on to the next when it calls
 * `next()`, and an error (passed or thrown, or a rejected promise, as Express 5 takes them) goes to
 * the layer's `next` at once. An Express layer's dispatch costs a request some 7 µs of CPU, more than
 * several of the API's steps themselves (BENCH_ONLY=stages); one `next` per request serves every step.
 */
export function inTurn(...steps: RequestHandler[]): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    let index = 0;
    const proceed = (error?: unknown): void => {
      if (error) return next(error);
      const step = steps[index++];
      if (step === undefined) return next();
      const result: unknown = step(req, res, proceed);
      if (result instanceof Promise) result.catch(next);
    };
    proceed();
  };
}

const underV1 = /^\/v1(?:[/?#]|$)/i;

/**
 * The step, for requests under `/v1` only (as `app.use('/v1', step)` would, without regard to case);
 * others go on. Unlike a mounted middleware it sees the whole path: the router takes `/v1` off itself.
 */
export const forV1 =
  (step: RequestHandler): RequestHandler =>
  (req, res, next) =>
    underV1.test(req.url) ? step(req, res, next) : next();

import type { Request, Response } from 'express';

/** A step told once a request's answer has been handed to the network, with how long the request took. */
export type AnsweredStep = (req: Request, res: Response, seconds: number) => void;

/**
 * Tells each step when the answer is finished, through one `finish` listener and one clock reading
 * per request for all of them: a listener and a reading each cost a request more than the steps
 * themselves (BENCH_ONLY=stages).
 */
export function whenAnswered(steps: readonly AnsweredStep[]) {
  return (req: Request, res: Response) => {
    const started = performance.now();
    res.once('finish', () => {
      const seconds = (performance.now() - started) / 1000;
      for (const step of steps) step(req, res, seconds);
    });
  };
}

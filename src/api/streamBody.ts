import type { Request, Response } from 'express';

/**
 * An answer that takes the connection over instead of being written by the router: a stream of
 * server-sent events (`text/event-stream`), an export's archive (`application/x-tar`), or a JSON answer
 * too large to hold in memory (`Body`, the contract's type of it: the team snapshot). `open` may still refuse with a named error until it has
 * sent the response's head; the error is then answered like any other.
 */
export class StreamBody<Body = 'text/event-stream'> {
  declare private readonly body: Body;
  constructor(readonly open: (req: Request, res: Response) => Promise<void>) {}
}

import type { Request, Response } from 'express';

/**
 * An answer that takes the connection over instead of being written by the router: a stream of
 * server-sent events (`text/event-stream`), or an export's archive (`application/x-tar`). `open` may still refuse with a named error until it has
 * sent the response's head; the error is then answered like any other.
 */
export class StreamBody {
  constructor(readonly open: (req: Request, res: Response) => Promise<void>) {}
}

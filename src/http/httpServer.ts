/**
 * The HTTP server around the app, with timeouts set on purpose against slow or idle clients (Node's
 * defaults wait a minute for headers and five for a request, and check only every 30 s):
 * - headers must arrive within 10 s of the connection or of the previous request;
 * - a whole request, body included (at most 64 KB), within 30 s;
 * - an idle keep-alive connection is closed after 5 s;
 * - the limits are checked every second. A client cut off gets 408 and the connection is closed.
 */
import { createServer, IncomingMessage, ServerResponse, type RequestListener, type Server } from 'node:http';
import type { Express } from 'express';

export interface ServerTimeouts {
  headersMs: number;
  requestMs: number;
  keepAliveMs: number;
  checkEveryMs: number;
}

export const serverTimeouts: ServerTimeouts = { headersMs: 10_000, requestMs: 30_000, keepAliveMs: 5_000, checkEveryMs: 1_000 };

/**
 * Defines on `target` every property of `from` and of its prototypes above `base` (not `base`'s own),
 * the nearer one winning, as a lookup through that chain would find them.
 */
function carry(target: object, from: object, base: object): void {
  const chain: object[] = [];
  for (let layer: object | null = from; layer !== base; layer = Object.getPrototypeOf(layer) as object | null) {
    if (layer === null) throw new Error("Express's requests and responses no longer derive from Node's");
    chain.unshift(layer);
  }
  for (const layer of chain) {
    for (const key of Reflect.ownKeys(layer)) if (key !== 'constructor') Object.defineProperty(target, key, Object.getOwnPropertyDescriptor(layer, key)!);
  }
}

/**
 * Requests and responses born with Express's prototypes. Express 5 gives each request and response
 * its app's prototypes as it takes them (`Object.setPrototypeOf` in `app.handle`), and V8 then makes
 * each of the two objects a hidden class of its own: every later property access on them, Node's own
 * writing of the answer included, misses V8's caches. That one step cost a bare Express route more
 * than all the rest of Express (docs/performance.md, "The request pipeline"). Here Node makes them
 * instances of classes whose prototypes carry what Express's do, and those prototypes become the
 * app's, so Express's setting of them changes nothing (the same prototype is no change to V8). The
 * app's request and response are what they were to every handler and middleware: the same methods,
 * getters and `app`, from the same Express.
 */
function bornForExpress(app: Express): { IncomingMessage: typeof IncomingMessage; ServerResponse: typeof ServerResponse } {
  class ExpressRequest extends IncomingMessage {}
  class ExpressResponse extends ServerResponse {}
  carry(ExpressRequest.prototype, app.request, IncomingMessage.prototype);
  carry(ExpressResponse.prototype, app.response, ServerResponse.prototype);
  app.request = ExpressRequest.prototype as unknown as Express['request'];
  app.response = ExpressResponse.prototype as unknown as Express['response'];
  return { IncomingMessage: ExpressRequest, ServerResponse: ExpressResponse as typeof ServerResponse };
}

const isExpress = (app: RequestListener | Express): app is Express => 'request' in app && 'response' in app && 'handle' in app;

/** The server of an app: an Express app's requests and responses are born as Express makes them (`bornForExpress`). */
export function createHttpServer(app: RequestListener | Express, timeouts: ServerTimeouts = serverTimeouts): Server {
  const server = createServer(
    {
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      connectionsCheckingInterval: timeouts.checkEveryMs,
      ...(isExpress(app) ? bornForExpress(app) : {}),
    },
    app,
  );
  server.keepAliveTimeout = timeouts.keepAliveMs;
  return server;
}

/**
 * The HTTP server around the app, with timeouts set on purpose against slow or idle clients (Node's
 * defaults wait a minute for headers and five for a request, and check only every 30 s):
 * - headers must arrive within 10 s of the connection or of the previous request;
 * - a whole request, body included (at most 64 KB), within 30 s;
 * - an idle keep-alive connection is closed after 5 s;
 * - the limits are checked every second. A client cut off gets 408 and the connection is closed.
 */
import { createServer, type RequestListener, type Server } from 'node:http';

export interface ServerTimeouts {
  headersMs: number;
  requestMs: number;
  keepAliveMs: number;
  checkEveryMs: number;
}

export const serverTimeouts: ServerTimeouts = { headersMs: 10_000, requestMs: 30_000, keepAliveMs: 5_000, checkEveryMs: 1_000 };

export function createHttpServer(app: RequestListener, timeouts: ServerTimeouts = serverTimeouts): Server {
  const server = createServer(
    { headersTimeout: timeouts.headersMs, requestTimeout: timeouts.requestMs, connectionsCheckingInterval: timeouts.checkEveryMs },
    app,
  );
  server.keepAliveTimeout = timeouts.keepAliveMs;
  return server;
}

/**
 * `GET /metrics` in Prometheus's text format, on a listener of its own (METRICS_PORT), never on the
 * API's port: what it tells (traffic, errors, the backlog) is for the operator's scraper, not for API
 * clients, and a firewall or a Kubernetes port that is not exposed keeps it so. No key: whoever
 * reaches the port may read it.
 */
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

export async function startMetricsServer(registry: Registry, port: number, host: string): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics') return void res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: the metrics are at /metrics.\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return void res.writeHead(405, { allow: 'GET, HEAD' }).end();
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(req.method === 'HEAD' ? undefined : text),
      () => res.writeHead(500, { 'content-type': 'text/plain' }).end('The metrics could not be collected.\n'),
    );
  });
  // A scraper keeps its connection open between scrapes (every 15 s by default); Node's 5 s would close it.
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((listening, failed) => {
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      listening();
    });
  });
  return server;
}

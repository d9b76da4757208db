/**
 * The mock server for client developers: Prism answers every operation of the bundled contract
 * from its examples, behind a small front that serves it under the contract's base path `/v1`
 * (Prism itself ignores base paths by design).
 *
 *   npm run mock            → http://127.0.0.1:4010/v1
 *   MOCK_PORT=5000 npm run mock
 */
import { spawn } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import { resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');

export interface MockServer {
  url: string;
  stop(): Promise<void>;
}

async function waitForPrism(port: number, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    const answered = await new Promise<boolean>((done) => {
      const probe = request({ host: '127.0.0.1', port, path: '/openapi.json', method: 'GET' }, (res) => {
        res.resume();
        done(true);
      });
      probe.on('error', () => done(false));
      probe.end();
    });
    if (answered) return;
    await new Promise((wait) => setTimeout(wait, 200));
  }
  throw new Error(`Prism did not start on port ${port}`);
}

const notFound = JSON.stringify({ error: { code: 'notFound', message: 'The mock serves the API under /v1.' } });

/** Starts Prism on `prismPort` and the `/v1` front on `port`; resolves once both answer. */
export async function startMock(port: number, prismPort: number): Promise<MockServer> {
  // Prism forks a child that outlives its parent: give it its own process group and stop the group.
  const prism = spawn(
    resolve(root, 'node_modules/.bin/prism'),
    ['mock', resolve(root, 'generated/openapi.json'), '--host', '127.0.0.1', '--port', String(prismPort)],
    { cwd: root, detached: true, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const stopPrism = () => {
    try {
      process.kill(-prism.pid!, 'SIGTERM');
    } catch {
      // already gone
    }
  };
  try {
    await waitForPrism(prismPort, Date.now() + 60_000);
  } catch (error) {
    stopPrism();
    throw error;
  }

  const front: Server = createServer((req, res) => {
    const url = req.url ?? '/';
    if (url !== '/v1' && !url.startsWith('/v1/') && !url.startsWith('/v1?')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(notFound);
      return;
    }
    const upstream = request(
      { host: '127.0.0.1', port: prismPort, method: req.method, path: url.slice(3) || '/', headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((listening) => front.listen(port, '127.0.0.1', listening));

  return {
    url: `http://127.0.0.1:${port}/v1`,
    stop: async () => {
      stopPrism();
      await new Promise((closed) => front.close(closed));
    },
  };
}

if (process.argv[1] === import.meta.filename) {
  const port = Number(process.env.MOCK_PORT ?? 4010);
  const mock = await startMock(port, port + 1);
  console.log(`Mock server: ${mock.url} (any "Authorization: Bearer ak_…" header is accepted)`);
  const shutdown = () => void mock.stop().then(() => process.exit(0));
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

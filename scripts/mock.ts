/**
 * The mock server for client developers: Prism answers every operation of the bundled contract
 * from its examples, behind a small front that serves it under the contract's base path `/v1`
 * (Prism itself ignores base paths by design).
 *
 * The front applies the server's own CORS rule (src/http/cors.ts over CORS_ORIGINS, read by
 * src/config.ts), and Prism runs with `--cors false`: Prism's own CORS answers any origin with
 * credentials allowed, so a page that works against it could fail against the server. The one header
 * the front allows beyond the server's is Prism's `Prefer`, which only the mock reads. Prism never
 * replays (it keeps no Idempotency-Key), so no answer of the mock carries `Idempotent-Replayed`.
 *
 *   npm run mock            → http://127.0.0.1:4010/v1
 *   MOCK_PORT=5000 npm run mock
 *   CORS_ORIGINS=http://localhost:5173 npm run mock   → a page on that origin may call it
 */
import { spawn } from 'node:child_process';
import { request, type Server } from 'node:http';
import { resolve } from 'node:path';
import express from 'express';
import { corsOriginsOf } from '../src/config.js';
import { Unauthenticated } from '../src/errors.js';
import { crossOrigin } from '../src/http/cors.js';
import { errorAnswer } from '../src/http/errorHandler.js';

const root = resolve(import.meta.dirname, '..');

/**
 * The request headers a page may send to the mock beyond the server's: Prism's `Prefer` (`code=412`,
 * `example=…`) picks the answer it wants to see. README.md names them (test/unit/docsTruth.test.ts).
 */
export const mockOnlyRequestHeaders = ['Prefer'];

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

/** Headers of Prism's answers the front never passes on: CORS is the front's, and the mock never replays. */
const dropped = /^(access-control-|idempotent-replayed$)/i;

/**
 * Starts Prism on `prismPort` and the `/v1` front on `port`; resolves once both answer. The origins a
 * page may call it from are CORS_ORIGINS's unless given.
 */
export async function startMock(port: number, prismPort: number, options: { corsOrigins?: readonly string[] } = {}): Promise<MockServer> {
  const origins = options.corsOrigins ?? corsOriginsOf(process.env);
  // Prism forks a child that outlives its parent: give it its own process group and stop the group.
  const prism = spawn(
    resolve(root, 'node_modules/.bin/prism'),
    ['mock', resolve(root, 'generated/openapi.json'), '--host', '127.0.0.1', '--port', String(prismPort), '--cors', 'false'],
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

  const app = express();
  app.disable('x-powered-by');
  app.use(crossOrigin(origins, mockOnlyRequestHeaders));
  app.use((req, res) => {
    const url = req.url;
    if (url !== '/v1' && !url.startsWith('/v1/') && !url.startsWith('/v1?')) {
      res.status(404).type('application/json').end(notFound);
      return;
    }
    // A preflight the CORS rule did not answer: the server refuses it as any request without a key.
    if (req.method === 'OPTIONS' && req.headers.authorization === undefined) {
      const refused = errorAnswer(new Unauthenticated());
      res.set(refused.headers).status(refused.status).json(refused.body);
      return;
    }
    const upstream = request(
      { host: '127.0.0.1', port: prismPort, method: req.method, path: url.slice(3) || '/', headers: req.headers },
      (answer) => {
        for (const [name, value] of Object.entries(answer.headers)) {
          if (value === undefined || dropped.test(name)) continue;
          // Vary: Origin is the front's already; Prism's own Vary joins it.
          if (name === 'vary') res.vary(String(value));
          else res.setHeader(name, value);
        }
        res.status(answer.statusCode ?? 502);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.status(502).end());
    req.pipe(upstream);
  });
  const front: Server = app.listen(port, '127.0.0.1');
  await new Promise<void>((listening, failed) => front.once('listening', listening).once('error', failed));

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

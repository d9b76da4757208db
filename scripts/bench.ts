/**
 * `npm run bench`: throughput and latency on this machine, loopback only, bounded in time.
 *   1. GET /v1/me with a valid key on PostgreSQL (the whole pipeline: auth, rate limit, routing,
 *      validation, handler, two queries) next to a bare Express 5 route answering the same JSON.
 *      Target: /v1/me at ≥ 0.4× the bare route.
 *   2. Routing + validation alone: a constant handler behind the contract router, with no database,
 *      next to the same bare route.
 * BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) names a server on which a
 * throwaway database is created and dropped. BENCH_SECONDS (default 10) sets each run's length.
 * autocannon runs as a child process so that it does not share the server's event loop.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import express from 'express';
import pg from 'pg';
import { pino } from 'pino';
import { contractDocument, createApp } from '../src/app.js';
import { generateKey } from '../src/auth/apiKeys.js';
import { openPostgres } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { handlers } from '../src/handlers/index.js';
import type { HandlerMap } from '../src/handlers/types.js';
import { loadContract, operationRoutes } from '../src/http/router.js';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '..');
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = 20;
const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

interface Result {
  name: string;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
}

async function listen(app: express.Express): Promise<{ url: string; server: Server }> {
  const server: Server = await new Promise((ready) => {
    const started = app.listen(0, '127.0.0.1', () => ready(started));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function load(name: string, url: string, headers: Record<string, string> = {}): Promise<Result> {
  const args = [url, '--connections', String(connections), '--duration', String(seconds), '--json'];
  for (const [header, value] of Object.entries(headers)) args.push('--headers', `${header}=${value}`);
  const { stdout } = await run(resolve(root, 'node_modules/.bin/autocannon'), args, { maxBuffer: 64 * 1024 * 1024 });
  const report = JSON.parse(stdout) as {
    requests: { average: number };
    latency: { p50: number; p99: number };
    non2xx: number;
  };
  return { name, requestsPerSecond: report.requests.average, p50: report.latency.p50, p99: report.latency.p99, non2xx: report.non2xx };
}

function print(results: Result[]) {
  for (const result of results) {
    console.log(
      `${result.name.padEnd(44)} ${result.requestsPerSecond.toFixed(0).padStart(7)} req/s   p50 ${String(result.p50).padStart(3)} ms   p99 ${String(result.p99).padStart(3)} ms${result.non2xx ? `   (${result.non2xx} non-2xx!)` : ''}`,
    );
  }
}

async function main() {
  const name = `teamos_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const database = await openPostgres(url.toString());
  const closers: (() => Promise<unknown>)[] = [];
  try {
    await migrateToLatest(database.db);
    const user = await database.db
      .insertInto('users')
      .values({ email: 'bench@example.com', name: 'Bench Person', timezone: 'Europe/Bratislava' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const org = await database.db
      .insertInto('organizations')
      .values({ name: 'Bench Org', slug: 'bench-org', timezone: 'Europe/Bratislava', default_locale: 'en' })
      .returning('id')
      .executeTakeFirstOrThrow();
    await database.db.insertInto('organization_members').values({ org_id: org.id, user_id: user.id, role: 'OWNER' }).execute();
    const { key, prefix, hash } = generateKey();
    await database.db
      .insertInto('api_keys')
      .values({ user_id: user.id, name: 'bench', prefix, key_hash: hash, scopes: ['read'], expires_at: new Date(Date.now() + 86_400_000) })
      .execute();

    const logger = pino({ level: 'silent' });
    const full = await createApp({ db: database.db, config: { rateLimitPerMinute: 10_000_000, redisUrl: undefined }, logger });
    const api = await listen(full.app);
    closers.push(full.close, () => new Promise((done) => api.server.close(done)));

    const answer = await (await fetch(`${api.url}/v1/me`, { headers: { authorization: `Bearer ${key}` } })).json();
    const bare = express();
    bare.get('/v1/me', (_req, res) => {
      res.json(answer);
    });
    const bareServer = await listen(bare);
    closers.push(() => new Promise((done) => bareServer.server.close(done)));

    // The contract router alone: a constant handler, a fixed caller, no database.
    const contract = await loadContract(contractDocument);
    const routed = express();
    routed.use(express.json({ limit: '64kb' }));
    routed.use((req, _res, next) => {
      req.requestId = 'bench';
      req.caller = { keyId: 'k', keyName: 'bench', keyExpiresAt: new Date(), scopes: ['read'], userId: user.id, email: 'bench@example.com', name: 'Bench Person', timezone: null, systemRole: 'USER', organizations: [] };
      next();
    });
    const constant: HandlerMap['getMe'] = async () => ({ status: 200, body: answer });
    routed.use('/v1', operationRoutes({ contract, handlers: { ...handlers, getMe: constant }, db: database.db, logger }, [], 'authenticated'));
    const routedServer = await listen(routed);
    closers.push(() => new Promise((done) => routedServer.server.close(done)));

    console.log(`Bench: ${seconds} s per run, ${connections} connections, autocannon on loopback; Node ${process.version}`);
    const auth = { authorization: `Bearer ${key}` };
    const results = [
      await load('bare Express route (same JSON from memory)', `${bareServer.url}/v1/me`),
      await load('GET /v1/me, full pipeline on PostgreSQL', `${api.url}/v1/me`, auth),
      await load('contract routing + validation, constant body', `${routedServer.url}/v1/me`, auth),
    ];
    print(results);
    const [bareResult, meResult, routedResult] = results as [Result, Result, Result];
    const ratio = meResult.requestsPerSecond / bareResult.requestsPerSecond;
    console.log(`ratio /v1/me ÷ bare: ${ratio.toFixed(2)} (target ≥ 0.40) ${ratio >= 0.4 ? 'PASS' : 'FAIL'}`);
    const overheadMs = 1000 / routedResult.requestsPerSecond - 1000 / bareResult.requestsPerSecond;
    console.log(
      `routing + validation alone: ${(routedResult.requestsPerSecond / bareResult.requestsPerSecond).toFixed(2)}× the bare route, about ${(overheadMs * 1000).toFixed(0)} µs of server time per request`,
    );
    if (results.some((result) => result.non2xx > 0)) process.exitCode = 1;
  } finally {
    for (const close of closers.reverse()) await close();
    await database.close();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

await main();

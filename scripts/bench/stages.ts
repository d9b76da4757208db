/**
 * Where a request's CPU goes, stage by stage (`BENCH_ONLY=stages`, and the full run): the API serving
 * `GET /v1/me` and `GET /v1/tasks/{id}` as production runs it (request log lines at info, to a sink;
 * callers kept in memory; the rate limit in memory, then in Redis), its CPU profiled by V8's sampling
 * profiler while autocannon loads it from another process. Each sample is charged to the innermost
 * frame of its stack that belongs to a stage (the files below), so a library a stage calls counts as
 * that stage (Node's own functions too), and what no stage called counts as Express's dispatch or
 * Node's HTTP. The profile gives the shares; the CPU per request measured without the profiler (it slows what it samples) turns them
 * into microseconds. Beside it, `GET /v1/me` against a bare Express route answering the same JSON from
 * memory and served as Express serves itself (`app.listen`), in A B B A rounds (target ≥ 0.8), whose
 * profile is the table's last column; against the same route sending the API's header lines too (17
 * against 5, some 700 bytes more for the client to read on the same two cores), reported: what the
 * pipeline costs apart from what the contract sends; and against the route served as the API is
 * (src/http/httpServer.ts), reported: what the API's own steps cost apart from how Express is served.
 * And the task read against the Prism mock (`npm run mock`) answering it from the contract's example
 * (target ≥ 3×).
 *
 * BENCH_PROFILE_DIR=dir also writes each profile there (`.cpuprofile`, opened by Chrome's DevTools).
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { resolve } from 'node:path';
import express from 'express';
import pino from 'pino';
import { createApp } from '../../src/app.js';
import { createSecretBox } from '../../src/auth/secrets.js';
import { createLogger } from '../../src/logger.js';
import { startMock } from '../mock.js';
import { freePort } from '../ports.js';
import { atLeast, autocannon, listen, loadPair, reported, type Check, type Result } from './harness.js';
import type { Stack } from './seed.js';

const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const profileSeconds = Number(process.env.BENCH_STAGE_SECONDS ?? 6);
const profileDir = process.env.BENCH_PROFILE_DIR;

/**
 * The stages, in the order a request meets them, each by the source files (the project's or a
 * library's) whose frames are its own. The first stage whose pattern a frame's URL matches owns it.
 */
const stages: [stage: string, pattern: RegExp][] = [
  ['security headers', /src\/http\/securityHeaders\.ts|node_modules\/helmet\//],
  ['request id', /src\/http\/requestId\.ts/],
  ['trace context', /src\/observability\/traceContext\.ts/],
  ['tracing', /src\/observability\/tracing\.ts|@opentelemetry/],
  ['request log', /src\/http\/requestLog\.ts|src\/logger\.ts|node_modules\/(pino|sonic-boom|thread-stream)\//],
  ['metrics', /src\/observability\/requestMetrics\.ts|node_modules\/prom-client\//],
  ['CORS', /src\/http\/cors\.ts|node_modules\/cors\//],
  ['authentication', /src\/auth\//],
  ['rate limit', /src\/http\/rateLimit\.ts|node_modules\/(express-rate-limit|rate-limit-redis|ioredis|@ioredis|redis-parser|denque)\//],
  ['request validation', /node_modules\/(openapi-backend|ajv|ajv-formats)\/|src\/http\/(validation|requestBody)\.ts/],
  ['ETag', /src\/http\/conditional\.ts/],
  ['serialisation', /src\/api\/jsonText\.ts|src\/records\//],
  ['handler and database', /src\/handlers\/|src\/db\/|src\/events\/|node_modules\/(kysely|pg|pg-protocol|pg-pool|pg-types|@electric-sql|kysely-pglite-dialect)\//],
  ['routing (find-my-way)', /src\/http\/router\.ts (public|authenticated)$|node_modules\/find-my-way\//],
  ['response write', /src\/http\/router\.ts (writeOutcome|writeRead)$/],
  ['operation (scope, handler call, answer)', /src\/http\/router\.ts/],
  ['error handler', /src\/http\/errorHandler\.ts/],
  ['Express dispatch', /node_modules\/(express|router|finalhandler|send|on-finished|statuses|content-type|type-is|accepts|parseurl|qs)\//],
  ['Node HTTP', /^node:/],
];
const nodeHttp = 'Node HTTP';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Sampled time (µs) per stage; `(idle)` left out, `(garbage collector)` and `(program)` kept apart. */
export function stageTimes(profile: Profile): Map<string, number> {
  const parent = new Map<number, number>();
  const byId = new Map<number, ProfileNode>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const ownerOf = new Map<number, string | undefined>();
  const owner = (id: number): string | undefined => {
    if (ownerOf.has(id)) return ownerOf.get(id);
    const { callFrame } = byId.get(id)!;
    const special = /^\((idle|garbage collector|program|root)\)$/.exec(callFrame.functionName)?.[1];
    let found: string | undefined =
      special === 'garbage collector' ? 'garbage collection' : special === 'program' ? 'V8 and native, unattributed' : special ? `(${special})` : undefined;
    // Node's own frames count to the stage that called them (a header set, a write), and are Node's
    // HTTP only when no stage did (parsing a request, the socket).
    const own = stages.find(([, pattern]) => pattern.test(`${callFrame.url} ${callFrame.functionName}`))?.[0];
    if (!found && own !== nodeHttp) found = own;
    if (!found) {
      const up = parent.get(id);
      const above = up === undefined ? undefined : owner(up);
      found = above === undefined || above === '(root)' ? (own ?? 'other') : above;
    }
    ownerOf.set(id, found);
    return found;
  };
  const times = new Map<string, number>();
  profile.samples.forEach((sample, index) => {
    const stage = owner(sample) ?? 'other';
    if (stage === '(idle)') return;
    times.set(stage, (times.get(stage) ?? 0) + (profile.timeDeltas[index + 1] ?? profile.timeDeltas[index] ?? 0));
  });
  return times;
}

interface StageRun {
  label: string;
  requests: number;
  /** This process's CPU per request (µs), measured without the profiler. */
  cpuMicroseconds: number;
  times: Map<string, number>;
}

async function profiled(label: string, url: string, headers: Record<string, string>, session: Session): Promise<StageRun> {
  // Unprofiled first: the CPU per request the shares divide.
  const cpuBefore = process.cpuUsage();
  const plain = await autocannon(url, { headers, duration: profileSeconds });
  const cpu = process.cpuUsage(cpuBefore);
  const plainRequests = plain.requestsPerSecond * profileSeconds;
  await session.post('Profiler.start');
  const sampled = await autocannon(url, { headers, duration: profileSeconds });
  const { profile } = await session.post('Profiler.stop');
  if (plain.non2xx > 0 || sampled.non2xx > 0) throw new Error(`${label}: ${plain.non2xx + sampled.non2xx} answers were not 2xx`);
  if (profileDir) writeFileSync(resolve(profileDir, `${label.replace(/[^\w]+/g, '-')}.cpuprofile`), JSON.stringify(profile));
  return {
    label,
    requests: sampled.requestsPerSecond * profileSeconds,
    cpuMicroseconds: (cpu.user + cpu.system) / plainRequests,
    times: stageTimes(profile as Profile),
  };
}

function printTable(runs: StageRun[]) {
  const rows = [...stages.map(([stage]) => stage), 'garbage collection', 'V8 and native, unattributed', 'other'];
  const perRequest = (run: StageRun, stage: string) => {
    const total = [...run.times.values()].reduce((sum, time) => sum + time, 0);
    return ((run.times.get(stage) ?? 0) / total) * run.cpuMicroseconds;
  };
  console.log('\nCPU µs per request by stage (V8 profile shares × the CPU per request measured unprofiled):');
  console.log(`  ${'stage'.padEnd(48)}${runs.map((run) => run.label.padStart(22)).join('')}`);
  for (const stage of rows) {
    if (runs.every((run) => !run.times.has(stage))) continue;
    console.log(`  ${stage.padEnd(48)}${runs.map((run) => perRequest(run, stage).toFixed(1).padStart(22)).join('')}`);
  }
  console.log(`  ${'total (process CPU per request)'.padEnd(48)}${runs.map((run) => run.cpuMicroseconds.toFixed(1).padStart(22)).join('')}\n`);
}

export async function benchStages(stack: Stack, results: Result[]): Promise<Check[]> {
  const production = (redis: string | undefined) =>
    createApp({
      db: stack.db,
      config: { rateLimitPerMinute: 10_000_000, redisUrl: redis },
      logger: createLogger('info', false, pino.destination({ dest: '/dev/null', sync: false })),
      secrets: createSecretBox(randomBytes(32)),
      callerCache: { subscribe: stack.subscribe },
    });
  const memory = await production(undefined);
  const shared = await production(redisUrl);
  const memoryApi = await listen(memory.app);
  const sharedApi = await listen(shared.app);
  const headers = { authorization: `Bearer ${stack.world.readKey}` };
  const answer = await fetch(`${memoryApi.url}/v1/me`, { headers });
  const me = await answer.text();
  // The answer's own header lines too, but those Node writes itself: what a client reads is then the same.
  const sameHeaders = [...answer.headers].filter(([name]) => !['date', 'connection', 'keep-alive', 'content-length'].includes(name));
  const bareApp = () => {
    const bare = express();
    bare.set('etag', false);
    bare.disable('x-powered-by');
    bare.get('/v1/me', (_req, res) => {
      res.type('application/json').send(me);
    });
    bare.get('/v1/me/same-headers', (_req, res) => {
      for (const [name, value] of sameHeaders) res.setHeader(name, value);
      res.send(me);
    });
    return bare;
  };
  // The bare route as Express serves itself (`app.listen`), the target's; and served as the API is
  // (its requests and responses born with Express's prototypes, src/http/httpServer.ts), reported: what
  // the API's own steps cost apart from how Express is served.
  const bareApi = await listen(bareApp(), { asExpressDoes: true });
  const bareServedAsApi = await listen(bareApp());
  const session = new Session();
  session.connect();
  try {
    for (const url of [`${memoryApi.url}/v1/me`, `${sharedApi.url}/v1/me`, `${memoryApi.url}/v1/tasks/${stack.taskId}`]) {
      const response = await fetch(url, { headers });
      if (response.status !== 200) throw new Error(`${stack.label}: ${url} answered ${response.status}`);
    }
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 50 });
    // Warmed up once, unmeasured: the validators compile on an operation's first requests.
    await autocannon(`${memoryApi.url}/v1/tasks/${stack.taskId}`, { headers, duration: 1 });
    const runs = [
      await profiled(`${stack.label} /v1/me`, `${memoryApi.url}/v1/me`, headers, session),
      await profiled(`${stack.label} /v1/me, Redis`, `${sharedApi.url}/v1/me`, headers, session),
      await profiled(`${stack.label} /v1/tasks/{id}`, `${memoryApi.url}/v1/tasks/${stack.taskId}`, headers, session),
      await profiled('bare Express /v1/me', `${bareApi.url}/v1/me`, headers, session),
    ];
    printTable(runs);
    const [bareResult, api] = await loadPair(
      { name: `${stack.label}: bare Express route, the same JSON from memory`, url: `${bareApi.url}/v1/me` },
      { name: `${stack.label}: GET /v1/me (request log on, rate limit in memory)`, url: `${memoryApi.url}/v1/me` },
      headers,
      { rounds: 3 },
    );
    const [sameAnswer, apiAgain] = await loadPair(
      { name: `${stack.label}: bare Express route, the same JSON and header lines`, url: `${bareApi.url}/v1/me/same-headers` },
      { name: `${stack.label}: GET /v1/me (request log on, rate limit in memory)`, url: `${memoryApi.url}/v1/me` },
      headers,
      { rounds: 3 },
    );
    const [bareAsApi, apiOnceMore] = await loadPair(
      { name: `${stack.label}: bare Express route, the same JSON, served as the API is`, url: `${bareServedAsApi.url}/v1/me` },
      { name: `${stack.label}: GET /v1/me (request log on, rate limit in memory)`, url: `${memoryApi.url}/v1/me` },
      headers,
      { rounds: 3 },
    );
    // The item read against the Prism mock serving the contract's example: what a frontend team finds
    // when it moves from the mock to the server.
    const mock = await startMock(await freePort(), await freePort(), { corsOrigins: [] });
    let mocked: Result;
    let served: Result;
    try {
      [mocked, served] = await loadPair(
        { name: `${stack.label}: the Prism mock, GET /v1/tasks/{id} (the contract's example)`, url: `${mock.url}/tasks/${stack.taskId}` },
        { name: `${stack.label}: GET /v1/tasks/{id} (request log on, rate limit in memory)`, url: `${memoryApi.url}/v1/tasks/${stack.taskId}` },
        headers,
        { rounds: 3 },
      );
    } finally {
      await mock.stop();
    }
    results.push(bareResult, api, sameAnswer, apiAgain, bareAsApi, apiOnceMore, mocked, served);
    const rps = (result: Result) => result.requestsPerSecond;
    return [
      atLeast(`${stack.label}: GET /v1/me ÷ a bare Express route`, rps(api) / rps(bareResult), 0.8, `${rps(api).toFixed(0)} / ${rps(bareResult).toFixed(0)} req/s`),
      reported(`${stack.label}: GET /v1/me ÷ bare, the same header lines`, rps(apiAgain) / rps(sameAnswer), `${rps(apiAgain).toFixed(0)} / ${rps(sameAnswer).toFixed(0)} req/s`),
      reported(`${stack.label}: GET /v1/me ÷ bare, served as the API is`, rps(apiOnceMore) / rps(bareAsApi), `${rps(apiOnceMore).toFixed(0)} / ${rps(bareAsApi).toFixed(0)} req/s`),
      atLeast(`${stack.label}: GET /v1/tasks/{id} ÷ the Prism mock's`, rps(served) / rps(mocked), 3, `${rps(served).toFixed(0)} / ${rps(mocked).toFixed(0)} req/s`),
      ...runs.slice(0, 3).map((run) => reported(`${run.label}: server CPU µs per request`, run.cpuMicroseconds)),
    ];
  } finally {
    session.disconnect();
    await Promise.all([memoryApi.close(), sharedApi.close(), bareApi.close(), bareServedAsApi.close()]);
    await Promise.all([memory.close(), shared.close()]);
  }
}

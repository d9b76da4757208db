/**
 * The bench's load generation and reporting: autocannon in a child process, evenly paced load on two
 * servers in alternating slices (scripts/pacedLoad.ts), a load spread over one path per connection (scripts/spreadLoad.ts), a
 * closed loop of Node's fetch, pairs measured A B B A with where their CPU went, and the figures'
 * checks against their targets.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Express } from 'express';
import { createHttpServer } from '../../src/http/httpServer.js';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');
export const seconds = Number(process.env.BENCH_SECONDS ?? 10);
export const connections = 20;
/** /proc counts CPU time in ticks of 1/100 s (USER_HZ on Linux). */
const tickMicroseconds = 10_000;

export interface Result {
  name: string;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  mean: number;
  non2xx: number;
  /** Requests that got no answer (a connection refused or reset), told apart from non-2xx answers where the load generator can (`pacedPair`). */
  errors?: number;
  /** CPU time per request (µs) of the pair's halves (`loadPair`). */
  cpu?: CpuPerRequest;
}

/**
 * Where a request's CPU goes: this process (the server under test), PostgreSQL's processes (none for
 * PGlite, which runs in this process) and the rest of the machine (the load generator, the kernel's
 * loopback), from /proc at the tick's resolution, which a half-run's thousands of requests average out.
 */
export interface CpuPerRequest {
  server: number;
  postgres: number;
  rest: number;
}

interface CpuSample {
  server: number;
  postgres: number;
  machine: number;
}

/**
 * CPU time (µs) of every process named `postgres`, with that of the ones that ended: the postmaster
 * counts its reaped children's (a backend whose connection closed) in its own `cutime` and `cstime`.
 */
function postgresCpu(): number {
  let ticks = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== 'postgres') continue;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  }
  return ticks * tickMicroseconds;
}

/** CPU time (µs) of the process `pid` so far. */
export function processCpu(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * tickMicroseconds;
}

/** `serverPid`: the server under test runs in that process rather than this one. */
function cpuSample(serverPid?: number): CpuSample {
  const usage = process.cpuUsage();
  const times = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.split(/\s+/).slice(1).map(Number);
  const busy = times.reduce((sum, time) => sum + time, 0) - times[3]! - times[4]!;
  const server = serverPid === undefined ? usage.user + usage.system : processCpu(serverPid);
  return { server, postgres: postgresCpu(), machine: busy * tickMicroseconds };
}

export interface LoadOptions {
  headers?: Record<string, string>;
  method?: string;
  body?: string;
  duration?: number;
}

/**
 * Serves a handler as the API's server does (`createHttpServer`: an Express app's requests and
 * responses born with its prototypes), or as Express serves itself when `asExpressDoes` (its
 * `app.listen`: Node's `createServer` around the app).
 */
export async function listen(handler: RequestListener | Express, { asExpressDoes = false } = {}): Promise<{ url: string; close: () => Promise<unknown> }> {
  const server: Server = await new Promise((ready) => {
    const started = (asExpressDoes ? createServer(handler) : createHttpServer(handler)).listen(0, '127.0.0.1', () => ready(started));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((done) => server.close(done)),
  };
}

export async function autocannon(url: string, options: LoadOptions = {}): Promise<Omit<Result, 'name'>> {
  const args = [url, '--connections', String(connections), '--duration', String(options.duration ?? seconds), '--json'];
  for (const [header, value] of Object.entries(options.headers ?? {})) args.push('--headers', `${header}=${value}`);
  if (options.method) args.push('--method', options.method);
  if (options.body) args.push('--body', options.body, '--headers', 'content-type=application/json');
  const { stdout } = await run(resolve(root, 'node_modules/.bin/autocannon'), args, { maxBuffer: 64 * 1024 * 1024 });
  return loadReport(stdout);
}

/** autocannon's JSON report (of its command line, or of scripts/spreadLoad.ts) as a result. */
function loadReport(json: string): Omit<Result, 'name'> {
  const report = JSON.parse(json) as { requests: { average: number }; latency: { p50: number; p99: number; average: number }; non2xx: number };
  const { latency } = report;
  return { requestsPerSecond: report.requests.average, p50: latency.p50, p99: latency.p99, mean: latency.average, non2xx: report.non2xx };
}

/**
 * The same load with one connection per path (scripts/spreadLoad.ts): a change measured on rows of
 * its own per connection, so that its cost shows rather than the time one row's lock is held.
 */
async function spreadLoad(origin: string, paths: string[], options: LoadOptions): Promise<Omit<Result, 'name'>> {
  const headerArguments = Object.entries(options.headers ?? {}).map(([header, value]) => `${header}=${value}`);
  const args = [resolve(root, 'scripts/spreadLoad.ts'), origin, options.method ?? 'GET', String(options.duration ?? seconds), options.body ?? '', paths.join(','), ...headerArguments];
  const { stdout } = await run(resolve(root, 'node_modules/.bin/tsx'), args, { maxBuffer: 64 * 1024 * 1024 });
  return loadReport(stdout);
}

/** `connections` requests at a time with Node's fetch for the bench's duration; a fresh request from `init` each time. */
export async function closedLoop(name: string, url: string, init: () => RequestInit): Promise<Result> {
  const latencies: number[] = [];
  let non2xx = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until) {
        const sent = performance.now();
        const response = await fetch(url, init());
        await response.arrayBuffer();
        latencies.push(performance.now() - sent);
        if (response.status >= 300) non2xx += 1;
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const at = (share: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * share))]! * 10) / 10;
  const result = {
    name,
    requestsPerSecond: latencies.length / ((performance.now() - started) / 1000),
    p50: at(0.5),
    p99: at(0.99),
    mean: latencies.reduce((sum, latency) => sum + latency, 0) / latencies.length,
    non2xx,
  };
  print([result]);
  return result;
}

export function print(results: Result[]) {
  for (const result of results) {
    const cpu = result.cpu && `   CPU µs/request: server ${result.cpu.server.toFixed(0)}, PostgreSQL ${result.cpu.postgres.toFixed(0)}, rest ${result.cpu.rest.toFixed(0)}`;
    console.log(
      `${result.name.padEnd(58)} ${result.requestsPerSecond.toFixed(0).padStart(7)} req/s   p50 ${String(result.p50).padStart(4)} ms   p99 ${String(result.p99).padStart(4)} ms${result.non2xx ? `   (${result.non2xx} non-2xx!)` : ''}${result.errors ? `   (${result.errors} without an answer!)` : ''}${cpu ?? ''}`,
    );
  }
}

/**
 * Two URLs paced together at `rate` for `duration` seconds, the schedule going to each in turn for
 * slices of 100 ms (scripts/pacedLoad.ts): a stall of the machine, which decides a p99, lasts tens
 * of milliseconds or more and so falls on both sides alike; one side run after the other got the
 * stalls of its own few seconds. Latency counts from each request's scheduled start.
 */
export async function pacedPair(names: [string, string], urls: [string, string], rate: number, duration: number, headers: Record<string, string>): Promise<[Result, Result]> {
  const args = [resolve(root, 'scripts/pacedLoad.ts'), String(Math.round(rate)), String(duration), '100', ...urls, '--', ...Object.entries(headers).map(([header, value]) => `${header}=${value}`)];
  const { stdout } = await run(resolve(root, 'node_modules/.bin/tsx'), args, { maxBuffer: 1024 * 1024 });
  const [a, b] = JSON.parse(stdout) as [Omit<Result, 'name'>, Omit<Result, 'name'>];
  const results: [Result, Result] = [
    { name: names[0], ...a },
    { name: names[1], ...b },
  ];
  print(results);
  return results;
}

export async function load(name: string, url: string, options: LoadOptions = {}): Promise<Result> {
  const result = { name, ...(await autocannon(url, options)) };
  print([result]);
  return result;
}

/**
 * Two targets whose latencies are compared, each loaded in two halves in the order A B B A, so that
 * a drift of the machine's speed weighs on both alike. Each figure is the mean of its two halves.
 */
export type Target = {
  name: string;
  url: string;
  /** Runs before each of the target's halves (the webhook pair switches a subscription off or on). */
  before?: () => Promise<void>;
  /** Paths under `url`'s origin, one connection each, instead of `connections` connections to `url`. */
  paths?: string[];
} & Omit<LoadOptions, 'duration'>;

/**
 * `serverPid`: the process of the servers under test, when they run in another one than this. With
 * `rounds` above 1, each side is first warmed up (a second, not counted), then measured in that many
 * rounds of A B B A with shorter halves, so that the machine's drift within the pair's run weighs on
 * both sides alike, not only its drift between the pair's halves; each side's figure is then the
 * median of its rounds.
 */
export async function loadPair(a: Target, b: Target, headers: Record<string, string>, { rounds = 1, serverPid }: { rounds?: number; serverPid?: number } = {}): Promise<[Result, Result]> {
  const duration = Math.max(1, Math.round(seconds / 2 / rounds));
  // The floor routes ignore the key header; sent to both, it keeps the requests alike on the wire.
  const options = ({ before: _before, paths: _paths, ...target }: Target) => ({ ...target, headers: { ...headers, ...target.headers }, duration });
  const spent = new Map<Target, CpuSample & { requests: number }>([a, b].map((target) => [target, { server: 0, postgres: 0, machine: 0, requests: 0 }]));
  const half = async (target: Target) => {
    await target.before?.();
    const started = cpuSample(serverPid);
    const result = target.paths ? await spreadLoad(new URL(target.url).origin, target.paths, options(target)) : await autocannon(target.url, options(target));
    const ended = cpuSample(serverPid);
    const sum = spent.get(target)!;
    for (const part of ['server', 'postgres', 'machine'] as const) sum[part] += ended[part] - started[part];
    sum.requests += result.requestsPerSecond * duration;
    return result;
  };
  const cpuOf = (target: Target): CpuPerRequest => {
    const { server, postgres, machine, requests } = spent.get(target)!;
    return { server: server / requests, postgres: postgres / requests, rest: Math.max(0, machine - server - postgres) / requests };
  };
  if (rounds > 1) {
    for (const target of [a, b]) {
      await target.before?.();
      await (target.paths ? spreadLoad(new URL(target.url).origin, target.paths, { ...options(target), duration: 1 }) : autocannon(target.url, { ...options(target), duration: 1 }));
    }
  }
  const halves = new Map<Target, Omit<Result, 'name'>[]>([
    [a, []],
    [b, []],
  ]);
  for (let round = 0; round < rounds; round += 1) {
    for (const target of [a, b, b, a]) halves.get(target)!.push(await half(target));
  }
  // Each round's figure is the mean of its two halves; the pair's, the median of its rounds, so that
  // one round the machine spent elsewhere does not move it.
  const merge = (target: Target): Result => {
    const all = halves.get(target)!;
    const median = (of: (half: Omit<Result, 'name'>) => number) => {
      const perRound = Array.from({ length: rounds }, (_, round) => (of(all[2 * round]!) + of(all[2 * round + 1]!)) / 2).sort((x, y) => x - y);
      return rounds % 2 === 1 ? perRound[(rounds - 1) / 2]! : (perRound[rounds / 2 - 1]! + perRound[rounds / 2]!) / 2;
    };
    return {
      name: target.name,
      requestsPerSecond: median((half) => half.requestsPerSecond),
      p50: median((half) => half.p50),
      p99: median((half) => half.p99),
      mean: median((half) => half.mean),
      non2xx: all.reduce((sum, half) => sum + half.non2xx, 0),
      cpu: cpuOf(target),
    };
  };
  const results: [Result, Result] = [merge(a), merge(b)];
  print(results);
  return results;
}

export interface Check {
  check: string;
  value: string;
  target: string;
  pass: boolean;
  note: string;
}

export const atLeast = (check: string, value: number, target: number, note = ''): Check => ({
  check,
  value: value.toFixed(2),
  target: `≥ ${target.toFixed(2)}`,
  pass: value >= target,
  note,
});
export const atMost = (check: string, value: number, target: number, note = ''): Check => ({
  check,
  value: value.toFixed(2),
  target: `≤ ${target.toFixed(2)}`,
  pass: value <= target,
  note,
});
export const below = (check: string, value: number, target: number, note = ''): Check => ({ check, value: `${value}`, target: `< ${target}`, pass: value < target, note });
export const reported = (check: string, value: number, note = ''): Check => ({ check, value: value.toFixed(2), target: 'reported', pass: true, note });

/** Epoch milliseconds with sub-millisecond resolution, comparable across the processes of this machine. */
export const clock = () => performance.timeOrigin + performance.now();

/** The share-th quantile of ascending `sorted`, to 0.1 ms. */
export const quantile = (sorted: number[], share: number) => Math.round((sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))] ?? NaN) * 10) / 10;

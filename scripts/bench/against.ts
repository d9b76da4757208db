/**
 * This checkout's API against another's (`BENCH_ONLY=against BENCH_AGAINST=dir`): both apps built as
 * production runs them (request log lines at info to a sink, callers in memory, the rate limit in
 * memory) over one database in this one process, and measured A B B A in three rounds per pair, each
 * path (`BENCH_AGAINST_PATHS`, default `/v1/me` and a task read) `BENCH_AGAINST_RUNS` times (default 2).
 * The path `PATCH /v1/tasks/{id}` changes a task's title, a task of the team per connection, as the
 * shapes bench's PATCH does.
 * A cut of a few microseconds a request is smaller than this machine's drift between two runs; within
 * one pair it shows. The other checkout needs the same dependencies and a generated contract:
 *
 *   git worktree add /tmp/before <commit> && ln -s "$PWD/node_modules" /tmp/before/ && cp -r generated /tmp/before/
 *   BENCH_ONLY=against BENCH_AGAINST=/tmp/before BENCH_PGLITE=0 npm run bench
 */
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import pino from 'pino';
import { createApp } from '../../src/app.js';
import { createSecretBox } from '../../src/auth/secrets.js';
import { createLogger } from '../../src/logger.js';
import { connections, listen, loadPair, reported, type Check, type Result, type Target } from './harness.js';
import type { Stack } from './seed.js';

export async function benchAgainst(stack: Stack, results: Result[]): Promise<Check[]> {
  const dir = process.env.BENCH_AGAINST;
  if (!dir) throw new Error('BENCH_ONLY=against needs BENCH_AGAINST, the directory of the other checkout');
  const other = (await import(resolve(dir, 'src/app.ts'))) as { createApp: typeof createApp };
  const options = {
    db: stack.db,
    config: { rateLimitPerMinute: 10_000_000, redisUrl: undefined },
    logger: createLogger('info', false, pino.destination({ dest: '/dev/null', sync: false })),
    secrets: createSecretBox(randomBytes(32)),
    callerCache: { subscribe: stack.subscribe },
  };
  const [before, after] = [await other.createApp(options), await createApp(options)];
  const [a, b] = [await listen(before.app), await listen(after.app)];
  const read = { authorization: `Bearer ${stack.world.readKey}` };
  const paths = (process.env.BENCH_AGAINST_PATHS ?? `/v1/me,/v1/tasks/${stack.taskId}`).split(',');
  const ownTasks = (await stack.db.selectFrom('tasks').select('id').where('team_id', '=', stack.world.teamId).orderBy('created_at', 'desc').limit(connections).execute()).map(
    (row) => `/v1/tasks/${row.id}`,
  );
  const patch = { method: 'PATCH' as const, body: JSON.stringify({ title: 'Send the revised freight quote' }), headers: { 'content-type': 'application/json' }, paths: ownTasks };
  /** The load of `path` on the app at `url`, and the key it is sent with. */
  const targetOf = (path: string, url: string, name: string): { target: Target; headers: Record<string, string> } =>
    path === 'PATCH /v1/tasks/{id}'
      ? { target: { name: `${name}: ${path}`, url: `${url}/v1/tasks/x`, ...patch }, headers: { authorization: `Bearer ${stack.world.writeKey}` } }
      : { target: { name: `${name}: GET ${path}`, url: `${url}${path}` }, headers: read };
  const checks: Check[] = [];
  try {
    for (const path of paths) {
      for (const url of [a.url, b.url]) {
        const { target, headers } = targetOf(path, url, '');
        const answer = await fetch(`${url}${target.paths?.[0] ?? path}`, { method: target.method ?? 'GET', body: target.body ?? null, headers: { ...headers, ...target.headers } });
        if (answer.status !== 200) throw new Error(`${url}${path} answered ${answer.status}`);
      }
    }
    for (let run = 0; run < Number(process.env.BENCH_AGAINST_RUNS ?? 2); run++) {
      for (const path of paths) {
        const before = targetOf(path, a.url, dir);
        const after = targetOf(path, b.url, 'this checkout');
        const [then, now] = await loadPair(before.target, after.target, before.headers, { rounds: 3 });
        results.push(then, now);
        const cpu = (result: Result) => result.cpu?.server.toFixed(0) ?? '?';
        checks.push(
          reported(
            `${stack.label}: ${path.startsWith('/') ? `GET ${path}` : path}, this checkout ÷ ${dir}`,
            now.requestsPerSecond / then.requestsPerSecond,
            `${now.requestsPerSecond.toFixed(0)} / ${then.requestsPerSecond.toFixed(0)} req/s; server CPU ${cpu(now)} / ${cpu(then)} µs a request (both apps' process)`,
          ),
        );
      }
    }
  } finally {
    await Promise.all([a.close(), b.close()]);
    await Promise.all([before.close(), after.close()]);
  }
  return checks;
}

/**
 * `BENCH_ONLY=export`: an organization's export does not slow the API. A change (PATCH of a task,
 * one request at a time, closed loop) is timed for a while without an export, then while the export
 * worker of the same process writes the archive of the organization's `records` tasks (as a server
 * runs it: src/exports/worker.ts), then without again; the figure is the change's p99 during the
 * export ÷ without (target ≤ 1.3), with how long the export took.
 */
import { sql } from 'kysely';
import { pino } from 'pino';
import { runDueExports } from '../../src/exports/worker.js';
import { atMost, listen, quantile, reported, type Check } from './harness.js';
import type { Stack } from './seed.js';
import { apiOf } from './seed.js';

const exportP99Target = 1.3;
const quietMs = 10_000;

/** Sequential PATCHes of the task until `done()`: each one's latency in ms, sorted. */
async function changes(url: string, stack: Stack, done: () => boolean): Promise<number[]> {
  const latencies: number[] = [];
  let n = 0;
  while (!done()) {
    const started = performance.now();
    const response = await fetch(`${url}/v1/tasks/${stack.taskId}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${stack.world.writeKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: `Export bench change ${n++}` }),
    });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${stack.label}: PATCH /tasks/{id} answered ${response.status}`);
    latencies.push(performance.now() - started);
  }
  return latencies.sort((a, b) => a - b);
}

export async function benchExport(stack: Stack, { inThread }: { inThread: boolean }): Promise<Check[]> {
  const { db } = stack;
  const app = await apiOf(stack);
  const api = await listen(app.app);
  try {
    const { count } = (await sql<{ count: number }>`select count(*)::int as count from tasks t join teams x on x.id = t.team_id where x.org_id = ${stack.world.orgId}`.execute(db)).rows[0]!;
    const timedFor = (ms: number) => {
      const end = performance.now() + ms;
      return changes(api.url, stack, () => performance.now() >= end);
    };
    const before = await timedFor(quietMs / 2);
    await db.insertInto('org_exports').values({ org_id: stack.world.orgId }).execute();
    let exporting = true;
    const started = performance.now();
    const exported = runDueExports({ db, logger: pino({ level: 'silent' }), now: () => new Date(), databaseInThread: inThread }).finally(() => (exporting = false));
    const during = await changes(api.url, stack, () => !exporting);
    await exported;
    const exportSeconds = (performance.now() - started) / 1000;
    const after = await timedFor(quietMs / 2);
    const quiet = [...before, ...after].sort((a, b) => a - b);
    const ratio = quantile(during, 0.99) / quantile(quiet, 0.99);
    const ms = (value: number) => value.toFixed(1);
    console.log(
      `${stack.label} export: ${count.toLocaleString('en')} tasks (and the organization's other records) in ${exportSeconds.toFixed(1)} s; ` +
        `a change during it p50 ${ms(quantile(during, 0.5))} p99 ${ms(quantile(during, 0.99))} ms (${during.length} changes), without p50 ${ms(quantile(quiet, 0.5))} p99 ${ms(quantile(quiet, 0.99))} ms`,
    );
    return [
      atMost(`${stack.label}: a change's p99 during an export ÷ without`, ratio, exportP99Target, `${count.toLocaleString('en')} tasks in ${exportSeconds.toFixed(1)} s`),
      reported(`${stack.label}: export of ${count.toLocaleString('en')} tasks (s)`, exportSeconds),
    ];
  } finally {
    await api.close();
    await app.close();
  }
}

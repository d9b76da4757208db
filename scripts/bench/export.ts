/**
 * `BENCH_ONLY=export`: an organization's export does not slow the API. A change (PATCH of a task,
 * one request at a time, closed loop) is timed all along while the export worker of the same process
 * writes the archive of the organization's `records` tasks (as a server runs it: src/exports/worker.ts),
 * in slices of `sliceMs` that alternate: the export running, then paused between two chunks. On a
 * shared machine the load of others drifts over minutes; slices of a few seconds put the two sides
 * under the same drift. A change that starts within `settleMs` of a switch counts on neither side (the
 * batch under way when the export pauses ends then). The figure is the change's p99 with the export
 * running ÷ paused (target ≤ 1.3), with the export's time running.
 */
import { sql } from 'kysely';
import { pino } from 'pino';
import { runDueExports } from '../../src/exports/worker.js';
import { atMost, listen, quantile, reported, type Check } from './harness.js';
import type { Stack } from './seed.js';
import { apiOf } from './seed.js';

const exportP99Target = 1.3;
const sliceMs = 2_000;
const settleMs = 250;

interface Timed {
  ms: number;
  /** The export was running when the change started. */
  during: boolean;
}

/** Sequential PATCHes of the task until `done()`: each one's latency in ms, with the side `side()` gave when it started (null: neither). */
async function changes(url: string, stack: Stack, side: () => boolean | null, done: () => boolean): Promise<Timed[]> {
  const latencies: Timed[] = [];
  let n = 0;
  while (!done()) {
    const during = side();
    const started = performance.now();
    const response = await fetch(`${url}/v1/tasks/${stack.taskId}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${stack.world.writeKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: `Export bench change ${n++}` }),
    });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${stack.label}: PATCH /tasks/{id} answered ${response.status}`);
    if (during !== null) latencies.push({ ms: performance.now() - started, during });
  }
  return latencies;
}

export async function benchExport(stack: Stack, { inThread }: { inThread: boolean }): Promise<Check[]> {
  const { db } = stack;
  const app = await apiOf(stack);
  const api = await listen(app.app);
  try {
    const { count } = (await sql<{ count: number }>`select count(*)::int as count from tasks t join teams x on x.id = t.team_id where x.org_id = ${stack.world.orgId}`.execute(db)).rows[0]!;
    // The export waits at this gate after each chunk while it is paused.
    let running = true;
    let switchedAt = performance.now();
    let open = () => undefined as void;
    let gate: Promise<void> | undefined;
    let exporting = true;
    let runningMs = 0;
    const side = () => (performance.now() - switchedAt < settleMs ? null : running);
    const timed = changes(api.url, stack, side, () => !exporting);

    await db.insertInto('org_exports').values({ org_id: stack.world.orgId }).execute();
    const exported = runDueExports({
      db,
      logger: pino({ level: 'silent' }),
      now: () => new Date(),
      databaseInThread: inThread,
      afterChunk: () => gate,
    });
    void exported.finally(() => (exporting = false));
    // Running first (its claim and count are part of it), then paused, and so on, until the export ends.
    while (exporting) {
      await Promise.race([new Promise((resume) => setTimeout(resume, sliceMs)), exported]);
      const now = performance.now();
      if (running) {
        runningMs += now - switchedAt;
        gate = new Promise<void>((resolve) => (open = resolve));
      } else {
        open();
        gate = undefined;
      }
      running = !running;
      switchedAt = now;
    }
    await exported;
    const latencies = await timed;
    const exportSeconds = runningMs / 1000;
    const sorted = (isDuring: boolean) => latencies.filter((one) => one.during === isDuring).map((one) => one.ms).sort((a, b) => a - b);
    const during = sorted(true);
    const quiet = sorted(false);
    const ratio = quantile(during, 0.99) / quantile(quiet, 0.99);
    const ms = (value: number) => value.toFixed(1);
    console.log(
      `${stack.label} export: ${count.toLocaleString('en')} tasks (and the organization's other records) in ${exportSeconds.toFixed(1)} s running (slices of ${sliceMs / 1000} s, paused between); ` +
        `a change while it runs p50 ${ms(quantile(during, 0.5))} p99 ${ms(quantile(during, 0.99))} ms (${during.length} changes), paused p50 ${ms(quantile(quiet, 0.5))} p99 ${ms(quantile(quiet, 0.99))} ms (${quiet.length})`,
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

/**
 * Vitest's default reporter, plus where the run stands: each file's line ends with
 * `[37/103 files, 4:31 elapsed, about 2-4 min left at load 6.3]`; each file that starts while none
 * has ended is named (the longest come first and run for minutes, which looked like a hang at 0/103);
 * a minute without a finished file prints which files are still running and for how long; and the
 * run ends with the skipped tests counted by the reason each gives. Vitest's own live summary (count
 * and duration) is drawn only on a terminal; CI and `make test | tee` get a pipe, where a long file
 * was minutes of silence. Colour: scripts/test.sh sets NO_COLOR when its output is no terminal.
 */
import { availableParallelism, loadavg } from 'node:os';
import { relative, resolve } from 'node:path';
import { DefaultReporter, type TestModule, type TestSpecification } from 'vitest/node';
import { typicalSeconds } from './sequencer.js';

const quietMs = 60_000;
const root = resolve(import.meta.dirname, '../..');

/**
 * The suite on a quiet 2-core machine, on PGlite: 6 min 33 s for its 103 files then (docs/testing.md,
 * "How long the suite takes", measured 2026-11-27 08:55 UTC). A file weighs its time in the
 * sequencer's table, or `otherFileSeconds` when it is not named there (it took less than the
 * shortest named): a run's quiet time is its files' share of the whole suite's weight.
 */
const quietSuiteSeconds = 393;
const measuredFiles = 103;
const otherFileSeconds = 5;
const named = Object.values(typicalSeconds);
const quietSecondsPerWeight =
  quietSuiteSeconds / (named.reduce((sum, seconds) => sum + seconds, 0) + (measuredFiles - named.length) * otherFileSeconds);

const clock = (ms: number): string => {
  const seconds = Math.floor(ms / 1000);
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
};

/**
 * The time left as a range, from the quiet machine's time for the work left and the load now: the run
 * itself keeps about one runnable process per core busy (two workers and Vitest on two cores), so a
 * load of `load` gives it between 2 × cores / load and cores / load of the machine. Never narrower
 * than 1-1.5 times the quiet figure: a quiet machine's run varies too.
 */
export function timeLeft(quietSecondsLeft: number, load: number, cores: number): string {
  const slowest = Math.max(1.5, load / cores);
  const fastest = Math.min(slowest / 1.5, Math.max(1, load / (2 * cores)));
  const [low, high] = [Math.floor((quietSecondsLeft * fastest) / 60), Math.ceil((quietSecondsLeft * slowest) / 60)];
  const range = high <= 1 ? 'under 1 min' : low === 0 ? `under ${high} min` : `about ${low}-${high} min`;
  return `${range} left at load ${load.toFixed(1)}`;
}

/**
 * Why a skipped test skipped: its `skip(note)`, else the parenthesis of its name that says "only" or
 * "needs", or gives a database its reason (`(PostgreSQL only: …)`, `(needs redis-server)`,
 * `(PGlite: …)`).
 */
export function skipReason(test: { fullName: string; result(): { state: string; note?: string | undefined } }): string | undefined {
  const note = test.result().note;
  if (note) return note;
  // Not a bare `(PGlite)`: many names carry the database they ran on.
  const said = /\(((?:PGlite|PostgreSQL):[^()]*|[^()]*\b(?:only|needs?)\b[^()]*)\)/.exec(test.fullName)?.[1];
  if (said === undefined) return undefined;
  // The kind of reason, not its explanation: "PostgreSQL only: PGlite allows one process" → "PostgreSQL only".
  const kind = said.split(':')[0]!.trim();
  return kind === 'PGlite' || kind === 'PostgreSQL' ? `${kind} only` : kind;
}

export default class ProgressReporter extends DefaultReporter {
  private total = 0;
  private finished = 0;
  private lastLine = 0;
  private weights = new Map<string, number>();
  private weightLeft = 0;
  private readonly running = new Map<string, number>();
  private heartbeat: NodeJS.Timeout | undefined;

  override onTestRunStart(specifications: ReadonlyArray<TestSpecification>): void {
    super.onTestRunStart(specifications);
    const files = new Set(specifications.map((specification) => specification.moduleId));
    this.total = files.size;
    for (const file of files) this.weights.set(file, typicalSeconds[relative(root, file)] ?? otherFileSeconds);
    this.weightLeft = [...this.weights.values()].reduce((sum, weight) => sum + weight, 0);
    this.lastLine = Date.now();
    this.heartbeat = setInterval(() => this.stillRunning(), 5_000).unref();
  }

  /** A worker began loading the file: from here on it is running, although its tests start only once it is loaded. */
  override onTestModuleQueued(testModule: TestModule): void {
    super.onTestModuleQueued(testModule);
    this.running.set(testModule.moduleId, Date.now());
    if (this.finished > 0) return;
    this.lastLine = Date.now();
    this.log(`   … started ${this.relative(testModule.moduleId)}, none ended yet [${this.where()}]`);
  }

  protected override printTestModule(testModule: TestModule): void {
    this.running.delete(testModule.moduleId);
    this.finished += 1;
    this.weightLeft -= this.weights.get(testModule.moduleId) ?? 0;
    this.lastLine = Date.now();
    // The module's own line is the first this prints; its tests' lines, when shown, follow it.
    const log = this.log;
    let first = true;
    this.log = (...messages: unknown[]) => {
      if (first) messages.push(` [${this.where()}]`);
      first = false;
      log.call(this, messages.join(''));
    };
    try {
      super.printTestModule(testModule);
    } finally {
      this.log = log;
    }
  }

  override onTestRunEnd(...args: Parameters<DefaultReporter['onTestRunEnd']>): void {
    clearInterval(this.heartbeat);
    super.onTestRunEnd(...args);
    this.skipped(args[0]);
  }

  private where(): string {
    // Since Vitest itself started, as the person waiting counts: its start-up and global setup included.
    const elapsed = `${this.finished}/${this.total} files, ${clock(Date.now() - performance.timeOrigin)} elapsed`;
    return `${elapsed}, ${timeLeft(this.weightLeft * quietSecondsPerWeight, loadavg()[0]!, availableParallelism())}`;
  }

  private stillRunning(): void {
    const now = Date.now();
    if (now - this.lastLine < quietMs) return;
    this.lastLine = now;
    if (this.running.size === 0) {
      if (this.finished === 0) this.log(`   … no file started yet: the global setup (test/support/databaseTemplate.ts) and the workers [${this.where()}]`);
      return;
    }
    const files = [...this.running].map(([moduleId, since]) => `${this.relative(moduleId)} for ${clock(now - since)}`);
    this.log(`   … still running: ${files.join(', ')} [${this.where()}]`);
  }

  /** The last lines: how many tests skipped, by the reason each gives, with their files. */
  private skipped(testModules: ReadonlyArray<TestModule>): void {
    // Under `-t`, every test the pattern leaves out counts as skipped too: no reason to give.
    if (this.ctx.config.testNamePattern) return;
    const byReason = new Map<string, Map<string, number>>();
    for (const testModule of testModules) {
      for (const test of testModule.children.allTests('skipped')) {
        if (test.options.mode === 'todo') continue;
        const reason = skipReason(test) ?? 'its name gives no reason';
        const files = byReason.get(reason) ?? new Map<string, number>();
        const file = this.relative(testModule.moduleId).replace(/^test\/|\.test\.ts$/g, '');
        byReason.set(reason, files.set(file, (files.get(file) ?? 0) + 1));
      }
    }
    if (byReason.size === 0) return;
    const count = (files: Map<string, number>) => [...files.values()].reduce((sum, n) => sum + n, 0);
    const reasons = [...byReason].sort(([, a], [, b]) => count(b) - count(a));
    const skippedCount = reasons.reduce((sum, [, files]) => sum + count(files), 0);
    this.log(`Skipped ${skippedCount} ${skippedCount === 1 ? 'test' : 'tests'}, by the reason each gives (docs/testing.md, "What a skipped test needs"):`);
    for (const [reason, files] of reasons) {
      this.log(`  ${count(files)} ${reason}: ${[...files].map(([file, n]) => `${file} ${n}`).join(', ')}`);
    }
  }
}

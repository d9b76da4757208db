/**
 * Vitest's default reporter, plus where the run stands: each file's line ends with
 * `[37/81 files, 12:31 elapsed]`, and a minute without a finished file prints which files are still
 * running and for how long. Vitest's own live summary (count and duration) is drawn only on a
 * terminal; CI and `make test | tee` get a pipe, where a long file was minutes of silence.
 */
import { DefaultReporter, type TestModule, type TestSpecification } from 'vitest/node';

const quietMs = 60_000;

const clock = (ms: number): string => {
  const seconds = Math.floor(ms / 1000);
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
};

export default class ProgressReporter extends DefaultReporter {
  private total = 0;
  private finished = 0;
  private lastLine = 0;
  private readonly running = new Map<string, number>();
  private heartbeat: NodeJS.Timeout | undefined;

  override onTestRunStart(specifications: ReadonlyArray<TestSpecification>): void {
    super.onTestRunStart(specifications);
    this.total = new Set(specifications.map((specification) => specification.moduleId)).size;
    this.lastLine = Date.now();
    this.heartbeat = setInterval(() => this.stillRunning(), 5_000).unref();
  }

  onTestModuleStart(testModule: TestModule): void {
    this.running.set(testModule.moduleId, Date.now());
  }

  protected override printTestModule(testModule: TestModule): void {
    this.running.delete(testModule.moduleId);
    this.finished += 1;
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
  }

  private where(): string {
    // Since Vitest itself started, as the person waiting counts: its start-up and global setup included.
    return `${this.finished}/${this.total} files, ${clock(Date.now() - performance.timeOrigin)} elapsed`;
  }

  private stillRunning(): void {
    const now = Date.now();
    if (now - this.lastLine < quietMs || this.running.size === 0) return;
    this.lastLine = now;
    const files = [...this.running].map(([moduleId, since]) => `${this.relative(moduleId)} for ${clock(now - since)}`);
    this.log(`   … still running: ${files.join(', ')} [${this.where()}]`);
  }
}

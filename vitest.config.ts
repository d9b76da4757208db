import { defineConfig } from 'vitest/config';
import ProgressReporter from './test/support/progress.js';
import LongestFirst from './test/support/sequencer.js';

// VITEST_JSON names a file for a machine-readable report (used by .ci/run for its summary line).
const jsonReport = process.env.VITEST_JSON;

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The migrated database every file's database is copied from (test/support/databaseTemplate.ts).
    globalSetup: ['test/support/databaseTemplate.ts'],
    // Two files at a time: Vitest's default on two cores is one, and a file spends much of its time
    // waiting (on PostgreSQL, child processes, sockets, timers), which the other file's work fills.
    maxWorkers: 2,
    sequence: { sequencer: LongestFirst },
    // Upper bounds for a hang, never a measure of speed: CI shares two busy cores.
    testTimeout: 120_000,
    hookTimeout: 300_000,
    reporters: jsonReport ? [new ProgressReporter(), 'json'] : [new ProgressReporter()],
    outputFile: jsonReport ? { json: jsonReport } : undefined,
  },
});

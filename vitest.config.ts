import { defineConfig } from 'vitest/config';

// VITEST_JSON names a file for a machine-readable report (used by .ci/run for its summary line).
const jsonReport = process.env.VITEST_JSON;

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 90_000,
    reporters: jsonReport ? ['default', 'json'] : ['default'],
    outputFile: jsonReport ? { json: jsonReport } : undefined,
  },
});

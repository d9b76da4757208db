/**
 * The order in which Vitest starts the test files: the longest first, so that no long file starts
 * near the end while the other worker runs out of files. Vitest orders by the durations of the last
 * run it remembers (node_modules/.vite); without them, as on a clean clone in CI, it orders by file
 * size, which started the fuzzer's two files (154 bytes each, a minute or more each) last and
 * addingAnOperation among the last fifteen. The files named here go first, longest first; the
 * others follow in Vitest's own order.
 */
import { relative, resolve } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const root = resolve(import.meta.dirname, '../..');

/**
 * Seconds each took in `make test` on a quiet 2-core machine (docs/testing.md, "How long the suite
 * takes"); only their order matters. Every other file took less.
 */
export const typicalSeconds: Record<string, number> = {
  'test/addingAnOperation.test.ts': 142,
  'test/cli.test.ts': 115,
  'test/fuzz/fuzz.part1.test.ts': 75,
  'test/fuzz/fuzz.part2.test.ts': 62,
  'test/build.test.ts': 45,
  'test/readme.test.ts': 41,
  'test/tracing.test.ts': 36,
  'test/server.test.ts': 28,
  'test/demoData.test.ts': 27,
  'test/permissions.test.ts': 25,
};

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seconds = (file: TestSpecification) => typicalSeconds[relative(root, file.moduleId)] ?? 0;
    // Array.prototype.sort is stable: the files not named keep Vitest's order.
    return (await super.sort(files)).sort((a, b) => seconds(b) - seconds(a));
  }
}

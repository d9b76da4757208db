/**
 * docs/adding-an-operation.md, followed: in a temporary copy of the project, the page's contract for
 * `GET /teams/{teamId}/tasks/summary` is added, `generate` runs, `tsc` names each place the operation
 * is missing, the scaffold writes them, `tsc` passes, and the written test fails (501) until the query
 * is filled in. Slow (a full type check, then an incremental one): it skips, saying why, when a tool is missing.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '..');
const bin = (name: string) => join(root, 'node_modules', '.bin', name);
const missing = ['tsx', 'tsc', 'redocly', 'vitest'].filter((name) => !existsSync(bin(name)));
if (missing.length > 0) console.warn(`test/addingAnOperation.test.ts skipped: node_modules/.bin lacks ${missing.join(', ')} (run npm ci)`);

const copied = ['openapi', 'generated', 'src', 'scripts', 'test', 'client/src', 'client/examples', 'client/package.json', 'client/tsconfig.json', 'package.json', 'tsconfig.json', 'CHANGELOG.md', 'redocly.yaml', 'vitest.config.ts'];

/** The page's YAML blocks that begin with `# <file>`: the whole file, or lines to add under `paths:`. */
async function contractOfThePage(): Promise<{ file: string; text: string }[]> {
  const page = await readFile(resolve(root, 'docs/adding-an-operation.md'), 'utf8');
  return [...page.matchAll(/^```yaml\n# ([^\s,]+)[^\n]*\n([\s\S]*?)^```/gm)].map((match) => ({ file: match[1]!, text: match[2]! }));
}

/** Runs a tool in the copy; its exit code and everything it printed. */
async function inCopy(copy: string, tool: string, args: string[]) {
  try {
    const { stdout, stderr } = await run(bin(tool), args, { cwd: copy, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, TEST_DATABASE_URL: '', VITEST_JSON: '' } });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? 1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

describe.skipIf(missing.length > 0)('adding an operation as docs/adding-an-operation.md walks through it (needs tsx, tsc, redocly and vitest in node_modules/.bin)', () => {
  let copy: string;
  beforeAll(async () => {
    copy = await mkdtemp(join(tmpdir(), 'teamos-walkthrough-'));
    for (const path of copied) {
      await mkdir(dirname(join(copy, path)), { recursive: true });
      await cp(resolve(root, path), join(copy, path), { recursive: true });
    }
    await symlink(resolve(root, 'node_modules'), join(copy, 'node_modules'), 'dir');
  });
  afterAll(async () => {
    if (copy) await rm(copy, { recursive: true, force: true });
  });

  it("the page's contract generates, tsc names each place left, the scaffold writes them, tsc passes and the written test fails", async () => {
    const blocks = await contractOfThePage();
    expect(blocks.map((block) => block.file).sort()).toEqual([
      'openapi/components/schemas/TaskSummary.yaml',
      'openapi/openapi.yaml',
      'openapi/paths/teams@{teamId}@tasks@summary.yaml',
    ]);
    for (const { file, text } of blocks) {
      const target = join(copy, file);
      if (file === 'openapi/openapi.yaml') await writeFile(target, (await readFile(target, 'utf8')).replace(/^paths:\n/m, `paths:\n${text}`));
      else await writeFile(target, text);
    }

    const generated = await inCopy(copy, 'tsx', ['scripts/generate.ts']);
    expect(generated.code, generated.output).toBe(0);

    // The second check starts from what the first one learned (its build info, in the copy): only the
    // files the scaffold changed and those that depend on them are checked again.
    const typeCheck = ['--noEmit', '-p', '.', '--incremental', '--tsBuildInfoFile', '.tsbuildinfo'];
    const before = await inCopy(copy, 'tsc', typeCheck);
    const named = [...before.output.matchAll(/^(\S+)\(\d+,\d+\): error TS2741: Property 'getTeamTaskSummary' is missing/gm)].map((match) => match[1]);
    expect(named.sort(), before.output).toEqual(['src/handlers/tasks.ts', 'test/fixtures/operationOrigins.ts', 'test/permissions/tasks.rows.ts', 'test/roundTrips.test.ts']);
    expect(before.output.trim().split('\n').filter((line) => / error TS/.test(line))).toHaveLength(4);

    const scaffold = await inCopy(copy, 'tsx', ['scripts/stubs.ts']);
    expect(scaffold.code, scaffold.output).toBe(0);
    expect(scaffold.output).toContain('test/getTeamTaskSummary.test.ts');

    const after = await inCopy(copy, 'tsc', typeCheck);
    expect(after.output).toBe('');
    expect(after.code).toBe(0);

    const test = await inCopy(copy, 'vitest', ['run', 'test/getTeamTaskSummary.test.ts']);
    expect(test.code, test.output).not.toBe(0);
    expect(test.output).toMatch(/501/);
  }, 900_000);
});

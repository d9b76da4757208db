/**
 * The make targets as a newcomer meets them: `make` alone lists every target with what it does, and
 * `make test`'s own lines hold what the README says of them (no colour codes into a pipe, the file
 * count of its example line).
 */
import { execFile } from 'node:child_process';
import { chmod, cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '..');
const makefile = await readFile(resolve(root, 'Makefile'), 'utf8');
const readme = await readFile(resolve(root, 'README.md'), 'utf8');

const phonyTargets = /^\.PHONY:(.*)$/m.exec(makefile)![1]!.trim().split(/\s+/);
/** Target → its `##` text, from the Makefile's own lines. */
const documented = new Map([...makefile.matchAll(/^([a-z][a-z-]*):[^\n]*?## (.+)$/gm)].map((match) => [match[1]!, match[2]!]));

describe('make help', () => {
  it('every target of .PHONY has a ## line saying what it does', () => {
    expect(phonyTargets.filter((target) => !documented.has(target))).toEqual([]);
  });

  it('is what make alone does: it lists every target of .PHONY with its ## text, and installs nothing', async () => {
    const { stdout } = await run('make', ['--no-print-directory', '-n'], { cwd: root });
    // A dry run prints the recipe it would run: the listing alone, no `npm ci`.
    expect(stdout).not.toContain('npm ci');
    const listing = (await run('make', ['--no-print-directory'], { cwd: root })).stdout;
    for (const target of phonyTargets) expect(listing).toContain(`make ${target.padEnd(15)} ${documented.get(target)}`);
  });
});

describe('make test’s own lines', () => {
  let dir: string;
  /** Each command scripts/test.sh ran (npm, npx and the build, faked), with the NO_COLOR it got. */
  const commands = async (env: Record<string, string>) => {
    const log = join(dir, 'commands.log');
    await rm(log, { force: true });
    await run('bash', [join(dir, 'scripts/test.sh')], { env: { PATH: `${join(dir, 'bin')}:${process.env.PATH}`, HOME: process.env.HOME!, LOG: log, ...env } });
    return (await readFile(log, 'utf8')).trim().split('\n');
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'teamos-test-sh-'));
    await mkdir(join(dir, 'bin'));
    await mkdir(join(dir, 'scripts'));
    await cp(resolve(root, 'scripts/test.sh'), join(dir, 'scripts/test.sh'));
    const fake = '#!/usr/bin/env bash\necho "$(basename "$0") $*: NO_COLOR=${NO_COLOR-unset}" >> "$LOG"\n';
    for (const file of ['bin/npm', 'bin/npx', 'scripts/build.sh']) {
      await writeFile(join(dir, file), fake);
      await chmod(join(dir, file), 0o755);
    }
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('into a pipe, every step runs with NO_COLOR: Vitest’s colours look at TERM, not at the pipe', async () => {
    const ran = await commands({ TERM: 'xterm' });
    expect(ran.some((line) => line.startsWith('npx vitest run'))).toBe(true);
    for (const line of ran) expect(line).toMatch(/NO_COLOR=1$/);
  });

  it('leaves colours on when FORCE_COLOR asks for them', async () => {
    for (const line of await commands({ TERM: 'xterm', FORCE_COLOR: '1' })) expect(line).toMatch(/NO_COLOR=unset$/);
  });

  it('the README’s example line has today’s number of test files, as the reporter prints it', async () => {
    const { stdout } = await run('git', ['ls-files', '--cached', '--others', '--exclude-standard', 'test'], { cwd: root });
    const files = stdout.split('\n').filter((file) => file.endsWith('.test.ts')).length;
    const example = /`✓ test\/[^`]* \[(\d+)\/(\d+) files, \d+:\d\d elapsed, about \d+-\d+ min left at load \d+\.\d\]`/.exec(readme);
    expect(example, 'README: the example progress line').not.toBeNull();
    expect(Number(example![2]), 'README: the example progress line’s file count').toBe(files);
  });
});

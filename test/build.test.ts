/**
 * The compiled server, as production runs it (`npm run build`, then `npm start` → dist/src/server.js,
 * plain Node without a loader). `npm test` builds before it runs the tests; `npm start` builds first
 * when dist/ is missing or stale (`prestart`).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from './support/ports.js';
import { waitFor } from './support/processes.js';

const root = resolve(import.meta.dirname, '..');
const compiled = resolve(root, 'dist/src/server.js');

describe.skipIf(!existsSync(compiled))('the compiled server (needs dist/, built by npm run build)', () => {
  it('starts on the embedded database, serves the API, its docs page and the changelog, and stops on SIGTERM', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'teamos-build-'));
    const port = await freePort();
    const child = spawn(process.execPath, [compiled], {
      cwd: root,
      env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', REDIS_URL: '', PORT: String(port), LOG_LEVEL: 'warn', LOG_PRETTY: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    try {
      const url = `http://127.0.0.1:${port}`;
      const deadline = Date.now() + 60_000;
      while (!(await fetch(`${url}/healthz`).then((res) => res.ok, () => false))) {
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the compiled server did not start:\n${output}`);
        await new Promise((wait) => setTimeout(wait, 200));
      }
      const unauthenticated = await fetch(`${url}/v1/me`);
      const docs = await fetch(`${url}/v1/docs`);
      const contract = await fetch(`${url}/v1/openapi.json`);
      const changelog = await fetch(`${url}/v1/changelog`);

      expect(unauthenticated.status).toBe(401);
      expect([docs.status, (await docs.text()).includes('<redoc')]).toEqual([200, true]);
      expect((await contract.json()).openapi).toBe('3.1.0');
      expect([changelog.status, (await changelog.text()).startsWith('# Changelog')]).toEqual([200, true]);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
    }
    // The start alone may take a minute on a busy machine (the wait above).
  }, 120_000);
});

/**
 * A fresh clone: the project's files without dist/, and its installed dependencies (linked, as
 * `npm ci` would have placed them). `npm start` must build what is missing before it starts.
 */
async function freshClone(): Promise<string> {
  const clone = await mkdtemp(join(tmpdir(), 'teamos-clone-'));
  for (const entry of ['src', 'generated', 'scripts', 'CHANGELOG.md', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json']) {
    await cp(resolve(root, entry), join(clone, entry), { recursive: true });
  }
  await symlink(resolve(root, 'node_modules'), join(clone, 'node_modules'));
  return clone;
}

/** `npm start` in `cwd` until /healthz answers 200; resolves with the milliseconds it took and the output. */
async function npmStart(cwd: string, dataDir: string): Promise<{ ms: number; output: string }> {
  const port = await freePort();
  const started = Date.now();
  const child = spawn('npm', ['start', '--silent'], {
    cwd,
    detached: true,
    env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', REDIS_URL: '', PORT: String(port), LOG_LEVEL: 'warn', LOG_PRETTY: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise((done) => child.once('exit', done));
  try {
    await waitFor(`npm start:\n${output}`, async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200, 120_000);
    return { ms: Date.now() - started, output };
  } finally {
    process.kill(-child.pid!, 'SIGTERM');
    await exited;
  }
}

describe('npm start on a fresh clone', () => {
  it('builds dist/ when it is missing, answers /healthz with 200, and starts again without building', async () => {
    const clone = await freshClone();
    const dataDir = await mkdtemp(join(tmpdir(), 'teamos-clone-data-'));
    try {
      const first = await npmStart(clone, dataDir);
      expect(existsSync(join(clone, 'dist/src/server.js'))).toBe(true);
      expect(first.output).toContain('Building dist/');
      const again = await npmStart(clone, dataDir);
      expect(again.output).not.toContain('Building dist/');
    } finally {
      await rm(clone, { recursive: true, force: true });
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 240_000);
});

/**
 * The compiled server, as production runs it (`npm run build`, then `npm start` → dist/src/server.js,
 * plain Node without a loader). `npm test` builds before it runs the tests.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from './support/ports.js';

const root = resolve(import.meta.dirname, '..');
const compiled = resolve(root, 'dist/src/server.js');

describe.skipIf(!existsSync(compiled))('the compiled server (dist/, built by npm run build)', () => {
  it('starts on the embedded database, serves the API and its docs page, and stops on SIGTERM', async () => {
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

      expect(unauthenticated.status).toBe(401);
      expect([docs.status, (await docs.text()).includes('<redoc')]).toEqual([200, true]);
      expect((await contract.json()).openapi).toBe('3.1.0');
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

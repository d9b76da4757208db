/**
 * `make client-example`: runs client/examples/openTasks.ts as a user would (tsx, the package by its
 * name). With TEAM_OS_URL it talks to that server; without, it starts the mock on a free port for
 * the run, so the example works with no server at all.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { startMock } from './mock.js';
import { freePort } from './ports.js';

const root = resolve(import.meta.dirname, '..');

const mock = process.env.TEAM_OS_URL ? undefined : await startMock(await freePort(), await freePort());
if (mock) console.log(`(against the mock at ${mock.url}: it answers the contract's fixed examples)`);
const example = spawn(resolve(root, 'node_modules/.bin/tsx'), [resolve(root, 'client/examples/openTasks.ts')], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, ...(mock ? { TEAM_OS_URL: mock.url } : {}) },
});
const code = await new Promise<number>((exited) => example.on('exit', (status) => exited(status ?? 1)));
await mock?.stop();
process.exit(code);

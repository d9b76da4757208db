/**
 * `make client-example`: runs client/examples/openTasks.ts as a user would (tsx, the package by its
 * name). With TEAM_OS_URL it talks to that server; without, it starts the mock on a free port for
 * the run, so the example works with no server at all.
 *
 * `make client-example EXAMPLE=live` runs client/examples/liveEvents.ts and `EXAMPLE=sync`
 * client/examples/sync.ts, which need the server (the mock cannot stream): without TEAM_OS_URL,
 * `make run`'s, with the Owner's demo key and the demo team from its data/demo-keys.txt unless
 * TEAM_OS_API_KEY and TEAM_OS_TEAM_ID are set.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { startMock } from './mock.js';
import { freePort } from './ports.js';

const root = resolve(import.meta.dirname, '..');
/** The examples that need the server, and their files. */
const streaming: Record<string, string> = { live: 'liveEvents', sync: 'sync' };
const live = Object.hasOwn(streaming, process.argv[2] ?? '');

/** `make run`'s address and, from its keys file (tab-separated: TAG, then fields), the Owner's key and the team to start from. */
async function demoServer(): Promise<Record<string, string>> {
  const keysFile = resolve(root, process.env.DATA_DIR ?? 'data', 'demo-keys.txt');
  const lines = await readFile(keysFile, 'utf8').catch(() => {
    console.error(`No ${keysFile}: start the server first (make run), or set TEAM_OS_URL, TEAM_OS_API_KEY and TEAM_OS_TEAM_ID.`);
    process.exit(1);
  });
  const field = (tag: string, index: number) => lines.split('\n').find((line) => line.startsWith(`${tag}\t`))?.split('\t')[index] ?? '';
  return {
    TEAM_OS_URL: `http://${process.env.HOST ?? '127.0.0.1'}:${process.env.PORT ?? '3000'}/v1`,
    TEAM_OS_API_KEY: process.env.TEAM_OS_API_KEY ?? field('ORG_OWNER', 2),
    TEAM_OS_TEAM_ID: process.env.TEAM_OS_TEAM_ID ?? field('TEAM', 1),
  };
}

const mock = process.env.TEAM_OS_URL || live ? undefined : await startMock(await freePort(), await freePort());
if (mock) console.log(`(against the mock at ${mock.url}: it answers the contract's fixed examples)`);
const server = live && !process.env.TEAM_OS_URL ? await demoServer() : {};
const example = spawn(resolve(root, 'node_modules/.bin/tsx'), [resolve(root, `client/examples/${live ? streaming[process.argv[2]!] : 'openTasks'}.ts`)], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, ...server, ...(mock ? { TEAM_OS_URL: mock.url } : {}) },
});
const code = await new Promise<number>((exited) => example.on('exit', (status) => exited(status ?? 1)));
await mock?.stop();
process.exit(code);

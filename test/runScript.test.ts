/**
 * What `make run` (scripts/run.sh) tells a newcomer before the server starts: the key the docs
 * page's samples read, as a line to paste. The script runs on a data directory that already holds
 * a keys file (so it seeds nothing) and is stopped as soon as it has printed its lines.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from './support/processes.js';

const root = resolve(import.meta.dirname, '..');
const OWNER_KEY = 'ak_owner_demo_key_0123456789abcdef';
const OPERATOR_KEY = 'ak_operator_demo_key_0123456789abcdef';

/** The lines of a keys file as seed-demo writes it. */
const keysFile = [
  'ORGANIZATION\t0a0a0000-0000-4000-8000-000000000001\tNorthwind Logistics',
  'TEAM\t0c0c0000-0000-4000-8000-000000000001\tLeadership Team',
  `ORG_OWNER\tmartina.kovacova@northwind.example\t${OWNER_KEY}`,
  `SUPERADMIN\toperator@teamos.example\t${OPERATOR_KEY}`,
].join('\n');

/** What bash makes of `line` run in the repository: TEAM_OS_API_KEY afterwards. */
const keyAfter = (line: string) => execFileSync('bash', ['-c', `${line}\nprintf %s "$TEAM_OS_API_KEY"`], { cwd: root, encoding: 'utf8' });

describe('make run', () => {
  let dir: string;
  let printed = '';

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'teamos-run-'));
    await writeFile(join(dir, 'demo-keys.txt'), `${keysFile}\n`);
    const child = spawn('bash', ['scripts/run.sh'], {
      cwd: root,
      detached: true,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, DATA_DIR: dir, PORT: '3999', CORS_ORIGINS: 'http://localhost:5173' },
    });
    child.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
    try {
      // The CORS line is the last one printed before the script hands over to the server.
      await waitFor('make run printing its lines', () => printed.includes('  CORS '), 60_000);
    } finally {
      process.kill(-child.pid!, 'SIGKILL');
    }
  }, 90_000);
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("prints an `export TEAM_OS_API_KEY=…` line that sets the demo Owner's key, and one with the platform operator's", () => {
    const exports = printed.split('\n').flatMap((line) => line.match(/export TEAM_OS_API_KEY=.*$/)?.[0] ?? []);
    expect(exports.map(keyAfter)).toEqual([OWNER_KEY, OPERATOR_KEY]);
    // The key itself stays off the screen: the line reads it from the file.
    expect(printed).not.toContain(OWNER_KEY);
  });

  it('the docs page says where the samples\' key comes from', async () => {
    const { info } = JSON.parse(await readFile(join(root, 'generated/openapi.json'), 'utf8')) as { info: { description: string } };
    expect(info.description).toContain('`make run`');
    expect(info.description).toContain('export TEAM_OS_API_KEY=…');
  });
});

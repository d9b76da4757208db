/**
 * The README as a newcomer follows it: its production recipe holds no placeholder and uses no
 * variable before a line of the same terminal sets it; and in a fresh copy of the working tree (no
 * node_modules, no dist/, no client/dist), after `npm ci`, the client's lines run with
 * `npx tsx client/examples/first.mts`, and the recipe's two terminals, pasted as written, reach
 * `/v1/me` on a fresh PostgreSQL database. The Quick start's CSV and export lines, pasted as written
 * into a folder holding the demo's keys file, run against a server on the demo data.
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMock } from '../scripts/mock.js';
import { createSecretBox } from '../src/auth/secrets.js';
import { DEMO_ORGANIZATION_NAME, seedDemo } from '../src/cli/demo.js';
import { createTestDatabase, postgresUrl } from './support/database.js';
import { createKey } from './support/factories.js';
import { freePort } from './support/ports.js';
import { startTestApp } from './support/testApp.js';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '..');
const readme = await readFile(resolve(root, 'README.md'), 'utf8');

function section(title: string): string {
  const start = readme.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`README.md: no "## ${title}" section`);
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

const fenced = (text: string, language: string) => [...text.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\``, 'gm'))].map((match) => match[1]!);

/** One block a terminal: the server's, then the caller's. */
const recipe = fenced(section('Production in one recipe'), 'sh');

/** The variables a line sets (`export A=… B=…`, `KEY=$(…)`) and those it reads without a default. */
const setBy = (line: string) => [...line.matchAll(/(?:^|\s)([A-Z_][A-Z0-9_]*)=/g)].map((match) => match[1]!);
const readBy = (line: string) =>
  [...line.matchAll(/\$\{?([A-Z_][A-Z0-9_]*)(:-)?/g)].filter((match) => match[2] === undefined).map((match) => match[1]!);

/** A clean environment: what a new terminal has, and the settings a test passes as a user would export them. */
const terminal = (settings: Record<string, string> = {}) => ({
  PATH: process.env.PATH!,
  HOME: process.env.HOME!,
  npm_config_update_notifier: 'false',
  REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
  ...settings,
});

describe('the production recipe as written', () => {
  it('has two blocks, the server’s terminal and the caller’s', () => {
    expect(recipe).toHaveLength(2);
  });

  it('holds no placeholder to fill in', () => {
    for (const block of recipe) expect(block).not.toMatch(/…|\.\.\.|<[a-z-]+>/);
  });

  it('reads no variable that an earlier line of the same terminal did not set', () => {
    for (const block of recipe) {
      const set = new Set<string>();
      for (const line of block.split('\n')) {
        for (const name of readBy(line)) expect(set.has(name), `${name} in: ${line}`).toBe(true);
        for (const name of setBy(line)) set.add(name);
      }
    }
  });

  it('gives the caller’s terminal every setting the server’s terminal exports', () => {
    const exported = (block: string) => block.split('\n').filter((line) => line.startsWith('export ')).flatMap(setBy);
    expect(exported(recipe[1]!)).toEqual(expect.arrayContaining(exported(recipe[0]!)));
  });

  it('calls the server where it listens: PORT and HOST as the server reads them, no fixed port', () => {
    const curl = recipe[1]!.split('\n').find((line) => line.startsWith('curl '))!;
    expect(curl).toContain('${HOST:-127.0.0.1}:${PORT:-3000}');
    expect(recipe[0]).toContain('${HOST:-127.0.0.1}:${PORT:-3000}');
  });
});

describe("the Quick start's CSV and export lines on the demo data", () => {
  it('export the team’s to-dos, check them as an import would, and download the organization’s archive', { timeout: 120_000 }, async () => {
    const [block] = fenced(section('Quick start'), 'sh').filter((candidate) => candidate.includes('/exports'));
    expect(block, 'a block of the Quick start starts an export').toBeDefined();
    const database = await createTestDatabase();
    const secrets = createSecretBox(randomBytes(32));
    const demo = await database.db.transaction().execute((trx) => seedDemo(trx, new Date(), secrets));
    const owner = demo.people.find((person) => person.role === 'ORG_OWNER')!;
    const { key } = await createKey(database.db, owner.userId, { scopes: ['write'], expiresAt: new Date(Date.now() + 86_400_000) });
    const app = await startTestApp({ database, secrets, exports: { pollMs: 50 } });
    const folder = await mkdtemp(join(tmpdir(), 'teamos-readme-export-'));
    try {
      // The keys file's first lines, as `make run` writes them (the key comes from TEAM_OS_API_KEY, as it prints).
      await run('mkdir', ['data'], { cwd: folder });
      await writeFile(join(folder, 'data/demo-keys.txt'), `ORGANIZATION\t${demo.organizationId}\t${DEMO_ORGANIZATION_NAME}\nTEAM\t${demo.firstTeam.id}\t${demo.firstTeam.name}\n`);
      const lines = block!.replaceAll('http://127.0.0.1:3000', app.url);
      const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', lines], { cwd: folder, env: terminal({ TEAM_OS_API_KEY: key }), timeout: 100_000 });
      expect(stdout).toContain('"dryRun":true');
      const tasks = stdout.trim().split('\n').slice(-2).map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(tasks).toHaveLength(2);
      for (const task of tasks) expect(task).toMatchObject({ id: expect.any(String), teamId: expect.any(String), title: expect.any(String) });
      expect(existsSync(join(folder, 'tasks.csv')) && existsSync(join(folder, 'manifest.json'))).toBe(true);
    } finally {
      await app.close();
      await database.close();
      await rm(folder, { recursive: true, force: true });
    }
  });
});

describe('the README in a fresh copy of the working tree, after npm ci', () => {
  let copy: string;
  beforeAll(async () => {
    copy = await mkdtemp(join(tmpdir(), 'teamos-readme-'));
    // The files a clone has: tracked and new ones, none that git ignores (node_modules, dist/, client/dist).
    const { stdout } = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--deduplicate'], { cwd: root, maxBuffer: 1 << 26 });
    const files = stdout.split('\0').filter((file) => file && existsSync(join(root, file)));
    await new Promise<void>((done, failed) => {
      const pack = spawn('tar', ['--null', '-T', '-', '-cf', '-'], { cwd: root, stdio: ['pipe', 'pipe', 'inherit'] });
      const unpack = spawn('tar', ['-xf', '-'], { cwd: copy, stdio: ['pipe', 'inherit', 'inherit'] });
      pack.stdout.pipe(unpack.stdin);
      pack.stdin.end(files.join('\0'));
      unpack.on('exit', (code) => (code === 0 ? done() : failed(new Error(`tar: ${code}`))));
    });
    expect(existsSync(join(copy, 'client/dist'))).toBe(false);
    const installing = Date.now();
    await run('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: copy, env: terminal(), timeout: 480_000, maxBuffer: 1 << 26 });
    console.log(`README: npm ci in a fresh copy ${((Date.now() - installing) / 1000).toFixed(0)} s`);
  }, 600_000);
  afterAll(async () => {
    if (copy) await rm(copy, { recursive: true, force: true });
  });

  it('builds the client on install, so the README’s lines run with `npx tsx client/examples/first.mts` against the mock', async () => {
    const code = fenced(section('Clients'), 'ts')[0]!;
    await writeFile(join(copy, 'client/examples/first.mts'), code);
    const mock = await startMock(await freePort(), await freePort());
    try {
      const { stdout } = await run('npx', ['tsx', 'client/examples/first.mts'], { cwd: copy, env: terminal({ TEAM_OS_URL: mock.url }), timeout: 120_000 });
      expect(stdout.trim().split('\n').at(-1)).toMatch(/^completed: /);
    } finally {
      await mock.stop();
    }
  }, 180_000);

  it.skipIf(!postgresUrl)('runs the production recipe’s two terminals as written on a fresh PostgreSQL database (PostgreSQL only: skipped on PGlite)', async () => {
    const database = `teamos_readme_${randomBytes(4).toString('hex')}`;
    // The copy was installed by the recipe's own first line in beforeAll: running it again would only cost a minute or more.
    const [server, caller] = recipe.map((block) =>
      block
        .replace(/^npm ci( +#.*)?$/m, 'true')
        .replaceAll('/teamos', `/${database}`)
        .replaceAll("'CREATE DATABASE teamos'", `'CREATE DATABASE ${database}'`),
    );
    expect(recipe[0]).toMatch(/^npm ci( +#.*)?$/m);
    const port = await freePort();
    const started = Date.now();
    const serving = spawn('bash', ['-euc', server!], { cwd: copy, env: terminal({ PORT: String(port) }), detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    serving.stderr.on('data', (chunk) => (log = (log + chunk).slice(-4000)));
    let exited: number | null = null;
    serving.on('exit', (status) => (exited = status ?? -1));
    try {
      const deadline = Date.now() + 600_000;
      for (;;) {
        if (exited !== null) throw new Error(`the server's terminal ended (${exited}) before serving: ${log}`);
        if (Date.now() > deadline) throw new Error(`the server did not answer within 10 minutes: ${log}`);
        const healthy = await fetch(`http://127.0.0.1:${port}/healthz`).then((response) => response.ok, () => false);
        if (healthy) break;
        await new Promise((wait) => setTimeout(wait, 500));
      }
      const serverSeconds = (Date.now() - started) / 1000;

      const calling = Date.now();
      const { stdout } = await run('bash', ['-euc', caller!], { cwd: copy, env: terminal({ PORT: String(port) }), timeout: 300_000 });
      const me = JSON.parse(stdout.trim().split('\n').at(-1)!);
      console.log(`README recipe: server's terminal to a healthy server ${serverSeconds.toFixed(0)} s, caller's terminal ${((Date.now() - calling) / 1000).toFixed(0)} s`);

      expect(me.user.email).toBe('ana@acme.example');
      expect(me.scopes).toContain('write');
    } finally {
      if (exited === null) {
        process.kill(-serving.pid!, 'SIGTERM');
        await new Promise((ended) => serving.once('exit', ended));
      }
      const admin = new pg.Client({ connectionString: postgresUrl });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.end();
    }
  }, 900_000);
});

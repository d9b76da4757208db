/**
 * `client.sync` in a real browser (issue 44's browser proof): pages bundled by esbuild from
 * test/browser/syncApp.ts (which imports `@team-os/client`, built by `npm run --silent build:client`)
 * keep a local copy of a team in headless Chromium (playwright-core), on an origin of their own:
 * - a page set offline for 30 s (Playwright's `setOffline`) while 100 changes happen catches up once
 *   back, while a second page that stayed online followed them as they came; the time it took is
 *   measured and printed;
 * - a reload starts from IndexedDB and catches up with one request (its live stream, from the stored
 *   position), counted as the browser sent them;
 * - through HAProxy in front of three server processes, with the instance that held a page's stream
 *   killed, both pages converge (PostgreSQL only, as test/loadBalancer.test.ts).
 * "Converged": the page's copy equals what fresh reads answer the same reader (test/support/sync.ts).
 *
 * Without a Chromium binary the tests are skipped with a message, as test/browser.test.ts's are.
 */
import { randomBytes } from 'node:crypto';
import { access } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, connect, type AddressInfo, type Socket } from 'node:net';
import { resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { build } from 'esbuild';
import { chromium as playwright, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SyncStore } from '../client/src/index.js';
import { openPostgres, type OpenDatabase } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { chromiumArgs, findChromium } from './browser/chromium.js';
import type { Held, SyncApi, SyncPage } from './browser/syncApp.js';
import { createPostgresDatabase, databaseLabel, postgresUrl } from './support/database.js';
import { createTeamWorld } from './support/factories.js';
import { haproxyInstalled, startBalancer, type Balancer } from './support/haproxy.js';
import { startProxy, type Proxy } from './support/proxy.js';
import { killServerProcess, signalGroup, startServerProcess, stopServerProcess, type ServerProcess } from './support/serverProcess.js';
import { views } from './support/sync.js';
import { assertMatchesContract, startTestApp, type TestApp } from './support/testApp.js';

const root = resolve(import.meta.dirname, '..');
const chromium = findChromium();
if (!chromium) {
  console.warn('browserSync.test.ts: no Chromium binary (chromium, chromium-browser, google-chrome or CHROMIUM_BIN): client.sync is not tried in a browser');
}
const log = (message: string) => console.info(`[browserSync] ${message}`);

/** Each test's limit, and how long a copy may take to converge: generous, as CI shares two busy cores. */
const testMs = 240_000;
const convergeMs = 120_000;
/** How long the laptop stays offline (issue 44). */
const offlineMs = 30_000;
/**
 * The bound held on the time a page takes to converge after coming back online. The target is 2 s
 * (issue 44), printed as measured; the assertion allows five times that, which a 2-core machine
 * running other suites beside this one still meets (the catch-up is one request and a few hundred
 * events), while a client that waited out its backoff instead of reconnecting when the browser says
 * it is online (up to 30 s after 30 s offline) would often miss it.
 */
const backOnlineBoundMs = 10_000;

/** The page's script: test/browser/syncApp.ts with the built client, for Chromium. */
async function bundlePage(): Promise<string> {
  const built = resolve(root, 'client/dist/client/src/index.js');
  await access(built).catch(() => {
    throw new Error(`${built} is missing: build the client first (npm run --silent build:client)`);
  });
  const result = await build({
    entryPoints: [resolve(import.meta.dirname, 'browser/syncApp.ts')],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: 'chrome120',
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}

/** Serves the page on 127.0.0.1 at a port of its own: an origin of its own. */
async function servePage(script: string): Promise<{ origin: string; close(): Promise<void> }> {
  const html = '<!doctype html><meta charset="utf-8"><title>Team OS local copy</title><script type="module" src="/app.js"></script>';
  const server: Server = createServer((req, res) => {
    if (req.url === '/') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
    else if (req.url === '/app.js') res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(script);
    else res.writeHead(404).end();
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((closed) => server.close(closed));
    },
  };
}

/**
 * A TCP relay in front of the API for one page, whose connections the test cuts at once. Chromium's
 * offline emulation refuses new requests but leaves an open stream flowing; a laptop that goes
 * offline loses its connections too, so going offline here is both.
 */
async function startRelay(target: string): Promise<{ url: string; cut(): void; close(): Promise<void> }> {
  const port = Number(new URL(target).port);
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => {
    const upstream = connect(port, '127.0.0.1');
    for (const [from, to] of [
      [socket, upstream],
      [upstream, socket],
    ] as const) {
      sockets.add(from);
      from.pipe(to);
      from.on('error', () => to.destroy());
      from.on('close', () => (sockets.delete(from), to.destroy()));
    }
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const cut = () => {
    for (const socket of sockets) socket.destroy();
  };
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cut,
    close: async () => {
      cut();
      await new Promise((closed) => server.close(closed));
    },
  };
}

/** A request the page sent to the API (preflights left out: they are the browser's, not the client's). */
interface Sent {
  method: string;
  path: string;
  after: string | null;
}

interface SyncTab {
  context: BrowserContext;
  page: Page;
  /** Every request the page sent to the API, in order. */
  sent: Sent[];
  /** The instance (X-Served-By) that answered each of the page's live streams, in order. */
  streamsServedBy: (string | undefined)[];
  run<Name extends keyof SyncPage>(name: Name, ...args: Parameters<SyncPage[Name]>): Promise<Awaited<ReturnType<SyncPage[Name]>>>;
}

/** A new browser context (its own network and IndexedDB) with the page of `origin`, recording what it sends to `api`. */
async function openTab(browser: Browser, origin: string, api: string): Promise<SyncTab> {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(convergeMs);
  const tab: SyncTab = {
    context,
    page,
    sent: [],
    streamsServedBy: [],
    run: (name, ...args) => page.evaluate(([name, args]) => (window.teamOsSync[name] as (...all: unknown[]) => unknown)(...args), [name, args] as const) as never,
  };
  page.on('request', (request) => {
    if (!request.url().startsWith(`${api}/`) || request.method() === 'OPTIONS') return;
    const url = new URL(request.url());
    tab.sent.push({ method: request.method(), path: url.pathname, after: url.searchParams.get('after') });
  });
  page.on('response', (response) => {
    if (response.url().startsWith(`${api}/`) && new URL(response.url()).pathname.endsWith('/events/stream') && response.request().method() === 'GET') {
      tab.streamsServedBy.push(response.headers()['x-served-by']);
    }
  });
  await page.goto(`${origin}/`);
  await page.waitForFunction(() => window.teamOsSync !== undefined);
  return tab;
}

/** The page's copy as a store, for test/support/sync.ts's comparison with fresh reads. */
function storeOf(held: Held): SyncStore {
  return {
    state: () => held.state,
    team: () => held.team,
    members: () => held.members,
    openTasks: () => held.openTasks,
    openIssues: () => held.openIssues,
    list: (kind: keyof Held['lists']) => held.lists[kind] ?? [],
  } as unknown as SyncStore;
}

/** Reads as the reader makes them: `request(method, path, { key })` of a TestApp, or of the balancer. */
type Reads = Pick<TestApp, 'request'>;

/** Waits until the page's copy of `teamId` equals what fresh reads answer the reader; at the end, shows the difference. */
async function expectPageConverged(tab: SyncTab, reads: Reads, teamId: string, key: string): Promise<void> {
  const deadline = Date.now() + convergeMs;
  for (;;) {
    const { held, read } = await views(reads as TestApp, storeOf(await tab.run('held', 'copy', teamId)), teamId, key);
    if (isDeepStrictEqual(held, read)) return;
    if (Date.now() > deadline) return void expect(held).toEqual(read);
    await new Promise((next) => setTimeout(next, 200));
  }
}

describe.skipIf(!chromium)(`client.sync in Chromium, against the server (${databaseLabel})`, () => {
  let browser: Browser;
  let served: Awaited<ReturnType<typeof servePage>>;
  let app: TestApp;
  let proxy: Proxy;
  const tabs: SyncTab[] = [];
  beforeAll(async () => {
    served = await servePage(await bundlePage());
    app = await startTestApp({ corsOrigins: [served.origin] });
    proxy = await startProxy(app.url);
    browser = await playwright.launch({ executablePath: chromium!, args: chromiumArgs });
  }, testMs);
  afterAll(async () => {
    for (const tab of tabs) await tab.context.close();
    await browser?.close();
    await proxy?.close();
    await app?.close();
    await served?.close();
    // A preflight (OPTIONS) is the browser's, no operation of the contract.
    expect(proxy.violations.filter((line) => !line.startsWith('OPTIONS '))).toEqual([]);
  });

  const open = async () => {
    const tab = await openTab(browser, served.origin, proxy.url);
    tabs.push(tab);
    return tab;
  };
  const api = (apiKey: string): SyncApi => ({ baseUrl: `${proxy.url}/v1`, apiKey });

  async function world() {
    const { team, person } = await createTeamWorld(app.db);
    const admin = await person('MEMBER', 'ADMIN');
    const reader = await person('MEMBER', 'MEMBER');
    const createTask = async (title: string) => {
      const response = await app.request('POST', `/v1/teams/${team.id}/tasks`, { key: admin.key, body: { title, ownerId: admin.user.id, dueDate: '2026-12-18' } });
      expect(response.status).toBe(201);
      return response.body as { id: string };
    };
    const changeTask = async (id: string, body: object) => {
      const response = await app.request('PATCH', `/v1/tasks/${id}`, { key: admin.key, body });
      expect(response.status).toBe(200);
    };
    return { team, admin, reader, createTask, changeTask };
  }

  it('a page offline for 30 s while 100 changes happen converges soon after it is back, and a page online followed them', async () => {
    const { team, reader, createTask, changeTask } = await world();
    const before = await Promise.all(Array.from({ length: 10 }, (_, n) => createTask(`Before ${n + 1}`)));
    const relay = await startRelay(proxy.url);
    const laptop = await openTab(browser, served.origin, relay.url);
    tabs.push(laptop);
    const desktop = await open();
    await laptop.run('startSync', { baseUrl: `${relay.url}/v1`, apiKey: reader.key }, 'copy', [team.id], false);
    await desktop.run('startSync', api(reader.key), 'copy', [team.id], false);
    await expectPageConverged(laptop, app, team.id, reader.key);

    await laptop.context.setOffline(true);
    relay.cut();
    const offlineAt = Date.now();
    // 100 changes: 40 new tasks, 30 completed, 30 renamed.
    const created = [];
    for (let n = 0; n < 40; n += 1) created.push(await createTask(`While offline ${n + 1}`));
    const all = [...before, ...created];
    for (const task of all.slice(0, 30)) await changeTask(task.id, { completed: true });
    for (const task of all.slice(30, 60)) await changeTask(task.id, { title: `Renamed while offline ${task.id.slice(0, 8)}` });

    await expectPageConverged(desktop, app, team.id, reader.key);
    const stale = await laptop.run('held', 'copy', team.id);
    expect(stale.openTasks, 'the offline page heard of none of it').toHaveLength(10);
    await new Promise((wait) => setTimeout(wait, offlineAt + offlineMs - Date.now()));

    await laptop.context.setOffline(false);
    const onlineAt = Date.now();
    await expectPageConverged(laptop, app, team.id, reader.key);
    const tookMs = (await laptop.run('lastChangeAt', 'copy'))! - onlineAt;
    log(`back online after ${onlineAt - offlineAt} ms offline and 100 changes: the copy converged in ${tookMs} ms (target 2000 ms)`);
    expect(tookMs).toBeLessThan(backOnlineBoundMs);
    await relay.close();
  }, testMs);

  it('a reload starts from IndexedDB and catches up with one request: its stream, from the stored position', async () => {
    const { team, reader, createTask, changeTask } = await world();
    const tasks = await Promise.all(Array.from({ length: 5 }, (_, n) => createTask(`Kept ${n + 1}`)));
    const tab = await open();
    await tab.run('startSync', api(reader.key), 'copy', [team.id], true);
    await expectPageConverged(tab, app, team.id, reader.key);
    expect(tab.sent.filter((sent) => sent.path.endsWith('/snapshot'))).toHaveLength(1);
    // The page goes away (its copy written, as on `pagehide`) while others change the team.
    await tab.run('closeSync', 'copy');
    await createTask('Added while the page was away');
    await changeTask(tasks[0]!.id, { completed: true });
    await changeTask(tasks[1]!.id, { title: 'Renamed while the page was away' });

    tab.sent.length = 0;
    await tab.page.reload();
    await tab.page.waitForFunction(() => window.teamOsSync !== undefined);
    await tab.run('startSync', api(reader.key), 'copy', [team.id], true);
    await expectPageConverged(tab, app, team.id, reader.key);

    expect(tab.sent.map((sent) => `${sent.method} ${sent.path}`)).toEqual(['GET /v1/events/stream']);
    expect(tab.sent[0]!.after).toMatch(/.+/);
  }, testMs);
});

const skippedBalancer = !chromium
  ? 'no Chromium binary'
  : !postgresUrl
    ? 'the embedded database (PGlite) allows one process: set TEST_DATABASE_URL'
    : !haproxyInstalled
      ? "no haproxy binary (.ci/run installs Debian's package)"
      : undefined;
if (skippedBalancer && chromium) console.warn(`browserSync.test.ts: client.sync through HAProxy not tested: ${skippedBalancer}`);

describe.skipIf(skippedBalancer)('client.sync in Chromium, through HAProxy in front of three instances (PostgreSQL only; needs haproxy)', () => {
  const instances = ['api1', 'api2', 'api3'];
  let browser: Browser;
  let served: Awaited<ReturnType<typeof servePage>>;
  let database: { url: string; drop(): Promise<void> } | undefined;
  let direct: OpenDatabase | undefined;
  let balancer: Balancer | undefined;
  const started: ServerProcess[] = [];
  const tabs: SyncTab[] = [];

  /** A request through the balancer, its answer checked against the contract when a server gave it. */
  const reads: Reads = {
    async request(method, path, options = {}) {
      const headers: Record<string, string> = {};
      if (options.key) headers.authorization = `Bearer ${options.key}`;
      if (options.body !== undefined) headers['content-type'] = 'application/json';
      const response = await fetch(`${balancer!.url}${path}`, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
      const text = await response.text();
      const answer = { status: response.status, headers: response.headers, text, body: response.headers.get('content-type')?.includes('json') && text !== '' ? JSON.parse(text) : text || undefined };
      if (response.headers.has('x-served-by')) assertMatchesContract(method, path, answer);
      return answer;
    },
  } as Reads;

  beforeAll(async () => {
    served = await servePage(await bundlePage());
    database = await createPostgresDatabase('teamos_browser_sync');
    direct = await openPostgres(database.url);
    await migrateToLatest(direct.db);
    const env = { DATABASE_URL: database.url, SECRETS_KEY: randomBytes(32).toString('hex'), CORS_ORIGINS: served.origin };
    const servers = await Promise.all(
      instances.map(async (name) => startServerProcess(name, env, { timeoutMs: testMs / 2, onSpawn: (server) => started.push(server) })),
    );
    balancer = await startBalancer(
      servers.map((server) => ({ name: server.name, port: Number(new URL(server.url).port) })),
      { healthPath: '/readyz' },
    );
    await balancer.waitUntil(instances, true, testMs / 2);
    browser = await playwright.launch({ executablePath: chromium!, args: chromiumArgs });
  }, testMs);
  afterAll(async () => {
    for (const tab of tabs) await tab.context.close();
    await browser?.close();
    for (const server of started) signalGroup(server, 'SIGINT');
    await Promise.all(started.map((server) => stopServerProcess(server, 5_000)));
    await balancer?.stop();
    await direct?.close();
    await database?.drop();
    await served?.close();
  }, 60_000);

  it('with the instance that held a page’s stream killed, both pages converge', async () => {
    const { team, person } = await createTeamWorld(direct!.db);
    const admin = await person('MEMBER', 'ADMIN');
    const member = await person('MEMBER', 'MEMBER');
    const viewer = await person('MEMBER', 'VIEWER');
    const createTask = async (title: string) => {
      const response = await reads.request('POST', `/v1/teams/${team.id}/tasks`, { key: admin.key, body: { title, ownerId: admin.user.id, dueDate: '2026-12-18' } });
      expect(response.status, response.text).toBe(201);
    };
    for (let n = 0; n < 5; n += 1) await createTask(`Before ${n + 1}`);
    const pages = [
      { tab: await openTab(browser, served.origin, balancer!.url), key: member.key },
      { tab: await openTab(browser, served.origin, balancer!.url), key: viewer.key },
    ];
    tabs.push(...pages.map(({ tab }) => tab));
    for (const { tab, key } of pages) {
      await tab.run('startSync', { baseUrl: `${balancer!.url}/v1`, apiKey: key }, 'copy', [team.id], false);
      await expectPageConverged(tab, reads, team.id, key);
    }

    const victimName = pages[0]!.tab.streamsServedBy.at(-1);
    const victim = started.find((server) => server.name === victimName);
    expect(victim, `the instance that answered the member's stream (${victimName})`).toBeDefined();
    await killServerProcess(victim!);
    await balancer!.waitUntil([victim!.name], false, testMs / 2);
    log(`killed ${victim!.name}, which held the member's stream; the viewer's was on ${pages[1]!.tab.streamsServedBy.at(-1)}`);

    for (let n = 0; n < 20; n += 1) await createTask(`After the kill ${n + 1}`);
    for (const { tab, key } of pages) await expectPageConverged(tab, reads, team.id, key);
    expect(pages[0]!.tab.streamsServedBy.length, 'the member’s stream opened again on another instance').toBeGreaterThan(1);
    expect(pages[0]!.tab.streamsServedBy.at(-1)).not.toBe(victim!.name);
  }, testMs);
});

/**
 * The typed client in a real browser: a page bundled by esbuild from test/browser/app.ts (which
 * imports `@team-os/client`, built by `npm run --silent build:client`), served from one origin, calls
 * the API on another origin in headless Chromium (playwright-core). Against the server, whose
 * CORS_ORIGINS lists the page's origin, and against the Prism mock, the page lists tasks page by
 * page, creates one with an automatic Idempotency-Key, changes one with If-Match and gets a 412 and
 * a 429 as TeamOsError with the request id; a page on an origin not listed is blocked by the browser.
 * Every answer passes a proxy between the browser and the API that checks it against the contract
 * (test/support/proxy.ts).
 *
 * Without a Chromium binary (`chromium`, `chromium-browser`, `google-chrome` or CHROMIUM_BIN) the
 * tests are skipped with a message; `.ci/run` installs Chromium, so CI runs them.
 */
import { access } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { build } from 'esbuild';
import { chromium as playwright, type Browser, type BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startMock, type MockServer } from '../scripts/mock.js';
import type { Api, Caught, Page } from './browser/app.js';
import { chromiumArgs, findChromium } from './browser/chromium.js';
import { contract } from './support/contract.js';
import { databaseLabel } from './support/database.js';
import { createTask, createTasks } from './support/executionFactories.js';
import { createTeamWorld } from './support/factories.js';
import { freePort } from './support/ports.js';
import { startProxy, type Proxy } from './support/proxy.js';
import { startTestApp, type TestApp } from './support/testApp.js';

const root = resolve(import.meta.dirname, '..');
const chromium = findChromium();
if (!chromium) {
  console.warn('browser.test.ts: no Chromium binary (chromium, chromium-browser, google-chrome or CHROMIUM_BIN): the client is not tried in a browser');
}

/** A browser waits for each answer this long at most: generous, as CI shares two busy cores. */
const browserTimeoutMs = 60_000;

/** The page's script: test/browser/app.ts with the built client, for Chromium. */
async function bundlePage(): Promise<string> {
  const built = resolve(root, 'client/dist/client/src/index.js');
  await access(built).catch(() => {
    throw new Error(`${built} is missing: build the client first (npm run --silent build:client)`);
  });
  const result = await build({
    entryPoints: [resolve(import.meta.dirname, 'browser/app.ts')],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: 'chrome120',
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}

interface PageServer {
  origin: string;
  close(): Promise<void>;
}

/** Serves the page (an HTML file and its script) on 127.0.0.1 at a port of its own: an origin of its own. */
async function servePage(script: string): Promise<PageServer> {
  const html = '<!doctype html><meta charset="utf-8"><title>Team OS in a browser</title><script type="module" src="/app.js"></script>';
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

interface Opened {
  /** What the page's console said (errors included, such as the browser's CORS messages). */
  console: string[];
  /** Requests that failed in the browser, with the browser's reason. */
  failed: { url: string; reason: string }[];
  /** The status and X-Request-Id of each answer from the API the page received, in order. */
  answers: { status: number; requestId: string | undefined }[];
  /** Runs one function of the page and returns its result. */
  run<Name extends keyof Page>(name: Name, ...args: Parameters<Page[Name]>): Promise<Awaited<ReturnType<Page[Name]>>>;
}

/** Opens the page of `origin` in a new tab of `context`, and records what the browser says and receives from `api`. */
async function openPage(context: BrowserContext, origin: string, api: string): Promise<Opened> {
  const page = await context.newPage();
  page.setDefaultTimeout(browserTimeoutMs);
  const opened: Opened = {
    console: [],
    failed: [],
    answers: [],
    run: (name, ...args) =>
      page.evaluate(([name, args]) => (window.teamOs[name] as (...all: unknown[]) => unknown)(...args), [name, args] as const) as never,
  };
  page.on('console', (message) => opened.console.push(message.text()));
  page.on('requestfailed', (request) => opened.failed.push({ url: request.url(), reason: request.failure()?.errorText ?? '' }));
  page.on('response', (response) => {
    if (response.url().startsWith(`${api}/`)) opened.answers.push({ status: response.status(), requestId: response.headers()['x-request-id'] });
  });
  await page.goto(`${origin}/`);
  await page.waitForFunction(() => window.teamOs !== undefined);
  return opened;
}

/** X-Request-Id of the one answer with `status` the page received. */
function requestIdOf(opened: Opened, status: number): string | undefined {
  const answers = opened.answers.filter((answer) => answer.status === status);
  expect(answers).toHaveLength(1);
  return answers[0]!.requestId;
}

/**
 * The answers outside the contract that passed the proxy between the browser and the API. A
 * preflight (OPTIONS) is no operation of the contract: the preflight of an allowed origin must be
 * answered 204, with X-Request-Id when the server answers it (Prism's carry none).
 */
function violations(proxy: Proxy, allowedOrigin: string | undefined, fromServer: boolean): string[] {
  const preflight = /^OPTIONS \S+: (not an operation of the contract|\d+ without X-Request-Id)$/;
  return [
    ...proxy.violations.filter((line) => !preflight.test(line) || (fromServer && line.endsWith('without X-Request-Id'))),
    ...proxy.passed
      .filter((request) => request.method === 'OPTIONS' && (allowedOrigin === undefined || request.headers.origin === allowedOrigin) && request.status !== 204)
      .map((request) => `OPTIONS ${request.path}: a preflight answered ${request.status}`),
  ];
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The apps' clock stands still (as in rateLimit.test.ts): a key's budget never renews during a test. */
const frozenAt = new Date((Math.floor(Date.now() / 60_000) - 7 * 24 * 60) * 60_000 + 17_000);
const rateLimitPerMinute = 5;

describe.skipIf(!chromium)(`the typed client in Chromium, on an allowed origin, against the server (${databaseLabel})`, () => {
  let browser: Browser;
  let context: BrowserContext;
  let allowedPage: PageServer;
  let otherPage: PageServer;
  let app: TestApp;
  let proxy: Proxy;
  beforeAll(async () => {
    const script = await bundlePage();
    allowedPage = await servePage(script);
    otherPage = await servePage(script);
    app = await startTestApp({ corsOrigins: [allowedPage.origin], rateLimitPerMinute, now: () => frozenAt });
    proxy = await startProxy(app.url);
    browser = await playwright.launch({ executablePath: chromium!, args: chromiumArgs });
  });
  afterAll(async () => {
    await browser?.close();
    await proxy?.close();
    await app?.close();
    await allowedPage?.close();
    await otherPage?.close();
  });
  beforeEach(async () => {
    context = await browser.newContext();
  });
  afterEach(async () => {
    await context.close();
    expect(violations(proxy, allowedPage.origin, true)).toEqual([]);
    proxy.passed.length = 0;
    proxy.violations.length = 0;
  });

  const open = (page: PageServer = allowedPage) => openPage(context, page.origin, proxy.url);
  const api = (apiKey: string): Api => ({ baseUrl: `${proxy.url}/v1`, apiKey });

  it('lists a team’s tasks page by page', async () => {
    const { team, person } = await createTeamWorld(app.db);
    const member = await person('MEMBER', 'MEMBER');
    const start = Date.parse('2026-11-02T08:00:00Z');
    const tasks = await createTasks(app.db, team.id, member.user.id, 5, (index) => ({ title: `Task ${index + 1}`, createdAt: new Date(start + index * 60_000) }));
    const { run } = await open();

    const listed = await run('listTasks', api(member.key), team.id, 2);

    expect(listed).toMatchObject({ value: tasks.map((task) => task.title) });
    expect(listed.sent.map((request) => new URL(request.url).searchParams.has('cursor'))).toEqual([false, true, true]);
  }, browserTimeoutMs);

  it('creates a task with an Idempotency-Key the client made, which reaches the server', async () => {
    const { team, person } = await createTeamWorld(app.db);
    const member = await person('MEMBER', 'MEMBER');
    const { run } = await open();

    const created = await run('createTask', api(member.key), team.id, { title: 'Call the Žilina warehouse', ownerId: member.user.id, dueDate: '2026-11-27' });

    expect(created).toMatchObject({ value: { title: 'Call the Žilina warehouse', teamId: team.id, completed: false } });
    const key = created.sent[0]!.idempotencyKey;
    expect(key).toMatch(uuid);
    const stored = await app.db.selectFrom('idempotency_keys').select(['operation_id', 'status']).where('key', '=', key!).execute();
    expect(stored).toEqual([{ operation_id: 'createTask', status: 201 }]);
  }, browserTimeoutMs);

  it('changes a task with If-Match: the page reads the ETag, and the new one after the change', async () => {
    const { team, person } = await createTeamWorld(app.db);
    const member = await person('MEMBER', 'MEMBER');
    const task = await createTask(app.db, team.id, member.user.id);
    const { run } = await open();

    const completed = await run('completeTask', api(member.key), task.id);

    expect(completed).toMatchObject({ value: { read: expect.stringMatching(/^"/), completed: true, changed: expect.stringMatching(/^"/) } });
    const { read, changed } = (completed as { value: { read: string; changed: string } }).value;
    expect(changed).not.toBe(read);
    expect(completed.sent.map((request) => [request.method, request.ifMatch])).toEqual([
      ['GET', null],
      ['PATCH', read],
    ]);
  }, browserTimeoutMs);

  it('gets a 412 for a stale If-Match as a TeamOsError with the request id, and the task stays open', async () => {
    const { team, person } = await createTeamWorld(app.db);
    const member = await person('MEMBER', 'MEMBER');
    const task = await createTask(app.db, team.id, member.user.id);
    const page = await open();

    const stale = await page.run('changeStaleTask', api(member.key), task.id);

    expect(stale).toMatchObject({ caught: { name: 'TeamOsError', status: 412, code: 'preconditionFailed', requestId: expect.stringMatching(uuid) } });
    expect((stale as { caught: Caught }).caught.requestId).toBe(requestIdOf(page, 412));
    expect(stale.sent.at(-1)!.ifMatch).toMatch(/^"/);
    expect((await app.db.selectFrom('tasks').select('completed').where('id', '=', task.id).executeTakeFirstOrThrow()).completed).toBe(false);
  }, browserTimeoutMs);

  it('gets a 429 over the rate limit as a TeamOsError with the request id, without retrying', async () => {
    const { person } = await createTeamWorld(app.db);
    const member = await person('MEMBER');
    const page = await open();

    const limited = await page.run('exhaustRateLimit', api(member.key), rateLimitPerMinute + 1);

    expect(limited).toMatchObject({ caught: { name: 'TeamOsError', status: 429, code: 'rateLimited', requestId: expect.stringMatching(uuid) } });
    expect((limited as { caught: Caught }).caught.requestId).toBe(requestIdOf(page, 429));
    expect(limited.sent).toHaveLength(rateLimitPerMinute + 1);
  }, browserTimeoutMs);

  it('fails on an origin not allowed: the browser blocks the call after its preflight, and says it is CORS', async () => {
    const { person } = await createTeamWorld(app.db);
    const member = await person('MEMBER');
    const page = await open(otherPage);

    const blocked = await page.run('readMe', api(member.key));

    expect(blocked).toMatchObject({ caught: { name: 'TypeError', message: 'Failed to fetch' } });
    expect(page.console.filter((line) => line.includes(`from origin '${otherPage.origin}' has been blocked by CORS policy`))).toHaveLength(1);
    expect(proxy.passed.map((request) => [request.method, request.path, request.status])).toEqual([['OPTIONS', '/v1/me', 401]]);
    // The same call from the allowed origin, in the same browser, is answered.
    expect(await (await open()).run('readMe', api(member.key))).toMatchObject({ value: member.user.id });
  }, browserTimeoutMs);

  it('keeps Cross-Origin-Resource-Policy same-origin: the API read without CORS (as an <img> or <script> would) is blocked', async () => {
    const page = await open();

    const embedded = await page.run('fetchWithoutCors', `${proxy.url}/v1/openapi.json`);

    expect(embedded).toMatchObject({ caught: { name: 'TypeError' } });
    expect(page.failed).toEqual([{ url: `${proxy.url}/v1/openapi.json`, reason: 'net::ERR_BLOCKED_BY_RESPONSE.NotSameOrigin' }]);
  }, browserTimeoutMs);
});

/** The example the mock answers with: the first of the answer in the contract. */
function firstExample(path: string, method: 'get' | 'post', status: string): any {
  const response = (contract.paths as any)[path][method].responses[status];
  return Object.values(response.content['application/json'].examples as Record<string, { value: unknown }>)[0]!.value;
}

describe.skipIf(!chromium)('the typed client in Chromium against the Prism mock: the same page passes', () => {
  let browser: Browser;
  let context: BrowserContext;
  let pageServer: PageServer;
  let mock: MockServer;
  let proxy: Proxy;
  const teamId = '0c0c0000-0000-4000-8000-000000000001';
  const taskId = '0d0d0000-0000-4000-8000-000000000001';
  beforeAll(async () => {
    pageServer = await servePage(await bundlePage());
    // As a client developer runs it: CORS_ORIGINS lists the page's origin.
    mock = await startMock(await freePort(), await freePort(), { corsOrigins: [pageServer.origin] });
    proxy = await startProxy(new URL(mock.url).origin);
    browser = await playwright.launch({ executablePath: chromium!, args: chromiumArgs });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await proxy?.close();
    await mock?.stop();
    await pageServer?.close();
  });
  beforeEach(async () => {
    context = await browser.newContext();
  });
  afterEach(async () => {
    await context.close();
    expect(violations(proxy, pageServer.origin, false)).toEqual([]);
    proxy.passed.length = 0;
    proxy.violations.length = 0;
  });

  const open = () => openPage(context, pageServer.origin, proxy.url);
  const api = (): Api => ({ baseUrl: `${proxy.url}/v1`, apiKey: 'ak_mock_key_for_the_example_0000000000', mock: true });

  it('lists a team’s tasks: the one page of the example', async () => {
    const { run } = await open();

    const listed = await run('listTasks', api(), teamId, 2);

    expect(listed).toMatchObject({ value: firstExample('/teams/{teamId}/tasks', 'get', '200').data.map((task: { title: string }) => task.title) });
  }, browserTimeoutMs);

  it('creates a task with an Idempotency-Key the client made', async () => {
    const { run } = await open();

    const created = await run('createTask', api(), teamId, { title: 'Call the Žilina warehouse', ownerId: '0b0b0000-0000-4000-8000-000000000004', dueDate: '2026-11-27' });

    expect(created).toMatchObject({ value: firstExample('/teams/{teamId}/tasks', 'post', '201') });
    expect(created.sent[0]!.idempotencyKey).toMatch(uuid);
  }, browserTimeoutMs);

  it('changes a task with If-Match: the page reads the example’s ETag', async () => {
    const { run } = await open();

    const completed = await run('completeTask', api(), taskId);

    expect(completed).toMatchObject({ value: { read: expect.stringMatching(/^"/) } });
    const { read } = (completed as { value: { read: string } }).value;
    expect(completed.sent.map((request) => [request.method, request.ifMatch])).toEqual([
      ['GET', null],
      ['PATCH', read],
    ]);
  }, browserTimeoutMs);

  it('gets a 412 as a TeamOsError with the request id', async () => {
    const page = await open();

    const stale = await page.run('changeStaleTask', api(), taskId);

    expect(stale).toMatchObject({ caught: { name: 'TeamOsError', status: 412, code: 'preconditionFailed', requestId: expect.any(String) } });
    expect((stale as { caught: Caught }).caught.requestId).toBe(requestIdOf(page, 412));
  }, browserTimeoutMs);

  it('gets a 429 as a TeamOsError with the request id', async () => {
    const page = await open();

    const limited = await page.run('exhaustRateLimit', api(), rateLimitPerMinute + 1);

    expect(limited).toMatchObject({ caught: { name: 'TeamOsError', status: 429, code: 'rateLimited', requestId: expect.any(String) } });
    expect((limited as { caught: Caught }).caught.requestId).toBe(requestIdOf(page, 429));
    expect(limited.sent).toHaveLength(1);
  }, browserTimeoutMs);
});

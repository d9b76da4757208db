/**
 * The typed client in a real browser: a page bundled by esbuild from test/browser/app.ts (which
 * imports `@team-os/client`, built by `npm run --silent build:client`), served from one origin, calls
 * the API on another origin in headless Chromium (playwright-core). Against the server, whose
 * CORS_ORIGINS lists the page's origin, and against the Prism mock, the page lists tasks page by
 * page, creates one with an automatic Idempotency-Key, changes one with If-Match and gets a 412 and
 * a 429 as TeamOsError with the request id; a page on an origin not listed is blocked by the browser.
 * Live team screens (issue 38): a team Member's and a Viewer's page follow the team with `client.live`
 * while a third caller changes it over HTTP. Every answer passes a proxy between the browser and the
 * API that checks it against the contract, a stream's messages included (test/support/proxy.ts).
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
import type { FeedEvent } from '../client/src/index.js';
import type { Api, Caught, LiveRecord, Page } from './browser/app.js';
import { chromiumArgs, findChromium } from './browser/chromium.js';
import { contract } from './support/contract.js';
import { databaseLabel } from './support/database.js';
import { createTask, createTasks } from './support/executionFactories.js';
import { createTeamWorld } from './support/factories.js';
import { freePort } from './support/ports.js';
import { waitFor } from './support/processes.js';
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

/**
 * A team screen's wait for what the issue promises within a second: the time from the change's
 * answer, as the test got it, to the event's arrival in the page, both read from the machine's one
 * clock (`Date.now()` here and in the page). Every wait itself is for the event, with the browser's
 * generous bound.
 */
const liveWithinMs = 1_000;

describe.skipIf(!chromium)(`live team screens: client.live in Chromium on an allowed origin (${databaseLabel})`, () => {
  let browser: Browser;
  let context: BrowserContext;
  let pageServer: PageServer;
  let app: TestApp;
  let proxy: Proxy;
  beforeAll(async () => {
    pageServer = await servePage(await bundlePage());
    // The webhook worker runs as in the server: its fan-out of the log wakes the streams.
    app = await startTestApp({ corsOrigins: [pageServer.origin], webhooks: { allowPrivateTargets: true, deliver: { pollMs: 100 } } });
    proxy = await startProxy(app.url);
    browser = await playwright.launch({ executablePath: chromium!, args: chromiumArgs });
  });
  afterAll(async () => {
    await browser?.close();
    await proxy?.close();
    await app?.close();
    await pageServer?.close();
  });
  beforeEach(async () => {
    context = await browser.newContext();
  });
  afterEach(async () => {
    await context.close();
    expect(violations(proxy, pageServer.origin, true)).toEqual([]);
    proxy.passed.length = 0;
    proxy.violations.length = 0;
  });

  type Screen = Opened & { record(): Promise<LiveRecord> };

  /** A team with a lead (an organization Owner in the team) who makes the changes over HTTP, and a Member's and a Viewer's page, each with `client.live` open on the team. */
  async function teamScreens() {
    const { team, person } = await createTeamWorld(app.db);
    const lead = await person('OWNER', 'MEMBER');
    const member = await person('MEMBER', 'MEMBER');
    const viewer = await person('MEMBER', 'VIEWER');
    const screens: Screen[] = [];
    for (const caller of [member, viewer]) {
      const opened = await openPage(context, pageServer.origin, proxy.url);
      await opened.run('live', { baseUrl: `${proxy.url}/v1`, apiKey: caller.key }, 'team', [team.id]);
      screens.push({ ...opened, record: () => opened.run('liveRecord', 'team') });
    }
    // The server places a stream at the log's end before it answers: a change made from then on is on it.
    for (const screen of screens) await waitFor('the stream open', async () => (await screen.record()).connections[0]?.status === 200, browserTimeoutMs);
    const change = async (method: string, path: string, body?: unknown) => {
      const answer = await app.request(method, `/v1${path}`, { key: lead.key, body });
      const answeredAt = Date.now();
      expect(answer.status, `${method} ${path}: ${answer.text}`).toBeLessThan(300);
      return { body: answer.body, answeredAt };
    };
    return { team, lead, member, viewer, screens, change };
  }

  /** The screen's events once one of `type` about `objectId` (its `id`, or its `meetingId`) came; waits for it. */
  async function eventOn(screen: Screen, type: string, objectId: string) {
    const about = (event: FeedEvent) => {
      const object = event.data.object as { id?: string; meetingId?: string };
      return event.type === type && (object.id ?? object.meetingId) === objectId;
    };
    let record: LiveRecord | undefined;
    await waitFor(`${type} of ${objectId} on the page`, async () => (record = await screen.record()).events.some(({ event }) => about(event)), browserTimeoutMs);
    return { record: record!, arrived: record!.events.find(({ event }) => about(event))! };
  }

  it('a change by another caller appears on a Member’s and a Viewer’s page within 1 s of its answer', async () => {
    const { team, lead, screens, change } = await teamScreens();

    const created = await change('POST', `/teams/${team.id}/tasks`, { title: 'Confirm the Graz delivery window', ownerId: lead.user.id, dueDate: '2026-12-04' });

    for (const screen of screens) {
      const { record, arrived } = await eventOn(screen, 'task.created', created.body.id);
      expect(arrived.event.data.object).toEqual(created.body);
      console.info(`[browser] task.created on a page ${arrived.at - created.answeredAt} ms after the change's answer`);
      expect(arrived.at - created.answeredAt, 'ms from the answer to the page').toBeLessThanOrEqual(liveWithinMs);
      expect(record.connections).toHaveLength(1);
    }
  }, browserTimeoutMs);

  it('a hidden rating appears on neither page until the ratings are revealed, which carries it', async () => {
    const { team, member, screens, change } = await teamScreens();

    const meeting = (await change('POST', `/teams/${team.id}/meetings`, { date: '2026-12-07' })).body;
    await change('PATCH', `/meetings/${meeting.id}`, { status: 'IN_PROGRESS' });
    await change('PUT', `/meetings/${meeting.id}/ratings/${member.user.id}`, { rating: 8 });
    await change('PATCH', `/meetings/${meeting.id}`, { notes: 'Graz: the window moves to Thursday.' });
    await change('POST', `/meetings/${meeting.id}/reveal-ratings`);

    for (const screen of screens) {
      const { record } = await eventOn(screen, 'meeting.ratings_revealed', meeting.id);
      const events = record.events.map(({ event }) => event);
      // A rating also changes its meeting (its count of ratings): meeting.updated follows it, still hiding the value.
      expect(events.map((event) => event.type)).toEqual(['meeting.created', 'meeting.status_changed', 'meeting_rating.set', 'meeting.updated', 'meeting.updated', 'meeting.ratings_revealed']);
      const [, started, rated, ratedMeeting, updated, revealed] = events as any[];
      expect([started.data.object.ratings, started.data.object.ratingsHidden]).toEqual([[], true]);
      // The rating's own event names who was rated, never the value; its revision is its change's place in the log.
      expect(rated.data.object).toEqual({ meetingId: meeting.id, userId: member.user.id, revision: expect.any(Number) });
      expect(rated.data.object.revision).toBeGreaterThan(started.data.object.revision);
      expect(ratedMeeting.data.object).toMatchObject({ ratings: [], ratingsHidden: true, rating: { average: null } });
      expect(updated.data.object).toMatchObject({ notes: 'Graz: the window moves to Thursday.', ratings: [], ratingsHidden: true, rating: { average: null } });
      expect(JSON.stringify(events.slice(0, 5))).not.toMatch(/"rating":8/);
      expect(revealed.data.object).toMatchObject({ ratings: [{ userId: member.user.id, rating: 8, absent: false }], ratingsHidden: false, rating: { average: 8 } });
    }
  }, browserTimeoutMs);

  it('a Viewer removed from the team stops getting its events within 1 s of the removal’s answer; the Member’s page goes on', async () => {
    const { team, lead, viewer, screens, change } = await teamScreens();
    const [memberScreen, viewerScreen] = screens as [Screen, Screen];

    const removed = await change('DELETE', `/teams/${team.id}/members/${viewer.user.id}`);
    const later = await change('POST', `/teams/${team.id}/tasks`, { title: 'Not for the former Viewer', ownerId: lead.user.id, dueDate: '2026-12-04' });

    // The Viewer's stream, which followed only this team, ends; the client's reconnection is refused, and reported once.
    let ended: LiveRecord | undefined;
    await waitFor('the Viewer’s stream to end for good', async () => (ended = await viewerScreen.record()).end !== undefined, browserTimeoutMs);
    console.info(`[browser] the removed Viewer's stream ended ${ended!.closedAt[0]! - removed.answeredAt} ms after the removal's answer`);
    expect(ended!.closedAt[0]! - removed.answeredAt, 'ms from the removal’s answer to the end of the stream').toBeLessThanOrEqual(liveWithinMs);
    expect(ended!.end!.status).toBe(403);
    expect(ended!.connections.map((connection) => connection.status)).toEqual([200, 403]);

    const { record } = await eventOn(memberScreen, 'task.created', later.body.id);
    expect(record.events.map(({ event }) => event.type)).toEqual(['team_member.removed', 'task.created']);
    // Whether the removal itself reached the Viewer depends on which came first, its event or its notification; nothing after it did.
    expect((await viewerScreen.record()).events.map(({ event }) => event.type)).not.toContain('task.created');
    expect((await viewerScreen.record()).events.length).toBeLessThanOrEqual(1);
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

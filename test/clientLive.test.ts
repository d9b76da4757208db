/**
 * The typed client's `live` (issue 38, item 4; issue 43, item 6) against the real app over HTTP:
 * events typed by the union as they happen, the key in `Authorization` (never in the URL), a lost
 * connection and a balancer's 502, 503 and 504 retried with backoff and resumed with `Last-Event-ID`
 * with nothing lost or repeated, and a refusal reported once, with its code and request id, without
 * reconnecting. The balancer is a real HTTP front before the contract-checking proxy.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTeamOsClient, type FeedEvent, type LiveReconnecting, type LiveState, type LiveStream } from '../client/src/index.js';
import { databaseLabel } from './support/database.js';
import { createTeamWorld } from './support/factories.js';
import { waitFor } from './support/processes.js';
import { hopByHop, startProxy, type Proxy } from './support/proxy.js';
import { startTestApp, type TestApp } from './support/testApp.js';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '..');

let app: TestApp;
let proxy: Proxy;
beforeAll(async () => {
  app = await startTestApp({ webhooks: { allowPrivateTargets: true, deliver: { pollMs: 100 } } });
  proxy = await startProxy(app.url);
});
afterAll(async () => {
  await proxy.close();
  await app.close();
});

/** What the balancer does with one request of the stream: pass it on, pass it on and end it after its first event, drop the connection unanswered, or answer a status of its own. */
type Turn = 'pass' | 'cut' | 'drop' | { status: number; retryAfter?: string };

/**
 * A load balancer in front of the app (through the contract-checking proxy): the stream's requests
 * take the turns of `plan` in order (then 'pass', or the last turn again with `repeatLast`), as while
 * the instances behind it restart; every other request passes.
 */
async function startBalancer(plan: Turn[], repeatLast = false) {
  const streams: { lastEventId: string | undefined; answered: number }[] = [];
  const server = createServer(async (req, res) => {
    const isStream = req.url!.includes('/events/stream');
    const turn: Turn = isStream ? (plan[streams.length] ?? (repeatLast ? plan.at(-1)! : 'pass')) : 'pass';
    if (typeof turn === 'object') {
      streams.push({ lastEventId: req.headers['last-event-id'] as string | undefined, answered: turn.status });
      return void res.writeHead(turn.status, { 'Content-Type': 'text/html', ...(turn.retryAfter ? { 'Retry-After': turn.retryAfter } : {}) }).end('<html><body>No server is available</body></html>');
    }
    if (turn === 'drop') {
      streams.push({ lastEventId: req.headers['last-event-id'] as string | undefined, answered: 0 });
      return void req.socket.destroy();
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const upstream = new AbortController();
    res.once('close', () => upstream.abort());
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !hopByHop.has(name) && name !== 'host')) as Record<string, string>;
    const answer = await fetch(`${proxy.url}${req.url}`, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined, signal: upstream.signal }).catch(() => undefined);
    if (!answer) return void res.destroy();
    if (isStream) streams.push({ lastEventId: req.headers['last-event-id'] as string | undefined, answered: answer.status });
    const outgoing: Record<string, string> = {};
    answer.headers.forEach((value, name) => {
      if (!hopByHop.has(name)) outgoing[name] = value;
    });
    res.writeHead(answer.status, outgoing).flushHeaders();
    let seen = '';
    try {
      for await (const chunk of answer.body as unknown as AsyncIterable<Uint8Array>) {
        res.write(chunk);
        seen += Buffer.from(chunk).toString();
        if (turn === 'cut' && /(^|\n)id:/.test(seen) && seen.endsWith('\n\n')) break;
      }
      upstream.abort();
      res.end();
    } catch {
      res.destroy();
    }
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    streams,
    close: async () => {
      server.closeAllConnections();
      await new Promise((closed) => server.close(closed));
    },
  };
}

/** A fetch that records each request of the stream and ends its first connection after its first event, as a lost connection would. */
function cuttingFetch() {
  const requests: Request[] = [];
  const fetch = async (request: Request): Promise<Response> => {
    if (!new URL(request.url).pathname.endsWith('/events/stream')) return globalThis.fetch(request);
    requests.push(request);
    const response = await globalThis.fetch(request);
    if (requests.length > 1 || !response.body) return response;
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let seen = '';
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { value, done } = await reader.read();
        if (done) return controller.close();
        controller.enqueue(value);
        seen += decoder.decode(value, { stream: true });
        if (/(^|\n)id:/.test(seen) && seen.endsWith('\n\n')) {
          controller.close();
          void reader.cancel();
        }
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
  return { fetch, requests };
}

describe(`the typed client's live stream (${databaseLabel})`, () => {
  it('delivers each change typed by the event union and, after a lost connection, resumes with Last-Event-ID without losing or repeating one', async () => {
    const { team, person } = await createTeamWorld(app.db);
    const owner = await person('OWNER', 'MEMBER');
    const { fetch, requests } = cuttingFetch();
    const client = createTeamOsClient({ baseUrl: `${app.url}/v1`, apiKey: owner.key, fetch, retry: false });
    const received: FeedEvent[] = [];
    const stopping = new AbortController();
    const live = client.live({ teamIds: [team.id], types: ['task.created'], onEvent: (event) => received.push(event), signal: stopping.signal });

    const create = (title: string) => client.POST('/teams/{teamId}/tasks', { params: { path: { teamId: team.id } }, body: { title, ownerId: owner.user.id, dueDate: '2026-11-27' } });
    // Counted open once placed at the log's end: a change made from then on is on it.
    await waitFor('the stream open', async () => (await app.metrics.live.streams.get()).values[0]!.value >= 1);
    await create('Before the loss');
    await waitFor('the first event', () => received.length === 1);
    await create('During the loss');
    await waitFor('the reconnection', () => requests.length === 2);
    await create('After the reconnection');
    await waitFor('three events', () => received.length === 3);
    stopping.abort();

    const titles = received.map((event) => (event.type === 'task.created' ? event.data.object.title : event.type));
    expect(titles).toEqual(['Before the loss', 'During the loss', 'After the reconnection']);
    expect(requests.map((request) => [request.headers.get('authorization'), request.headers.get('last-event-id')])).toEqual([
      [`Bearer ${owner.key}`, null],
      [`Bearer ${owner.key}`, received[0]!.id],
    ]);
    expect(requests.every((request) => !request.url.includes(owner.key))).toBe(true);
    expect(live.lastEventId).toBe(received[2]!.id);
  });

  it("reports a refusal once with its status, the API's error code and the request id, and does not reconnect", async () => {
    const { person } = await createTeamWorld(app.db);
    const owner = await person('OWNER');
    const { fetch, requests } = cuttingFetch();
    const requestId = `live-refusal-${randomUUID()}`;
    const client = createTeamOsClient({ baseUrl: `${app.url}/v1`, apiKey: owner.key, fetch, retry: false, headers: { 'X-Request-Id': requestId } });
    const ends: unknown[] = [];
    const live = client.live({ teamIds: [randomUUID()], onEvent: () => undefined, onEnd: (end) => ends.push(end) });
    await waitFor('the refusal reported', () => ends.length === 1);
    expect(ends).toEqual([{ status: 404, code: 'notFound', message: expect.stringMatching(/^404 notFound: /), requestId }]);
    expect([requests.length, live.state]).toEqual([1, 'closed']);
  });

  it("rides out a lost connection and a balancer's 503, 502 and 504 with backoff, honouring Retry-After, and resumes with Last-Event-ID without losing or repeating an event", async () => {
    const { team, person } = await createTeamWorld(app.db);
    const owner = await person('OWNER', 'MEMBER');
    const balancer = await startBalancer(['cut', { status: 503, retryAfter: '1' }, { status: 502 }, { status: 504 }]);
    const client = createTeamOsClient({ baseUrl: balancer.url, apiKey: owner.key });
    const received: FeedEvent[] = [];
    const reconnections: LiveReconnecting[] = [];
    const states: LiveState[] = [];
    const ends: unknown[] = [];
    const live: LiveStream = client.live({
      teamIds: [team.id],
      types: ['task.created'],
      reconnect: { baseDelayMs: 20 },
      onEvent: (event) => received.push(event),
      onOpen: () => states.push(live.state),
      onReconnecting: (reconnecting) => {
        reconnections.push(reconnecting);
        states.push(live.state);
      },
      onEnd: (end) => ends.push(end),
    });
    const create = (title: string) => client.POST('/teams/{teamId}/tasks', { params: { path: { teamId: team.id } }, body: { title, ownerId: owner.user.id, dueDate: '2026-11-27' } });
    try {
      // Open at the client means placed at the log's end: the server answers once it has the position.
      await waitFor('the stream open', () => states.length === 1);
      await create('Before the loss');
      await waitFor('the loss', () => reconnections.length >= 1);
      await create('During the outage');
      await waitFor('the stream open again', () => states.length >= 6);
      await create('After the outage');
      await waitFor('three events', () => received.length === 3);
    } finally {
      live.close();
      await balancer.close();
    }

    expect(received.map((event) => (event.type === 'task.created' ? event.data.object.title : event.type))).toEqual(['Before the loss', 'During the outage', 'After the outage']);
    expect(reconnections.map(({ attempt, status, reason }) => [attempt, status, reason])).toEqual([
      [1, undefined, 'the connection was lost'],
      [2, 503, '503 Service Unavailable'],
      [3, 502, '502 Bad Gateway'],
      [4, 504, '504 Gateway Timeout'],
    ]);
    // Full jitter over 20 ms doubling from the loss on; the 503's Retry-After of 1 s plus a jitter of at most the base.
    const [lost, unavailable, badGateway, timeout] = reconnections.map(({ delayMs }) => delayMs);
    expect([lost! < 20, unavailable! >= 1_000 && unavailable! < 1_020, badGateway! < 80, timeout! < 160]).toEqual([true, true, true, true]);
    expect(states).toEqual(['open', 'reconnecting', 'reconnecting', 'reconnecting', 'reconnecting', 'open']);
    expect(balancer.streams).toEqual([
      { lastEventId: undefined, answered: 200 },
      ...[503, 502, 504, 200].map((answered) => ({ lastEventId: received[0]!.id, answered })),
    ]);
    expect([ends, live.state, proxy.violations]).toEqual([[], 'closed', []]);
  });

  it("ends after its retries when the balancer keeps answering 503, reporting the balancer's status", async () => {
    const { team, person } = await createTeamWorld(app.db);
    const owner = await person('OWNER', 'MEMBER');
    const balancer = await startBalancer([{ status: 503 }], true);
    const client = createTeamOsClient({ baseUrl: balancer.url, apiKey: owner.key });
    const reconnections: LiveReconnecting[] = [];
    const ends: unknown[] = [];
    const live = client.live({ teamIds: [team.id], reconnect: { retries: 2, baseDelayMs: 20 }, onEvent: () => undefined, onReconnecting: (reconnecting) => reconnections.push(reconnecting), onEnd: (end) => ends.push(end) });
    try {
      await waitFor('the end reported', () => ends.length === 1);
    } finally {
      await balancer.close();
    }

    expect(ends).toEqual([{ status: 503, code: undefined, message: '503 Service Unavailable', requestId: null }]);
    expect([reconnections.map(({ attempt }) => attempt), balancer.streams.length, live.state]).toEqual([[1, 2], 3, 'closed']);
  });

  it('runs client/examples/liveEvents.ts unchanged: once open it adds a task, prints the event that announces it and stops', async () => {
    const { team, person } = await createTeamWorld(app.db);
    const owner = await person('OWNER', 'MEMBER');
    const env = { ...process.env, TEAM_OS_URL: `${proxy.url}/v1`, TEAM_OS_API_KEY: owner.key, TEAM_OS_TEAM_ID: team.id };

    const { stdout } = await run(resolve(root, 'node_modules/.bin/tsx'), [resolve(root, 'client/examples/liveEvents.ts')], { cwd: root, env, timeout: 60_000 });

    const tasks = await app.db.selectFrom('tasks').select('title').where('team_id', '=', team.id).execute();
    expect(tasks.map((task) => task.title)).toEqual([expect.stringMatching(/^Try the live stream \(/)]);
    expect(stdout.trim().split('\n')).toEqual(['live: open', `task.created: ${tasks[0]!.title}`]);
    expect(proxy.violations).toEqual([]);
  });

  it("keeps its retries of a balancer's answers for them: a long run of dropped connections before a 503 does not end the stream", async () => {
    const { team, person } = await createTeamWorld(app.db);
    const owner = await person('OWNER', 'MEMBER');
    const balancer = await startBalancer(['cut', 'drop', 'drop', 'drop', { status: 503 }]);
    const client = createTeamOsClient({ baseUrl: balancer.url, apiKey: owner.key });
    const received: FeedEvent[] = [];
    const reconnections: LiveReconnecting[] = [];
    const ends: unknown[] = [];
    const live = client.live({ teamIds: [team.id], types: ['task.created'], reconnect: { retries: 1, baseDelayMs: 20 }, onEvent: (event) => received.push(event), onReconnecting: (reconnecting) => reconnections.push(reconnecting), onEnd: (end) => ends.push(end) });
    try {
      await waitFor('the stream open', () => live.state === 'open');
      await client.POST('/teams/{teamId}/tasks', { params: { path: { teamId: team.id } }, body: { title: 'Before the loss', ownerId: owner.user.id, dueDate: '2026-11-27' } });
      await waitFor('the stream open again', () => reconnections.length === 5 && live.state === 'open');
    } finally {
      live.close();
      await balancer.close();
    }

    expect(reconnections.map(({ attempt, status }) => [attempt, status])).toEqual([[1, undefined], [2, undefined], [3, undefined], [4, undefined], [5, 503]]);
    expect([balancer.streams.map(({ answered }) => answered), ends]).toEqual([[200, 0, 0, 0, 503, 200], []]);
  });

  it('reconnects at once when the browser says it is online again, instead of waiting out its backoff', async () => {
    const { team, person } = await createTeamWorld(app.db);
    const owner = await person('OWNER', 'MEMBER');
    const balancer = await startBalancer(['cut']);
    // A browser's window, where `online` is told: Node has none of its own.
    const window = new EventTarget();
    const global = globalThis as unknown as Record<string, unknown>;
    Object.assign(global, { addEventListener: window.addEventListener.bind(window), removeEventListener: window.removeEventListener.bind(window) });
    const client = createTeamOsClient({ baseUrl: balancer.url, apiKey: owner.key });
    const received: FeedEvent[] = [];
    const reconnections: LiveReconnecting[] = [];
    // A backoff far longer than the test may wait: only `online` can bring the stream back in time.
    const live = client.live({ teamIds: [team.id], types: ['task.created'], reconnect: { baseDelayMs: 600_000, maxDelayMs: 600_000 }, onEvent: (event) => received.push(event), onReconnecting: (reconnecting) => reconnections.push(reconnecting) });
    try {
      await waitFor('the stream open', () => live.state === 'open');
      await client.POST('/teams/{teamId}/tasks', { params: { path: { teamId: team.id } }, body: { title: 'Before going offline', ownerId: owner.user.id, dueDate: '2026-11-27' } });
      await waitFor('the connection lost', () => live.state === 'reconnecting');
      await client.POST('/teams/{teamId}/tasks', { params: { path: { teamId: team.id } }, body: { title: 'While offline', ownerId: owner.user.id, dueDate: '2026-11-27' } });
      window.dispatchEvent(new Event('online'));
      await waitFor('both events', () => received.length === 2);
    } finally {
      live.close();
      delete global.addEventListener;
      delete global.removeEventListener;
      await balancer.close();
    }

    expect(received.map((event) => (event as FeedEvent & { data: { object: { title: string } } }).data.object.title)).toEqual(['Before going offline', 'While offline']);
    expect(reconnections.map(({ attempt }) => attempt)).toEqual([1]);
    expect(balancer.streams).toHaveLength(2);
  });
});

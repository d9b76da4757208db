/**
 * A frontend page's use of the typed client, bundled by esbuild for test/browser.test.ts and run in
 * headless Chromium on an origin other than the API's. Each function is one thing a page does; it
 * returns plain data (what the page read, what it sent, or the error it got) for the test to check.
 */
import { createTeamOsClient, TeamOsError, unwrap, type FeedEvent } from '@team-os/client';

export interface Api {
  baseUrl: string;
  apiKey: string;
  /**
   * The Prism mock answers the first example of a success unless Prism's `Prefer: code=…` asks for
   * another status; a page never sends it to the server, where it is no header a page may send.
   */
  mock?: boolean;
}

/** A request as the page's fetch sent it. */
export interface Sent {
  method: string;
  url: string;
  idempotencyKey: string | null;
  ifMatch: string | null;
}

/** An error as the page caught it: a TeamOsError's fields, or the TypeError of a blocked fetch. */
export interface Caught {
  name: string;
  message: string;
  status?: number;
  code?: string | undefined;
  requestId?: string | null;
}

export type Outcome<T> = { value: T; sent: Sent[] } | { caught: Caught; sent: Sent[] };

function connect(api: Api, retry?: false) {
  const sent: Sent[] = [];
  const client = createTeamOsClient({
    baseUrl: api.baseUrl,
    apiKey: api.apiKey,
    retry,
    fetch: (request) => {
      sent.push({ method: request.method, url: request.url, idempotencyKey: request.headers.get('idempotency-key'), ifMatch: request.headers.get('if-match') });
      return fetch(request);
    },
  });
  return { client, sent };
}

async function outcome<T>(sent: Sent[], work: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return { value: await work(), sent };
  } catch (error) {
    if (error instanceof TeamOsError) {
      return { caught: { name: error.name, message: error.message, status: error.status, code: error.code, requestId: error.requestId }, sent };
    }
    const { name, message } = error as Error;
    return { caught: { name, message }, sent };
  }
}

const prefer = (api: Api, status: number) => (api.mock ? { Prefer: `code=${status}` } : {});

/** Every task of a team, page by page. */
function listTasks(api: Api, teamId: string, limit: number) {
  const { client, sent } = connect(api);
  return outcome(sent, async () => {
    const titles: string[] = [];
    for await (const task of client.pages('/teams/{teamId}/tasks', { params: { path: { teamId }, query: { limit } } })) titles.push(task.title);
    return titles;
  });
}

/** Creates a task; the client gives the change its Idempotency-Key. */
function createTask(api: Api, teamId: string, task: { title: string; ownerId: string; dueDate: string }) {
  const { client, sent } = connect(api);
  return outcome(sent, async () => unwrap(await client.POST('/teams/{teamId}/tasks', { params: { path: { teamId } }, body: task })));
}

/** Reads a task and completes it with If-Match: the ETag the page read. */
function completeTask(api: Api, id: string) {
  const { client, sent } = connect(api);
  return outcome(sent, async () => {
    const task = unwrap(await client.GET('/tasks/{id}', { params: { path: { id } } }));
    const read = client.etagOf(task);
    const done = unwrap(await client.PATCH('/tasks/{id}', { params: { path: { id }, header: { 'If-Match': read } }, body: { completed: true } }));
    return { read, completed: done.completed, changed: client.etagOf(done) };
  });
}

/** Reads a task, lets it be changed (by someone else, as far as the tag goes), then changes it with the tag it read first. */
function changeStaleTask(api: Api, id: string) {
  const { client, sent } = connect(api);
  return outcome(sent, async () => {
    const task = unwrap(await client.GET('/tasks/{id}', { params: { path: { id } } }));
    const read = client.etagOf(task);
    unwrap(await client.PATCH('/tasks/{id}', { params: { path: { id } }, body: { title: `${task.title} (changed meanwhile)` } }));
    return unwrap(
      await client.PATCH('/tasks/{id}', { params: { path: { id }, header: { 'If-Match': read } }, body: { completed: true }, headers: prefer(api, 412) }),
    );
  });
}

/** Reads `/me` without retrying until the answer is not a success (at most `attempts` times). */
function exhaustRateLimit(api: Api, attempts: number) {
  const { client, sent } = connect(api, false);
  return outcome(sent, async () => {
    for (let attempt = 0; attempt < attempts; attempt += 1) unwrap(await client.GET('/me', { headers: prefer(api, 429) }));
    return attempts;
  });
}

/** Reads `/me`, once: a call the browser blocks would fail the same way again. */
function readMe(api: Api) {
  const { client, sent } = connect(api, false);
  return outcome(sent, async () => unwrap(await client.GET('/me')).user.id);
}

/** Fetches a URL without CORS (as an <img> or <script> would): the answer is opaque, or blocked. */
async function fetchWithoutCors(url: string): Promise<{ type: ResponseType } | { caught: Caught }> {
  try {
    return { type: (await fetch(url, { mode: 'no-cors' })).type };
  } catch (error) {
    const { name, message } = error as Error;
    return { caught: { name, message } };
  }
}

/** What a page's live stream has had so far, each moment as the page's `Date.now()`. */
export interface LiveRecord {
  /** Each connection of the stream: its answer's status, when it came, and the Last-Event-ID it resumed after. */
  connections: { status: number; at: number; lastEventId: string | null }[];
  /** When a connection's body ended (the server closed the stream). */
  closedAt: number[];
  /** Each event as `onEvent` got it, with when. */
  events: { event: FeedEvent; at: number }[];
  /** The stream's end for good (`onEnd`), with when. */
  end: { status: number | undefined; message: string; at: number } | undefined;
}

const lives = new Map<string, LiveRecord>();

/** Opens `client.live` on these teams as a team screen does, recording under `name` what comes; returns once the call is made. */
function live(api: Api, name: string, teamIds: string[]): void {
  const record: LiveRecord = { connections: [], closedAt: [], events: [], end: undefined };
  lives.set(name, record);
  const client = createTeamOsClient({
    baseUrl: api.baseUrl,
    apiKey: api.apiKey,
    fetch: async (request) => {
      const response = await fetch(request);
      if (!new URL(request.url).pathname.endsWith('/events/stream') || !response.body) return response;
      record.connections.push({ status: response.status, at: Date.now(), lastEventId: request.headers.get('last-event-id') });
      // The body passed on as it is, its end noted: the moment the server closed the stream.
      const body = response.body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({ flush: () => void record.closedAt.push(Date.now()) }));
      return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
    },
  });
  client.live({
    teamIds,
    onEvent: (event) => record.events.push({ event, at: Date.now() }),
    onEnd: (end) => (record.end = { ...end, at: Date.now() }),
  });
}

/** What the live stream `name` has had so far. */
function liveRecord(name: string): LiveRecord {
  return lives.get(name)!;
}

export const page = { listTasks, createTask, completeTask, changeStaleTask, exhaustRateLimit, readMe, fetchWithoutCors, live, liveRecord };
export type Page = typeof page;

declare global {
  interface Window {
    teamOs: Page;
  }
}

window.teamOs = page;

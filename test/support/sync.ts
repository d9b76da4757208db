/**
 * What the tests of `client.sync` share: a fetch whose live streams and snapshots the test can cut,
 * and the comparison of a reader's local copy with what fresh reads answer that reader.
 */
import { isDeepStrictEqual } from 'node:util';
import { expect } from 'vitest';
import type { SyncStore } from '../../client/src/index.js';
import type { TestApp } from './testApp.js';

/** A fetch through which the test cuts every open stream at once, or the next snapshot's answer half-way. */
export function cuttableFetch() {
  /** Each open stream's end towards the client, and the request's own body, cancelled with it so that the connection closes. */
  const open = new Map<ReadableStreamDefaultController<Uint8Array>, ReadableStreamDefaultReader<Uint8Array>>();
  const sent: { path: string; lastEventId: string | null; after: string | null }[] = [];
  let cutNextSnapshot = 0;
  let offline = false;
  /** Streams asked for and not yet answered: going offline waits for them, so that none opens behind it. */
  const opening = new Set<Promise<unknown>>();
  const fetch = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const isStream = url.pathname.endsWith('/events/stream');
    const isSnapshot = url.pathname.endsWith('/snapshot');
    if (offline && isStream) throw new TypeError('fetch failed: offline');
    sent.push({ path: url.pathname, lastEventId: request.headers.get('last-event-id'), after: url.searchParams.get('after') });
    const answer = globalThis.fetch(request);
    if (isStream) {
      opening.add(answer);
      void answer.finally(() => opening.delete(answer)).catch(() => undefined);
    }
    const response = await answer;
    if (isSnapshot && cutNextSnapshot > 0 && response.ok) {
      cutNextSnapshot -= 1;
      const text = await response.text();
      // The connection lost half-way: what arrived is no whole answer.
      const half = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(text.slice(0, Math.floor(text.length / 2))));
          controller.error(new TypeError('terminated'));
        },
      });
      return new Response(half, { status: response.status, headers: response.headers });
    }
    if (!isStream || !response.ok || !response.body) return response;
    const reader = response.body.getReader();
    let controllerOf: ReadableStreamDefaultController<Uint8Array> | undefined;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controllerOf = controller;
        open.set(controller, reader);
      },
      async pull(controller) {
        const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true as const }));
        if (!open.has(controller)) return;
        if (done) {
          open.delete(controller);
          return controller.close();
        }
        controller.enqueue(value);
      },
      cancel() {
        open.delete(controllerOf!);
        void reader.cancel();
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
  return {
    fetch,
    sent,
    /** Ends every stream open now, as a lost connection would. */
    cut() {
      for (const [controller, reader] of open) {
        open.delete(controller);
        controller.error(new TypeError('network connection lost'));
        void reader.cancel().catch(() => undefined);
      }
    },
    /**
     * Takes the reader's streams offline: every one open or opening is cut, and none opens until
     * `online()`. What happens meanwhile reaches them only when they are back.
     */
    async offline() {
      offline = true;
      while (opening.size > 0) await Promise.allSettled([...opening]);
      // A stream answered just now registers its body at the next turn.
      await new Promise((next) => setTimeout(next, 0));
      this.cut();
    },
    online() {
      offline = false;
    },
    cutNextSnapshot(times = 1) {
      cutNextSnapshot += times;
    },
  };
}

/** Every item of a list, page after page, as the reader reads it. */
export async function listAll(app: TestApp, path: string, key: string): Promise<any[]> {
  const items: any[] = [];
  let cursor: string | null = null;
  do {
    const separator = path.includes('?') ? '&' : '?';
    const response: { status: number; body: any } = await app.request('GET', `${path}${cursor ? `${separator}cursor=${encodeURIComponent(cursor)}` : ''}`, { key });
    expect(response.status, `GET ${path}`).toBe(200);
    items.push(...response.body.data);
    cursor = response.body.nextCursor;
  } while (cursor !== null);
  return items;
}

/** A meeting's rating window follows the clock and the team's next meeting, moving no revision: it is left out. */
const withoutClock = (record: any) => {
  if (record && typeof record === 'object' && 'ratingWindow' in record) {
    const { ratingWindow: _clock, ...rest } = record;
    return rest;
  }
  return record;
};
const byKey = (key: (record: any) => string) => (a: any, b: any) => key(a).localeCompare(key(b));

/**
 * The reader's copy of a team and what fresh reads answer them, side by side: the team, its members,
 * the open tasks and open issues as the lists answer, each record the copy holds as its own GET
 * answers, the meetings and people reviews as their lists answer. With no access, an empty copy.
 */
export async function views(app: TestApp, store: SyncStore, teamId: string, key: string) {
  const team = await app.request('GET', `/v1/teams/${teamId}`, { key });
  if (team.status !== 200) {
    return {
      held: { state: store.state(teamId), records: (['team', 'member', 'task', 'issue', 'meeting', 'peopleReview'] as const).flatMap((kind) => store.list(kind, teamId)) },
      read: { state: 'noAccess', records: [] },
    };
  }
  const one = async (path: string) => {
    const response = await app.request('GET', path, { key });
    return response.status === 200 ? withoutClock(response.body) : { status: response.status, path };
  };
  const held = {
    team: store.team(teamId),
    members: [...store.members(teamId)].sort(byKey((member) => member.userId)),
    openTasks: store.openTasks(teamId).map((task) => task.id),
    openIssues: store.openIssues(teamId).map((issue) => issue.id),
    tasks: [...store.list('task', teamId)].sort(byKey((task) => task.id)),
    issues: [...store.list('issue', teamId)].sort(byKey((issue) => issue.id)),
    meetings: store
      .list('meeting', teamId)
      .map(withoutClock)
      .sort(byKey((meeting) => meeting.id)),
    peopleReviews: [...store.list('peopleReview', teamId)].sort(byKey((review) => review.id)),
  };
  const read = {
    team: team.body,
    members: (await listAll(app, `/v1/teams/${teamId}/members`, key)).sort(byKey((member) => member.userId)),
    openTasks: (await listAll(app, `/v1/teams/${teamId}/tasks?completed=false`, key)).map((task) => task.id),
    openIssues: [...(await listAll(app, `/v1/teams/${teamId}/issues?status=OPEN`, key)), ...(await listAll(app, `/v1/teams/${teamId}/issues?status=SOLVING`, key))].map((issue) => issue.id),
    tasks: await Promise.all(held.tasks.map((task) => one(`/v1/tasks/${task.id}`))),
    issues: await Promise.all(held.issues.map((issue) => one(`/v1/issues/${issue.id}`))),
    meetings: (await Promise.all((await listAll(app, `/v1/teams/${teamId}/meetings`, key)).map((meeting) => one(`/v1/meetings/${meeting.id}`)))).sort(byKey((meeting) => meeting.id)),
    peopleReviews: (await listAll(app, `/v1/teams/${teamId}/people-reviews`, key)).sort(byKey((review) => review.id)),
  };
  return { held, read };
}

/** Waits until the reader's copy equals what fresh reads answer them; at the end, shows the difference. */
export async function expectConverged(app: TestApp, store: SyncStore, teamId: string, key: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { held, read } = await views(app, store, teamId, key);
    if (isDeepStrictEqual(held, read)) return;
    if (Date.now() > deadline) return void expect(held).toEqual(read);
    await new Promise((next) => setTimeout(next, 100));
  }
}

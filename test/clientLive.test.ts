/**
 * The typed client's `live` (issue 38, item 4) against the real app over HTTP: events typed by the
 * union as they happen, the key in `Authorization` (never in the URL), a lost connection resumed with
 * `Last-Event-ID` with nothing lost or repeated, and a refusal reported once, without reconnecting.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTeamOsClient, type FeedEvent } from '../client/src/index.js';
import { databaseLabel } from './support/database.js';
import { createTeamWorld } from './support/factories.js';
import { waitFor } from './support/processes.js';
import { startTestApp, type TestApp } from './support/testApp.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ webhooks: { allowPrivateTargets: true, deliver: { pollMs: 100 } } });
});
afterAll(() => app.close());

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

  it('reports a refusal once with its status and does not reconnect', async () => {
    const { person } = await createTeamWorld(app.db);
    const owner = await person('OWNER');
    const { fetch, requests } = cuttingFetch();
    const client = createTeamOsClient({ baseUrl: `${app.url}/v1`, apiKey: owner.key, fetch, retry: false });
    const ends: { status: number | undefined }[] = [];
    client.live({ teamIds: [randomUUID()], onEvent: () => undefined, onEnd: (end) => ends.push(end) });
    await waitFor('the refusal reported', () => ends.length === 1);
    expect([ends[0]!.status, requests.length]).toEqual([404, 1]);
  });
});

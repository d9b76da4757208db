import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createTeamOsClient, TeamOsError, type EventsOptions } from '../../client/src/index.js';

/**
 * A feed server in memory, answered by a fake fetch: the log is a list of event ids (append to it to
 * make events), pages of `limit` (2 unless asked) with the index of the next event as the cursor,
 * and 410 eventsExpired for an `after` the log does not hold. Each request is kept with the fake
 * clock's time, in ms from the start of the test.
 */
function fakeFeed(...ids: string[]) {
  const log = [...ids];
  const startedAt = Date.now();
  const requests: { at: number; search: string; query: URLSearchParams }[] = [];
  const answer = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  const fetch = async (request: Request) => {
    const { search, searchParams: query } = new URL(request.url);
    requests.push({ at: Date.now() - startedAt, search: search.slice(1), query });
    const limit = Number(query.get('limit') ?? 2);
    const after = query.get('after');
    const cursor = query.get('cursor');
    const start = cursor !== null ? Number(cursor) : after !== null ? log.indexOf(after) + 1 : 0;
    if (cursor === null && after !== null && start === 0) return answer(410, { error: { code: 'eventsExpired', message: 'The event log no longer reaches back to this event.' } });
    const data = log.slice(start, start + limit).map(event);
    return answer(200, { data, nextCursor: start + limit < log.length ? String(start + limit) : null });
  };
  const client = createTeamOsClient({ baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'ak_test', retry: false, fetch });
  return { log, requests, client, times: () => requests.map((request) => request.at) };
}

const event = (id: string) => ({
  id,
  type: 'task.deleted',
  timestamp: '2026-11-26T08:00:00.000Z',
  data: { orgId: '0a0a0000-0000-4000-8000-000000000001', teamId: '0c0c0000-0000-4000-8000-000000000001', object: { id: '0d0d0000-0000-4000-8000-000000000001' } },
});

/** Reads the feed in the background into `ids`, until its signal stops it; `ended` is how it ended. */
function consume(feed: ReturnType<typeof fakeFeed>, options: EventsOptions = {}) {
  const controller = new AbortController();
  const ids: string[] = [];
  const ended = (async () => {
    try {
      for await (const item of feed.client.events('0a0a0000-0000-4000-8000-000000000001', { signal: controller.signal, ...options })) ids.push(item.id);
      return 'returned';
    } catch (error) {
      return error;
    }
  })();
  return { ids, ended, stop: () => controller.abort() };
}

const collect = async <T>(items: AsyncIterable<T>): Promise<T[]> => {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
};

describe('the event feed without follow', () => {
  it('reads the log oldest first, following nextCursor page after page, and ends at its end', async () => {
    const feed = fakeFeed('e1', 'e2', 'e3', 'e4', 'e5');

    const events = await collect(feed.client.events('0a0a0000-0000-4000-8000-000000000001'));

    expect(events.map((item) => item.id)).toEqual(['e1', 'e2', 'e3', 'e4', 'e5']);
    expect(feed.requests.map((request) => request.search)).toEqual(['', 'cursor=2', 'cursor=4']);
  });

  it('starts right after `after`, and sends the types comma separated with teamId and limit', async () => {
    const feed = fakeFeed('e1', 'e2', 'e3');

    const events = await collect(
      feed.client.events('0a0a0000-0000-4000-8000-000000000001', { after: 'e1', types: ['task.deleted', 'task.updated'], teamId: 't1', limit: 5 }),
    );

    expect(events.map((item) => item.id)).toEqual(['e2', 'e3']);
    expect(feed.requests.map((request) => request.search)).toEqual(['after=e1&types=task.deleted,task.updated&teamId=t1&limit=5']);
  });

  it('throws TeamOsError eventsExpired for an `after` the log no longer holds', async () => {
    const feed = fakeFeed('e2');

    const failure = collect(feed.client.events('0a0a0000-0000-4000-8000-000000000001', { after: 'e1' }));

    await expect(failure).rejects.toBeInstanceOf(TeamOsError);
    await expect(failure).rejects.toMatchObject({ status: 410, code: 'eventsExpired' });
  });

  it('throws when the server answers a cursor it already gave, instead of repeating pages', async () => {
    const client = createTeamOsClient({
      baseUrl: 'http://127.0.0.1:9/v1',
      retry: false,
      fetch: async () => new Response(JSON.stringify({ data: [event('e1')], nextCursor: 'same' }), { headers: { 'content-type': 'application/json' } }),
    });

    await expect(collect(client.events('0a0a0000-0000-4000-8000-000000000001'))).rejects.toThrow('a cursor already followed (same)');
  });

  it('refuses an empty list of types, which the server would read as every type', async () => {
    const feed = fakeFeed('e1');

    await expect(collect(feed.client.events('0a0a0000-0000-4000-8000-000000000001', { types: [] }))).rejects.toThrow(TypeError);
    expect(feed.requests).toEqual([]);
  });
});

describe('the event feed with follow (on a fake clock)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('polls again at the end of the log after 1 s, doubling the wait up to 30 s while nothing comes, each time after the last event given', async () => {
    const feed = fakeFeed('e1');
    const reader = consume(feed, { follow: true });

    await vi.advanceTimersByTimeAsync(100_000);

    expect(reader.ids).toEqual(['e1']);
    expect(feed.times()).toEqual([0, 1_000, 3_000, 7_000, 15_000, 31_000, 61_000, 91_000]);
    expect(feed.requests.slice(1).every((request) => request.query.get('after') === 'e1')).toBe(true);
    reader.stop();
    await reader.ended;
  });

  it('goes back to a 1 s wait when events arrive, and gives them in order', async () => {
    const feed = fakeFeed();
    const reader = consume(feed, { follow: true, limit: 2 });
    await vi.advanceTimersByTimeAsync(10_000);
    feed.log.push('e1', 'e2', 'e3');

    await vi.advanceTimersByTimeAsync(10_000);

    expect(reader.ids).toEqual(['e1', 'e2', 'e3']);
    // Empty polls at 0, 1 and 3 s; at 7 s nothing yet; at 15 s the events (two pages), then 1 s and 2 s waits.
    expect(feed.times()).toEqual([0, 1_000, 3_000, 7_000, 15_000, 15_000, 16_000, 18_000]);
    expect(feed.requests.slice(6).every((request) => request.query.get('after') === 'e3')).toBe(true);
    reader.stop();
    await reader.ended;
  });

  it('takes its own first and longest waits', async () => {
    const feed = fakeFeed();
    const reader = consume(feed, { follow: { initialDelayMs: 100, maxDelayMs: 250 } });

    await vi.advanceTimersByTimeAsync(1_000);

    expect(feed.times()).toEqual([0, 100, 300, 550, 800]);
    reader.stop();
    await reader.ended;
  });

  it('stops when the loop is left: no request is sent after it', async () => {
    const feed = fakeFeed('e1', 'e2');
    const seen: string[] = [];

    for await (const item of feed.client.events('0a0a0000-0000-4000-8000-000000000001', { follow: true })) {
      seen.push(item.id);
      break;
    }
    await vi.advanceTimersByTimeAsync(100_000);

    expect(seen).toEqual(['e1']);
    expect(feed.requests).toHaveLength(1);
  });

  it("stops on abort in the middle of a wait: the iteration throws the signal's reason, and no request follows", async () => {
    const feed = fakeFeed('e1');
    const reader = consume(feed, { follow: true });
    await vi.advanceTimersByTimeAsync(500);

    reader.stop();
    const ended = await reader.ended;
    await vi.advanceTimersByTimeAsync(100_000);

    expect(ended).toMatchObject({ name: 'AbortError' });
    expect(feed.requests).toHaveLength(1);
  });

  it("stops on abort in the middle of a request: the iteration throws the signal's reason", async () => {
    const requests: Request[] = [];
    const hanging = (request: Request) =>
      new Promise<Response>((_answer, fail) => {
        requests.push(request);
        request.signal.addEventListener('abort', () => fail(request.signal.reason));
      });
    const client = createTeamOsClient({ baseUrl: 'http://127.0.0.1:9/v1', retry: false, fetch: hanging });
    const controller = new AbortController();
    const reading = collect(client.events('0a0a0000-0000-4000-8000-000000000001', { follow: true, signal: controller.signal }));
    await vi.waitFor(() => expect(requests).toHaveLength(1));

    controller.abort();

    await expect(reading).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('throws a failed poll as TeamOsError instead of polling on', async () => {
    const feed = fakeFeed('e1');
    const reader = consume(feed, { follow: true });
    await vi.advanceTimersByTimeAsync(500);
    feed.log.splice(0, 1, 'e2');

    await vi.advanceTimersByTimeAsync(100_000);

    const ended = await reader.ended;
    expect(ended).toBeInstanceOf(TeamOsError);
    expect(ended).toMatchObject({ status: 410, code: 'eventsExpired' });
    expect(feed.times()).toEqual([0, 1_000]);
  });

  it('refuses waits that are not positive or whose longest is shorter than the first', async () => {
    const feed = fakeFeed('e1');
    for (const follow of [{ initialDelayMs: 0 }, { initialDelayMs: 2_000, maxDelayMs: 1_000 }]) {
      await expect(collect(feed.client.events('0a0a0000-0000-4000-8000-000000000001', { follow }))).rejects.toThrow(RangeError);
    }
    expect(feed.requests).toEqual([]);
  });
});

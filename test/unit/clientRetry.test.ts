import { webcrypto } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { rateLimitResetMs, retryAfterMs, retryDelayMs, retryingFetch } from '../../client/src/retry.js';

/** A `send` that answers from a script, one entry per attempt, and keeps what it was sent. */
function scripted(...answers: (Response | Error)[]) {
  const sent: { method: string; key: string | null; body: string }[] = [];
  const send = async (request: Request) => {
    sent.push({ method: request.method, key: request.headers.get('idempotency-key'), body: await request.text() });
    const answer = answers.shift() ?? new Response('{}', { status: 200 });
    if (answer instanceof Error) throw answer;
    return answer;
  };
  return { send, sent };
}

const status = (code: number, headers: Record<string, string> = {}, body = '{}') => new Response(body, { status: code, headers });
const post = () => new Request('http://127.0.0.1/v1/teams/t/tasks', { method: 'POST', body: '{"title":"Book the Rotterdam slot"}' });
const fast = { baseDelayMs: 1 };

describe('Retry-After and RateLimit', () => {
  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(retryAfterMs('18')).toBe(18_000);
    expect(retryAfterMs('Wed, 25 Nov 2026 10:00:30 GMT', Date.parse('2026-11-25T10:00:00Z'))).toBe(30_000);
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs(null)).toBeUndefined();
  });

  it('reads the reset of a spent RateLimit budget, and nothing while budget remains', () => {
    expect(rateLimitResetMs('limit=120, remaining=0, reset=42')).toBe(42_000);
    expect(rateLimitResetMs('limit=120, remaining=3, reset=42')).toBeUndefined();
    expect(rateLimitResetMs(null)).toBeUndefined();
  });

  it('waits what the answer asks for, spread by less than a second, else backs off exponentially with full jitter', () => {
    expect(retryDelayMs(status(429, { 'retry-after': '2' }), 0, 500, () => 0.999)).toBe(2_499);
    expect(retryDelayMs(status(429, { ratelimit: 'limit=2, remaining=0, reset=5' }), 0, 500, () => 0)).toBe(5_000);
    expect(retryDelayMs(undefined, 0, 500, () => 0.999)).toBe(499);
    expect(retryDelayMs(undefined, 3, 500, () => 0.999)).toBe(3_996);
  });
});

describe('safe retries', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('gives a change an Idempotency-Key and sends the same key and body on every attempt', async () => {
    const { send, sent } = scripted(new TypeError('fetch failed'), status(503));
    const response = await retryingFetch(send, fast)(post());
    expect(response.status).toBe(200);
    expect(sent).toHaveLength(3);
    expect(new Set(sent.map((attempt) => attempt.key)).size).toBe(1);
    expect(sent[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(sent.every((attempt) => attempt.body === '{"title":"Book the Rotterdam slot"}')).toBe(true);
  });

  it('makes a version 4 UUID from getRandomValues where crypto.randomUUID is missing (a page on plain http)', async () => {
    vi.stubGlobal('crypto', { getRandomValues: <T extends ArrayBufferView>(array: T) => webcrypto.getRandomValues(array as never) as T });
    const { send, sent } = scripted();
    await retryingFetch(send, fast)(post());
    await retryingFetch(send, fast)(post());
    expect(sent[0]!.key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(sent[1]!.key).not.toBe(sent[0]!.key);
  });

  it("keeps the caller's own Idempotency-Key", async () => {
    const { send, sent } = scripted();
    const request = post();
    request.headers.set('Idempotency-Key', 'order-2026-11-25-17');
    await retryingFetch(send, fast)(request);
    expect(sent[0]!.key).toBe('order-2026-11-25-17');
  });

  it('sends a change without a key once, whatever the answer', async () => {
    const { send, sent } = scripted(status(503));
    expect((await retryingFetch(send, { ...fast, idempotencyKeys: false })(post())).status).toBe(503);
    expect(sent).toHaveLength(1);
    const failing = scripted(new TypeError('fetch failed'));
    await expect(retryingFetch(failing.send, { ...fast, idempotencyKeys: false })(post())).rejects.toThrow('fetch failed');
    expect(failing.sent).toHaveLength(1);
  });

  it('retries a read a bounded number of times and then returns the last answer', async () => {
    const { send, sent } = scripted(status(503), status(503), status(503));
    const response = await retryingFetch(send, { ...fast, retries: 2 })(new Request('http://127.0.0.1/v1/me'));
    expect(response.status).toBe(503);
    expect(sent).toHaveLength(3);
    expect(sent[0]!.key).toBeNull();
  });

  it('retries 409 idempotencyKeyInUse but no other 409', async () => {
    const inUse = scripted(status(409, {}, '{"error":{"code":"idempotencyKeyInUse","message":"…"}}'), status(201));
    expect((await retryingFetch(inUse.send, fast)(post())).status).toBe(201);
    const suspended = scripted(status(409, {}, '{"error":{"code":"orgSuspended","message":"…"}}'));
    expect((await retryingFetch(suspended.send, fast)(post())).status).toBe(409);
    expect(suspended.sent).toHaveLength(1);
  });

  it('returns a 429 at once when it asks for a longer wait than allowed', async () => {
    const { send, sent } = scripted(status(429, { 'retry-after': '45' }));
    expect((await retryingFetch(send, { ...fast, maxDelayMs: 10_000 })(post())).status).toBe(429);
    expect(sent).toHaveLength(1);
  });

  it('retries nothing else: a 500, a 400 or a 412 is answered as it came', async () => {
    for (const code of [500, 400, 412]) {
      const { send, sent } = scripted(status(code));
      expect((await retryingFetch(send, fast)(post())).status).toBe(code);
      expect(sent).toHaveLength(1);
    }
  });
});

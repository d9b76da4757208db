import { describe, expect, it } from 'vitest';
import { afterAttempt, failingLimitMs, maxAttempts, resultOfStatus, retryAfterMsOf, retryDelaysMs } from '../../src/rules/webhookDelivery.js';

const now = new Date('2026-11-24T12:00:00.000Z');
const at = (ms: number) => new Date(now.getTime() + ms);
const failed = { kind: 'failed' } as const;

describe('which answers deliver', () => {
  it('only 2xx delivers; 410 is gone; 3xx, 4xx and 5xx are failures', () => {
    expect([200, 202, 204, 299].map((status) => resultOfStatus(status, undefined, now).kind)).toEqual(['delivered', 'delivered', 'delivered', 'delivered']);
    expect(resultOfStatus(410, undefined, now)).toEqual({ kind: 'gone' });
    expect([301, 307, 400, 404, 500].map((status) => resultOfStatus(status, undefined, now))).toEqual(Array(5).fill(failed));
  });

  it('Retry-After counts on 429 and 503 only', () => {
    expect(resultOfStatus(429, '30', now)).toEqual({ kind: 'failed', retryAfterMs: 30_000 });
    expect(resultOfStatus(503, '30', now)).toEqual({ kind: 'failed', retryAfterMs: 30_000 });
    expect(resultOfStatus(500, '30', now)).toEqual(failed);
  });
});

describe('Retry-After', () => {
  it('reads delay-seconds and HTTP dates, and ignores anything else', () => {
    expect(retryAfterMsOf('120', now)).toBe(120_000);
    expect(retryAfterMsOf('Tue, 24 Nov 2026 12:01:00 GMT', now)).toBe(60_000);
    expect(retryAfterMsOf('Tue, 24 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(retryAfterMsOf('-5', now)).toBeUndefined();
    expect(retryAfterMsOf('1.5', now)).toBeUndefined();
    expect(retryAfterMsOf('soon', now)).toBeUndefined();
    expect(retryAfterMsOf(undefined, now)).toBeUndefined();
  });

  it('never holds a delivery back longer than a day', () => {
    expect(retryAfterMsOf('999999999', now)).toBe(24 * 60 * 60 * 1000);
  });
});

describe('the retry schedule', () => {
  it('retries after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h, each within ±10 %', () => {
    const minutes = retryDelaysMs.map((ms) => ms / 60_000);
    expect(minutes).toEqual([5 / 60, 5, 30, 120, 300, 600, 840, 1200, 1440]);
    for (const [index, delay] of retryDelaysMs.entries()) {
      const low = afterAttempt(index + 1, failed, now, now, () => 0).nextAttemptAt!.getTime() - now.getTime();
      const high = afterAttempt(index + 1, failed, now, now, () => 0.999_999).nextAttemptAt!.getTime() - now.getTime();
      expect(low).toBe(Math.round(delay * 0.9));
      expect(high).toBeLessThanOrEqual(Math.round(delay * 1.1));
      expect(high).toBeGreaterThan(delay);
    }
  });

  it('gives a delivery up after the last retry', () => {
    expect(afterAttempt(maxAttempts, failed, now, now)).toMatchObject({ state: 'FAILED', nextAttemptAt: null });
    expect(afterAttempt(maxAttempts - 1, failed, now, now).state).toBe('PENDING');
  });

  it('waits as long as Retry-After asks when that is longer than the schedule, never shorter', () => {
    expect(afterAttempt(1, { kind: 'failed', retryAfterMs: 60_000 }, null, now, () => 0.5).nextAttemptAt).toEqual(at(60_000));
    expect(afterAttempt(2, { kind: 'failed', retryAfterMs: 1_000 }, null, now, () => 0.5).nextAttemptAt).toEqual(at(300_000));
  });
});

describe('the failure streak', () => {
  it('starts at the first failure and ends with a success', () => {
    expect(afterAttempt(1, failed, null, now).failingSince).toEqual(now);
    expect(afterAttempt(2, failed, at(-1000), now).failingSince).toEqual(at(-1000));
    expect(afterAttempt(2, { kind: 'delivered' }, at(-1000), now)).toEqual({ state: 'DELIVERED', nextAttemptAt: null, failingSince: null });
  });

  it('disables the subscription after 5 days of nothing but failures, and at once on 410', () => {
    expect(afterAttempt(3, failed, at(-failingLimitMs + 1), now).disableReason).toBeUndefined();
    expect(afterAttempt(3, failed, at(-failingLimitMs), now)).toMatchObject({ state: 'FAILED', disableReason: 'Every delivery failed for 5 days.' });
    expect(afterAttempt(1, { kind: 'gone' }, null, now)).toMatchObject({ state: 'FAILED', disableReason: 'The endpoint answered 410 Gone.' });
  });
});

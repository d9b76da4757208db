/**
 * When a webhook delivery is tried again, given up, or its subscription disabled: the schedule of
 * Standard Webhooks (retries after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h, each
 * ±10 % so that the retries of one outage do not all arrive at once), `Retry-After` on 429 and 503,
 * 410 Gone, and five days of nothing but failures.
 */

const second = 1000;
const minute = 60 * second;
const hour = 60 * minute;

/** The wait before retry n (n = 1 after the first failed attempt). */
export const retryDelaysMs = [5 * second, 5 * minute, 30 * minute, 2 * hour, 5 * hour, 10 * hour, 14 * hour, 20 * hour, 24 * hour] as const;

/** Every delivery gets one attempt plus the retries of the schedule. */
export const maxAttempts = retryDelaysMs.length + 1;

/** A subscription whose every attempt has failed for this long is disabled. */
export const failingLimitMs = 5 * 24 * hour;

/** How long the event log keeps an event, with its deliveries and attempts, unless EVENTS_RETENTION_DAYS says otherwise. */
export const defaultEventRetentionDays = 30;

/** A receiver's Retry-After never holds a delivery back longer than the longest step of the schedule. */
const longestRetryAfterMs = 24 * hour;

const jitter = 0.1;

export type AttemptResult =
  | { kind: 'delivered' }
  /** The receiver answered 410 Gone: it wants no more deliveries. */
  | { kind: 'gone' }
  /** Any other answer, or none; `retryAfterMs` from a 429 or 503 that said how long to wait. */
  | { kind: 'failed'; retryAfterMs?: number };

export interface AttemptOutcome {
  state: 'PENDING' | 'DELIVERED' | 'FAILED';
  /** When to try again (state PENDING), else null. */
  nextAttemptAt: Date | null;
  /** Set when the subscription must be disabled, with the reason it shows. */
  disableReason?: string;
  /** The first failure since the last success, as it now stands (null after a success). */
  failingSince: Date | null;
}

/** The classification of an HTTP answer: only 2xx delivers. */
export function resultOfStatus(status: number, retryAfter: string | undefined, now: Date): AttemptResult {
  if (status >= 200 && status < 300) return { kind: 'delivered' };
  if (status === 410) return { kind: 'gone' };
  const retryAfterMs = status === 429 || status === 503 ? retryAfterMsOf(retryAfter, now) : undefined;
  return retryAfterMs === undefined ? { kind: 'failed' } : { kind: 'failed', retryAfterMs };
}

/** `Retry-After` as delay-seconds or an HTTP date (RFC 9110 §10.2.3); undefined when absent or unreadable. */
export function retryAfterMsOf(header: string | undefined, now: Date): number | undefined {
  if (header === undefined) return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Math.min(Number(text) * second, longestRetryAfterMs);
  const at = Date.parse(text);
  if (Number.isNaN(at) || !/[a-z]/i.test(text)) return undefined;
  return Math.min(Math.max(at - now.getTime(), 0), longestRetryAfterMs);
}

/**
 * What follows attempt number `attempt` (1 for the first) of a delivery: delivered, retried later,
 * or given up — and whether the subscription is now to be disabled. `random` is in [0, 1).
 */
export function afterAttempt(
  attempt: number,
  result: AttemptResult,
  failingSince: Date | null,
  now: Date,
  random: () => number = Math.random,
): AttemptOutcome {
  if (result.kind === 'delivered') return { state: 'DELIVERED', nextAttemptAt: null, failingSince: null };
  const since = failingSince ?? now;
  if (result.kind === 'gone') {
    return { state: 'FAILED', nextAttemptAt: null, failingSince: since, disableReason: 'The endpoint answered 410 Gone.' };
  }
  if (now.getTime() - since.getTime() >= failingLimitMs) {
    return { state: 'FAILED', nextAttemptAt: null, failingSince: since, disableReason: 'Every delivery failed for 5 days.' };
  }
  if (attempt >= maxAttempts) return { state: 'FAILED', nextAttemptAt: null, failingSince: since };
  const scheduled = retryDelaysMs[attempt - 1]! * (1 - jitter + 2 * jitter * random());
  const delay = Math.max(scheduled, result.retryAfterMs ?? 0);
  return { state: 'PENDING', nextAttemptAt: new Date(now.getTime() + Math.round(delay)), failingSince: since };
}

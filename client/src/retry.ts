/**
 * Safe retries, as a `fetch` for openapi-fetch: every changing request carries an `Idempotency-Key`
 * (so the server answers a repeat with the first outcome instead of changing twice), and only
 * requests that are safe to repeat — reads, and changes with a key — are sent again after a network
 * error, a 429, a 503 or a 409 `idempotencyKeyInUse`, a bounded number of times.
 */

export interface RetryOptions {
  /** Attempts after the first; 0 turns retrying off. Default 3. */
  retries?: number;
  /** The first backoff, doubled on each retry, with full jitter. Default 500 ms. */
  baseDelayMs?: number;
  /** No wait is longer: an answer that asks for more (a `Retry-After` of a minute) is returned as it is. Default 60 s. */
  maxDelayMs?: number;
  /** Give every changing request without an `Idempotency-Key` a new random one. Default true. */
  idempotencyKeys?: boolean;
}

const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS']);
const retriedStatuses = new Set([429, 503]);

/** Milliseconds until `Retry-After` (delay-seconds or an HTTP date) allows another attempt, if it says. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Milliseconds until the budget of a `RateLimit: limit=…, remaining=0, reset=…` header renews, if spent. */
export function rateLimitResetMs(value: string | null): number | undefined {
  if (value === null) return undefined;
  const fields = new Map(value.split(',').map((part): [string, string] => {
    const [name = '', field = ''] = part.trim().split('=', 2);
    return [name, field];
  }));
  const remaining = Number(fields.get('remaining'));
  const reset = Number(fields.get('reset'));
  return remaining === 0 && Number.isFinite(reset) ? reset * 1000 : undefined;
}

/** The wait before retry number `retry` (0 for the first): what the answer asks for, else backoff with full jitter. */
export function retryDelayMs(response: Response | undefined, retry: number, baseDelayMs: number, random = Math.random): number {
  const asked = response && (retryAfterMs(response.headers.get('retry-after')) ?? rateLimitResetMs(response.headers.get('ratelimit')));
  // Clients told the same instant spread out a little, so a renewed budget is not spent by a stampede.
  if (asked !== undefined) return asked + Math.floor(random() * Math.min(1000, baseDelayMs));
  return Math.floor(random() * baseDelayMs * 2 ** retry);
}

async function isKeyInUse(response: Response): Promise<boolean> {
  if (response.status !== 409) return false;
  try {
    const body = (await response.clone().json()) as { error?: { code?: unknown } };
    return body.error?.code === 'idempotencyKeyInUse';
  } catch {
    return false;
  }
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it is aborted. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((done, fail) => {
    if (signal?.aborted) return fail(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      fail(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      done();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * A new key. `crypto.randomUUID` exists only in secure contexts (https, localhost), so a page served
 * over plain http elsewhere (a mock on the local network) gets a version 4 UUID made from
 * `getRandomValues`, which exists everywhere.
 */
function newKey(): string {
  const { crypto } = globalThis;
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function retryingFetch(send: (request: Request) => Promise<Response>, options: RetryOptions = {}): (request: Request) => Promise<Response> {
  const { retries = 3, baseDelayMs = 500, maxDelayMs = 60_000, idempotencyKeys = true } = options;
  return async (request) => {
    const changing = !safeMethods.has(request.method.toUpperCase());
    if (changing && idempotencyKeys && !request.headers.has('idempotency-key')) request.headers.set('Idempotency-Key', newKey());
    // A change without a key could be applied twice: it is sent once, whatever happens.
    const repeatable = !changing || request.headers.has('idempotency-key');
    for (let retry = 0; ; retry += 1) {
      const last = !repeatable || retry >= retries;
      let response: Response;
      try {
        // The body of a request can be read once: every attempt but the last sends a copy.
        response = await send(last ? request : request.clone());
      } catch (error) {
        if (last || request.signal.aborted) throw error;
        await sleep(retryDelayMs(undefined, retry, baseDelayMs), request.signal);
        continue;
      }
      if (last || !(retriedStatuses.has(response.status) || (await isKeyInUse(response)))) return response;
      const wait = retryDelayMs(response, retry, baseDelayMs);
      if (wait > maxDelayMs) return response;
      await response.body?.cancel();
      await sleep(wait, request.signal);
    }
  };
}

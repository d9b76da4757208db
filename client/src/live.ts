/**
 * The live stream (`GET /events/stream`) in browsers and Node, over the `eventsource` package with a
 * fetch of its own: the key travels in `Authorization`, never in the URL (a browser's built-in
 * `EventSource` cannot send it). The package reads the stream; the reconnections are made here, so
 * that one rule covers them all: a lost connection and a balancer's 502, 503 or 504 (an instance
 * restarting behind it) are retried with backoff and jitter, with `Last-Event-ID`, so the stream
 * resumes after the last event delivered, with nothing lost or repeated; a refusal (401, 403, 404,
 * 410, 429) ends it and is reported with the API's error code and request id.
 */
import { EventSource } from 'eventsource';
import { TeamOsError, type ErrorCode } from './errors.js';
import type { FeedEvent, FeedEventOf, FeedEventType } from './events.js';
import { retryAfterMs } from './retry.js';

/** `connecting` until first open; `reconnecting` between a loss and the next open; `closed` for good. */
export type LiveState = 'connecting' | 'open' | 'reconnecting' | 'closed';

/** A reconnection about to be attempted. */
export interface LiveReconnecting {
  /** 1 for the first attempt since the stream was last open. */
  attempt: number;
  /** The wait before it: backoff with jitter, or what the answer's `Retry-After` asked. */
  delayMs: number;
  /** Why: the connection was lost (the network's message), or the status of the answer (`503 Service Unavailable`). */
  reason: string;
  /** The status of the answer that is retried; undefined after a lost connection. */
  status: number | undefined;
}

/** Why the stream ended for good, with the same fields as a `TeamOsError`. */
export interface LiveEnd {
  /** The answer's status: 401, 403, 404, 410, 429, or a 502, 503 or 504 still given after the retries. */
  status: number | undefined;
  /** The reference's error code; undefined when the answer was not the API's (a balancer's page). */
  code: ErrorCode | undefined;
  message: string;
  /** `X-Request-Id` of the answer, to quote when reporting a problem. */
  requestId: string | null;
}

export interface LiveReconnectOptions {
  /** Attempts after a 502, 503 or 504 since the stream was last open before it ends; a lost connection is always retried. Default 10. */
  retries?: number;
  /** The first backoff, doubled on each attempt, with full jitter. Default 1 s. */
  baseDelayMs?: number;
  /** No backoff is longer; a `Retry-After` asking for more ends the stream. Default 30 s. */
  maxDelayMs?: number;
}

export interface LiveOptions<Type extends FeedEventType = FeedEventType> {
  /** Only events of these teams; every team and organization the caller may read unless given. */
  teamIds?: readonly string[];
  /** Only events of these types; the events are then typed as these. */
  types?: readonly Type[];
  /** Each event, in the feed's order, as the caller may see it. */
  onEvent: (event: FeedEventOf<Type>) => void;
  /** The stream is open: first, and again after each reconnection. */
  onOpen?: () => void;
  /** The connection was lost or answered 502, 503 or 504: the stream reconnects after `delayMs`. */
  onReconnecting?: (reconnecting: LiveReconnecting) => void;
  /**
   * The stream ended for good: the server refused it (`status`: 401 a key that no longer works, 403 or
   * 404 a team not readable, 410 `after` no longer kept, 429 too many streams) or a 502, 503 or 504
   * outlasted the retries. Not called after `close()` or `signal`.
   */
  onEnd?: (end: LiveEnd) => void;
  /** The id of the last event processed: the stream first sends every event after it. */
  after?: string;
  /** Closes the stream. */
  signal?: AbortSignal;
  reconnect?: LiveReconnectOptions;
}

export interface LiveStream {
  /** The id of the last event delivered: pass it as `after` to resume later. */
  readonly lastEventId: string | undefined;
  readonly state: LiveState;
  close(): void;
}

type Fetch = (request: Request) => Promise<Response>;

/** What a balancer answers while the instances behind it restart: worth another attempt. */
const gatewayStatuses = new Set([502, 503, 504]);

/** Opens the stream at `url` (`…/v1/events/stream` with its query), sending each request through `send`. */
export function openLive<Type extends FeedEventType>(url: URL, headers: Record<string, string>, send: Fetch, options: LiveOptions<Type>): LiveStream {
  if (options.teamIds?.length) url.searchParams.set('teamId', options.teamIds.join(','));
  if (options.types?.length) url.searchParams.set('types', options.types.join(','));
  if (options.after) url.searchParams.set('after', options.after);
  const { retries = 10, baseDelayMs = 1_000, maxDelayMs = 30_000 } = options.reconnect ?? {};
  let lastEventId: string | undefined = options.after;
  // Only an event delivered is resumed after with `Last-Event-ID`: until then the URL's `after` (an
  // event id or a log position) says where the stream starts, on every connection.
  let delivered = false;
  let state: LiveState = 'connecting';
  let attempt = 0;
  // Counted apart: a long outage of lost connections must not spend the retries of the balancer's answers.
  let gatewayAnswers = 0;
  let source: EventSource | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;

  // Every event type is a message of its own name: the stream's messages are taken where the package
  // dispatches them, whatever their name, instead of listening to a list of names that could age.
  class Source extends EventSource {
    override dispatchEvent(event: Event): boolean {
      if (event instanceof MessageEvent && event.type !== 'open' && event.type !== 'error') {
        if (event.lastEventId) {
          lastEventId = event.lastEventId;
          delivered = true;
        }
        options.onEvent(JSON.parse(event.data as string) as FeedEventOf<Type>);
      }
      return super.dispatchEvent(event);
    }
  }

  const end = (ended: LiveEnd) => {
    state = 'closed';
    events.removeEventListener?.('online', online);
    options.onEnd?.(ended);
  };
  const reconnect = (delayMs: number, reason: string, status: number | undefined) => {
    attempt += 1;
    state = 'reconnecting';
    options.onReconnecting?.({ attempt, delayMs, reason, status });
    timer = setTimeout(connect, delayMs);
  };
  // A browser that says it is back online: the wait of a reconnection is cut short, since after a
  // long time offline it may have grown to `maxDelayMs` for a network that is there again now.
  const online = () => {
    if (timer === undefined || state !== 'reconnecting') return;
    clearTimeout(timer);
    connect();
  };
  const events = globalThis as { addEventListener?: (type: string, listener: () => void) => void; removeEventListener?: (type: string, listener: () => void) => void };
  events.addEventListener?.('online', online);

  function connect() {
    timer = undefined;
    // The answer other than 2xx of this connection, with its body read: the package reads neither.
    let refusal: TeamOsError | undefined;
    const current = new Source(url.toString(), {
      fetch: async (input, init) => {
        // Each connection is a new source: the id to resume after is sent here, not by the package.
        const resume: Record<string, string> = delivered && lastEventId !== undefined ? { 'Last-Event-ID': lastEventId } : {};
        const response = await send(new Request(input, { ...init, headers: { ...init.headers, ...headers, ...resume } }));
        if (response.ok) return response;
        const text = await response.text();
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // A proxy's page: the status is all there is.
        }
        refusal = new TeamOsError(response, body);
        return new Response(null, { status: response.status, statusText: response.statusText, headers: response.headers });
      },
    });
    source = current;
    current.addEventListener('open', () => {
      attempt = 0;
      gatewayAnswers = 0;
      state = 'open';
      options.onOpen?.();
    });
    current.addEventListener('error', (event) => {
      // The package would wait the server's `retry:` after a loss, the same for every client and
      // every attempt: it is stopped, and the next connection is made here with growing, spread waits.
      const lost = current.readyState === current.CONNECTING;
      current.close();
      if (state === 'closed') return;
      const { code: status, message = 'the connection was lost' } = event as Event & { code?: number; message?: string };
      if (lost) return reconnect(backoffMs(attempt, baseDelayMs, maxDelayMs), message, undefined);
      if (refusal && gatewayStatuses.has(refusal.status) && gatewayAnswers < retries) {
        gatewayAnswers += 1;
        const asked = retryAfterMs(refusal.response.headers.get('retry-after'));
        const delayMs = asked === undefined ? backoffMs(attempt, baseDelayMs, maxDelayMs) : asked + Math.floor(Math.random() * Math.min(1_000, baseDelayMs));
        if (delayMs <= maxDelayMs) return reconnect(delayMs, refusal.message, refusal.status);
      }
      end(refusal ? { status: refusal.status, code: refusal.code, message: refusal.message, requestId: refusal.requestId } : { status, code: undefined, message, requestId: null });
    });
  }

  const close = () => {
    state = 'closed';
    events.removeEventListener?.('online', online);
    clearTimeout(timer);
    source?.close();
  };
  options.signal?.addEventListener('abort', close, { once: true });
  connect();
  return {
    get lastEventId() {
      return lastEventId;
    },
    get state() {
      return state;
    },
    close,
  };
}

/** Full jitter over a doubling wait: clients that lost the same instance come back spread out. */
function backoffMs(attempt: number, baseDelayMs: number, maxDelayMs: number): number {
  return Math.floor(Math.random() * Math.min(maxDelayMs, baseDelayMs * 2 ** attempt));
}

export type { FeedEvent };

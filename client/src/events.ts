/**
 * The event feed as an async iterator: an organization's event log read oldest first, page after
 * page, resumed after the last event given, and with `follow` polled at the end of the log with a
 * backoff, for integrations that cannot receive webhooks.
 */
import type { components } from '../../generated/api.js';
import { sleep } from './retry.js';

/** One event of an organization's log (the contract's `Event`): a webhook body with its `id`. Narrow it by `type`. */
export type FeedEvent = components['schemas']['Event'];
/** The type of an event of the log (the contract's `EventType`). */
export type FeedEventType = components['schemas']['EventType'];
/** The events of the given types: `FeedEventOf<'task.created'>`. */
export type FeedEventOf<Type extends FeedEventType> = Extract<FeedEvent, { type: Type }>;

export interface FollowOptions {
  /** The wait after a poll that brought events (and after the first pass). Default 1 s. */
  initialDelayMs?: number;
  /** The longest wait: the wait doubles after every poll that brings nothing, up to this. Default 30 s. */
  maxDelayMs?: number;
}

export interface EventsOptions<Type extends FeedEventType = FeedEventType> {
  /** The id of the last event processed: the feed starts right after it. Without it, at the oldest event kept. */
  after?: string;
  /** Only events of these types; the events are then typed as these. */
  types?: readonly Type[];
  /** Only events of this team (the organization's own events belong to none and are left out). */
  teamId?: string;
  /** Events per page, 1-200; the server's default unless given. */
  limit?: number;
  /**
   * Keep polling at the end of the log instead of ending, and never end: `true` waits 1 s after
   * events, doubling after each empty poll up to 30 s; `{ initialDelayMs, maxDelayMs }` sets both.
   */
  follow?: boolean | FollowOptions;
  /** Stops the feed, also in the middle of a wait or a request: the iteration throws the signal's reason. */
  signal?: AbortSignal;
}

/** The query of one request of the feed. */
export interface EventQuery {
  after?: string;
  cursor?: string;
  types?: FeedEventType[];
  teamId?: string;
  limit?: number;
}

/** Reads one page of the feed, or throws (`TeamOsError` for an answer other than 200). */
export type ReadEventPage = (query: EventQuery, signal: AbortSignal | undefined) => Promise<{ data: FeedEvent[]; nextCursor: string | null }>;

/**
 * The events of the feed from `options.after` on. A pass reads the log to its end as it is now,
 * following `nextCursor`; the next pass (with `follow`) starts with `after` set to the last event
 * given, the id a consumer keeps to resume, so that polling and resuming are one mechanism.
 */
export async function* readEvents<Type extends FeedEventType>(
  readPage: ReadEventPage,
  options: EventsOptions<Type>,
): AsyncGenerator<FeedEventOf<Type>, void, undefined> {
  const { teamId, limit, signal } = options;
  // An empty list would be sent as no filter at all, and the events typed as of no type.
  if (options.types?.length === 0) throw new TypeError('events(): `types` is empty; omit it to read events of every type');
  const types = options.types && [...options.types];
  const follow = options.follow === true ? {} : options.follow || undefined;
  const initialDelayMs = follow?.initialDelayMs ?? 1_000;
  const maxDelayMs = follow?.maxDelayMs ?? 30_000;
  if (follow && !(initialDelayMs > 0 && maxDelayMs >= initialDelayMs)) {
    throw new RangeError(`events(): follow needs 0 < initialDelayMs <= maxDelayMs (got ${initialDelayMs} and ${maxDelayMs})`);
  }

  let after = options.after;
  let delayMs = initialDelayMs;
  for (;;) {
    let arrived = false;
    let cursor: string | undefined;
    const followed = new Set<string>();
    do {
      signal?.throwIfAborted();
      const query: EventQuery = cursor === undefined ? { after, types, teamId, limit } : { cursor, types, teamId, limit };
      const page = await readPage(query, signal);
      for (const event of page.data) {
        signal?.throwIfAborted();
        after = event.id;
        arrived = true;
        yield event as FeedEventOf<Type>;
      }
      cursor = page.nextCursor ?? undefined;
      if (cursor !== undefined) {
        // A cursor that comes back would only repeat pages already given: a server that does that is broken.
        if (followed.has(cursor)) throw new Error(`events(): the server answered a cursor already followed (${cursor})`);
        followed.add(cursor);
      }
    } while (cursor !== undefined);
    if (!follow) return;
    if (arrived) delayMs = initialDelayMs;
    await sleep(delayMs, signal);
    delayMs = Math.min(delayMs * 2, maxDelayMs);
  }
}

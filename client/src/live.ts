/**
 * The live stream (`GET /events/stream`) in browsers and Node, over the `eventsource` package with a
 * fetch of its own: the key travels in `Authorization`, never in the URL (a browser's built-in
 * `EventSource` cannot send it). The package reconnects by itself with `Last-Event-ID`, waiting as
 * the server's `retry:` says, so the stream resumes after the last event delivered, with nothing
 * lost or repeated; a refusal (401, 403, 404, 410, 429) ends it and is reported.
 */
import { EventSource } from 'eventsource';
import type { FeedEvent, FeedEventOf, FeedEventType } from './events.js';

export interface LiveOptions<Type extends FeedEventType = FeedEventType> {
  /** Only events of these teams; every team and organization the caller may read unless given. */
  teamIds?: readonly string[];
  /** Only events of these types; the events are then typed as these. */
  types?: readonly Type[];
  /** Each event, in the feed's order, as the caller may see it. */
  onEvent: (event: FeedEventOf<Type>) => void;
  /**
   * The stream ended for good: the server refused it (`status`: 401 a key that no longer works, 403 or
   * 404 a team not readable, 410 `after` no longer kept, 429 too many streams) or ended it and refused
   * the reconnection. Connection losses are not reported: the stream reconnects by itself.
   */
  onEnd?: (end: { status: number | undefined; message: string }) => void;
  /** The id of the last event processed: the stream first sends every event after it. */
  after?: string;
  /** Closes the stream. */
  signal?: AbortSignal;
}

export interface LiveStream {
  /** The id of the last event delivered: pass it as `after` to resume later. */
  readonly lastEventId: string | undefined;
  close(): void;
}

type Fetch = (request: Request) => Promise<Response>;

/** Opens the stream at `url` (`…/v1/events/stream` with its query), sending each request through `send`. */
export function openLive<Type extends FeedEventType>(url: URL, headers: Record<string, string>, send: Fetch, options: LiveOptions<Type>): LiveStream {
  if (options.teamIds?.length) url.searchParams.set('teamId', options.teamIds.join(','));
  if (options.types?.length) url.searchParams.set('types', options.types.join(','));
  if (options.after) url.searchParams.set('after', options.after);
  let lastEventId: string | undefined = options.after;

  // Every event type is a message of its own name: the stream's messages are taken where the package
  // dispatches them, whatever their name, instead of listening to a list of names that could age.
  class Source extends EventSource {
    override dispatchEvent(event: Event): boolean {
      if (event instanceof MessageEvent && event.type !== 'open' && event.type !== 'error') {
        lastEventId = event.lastEventId || lastEventId;
        options.onEvent(JSON.parse(event.data as string) as FeedEventOf<Type>);
      }
      return super.dispatchEvent(event);
    }
  }

  const source = new Source(url.toString(), {
    fetch: (input, init) => send(new Request(input, { ...init, headers: { ...init.headers, ...headers } })),
  });
  source.addEventListener('error', (event) => {
    // The package gives up only on a refusal; while it reconnects the state is CONNECTING.
    if (source.readyState !== source.CLOSED) return;
    options.onEnd?.({ status: (event as Event & { code?: number }).code, message: (event as Event & { message?: string }).message ?? 'the stream ended' });
  });
  const close = () => source.close();
  options.signal?.addEventListener('abort', close, { once: true });
  return {
    get lastEventId() {
      return lastEventId;
    },
    close,
  };
}

export type { FeedEvent };

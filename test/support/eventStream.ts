/**
 * A reader of `GET /v1/events/stream` over plain fetch, for tests that look at the wire: it keeps the
 * raw text and the messages parsed from it (WHATWG "Server-sent events": fields up to an empty line),
 * and tells when the server ended the stream. A refusal (any status but 200) is read as JSON.
 */
import { waitFor } from './processes.js';

export interface StreamMessage {
  id: string | undefined;
  event: string | undefined;
  data: string;
}

export interface OpenedStream {
  status: number;
  headers: Headers;
  /** The refusal's body when the status is not 200. */
  body: any;
  messages: StreamMessage[];
  raw(): string;
  /** Resolves when the server ended the stream (or the connection broke). */
  ended: Promise<void>;
  isEnded(): boolean;
  /** Waits (at most `timeoutMs`, a generous bound) until `count` messages came. */
  waitForMessages(count: number, timeoutMs?: number): Promise<StreamMessage[]>;
  close(): void;
}

function parse(block: string): StreamMessage | undefined {
  const message: StreamMessage = { id: undefined, event: undefined, data: '' };
  let hasData = false;
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') message.id = value;
    if (field === 'event') message.event = value;
    if (field === 'data') {
      message.data = hasData ? `${message.data}\n${value}` : value;
      hasData = true;
    }
  }
  return hasData ? message : undefined;
}

export async function openStream(baseUrl: string, path: string, key: string, headers: Record<string, string> = {}): Promise<OpenedStream> {
  const aborting = new AbortController();
  const response = await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${key}`, ...headers }, signal: aborting.signal });
  const messages: StreamMessage[] = [];
  let raw = '';
  let ended = false;
  if (response.status !== 200) {
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      body: text ? JSON.parse(text) : undefined,
      messages,
      raw: () => text,
      ended: Promise.resolve(),
      isEnded: () => true,
      waitForMessages: () => Promise.reject(new Error(`the stream was refused with ${response.status}: ${text}`)),
      close: () => undefined,
    };
  }
  const reading = (async () => {
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let pending = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const text = decoder.decode(value, { stream: true });
        raw += text;
        pending += text;
        let boundary: number;
        while ((boundary = pending.indexOf('\n\n')) !== -1) {
          const message = parse(pending.slice(0, boundary));
          pending = pending.slice(boundary + 2);
          if (message) messages.push(message);
        }
      }
    } catch {
      // Aborted by the test, or the connection broke: the stream has ended either way.
    } finally {
      ended = true;
    }
  })();
  return {
    status: response.status,
    headers: response.headers,
    body: undefined,
    messages,
    raw: () => raw,
    ended: reading,
    isEnded: () => ended,
    waitForMessages: async (count, timeoutMs = 15_000) => {
      await waitFor(`${count} messages on the stream (have ${messages.length})`, () => messages.length >= count, timeoutMs);
      return messages.slice(0, count);
    },
    close: () => aborting.abort(),
  };
}

/**
 * The streams one test file opens against its app, all closed with `closeAll` (in `afterAll`, before
 * the app) with those it was given to `keep`: `open(path, key)` reads the app's address when called, after `beforeAll` started it.
 */
export function streamsOf(app: () => { url: string }) {
  const opened: OpenedStream[] = [];
  return {
    async open(path: string, key: string, headers?: Record<string, string>): Promise<OpenedStream> {
      const stream = await openStream(app().url, path, key, headers);
      opened.push(stream);
      return stream;
    },
    /** Streams opened otherwise (against another app), closed with the rest. */
    keep(...streams: OpenedStream[]): void {
      opened.push(...streams);
    },
    closeAll(): void {
      for (const stream of opened) stream.close();
    },
  };
}

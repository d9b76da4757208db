/**
 * A webhook receiver for the tests: a real HTTP server on loopback that keeps every delivery it gets
 * (headers, the raw body and its parsed event) and answers as the test tells it to.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  /** The body exactly as it came: signatures are checked on these bytes. */
  raw: string;
  event: { type: string; timestamp: string; data: { orgId: string; teamId: string | null; object: any } };
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** How the next deliveries are answered (2xx unless told otherwise). */
  answer: (received: Received) => Answer;
  /**
   * Resolves once at least `count` deliveries have come, or fails after `timeoutMs` (15 s unless given:
   * a delivery takes a tenth of a second, so the deadline only names a lost one, whatever the machine).
   */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const waiters = new Set<() => void>();
  const receiver = {
    received: [] as Received[],
    answer: (): Answer => ({ status: 204 }),
  } as unknown as Receiver;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const received: Received = { headers: req.headers, raw, event: JSON.parse(raw) };
      const { status, headers = {}, body = '' } = receiver.answer(received);
      receiver.received.push(received);
      res.writeHead(status, headers).end(body);
      for (const wake of waiters) wake();
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  receiver.waitFor = (count, timeoutMs = 15_000) =>
    new Promise((resolve, reject) => {
      const check = () => {
        if (receiver.received.length < count) return;
        waiters.delete(check);
        clearTimeout(timer);
        resolve(receiver.received);
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`expected ${count} deliveries within ${timeoutMs} ms, got ${receiver.received.length}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  receiver.close = async () => {
    server.closeAllConnections();
    await new Promise((closed) => server.close(closed));
  };
  return receiver;
}

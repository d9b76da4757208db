/**
 * A proxy for the client's tests, between a client and the server or the mock: it checks every
 * answer against the contract (a violation is kept, for the test to assert there are none), counts
 * what passed, and can lose an answer: the request reaches the server, but the connection is cut
 * before the answer gets back, as a network failure would do. A live stream (`text/event-stream`)
 * is passed on as it comes, each message's `data` checked as an `Event`; the stream upstream ends
 * when either side ends it.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import { checkEvent, checkResponse, compileEventCheck } from './contract.js';
import { operationFor, startTestApp, type TestApp } from './testApp.js';

export interface Passed {
  method: string;
  path: string;
  headers: Record<string, string>;
  status: number;
}

export interface Proxy {
  /** The proxy's origin; the API is under `/v1` as on the server. */
  url: string;
  passed: Passed[];
  /** Answers outside the contract, one line each. */
  violations: string[];
  /** Cuts the connection instead of returning the next answer to a request with this method. */
  loseNextAnswer(method: string): void;
  close(): Promise<void>;
}

export const hopByHop = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'content-encoding']);

export async function startProxy(target: string): Promise<Proxy> {
  const lose = new Set<string>();
  const proxy = { passed: [] as Passed[], violations: [] as string[] } as Proxy;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const method = req.method!;
      const path = req.url!;
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !hopByHop.has(name) && name !== 'host')) as Record<string, string>;
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      const upstream = new AbortController();
      res.once('close', () => upstream.abort());
      const answer = await fetch(`${target}${path}`, { method, headers, body, signal: upstream.signal }).catch(() => undefined);
      if (!answer) return void res.destroy();
      const contentType = answer.headers.get('content-type');
      if (contentType?.startsWith('text/event-stream')) return passStream(method, path, headers, answer, res);
      // The client may leave while the answer's body comes (its close aborts the upstream read): nothing to pass on.
      const text = await answer.text().catch(() => undefined);
      if (text === undefined) return void res.destroy();
      proxy.passed.push({ method, path, headers, status: answer.status });

      const parsed = text && contentType?.includes('json') ? JSON.parse(text) : text || undefined;
      const operation = operationFor(method, path);
      if (!answer.headers.get('x-request-id')) proxy.violations.push(`${method} ${path}: ${answer.status} without X-Request-Id`);
      if (!operation) proxy.violations.push(`${method} ${path}: not an operation of the contract`);
      else for (const problem of checkResponse(operation, answer.status, contentType, parsed).problems) proxy.violations.push(`${method} ${path}: ${answer.status} ${problem}`);

      if (lose.delete(method)) {
        req.socket.destroy();
        return;
      }
      const outgoing: Record<string, string> = {};
      answer.headers.forEach((value, name) => {
        if (!hopByHop.has(name)) outgoing[name] = value;
      });
      res.writeHead(answer.status, outgoing).end(text);
    });
  });
  /** A stream's headers as soon as they come, then its messages as they come, each checked. */
  async function passStream(method: string, path: string, headers: Record<string, string>, answer: Response, res: ServerResponse) {
    proxy.passed.push({ method, path, headers, status: answer.status });
    // Compiled before the stream is passed on: compiling at its first message held every message of the process back by a second or more.
    compileEventCheck();
    const operation = operationFor(method, path);
    if (!answer.headers.get('x-request-id')) proxy.violations.push(`${method} ${path}: ${answer.status} without X-Request-Id`);
    if (!operation) proxy.violations.push(`${method} ${path}: not an operation of the contract`);
    else for (const problem of checkResponse(operation, answer.status, answer.headers.get('content-type'), '').problems) proxy.violations.push(`${method} ${path}: ${answer.status} ${problem}`);
    const outgoing: Record<string, string> = {};
    answer.headers.forEach((value, name) => {
      if (!hopByHop.has(name)) outgoing[name] = value;
    });
    res.writeHead(answer.status, outgoing).flushHeaders();
    const decoder = new TextDecoder();
    let pending = '';
    try {
      for await (const chunk of answer.body as unknown as AsyncIterable<Uint8Array>) {
        res.write(chunk);
        pending += decoder.decode(chunk, { stream: true });
        let boundary: number;
        while ((boundary = pending.indexOf('\n\n')) !== -1) {
          const data = pending
            .slice(0, boundary)
            .split('\n')
            .filter((line) => line.startsWith('data:'))
            .map((line) => line.slice(5).replace(/^ /, ''));
          pending = pending.slice(boundary + 2);
          if (data.length === 0) continue;
          for (const problem of checkEvent(JSON.parse(data.join('\n'))).problems) proxy.violations.push(`${method} ${path}: a message ${problem}`);
        }
      }
      res.end();
    } catch {
      // The client went away (the read upstream was aborted) or the server's connection broke: so does this one.
      res.destroy();
    }
  }

  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.loseNextAnswer = (method) => lose.add(method);
  proxy.close = async () => {
    server.closeAllConnections();
    await new Promise((closed) => server.close(closed));
  };
  return proxy;
}

/** The app behind a proxy for the tests of a `describe` block: started before them, stopped after. */
export function useProxiedApp(options?: Parameters<typeof startTestApp>[0]): { app: TestApp; proxy: Proxy } {
  const handle = {} as { app: TestApp; proxy: Proxy };
  beforeAll(async () => {
    handle.app = await startTestApp(options);
    handle.proxy = await startProxy(handle.app.url);
  });
  afterAll(async () => {
    await handle.proxy?.close();
    await handle.app?.close();
  });
  return handle;
}

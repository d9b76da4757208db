/** The API's HTTP server around an Express app (src/http/httpServer.ts): requests and responses born as Express makes them. */
import { IncomingMessage, ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpServer } from '../../src/http/httpServer.js';

let server: Server | undefined;
afterEach(() => new Promise<void>((done) => (server ? server.close(() => done()) : done())));

async function serve(app: express.Express): Promise<string> {
  server = createHttpServer(app);
  await new Promise<void>((ready) => server!.listen(0, '127.0.0.1', ready));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("the API's HTTP server", () => {
  it("gives an Express app's requests and responses its prototypes as Node makes them, so Express's own setting of them changes nothing", async () => {
    const app = express();
    app.get('/seen', (req, res) => res.json({ requestOfApp: Object.getPrototypeOf(req) === app.request, responseOfApp: Object.getPrototypeOf(res) === app.response }));
    const url = await serve(app);
    const atBirth: boolean[] = [];
    // Before the app's own listener: what Node made, before Express took it.
    server!.prependListener('request', (req, res) => atBirth.push(Object.getPrototypeOf(req) === app.request, Object.getPrototypeOf(res) === app.response));

    expect(await (await fetch(`${url}/seen`)).json()).toEqual({ requestOfApp: true, responseOfApp: true });
    expect(atBirth).toEqual([true, true]);
  });

  it("keeps Express's request and response as handlers know them: its methods, getters and app, over Node's", async () => {
    const app = express();
    app.set('answer', 'from the app');
    app.get('/items/:id', (req, res) => {
      expect(req).toBeInstanceOf(IncomingMessage);
      expect(res).toBeInstanceOf(ServerResponse);
      res.status(201).set('X-Item', req.params.id).json({ path: req.path, query: req.query, header: req.get('x-asked'), app: req.app.get('answer'), sameApp: res.app === app, locals: typeof res.locals });
    });
    const url = await serve(app);

    const answer = await fetch(`${url}/items/42?view=full`, { headers: { 'X-Asked': 'yes' } });
    expect(answer.status).toBe(201);
    expect(answer.headers.get('x-item')).toBe('42');
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await answer.json()).toEqual({ path: '/items/42', query: { view: 'full' }, header: 'yes', app: 'from the app', sameApp: true, locals: 'object' });
  });

  it('serves a plain request listener as Node would', async () => {
    server = createHttpServer((_req: IncomingMessage, res: ServerResponse) => res.end('plain'));
    await new Promise<void>((ready) => server!.listen(0, '127.0.0.1', ready));
    expect(await (await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`)).text()).toBe('plain');
  });
});

/**
 * Clients that misbehave: one that disconnects in the middle of a multi-step write leaves it whole or
 * absent, and slow or idle clients are cut off by the server's timeouts (src/http/httpServer.ts).
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer, serverTimeouts } from '../src/http/httpServer.js';
import { databaseLabel } from './support/database.js';
import { createTeamWorld } from './support/factories.js';
import { startTestApp, type TestApp } from './support/testApp.js';

/** Short timeouts, so the test waits for fractions of a second; production's are checked below. */
const short = { headersMs: 600, requestMs: 1_200, keepAliveMs: 400, checkEveryMs: 100 };

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ serverTimeouts: short });
});
afterAll(() => app.close());

function open(): Promise<{ socket: Socket; received: () => string; closed: Promise<number> }> {
  const { port } = new URL(app.url);
  const socket = connect(Number(port), '127.0.0.1');
  let text = '';
  socket.on('data', (chunk) => (text += chunk));
  socket.on('error', () => undefined);
  const openedAt = Date.now();
  const closed = new Promise<number>((done) => socket.once('close', () => done(Date.now() - openedAt)));
  return new Promise((ready) => socket.once('connect', () => ready({ socket, received: () => text, closed })));
}

const unknownId = '00000000-0000-4000-8000-000000000000';
const sleep = (ms: number) => new Promise((wait) => setTimeout(wait, ms));

describe(`clients that disconnect mid-request (${databaseLabel})`, () => {
  it('aborting the creation of an organization member (account + membership) at any moment leaves both or neither', async () => {
    const { org, person } = await createTeamWorld(app.db);
    const owner = await person('OWNER');
    const emails = Array.from({ length: 24 }, (_, index) => `cut-${index}-${org.id.slice(0, 8)}@example.com`);

    // Each request is cut a little later than the one before: before it is read, while it runs, after it answered.
    await Promise.all(
      emails.map(async (email, index) => {
        const { socket, closed } = await open();
        const body = JSON.stringify({ email, role: 'MEMBER', externalOnly: true });
        socket.write(
          `POST /v1/orgs/${org.id}/members HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${owner.key}\r\n` +
            `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        );
        await sleep(index * 2);
        socket.destroy();
        await closed;
      }),
    );
    // The server finishes or rolls back what it started; then it serves on. Too short a wait could
    // only hide a half-done write of a server still at work: it never fails a sound one.
    await sleep(500);
    expect((await app.request('GET', '/v1/me', { key: owner.key })).status).toBe(200);

    const users = await app.db.selectFrom('users').select(['id', 'email']).where('email', 'in', emails).execute();
    const members = await app.db.selectFrom('organization_members').select('user_id').where('org_id', '=', org.id).execute();
    const memberIds = new Set(members.map((member) => member.user_id));
    expect(users.filter((user) => !memberIds.has(user.id))).toEqual([]);
  });
});

/**
 * The connection was answered 408 and closed, not before `timeoutMs` passed. How soon after is the
 * machine's business: that the server was given these timeouts is checked on the server itself, and a
 * connection never closed fails the test by its timeout.
 */
async function expectTimedOut(connection: { received: () => string; closed: Promise<number> }, timeoutMs: number) {
  expect(await connection.closed).toBeGreaterThanOrEqual(timeoutMs - 50);
  expect(connection.received()).toMatch(/^HTTP\/1\.1 408 /);
}

describe('slow and idle clients are cut off by the server timeouts', () => {
  it('production sets them on purpose: headers within 10 s, a request within 30 s, idle keep-alive 5 s, checked every second', () => {
    expect(serverTimeouts).toEqual({ headersMs: 10_000, requestMs: 30_000, keepAliveMs: 5_000, checkEveryMs: 1_000 });
  });

  it('the HTTP server takes the timeouts it is given (Node\'s own are a minute for headers and 5 s of keep-alive)', () => {
    const server = createHttpServer(() => undefined, short);
    expect({ headersMs: server.headersTimeout, requestMs: server.requestTimeout, keepAliveMs: server.keepAliveTimeout }).toEqual({
      headersMs: short.headersMs,
      requestMs: short.requestMs,
      keepAliveMs: short.keepAliveMs,
    });
  });

  it('a client sending its headers too slowly is answered 408 and disconnected once the headers timeout passes', async () => {
    const connection = await open();
    const { socket } = connection;
    socket.write('GET /v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const dripping = setInterval(() => socket.writable && socket.write('X-Slow: a\r\n'), 100);
    try {
      await expectTimedOut(connection, short.headersMs);
    } finally {
      clearInterval(dripping);
      socket.destroy();
    }
  });

  it('a client that sends its headers but never finishes its body is answered 408 once the request timeout passes', async () => {
    const { person } = await createTeamWorld(app.db);
    const { key } = await person('MEMBER');
    const connection = await open();
    const { socket } = connection;
    // Authenticated and routed, so the app reads the body, which never comes whole.
    socket.write(
      `POST /v1/teams/${unknownId}/tasks HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"title"',
    );
    try {
      await expectTimedOut(connection, short.requestMs);
    } finally {
      socket.destroy();
    }
  });

  it('an idle keep-alive connection is closed once the keep-alive timeout passes', async () => {
    const { socket, received, closed } = await open();
    socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n');
    try {
      const after = await closed;
      expect(received()).toMatch(/^HTTP\/1\.1 200 /);
      expect(after).toBeGreaterThanOrEqual(short.keepAliveMs);
    } finally {
      socket.destroy();
    }
  });
});

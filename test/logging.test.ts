import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseLabel } from './support/database.js';
import { instanceId } from '../src/observability/instance.js';
import { openStream } from './support/eventStream.js';
import { createCaller, createTeamWorld } from './support/factories.js';
import { startTestApp, type TestApp } from './support/testApp.js';
import { capturedLog } from './support/logLines.js';

const { lines, sink, lineWhere } = capturedLog();

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ logger: pino({ level: 'info' }, sink) });
});
afterAll(() => app.close());

describe(`the request log (${databaseLabel})`, () => {
  it('writes one line per request with method, route template, status, duration, request id and key id — never the key', async () => {
    const { key, keyRow } = await createCaller(app.db, { scopes: ['read'] });
    const response = await app.request('GET', '/v1/orgs/some-organization', { key, headers: { 'x-request-id': 'log-test-1' } });

    const line = await lineWhere((entry) => entry.requestId === 'log-test-1');
    expect(response.status).toBe(404);
    expect(line).toMatchObject({ method: 'GET', route: '/v1/orgs/{orgId}', status: 404, keyId: keyRow.id });
    expect(typeof line.durationMs).toBe('number');
    expect(JSON.stringify(lines)).not.toContain(key);
    expect(JSON.stringify(lines)).not.toContain(keyRow.key_hash);
  });

  it('logs an unexpected error with its request id, and never a key sent with it', async () => {
    const failing = await startTestApp({
      database: app.database,
      logger: pino({ level: 'info' }, sink),
      handlers: {
        getMe: async () => {
          throw new Error('database exploded');
        },
      },
    });
    try {
      const { key } = await createCaller(app.db);
      const response = await failing.request('GET', '/v1/me', { key, headers: { 'x-request-id': 'log-test-2' } });
      expect(response.status).toBe(500);
      const error = lines.find((entry) => entry.requestId === 'log-test-2' && entry.msg === 'internal error');
      expect(error).toBeDefined();
      expect(JSON.stringify(lines)).not.toContain(key);
    } finally {
      await failing.close();
    }
  });
});

describe(`the log of a live stream (${databaseLabel})`, () => {
  it("writes a line as a stream opens with the instance serving it, the request id, the key id and the teams it follows — never the key", async () => {
    const { team, person } = await createTeamWorld(app.db);
    const { key, keyRow } = await person('OWNER', 'MEMBER');
    const stream = await openStream(app.url, `/v1/events/stream?teamId=${team.id}`, key, { 'x-request-id': 'log-test-stream' });
    try {
      expect(stream.status).toBe(200);
      const line = await lineWhere((entry) => entry.msg === 'event stream opened' && entry.requestId === 'log-test-stream');
      expect(line).toMatchObject({ level: 30, instance: instanceId, keyId: keyRow.id, teams: [team.id], types: 'all', resumeAfter: null });
      expect(JSON.stringify(lines)).not.toContain(key);
      expect(JSON.stringify(lines)).not.toContain(keyRow.key_hash);
    } finally {
      stream.close();
    }
  });

  it('writes a line as a stream ends, with the same request id, why it ended and how many events it sent', async () => {
    const { team, person } = await createTeamWorld(app.db);
    const { key, keyRow } = await person('OWNER', 'MEMBER');
    const stream = await openStream(app.url, `/v1/events/stream?teamId=${team.id}`, key, { 'x-request-id': 'log-test-stream-end' });
    await lineWhere((entry) => entry.msg === 'event stream opened' && entry.requestId === 'log-test-stream-end');
    stream.close();

    const line = await lineWhere((entry) => entry.msg === 'event stream ended' && entry.requestId === 'log-test-stream-end');
    expect(line).toMatchObject({ instance: instanceId, keyId: keyRow.id, reason: 'closed', eventsSent: 0 });
    expect(typeof line.durationMs).toBe('number');
  });
});

describe(`days from the database (${databaseLabel})`, () => {
  it('come back as the YYYY-MM-DD text that was stored, never shifted by a time zone', async () => {
    const { rows } = await sql<{ day: unknown }>`select '2026-03-29'::date as day`.execute(app.db);
    expect(rows[0]!.day).toBe('2026-03-29');
  });
});

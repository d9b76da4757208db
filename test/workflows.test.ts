/**
 * The journeys of `openapi/workflows/` (Arazzo 1.0), run by Redocly Respect against the real server on
 * a fresh database: every step checks its status and its answer against the contract, and passes ids
 * on. The accounts and keys they start from are made here, as the web application would, and so is
 * what an integration finds when it comes back from downtime (`integrationAway`).
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverTimeouts } from '../src/http/httpServer.js';
import { databaseLabel } from './support/database.js';
import { createKey, createTeamWorld } from './support/factories.js';
import { waitFor } from './support/processes.js';
import { startTestApp, type TestApp } from './support/testApp.js';

const root = resolve(import.meta.dirname, '..');
const workflowFiles = readdirSync(resolve(root, 'openapi/workflows')).filter((file) => file.endsWith('.arazzo.yaml')).sort();

let app: TestApp;
let inputs: Record<string, string>;
beforeAll(async () => {
  // Idle connections kept a minute rather than 5 s: on a busy machine, Respect's client (undici) once
  // sent a step on a connection the server was closing as idle (UND_ERR_SOCKET). The idle close has its
  // own test (test/faults.clients.test.ts); these test the journeys.
  app = await startTestApp({ serverTimeouts: { ...serverTimeouts, keepAliveMs: 60_000 } });
  const { org, team, person } = await createTeamWorld(app.db);
  const owner = await person('OWNER', 'ADMIN');
  const member = await person('MEMBER', 'MEMBER');
  await app.db.updateTable('users').set({ system_role: 'SUPERADMIN' }).where('id', '=', owner.user.id).execute();
  const platformKey = (await createKey(app.db, owner.user.id, { scopes: ['platform'] })).key;
  inputs = {
    apiKey: owner.key,
    orgId: org.id,
    ...(await integrationAway(org.id, team.id, owner.key, member.user.id)),
    platformKey,
    teamId: team.id,
    ownerId: member.user.id,
    colleagueKey: member.key,
    operatorEmail: owner.user.email,
    newMemberEmail: `new-member-${randomUUID()}@example.test`,
    idempotencyKey: randomUUID(),
  };
});
afterAll(() => app.close());

/**
 * An integration that went down (catch-up-after-downtime): its subscription, the last event it
 * processed (a to-do created), then, while it was away, the server disabling the subscription as
 * after days of failed deliveries, the to-do changed and an issue raised. Returns the workflow's
 * inputs once the feed shows all three events.
 */
async function integrationAway(orgId: string, teamId: string, key: string, ownerId: string) {
  const webhook = await app.request('POST', `/v1/orgs/${orgId}/webhooks`, { key, body: { url: 'http://127.0.0.1:9/teamos', events: ['*'] } });
  const task = await app.request('POST', `/v1/teams/${teamId}/tasks`, { key, body: { title: 'Book the Rotterdam slot', ownerId, dueDate: '2026-12-04' } });
  let events: { id: string }[] = [];
  // An event shows once every change that began before it has ended (on PostgreSQL, in the whole cluster).
  const feedShows = (count: number) =>
    waitFor(`${count} events in the feed`, async () => {
      events = (await app.request('GET', `/v1/orgs/${orgId}/events`, { key })).body.data;
      return events.length >= count;
    }, 60_000);
  await feedShows(1);
  const lastEventId = events[0]!.id;
  await app.db
    .updateTable('webhook_subscriptions')
    .set({ is_active: false, disabled_reason: 'Every delivery to the endpoint failed for 5 days.' })
    .where('id', '=', webhook.body.id)
    .execute();
  await app.request('PATCH', `/v1/tasks/${task.body.id}`, { key, body: { completed: true } });
  await app.request('POST', `/v1/teams/${teamId}/issues`, { key, body: { title: 'Quotes to Baltic Trade go out late' } });
  await feedShows(3);
  return { webhookId: webhook.body.id as string, lastEventId };
}

/** Respect with the inputs a workflow file declares, against this test's server; its report on failure. */
async function respect(file: string) {
  const args = ['respect', resolve(root, 'openapi/workflows', file), '--server', `teamos=${app.url}/v1`];
  for (const [name, value] of Object.entries(inputs)) args.push('--input', `${name}=${value}`);
  try {
    const { stdout } = await promisify(execFile)(resolve(root, 'node_modules/.bin/redocly'), args, {
      cwd: root,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
      maxBuffer: 16 * 1024 * 1024,
    });
    return { passed: true, output: stdout };
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    return { passed: false, output: `${stdout ?? ''}\n${stderr ?? ''}` };
  }
}

describe(`the integrators' journeys as Arazzo workflows (${databaseLabel})`, () => {
  it('has at least seven workflows', () => {
    expect(workflowFiles.length).toBeGreaterThanOrEqual(7);
  });

  it.each(workflowFiles)('%s runs green with Redocly Respect', async (file) => {
    const { passed, output } = await respect(file);
    expect(passed, output).toBe(true);
  }, 120_000);
});

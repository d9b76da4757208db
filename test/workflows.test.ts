/**
 * The journeys of `openapi/workflows/` (Arazzo 1.0), run by Redocly Respect against the real server on
 * a fresh database: every step checks its status and its answer against the contract, and passes ids
 * on. The accounts and keys they start from are made here, as the web application would.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseLabel } from './support/database.js';
import { createKey, createTeamWorld } from './support/factories.js';
import { startTestApp, type TestApp } from './support/testApp.js';

const root = resolve(import.meta.dirname, '..');
const workflowFiles = readdirSync(resolve(root, 'openapi/workflows')).filter((file) => file.endsWith('.arazzo.yaml')).sort();

let app: TestApp;
let inputs: Record<string, string>;
beforeAll(async () => {
  app = await startTestApp();
  const { team, person } = await createTeamWorld(app.db);
  const owner = await person('OWNER', 'ADMIN');
  const member = await person('MEMBER', 'MEMBER');
  await app.db.updateTable('users').set({ system_role: 'SUPERADMIN' }).where('id', '=', owner.user.id).execute();
  const platformKey = (await createKey(app.db, owner.user.id, { scopes: ['platform'] })).key;
  inputs = {
    apiKey: owner.key,
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
  it('has at least five workflows', () => {
    expect(workflowFiles.length).toBeGreaterThanOrEqual(5);
  });

  it.each(workflowFiles)('%s runs green with Redocly Respect', async (file) => {
    const { passed, output } = await respect(file);
    expect(passed, output).toBe(true);
  }, 120_000);
});

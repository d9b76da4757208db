/**
 * Deprecation in headers (src/http/deprecation.ts): nothing of the contract is deprecated, so the app
 * is started with a copy of it in which GET /tasks/{id}, the task list's `completed`, and the issue
 * list with its `status` (sunset before the list's) and `priority` (sunset after it) are.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTeamOsClient, type DeprecationNotice } from '../client/src/index.js';
import { withDeprecationDates } from '../scripts/deprecationNotes.js';
import { databaseLabel } from './support/database.js';
import { createTask } from './support/executionFactories.js';
import { createTeamWorld } from './support/factories.js';
import { startTestApp, type TestApp } from './support/testApp.js';

const origin = 'https://app.teamos.example';
const real = readFileSync(resolve(import.meta.dirname, '../generated/openapi.json'), 'utf8');
const contract = JSON.parse(real);
Object.assign(contract.paths['/tasks/{id}'].get, { deprecated: true, 'x-deprecated-at': '2026-12-01T00:00:00Z', 'x-sunset': '2027-06-30' });
const completed = contract.paths['/teams/{teamId}/tasks'].get.parameters.find((parameter: { name?: string }) => parameter.name === 'completed');
Object.assign(completed, { deprecated: true, 'x-deprecated-at': '2026-12-15', 'x-sunset': '2027-06-15' });
const issues = contract.paths['/teams/{teamId}/issues'].get;
Object.assign(issues, { deprecated: true, 'x-deprecated-at': '2026-12-01', 'x-sunset': '2027-12-31' });
const issueParameter = (name: string) => issues.parameters.find((parameter: { name?: string }) => parameter.name === name);
Object.assign(issueParameter('status'), { deprecated: true, 'x-deprecated-at': '2026-12-01', 'x-sunset': '2027-09-30' });
Object.assign(issueParameter('priority'), { deprecated: true, 'x-deprecated-at': '2026-12-01', 'x-sunset': '2028-06-30' });
const sunsetOf = (day: string) => new Date(day).toUTCString();

let app: TestApp;
let world: Awaited<ReturnType<typeof createTeamWorld>>;
let member: { user: { id: string }; key: string };
let taskId: string;
beforeAll(async () => {
  app = await startTestApp({ contract, corsOrigins: [origin] });
  world = await createTeamWorld(app.db);
  member = await world.person('MEMBER', 'MEMBER');
  taskId = (await createTask(app.db, world.team.id, member.user.id)).id;
});
afterAll(() => app.close());

describe(`deprecation headers (${databaseLabel})`, () => {
  it('the real contract deprecates nothing', () => {
    expect(real).not.toMatch(/"deprecated": true/);
  });

  it('a deprecated operation answers Deprecation, Sunset and Link to its description, its refusals too, and a browser may read them', async () => {
    const response = await app.request('GET', `/v1/tasks/${taskId}`, { key: member.key, headers: { origin } });
    expect(response.status).toBe(200);
    expect(response.headers.get('deprecation')).toBe(`@${Date.parse('2026-12-01T00:00:00Z') / 1000}`);
    expect(response.headers.get('sunset')).toBe('Wed, 30 Jun 2027 00:00:00 GMT');
    expect(response.headers.get('link')).toBe('</v1/docs#operation/getTask>; rel="deprecation"; type="text/html"');
    const exposed = response.headers.get('access-control-expose-headers')!.toLowerCase().split(/,\s*/);
    expect(exposed).toEqual(expect.arrayContaining(['deprecation', 'sunset', 'link']));

    const unknown = await app.request('GET', '/v1/tasks/00000000-0000-4000-8000-000000000000', { key: member.key });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('deprecation')).not.toBeNull();
  });

  it('other operations answer none of them', async () => {
    const response = await app.request('PATCH', `/v1/tasks/${taskId}`, { key: member.key, body: { title: 'Renamed' } });
    expect(response.status).toBe(200);
    for (const header of ['deprecation', 'sunset', 'link']) expect(response.headers.get(header), header).toBeNull();
  });

  it('a deprecated parameter tells it, with its own sunset and its name, only to requests that send it', async () => {
    const sent = await app.request('GET', `/v1/teams/${world.team.id}/tasks?completed=false`, { key: member.key });
    expect(sent.status).toBe(200);
    expect(sent.headers.get('deprecation')).toBe(`@${Date.parse('2026-12-15') / 1000}`);
    expect(sent.headers.get('sunset')).toBe(sunsetOf('2027-06-15'));
    expect(sent.headers.get('link')).toBe('</v1/docs#operation/listTeamTasks>; rel="deprecation"; type="text/html"; title="query parameter completed"');

    const without = await app.request('GET', `/v1/teams/${world.team.id}/tasks`, { key: member.key });
    expect(without.status).toBe(200);
    expect(without.headers.get('deprecation')).toBeNull();
    expect(without.headers.get('link')).toBeNull();
  });

  it("a deprecated parameter of a deprecated operation answers the earlier of its own sunset and the operation's", async () => {
    const path = `/v1/teams/${world.team.id}/issues`;
    const sunsets = async (query: string) => (await app.request('GET', `${path}${query}`, { key: member.key })).headers.get('sunset');
    expect(await sunsets('')).toBe(sunsetOf('2027-12-31'));
    expect(await sunsets('?status=OPEN')).toBe(sunsetOf('2027-09-30'));
    expect(await sunsets('?priority=HIGH')).toBe(sunsetOf('2027-12-31'));
  });

  it('the typed client tells each deprecated operation once', async () => {
    const notices: DeprecationNotice[] = [];
    const client = createTeamOsClient({ baseUrl: `${app.url}/v1`, apiKey: member.key, retry: false, onDeprecation: (notice) => notices.push(notice) });
    for (let round = 0; round < 3; round++) {
      expect((await client.GET('/tasks/{id}', { params: { path: { id: taskId } } })).response.status).toBe(200);
      await client.GET('/teams/{teamId}/tasks', { params: { path: { teamId: world.team.id } } });
    }
    await client.GET('/teams/{teamId}/tasks', { params: { path: { teamId: world.team.id }, query: { completed: true } } });
    expect(notices).toEqual([
      {
        operation: 'GET /tasks/{id}',
        operationDeprecated: true,
        parameters: [],
        deprecatedAt: new Date('2026-12-01T00:00:00Z'),
        sunset: new Date('2027-06-30'),
        link: '</v1/docs#operation/getTask>; rel="deprecation"; type="text/html"',
      },
      {
        operation: 'GET /teams/{teamId}/tasks',
        operationDeprecated: false,
        parameters: ['query parameter completed'],
        deprecatedAt: new Date('2026-12-15'),
        sunset: new Date('2027-06-15'),
        link: '</v1/docs#operation/listTeamTasks>; rel="deprecation"; type="text/html"; title="query parameter completed"',
      },
    ]);
    // Once per client: another client is told again.
    const again: DeprecationNotice[] = [];
    await createTeamOsClient({ baseUrl: `${app.url}/v1`, apiKey: member.key, retry: false, onDeprecation: (notice) => again.push(notice) }).GET('/tasks/{id}', { params: { path: { id: taskId } } });
    expect(again).toHaveLength(1);
  });

  it("the typed client's warning names the deprecated parameter", async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const client = createTeamOsClient({ baseUrl: `${app.url}/v1`, apiKey: member.key, retry: false });
      await client.GET('/teams/{teamId}/tasks', { params: { path: { teamId: world.team.id }, query: { completed: true } } });
      expect(warn.mock.calls).toEqual([
        [
          'Team OS API: the query parameter completed of GET /teams/{teamId}/tasks is deprecated and may stop working after 2027-06-15T00:00:00.000Z: ' +
            '</v1/docs#operation/listTeamTasks>; rel="deprecation"; type="text/html"; title="query parameter completed"',
        ],
      ]);
    } finally {
      warn.mockRestore();
    }
  });

  it('the docs page tells both dates of each deprecation', () => {
    const bundle = withDeprecationDates(structuredClone(contract));
    expect(bundle.paths['/tasks/{id}'].get.description).toMatch(/\n\n\*\*Deprecated\*\* since 2026-12-01T00:00:00Z; sunset 2027-06-30: it may stop working after that\.$/);
    const parameter = bundle.paths['/teams/{teamId}/tasks'].get.parameters.find((p: { name?: string }) => p.name === 'completed');
    expect(parameter.description).toMatch(/\*\*Deprecated\*\* since 2026-12-15; sunset 2027-06-15: it may stop working after that\.$/);
    expect(bundle.paths['/tasks/{id}'].patch.description).toBe(contract.paths['/tasks/{id}'].patch.description);
  });

  it('refuses to start on a deprecation without its date', async () => {
    const undated = JSON.parse(real);
    undated.paths['/tasks/{id}'].get.deprecated = true;
    await expect(startTestApp({ contract: undated, database: app.database })).rejects.toThrow('getTask is deprecated without a valid x-deprecated-at');
  });
});

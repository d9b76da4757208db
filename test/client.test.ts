/**
 * The typed client (client/) against the live server on a fresh database, and its example against
 * the Prism mock. Every answer the client gets passes through a proxy that checks it against the
 * contract; each test ends with no violation.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { OpenAPIV3_1 } from 'openapi-types';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startMock, type MockServer } from '../scripts/mock.js';
import { createTeamOsClient, TeamOsError, unwrap, type ListPath } from '../client/src/index.js';
import { verifyWebhook } from '../client/src/webhooks.js';
import { matrixRows } from './permissions/rows.js';
import { allowedCaller, createWorld, type World } from './permissions/world.js';
import { deref, operations, type ContractOperation } from './support/contract.js';
import { databaseLabel } from './support/database.js';
import { createDocuments, createPeopleReview, createWebhook, createWebhookWithDelivery } from './support/areaFactories.js';
import { createEvents } from './support/eventFactories.js';
import { createGoals, createIssues, createTask, createTasks } from './support/executionFactories.js';
import { createMeetingIn } from './support/meetingFactories.js';
import { createMetricValues } from './support/scorecardFactories.js';
import { addTeamMember, createTeam, createTeamWorld } from './support/factories.js';
import { freePort } from './support/ports.js';
import { startProxy, useProxiedApp, type Proxy } from './support/proxy.js';
import { startReceiver, type Receiver } from './support/receiver.js';
import { startTestApp, type TestApp } from './support/testApp.js';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '..');

/** Runs a script that uses the client as a user would (`tsx`, the package by its name), and returns what it printed. */
async function runScript(file: string, baseUrl: string, apiKey: string, teamId?: string): Promise<string[]> {
  const env = { ...process.env, TEAM_OS_URL: baseUrl, TEAM_OS_API_KEY: apiKey, ...(teamId ? { TEAM_OS_TEAM_ID: teamId } : {}) };
  const { stdout } = await run(resolve(root, 'node_modules/.bin/tsx'), [file], { cwd: root, env, timeout: 60_000 });
  return stdout.trim().split('\n');
}

const example = resolve(root, 'client/examples/openTasks.ts');

/**
 * Runs the README's "Clients" example exactly as written there, from an ES module file under
 * node_modules/.cache, so that it finds `@team-os/client` as a user's project would.
 */
async function runReadmeExample(baseUrl: string, apiKey: string, teamId?: string): Promise<string[]> {
  const readme = await readFile(resolve(root, 'README.md'), 'utf8');
  const code = /^## Clients\n[\s\S]*?^```ts\n([\s\S]*?)^```/m.exec(readme)?.[1];
  if (!code) throw new Error('README.md: no ```ts block in the "Clients" section');
  const folder = resolve(root, 'node_modules/.cache/teamos-readme');
  await mkdir(folder, { recursive: true });
  const file = join(folder, `example-${process.pid}-${randomUUID()}.mts`);
  await writeFile(file, code);
  try {
    return await runScript(file, baseUrl, apiKey, teamId);
  } finally {
    await rm(file, { force: true });
  }
}

/** The operations whose GET answers a page (`data` and `nextCursor`), read from the contract. */
const listOperations = operations.filter((op) => {
  if (op.method !== 'get' || !op.operation.responses?.['200']) return false;
  const ok = deref(op.operation.responses['200'], '').value as OpenAPIV3_1.ResponseObject;
  const schema = ok.content?.['application/json']?.schema;
  const properties = schema ? (deref(schema, '').value.properties ?? {}) : {};
  return 'data' in properties && 'nextCursor' in properties;
});

/** Whether an operation takes a `limit` (small lists come whole, in one page). */
const takesLimit = (op: ContractOperation) =>
  (op.operation.parameters ?? []).some((parameter) => deref(parameter, '').value.name === 'limit');

/** The path parameters of `concrete` (a matrix row's request path) by the names of `template`. */
function pathParams(template: string, concrete: string): Record<string, string> {
  const names = [...template.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
  const pattern = new RegExp(`^/v1${template.replace(/\{\w+\}/g, '([^/?]+)')}(?:\\?.*)?$`);
  const values = pattern.exec(concrete);
  if (!values) throw new Error(`${concrete} is not a path of ${template}`);
  return Object.fromEntries(names.map((name, index) => [name, decodeURIComponent(values[index + 1]!)]));
}

/**
 * Two more items in each paged list that the permission matrix's world leaves with fewer, so that
 * every list with a `limit` takes several pages.
 */
const moreItems: Partial<Record<string, (world: World, target: any) => Promise<unknown>>> = {
  listOrganizationGoals: (w) => createGoals(w.db, w.team, w.users.teamMember.id, 2, () => ({ level: 'COMPANY' })),
  listTeamTasks: (w) => createTasks(w.db, w.team.id, w.users.teamMember.id, 2),
  listTeamIssues: (w) => createIssues(w.db, w.team.id, w.users.teamMember.id, 2),
  listTeamGoals: (w) => createGoals(w.db, w.team, w.users.teamMember.id, 2),
  listMetricValues: (w, metric: { id: string }) => createMetricValues(w.db, metric.id, w.users.teamMember.id, '2026-11-02', 3),
  listTeamMeetings: (w) => Promise.all(['2026-11-30', '2026-12-07'].map((date) => createMeetingIn(w.db, w.team.id, w.users.teamMember.id, { date }))),
  listTeamPeopleReviews: (w) => Promise.all([w.users.teamMember, w.users.teamViewer].map((user) => createPeopleReview(w.db, w.team.id, user.id, w.users.teamOwner.id))),
  listTeamDocuments: (w) => createDocuments(w.db, w.team.id, w.users.teamMember.id, 2),
  listWebhooks: (w) => Promise.all([createWebhook(w.db, w.org.id), createWebhook(w.db, w.org.id)]),
  listOrganizationEvents: (w) => createEvents(w.log, w.team, 2),
  listTeamEvents: (w) => createEvents(w.log, w.team, 2),
  listWebhookDeliveries: async (w, { webhook }: { webhook: { id: string } }) => {
    const { deliveryId } = await createWebhookWithDelivery(w.db, w.org.id);
    await w.db.updateTable('webhook_deliveries').set({ subscription_id: webhook.id }).where('id', '=', deliveryId).execute();
  },
};

describe(`the typed client against the server (${databaseLabel})`, () => {
  const started = useProxiedApp();
  let app: TestApp;
  let proxy: Proxy;
  const baseUrl = () => `${proxy.url}/v1`;
  beforeAll(() => {
    ({ app, proxy } = started);
  });
  afterEach(() => {
    expect(proxy.violations).toEqual([]);
    proxy.passed.length = 0;
  });

  it("runs the README's ten lines: a team's open tasks page by page, and the first completed with its ETag", async () => {
    const { team, person } = await createTeamWorld(app.db);
    const member = await person('MEMBER', 'MEMBER');
    const start = Date.parse('2026-11-02T08:00:00Z');
    const open = await createTasks(app.db, team.id, member.user.id, 3, (index) => ({ title: `Open task ${index + 1}`, createdAt: new Date(start + index * 60_000) }));
    await createTask(app.db, team.id, member.user.id, { title: 'Done task', completedAt: new Date(start) });

    const printed = await runReadmeExample(baseUrl(), member.key, team.id);

    expect(printed).toEqual([...open.map((task) => task.title), 'completed: Open task 1']);
    const patch = proxy.passed.find((request) => request.method === 'PATCH')!;
    expect(patch.headers['if-match']).toMatch(/^"/);
    expect((await app.db.selectFrom('tasks').select('completed').where('id', '=', open[0]!.id).executeTakeFirstOrThrow()).completed).toBe(true);
  });

  it("runs client/examples/openTasks.ts: a team's open tasks page by page, and the first completed with its ETag", async () => {
    const { team, person } = await createTeamWorld(app.db);
    const member = await person('MEMBER', 'MEMBER');
    const start = Date.parse('2026-11-02T08:00:00Z');
    const open = await createTasks(app.db, team.id, member.user.id, 25, (index) => ({ title: `Open task ${index + 1}`, createdAt: new Date(start + index * 60_000) }));
    await createTasks(app.db, team.id, member.user.id, 3, (index) => ({ title: `Done task ${index + 1}`, completedAt: new Date(start), createdAt: new Date(start + index * 30_000) }));

    const printed = await runScript(example, baseUrl(), member.key, team.id);

    expect(printed.filter((line) => line.startsWith('open: '))).toEqual(open.map((task) => `open: ${task.due_date}  ${task.title}`));
    expect(printed.at(-1)).toBe('completed: Open task 1');
    const pages = proxy.passed.filter((request) => request.method === 'GET' && request.path.startsWith(`/v1/teams/${team.id}/tasks`));
    expect(pages.map((request) => request.status)).toEqual([200, 200]);
    const patch = proxy.passed.find((request) => request.method === 'PATCH')!;
    expect(patch.headers['if-match']).toMatch(/^"/);
    expect(patch.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    const first = await app.db.selectFrom('tasks').select('completed').where('id', '=', open[0]!.id).executeTakeFirstOrThrow();
    expect(first.completed).toBe(true);
  });

  describe('pages', () => {
    let world: World;
    beforeAll(async () => {
      world = await createWorld(app);
    });

    it('covers every list of the contract', () => {
      const covered = listOperations.filter((op) => matrixRows.some((row) => row.operationId === op.operationId && row.variant === undefined));
      expect(covered.map((op) => op.operationId), 'a list reads its main row of test/permissions/<area>.rows.ts; two items for several pages come from moreItems in test/client.test.ts').toEqual(listOperations.map((op) => op.operationId));
      expect(listOperations.length).toBeGreaterThanOrEqual(19);
    });

    it.each(listOperations.map((op) => [op.operationId, op] as const))('gives every item of %s once, in order, one page per item', async (operationId, op) => {
      const row = matrixRows.find((candidate) => candidate.operationId === operationId && candidate.variant === undefined)!;
      const target = row.prepare ? await row.prepare(world) : undefined;
      await moreItems[operationId]?.(world, target);
      const caller = allowedCaller(row);
      const client = createTeamOsClient({ baseUrl: baseUrl(), apiKey: world.keys[caller]!, retry: false });
      const path = pathParams(op.path, row.request(world, target).path);
      const pageable = takesLimit(op);
      const init = (limit: number) => ({ params: { path, query: pageable ? { limit } : {} } }) as never;

      const whole = unwrap(await client.GET(op.path as ListPath, init(100))) as unknown as { data: unknown[]; nextCursor: string | null };
      expect(whole.nextCursor).toBeNull();
      proxy.passed.length = 0;
      const items: unknown[] = [];
      for await (const item of client.pages(op.path as ListPath, init(1))) items.push(item);

      expect(items).toEqual(whole.data);
      if (pageable) expect(whole.data.length, 'items enough for several pages').toBeGreaterThanOrEqual(2);
      expect(proxy.passed.length).toBe(pageable ? Math.max(1, whole.data.length) : 1);
      expect(proxy.passed.every((request) => request.status === 200)).toBe(true);
    });
  });

  it("exports a team's tasks with exportCsv and brings them into another team with importCsv, a dry run first", async () => {
    const { org, team, person } = await createTeamWorld(app.db);
    const member = await person('MEMBER', 'MEMBER');
    const target = await createTeam(app.db, org.id);
    await addTeamMember(app.db, target.id, member.user.id, 'MEMBER');
    await createTask(app.db, team.id, member.user.id, { title: '=Book the Rotterdam slot' });
    const client = createTeamOsClient({ baseUrl: baseUrl(), apiKey: member.key });

    const file = await new Response(await client.exportCsv(team.id, 'tasks')).text();
    const checked = await client.importCsv(target.id, 'tasks', file, { dryRun: true });
    const written = await client.importCsv(target.id, 'tasks', file);
    const refused = await client.importCsv(target.id, 'tasks', 'title\r\nNo owner\r\n').catch((error: unknown) => error);

    expect(file).toContain(",'=Book the Rotterdam slot,");
    expect(checked).toEqual({ teamId: target.id, kind: 'tasks', dryRun: true, rows: 1, written: 1 });
    expect(written).toEqual({ ...checked, dryRun: false });
    expect(refused).toBeInstanceOf(TeamOsError);
    expect((refused as TeamOsError).issues.map((issue) => issue.path)).toEqual([['rows', '1', 'ownerEmail'], ['rows', '1', 'dueDate']]);
  });

  it('retries a POST whose answer was lost with the same Idempotency-Key, and the retry makes no second task', async () => {
    const { team, person } = await createTeamWorld(app.db);
    const member = await person('MEMBER', 'MEMBER');
    const client = createTeamOsClient({ baseUrl: baseUrl(), apiKey: member.key, retry: { baseDelayMs: 10 } });
    proxy.loseNextAnswer('POST');

    const { data, response } = await client.POST('/teams/{teamId}/tasks', { params: { path: { teamId: team.id } }, body: { title: 'Book the Rotterdam slot', ownerId: member.user.id, dueDate: '2026-12-02' } });

    expect(response.status).toBe(201);
    expect(response.headers.get('idempotent-replayed')).toBe('true');
    const posts = proxy.passed.filter((request) => request.method === 'POST');
    expect(posts).toHaveLength(2);
    expect(posts[1]!.headers['idempotency-key']).toBe(posts[0]!.headers['idempotency-key']);
    const rows = await app.db.selectFrom('tasks').select('id').where('team_id', '=', team.id).execute();
    expect(rows.map((row) => row.id)).toEqual([data!.id]);
  });

  it('never sends a change without an Idempotency-Key twice: its lost answer is an error, and the change happened once', async () => {
    const { team, person } = await createTeamWorld(app.db);
    const member = await person('MEMBER', 'MEMBER');
    const client = createTeamOsClient({ baseUrl: baseUrl(), apiKey: member.key, retry: { baseDelayMs: 10, idempotencyKeys: false } });
    proxy.loseNextAnswer('POST');

    await expect(client.POST('/teams/{teamId}/tasks', { params: { path: { teamId: team.id } }, body: { title: 'Book the Rotterdam slot', ownerId: member.user.id, dueDate: '2026-12-02' } })).rejects.toThrow(TypeError);

    expect(proxy.passed.filter((request) => request.method === 'POST')).toHaveLength(1);
    expect(proxy.passed[0]!.headers['idempotency-key']).toBeUndefined();
    expect(await app.db.selectFrom('tasks').select('id').where('team_id', '=', team.id).execute()).toHaveLength(1);
  });

  it("guards a change with the ETag of the create's answer, so a stale change of a new task gets 412", async () => {
    const { team, person } = await createTeamWorld(app.db);
    const member = await person('MEMBER', 'MEMBER');
    const client = createTeamOsClient({ baseUrl: baseUrl(), apiKey: member.key });
    const created = unwrap(await client.POST('/teams/{teamId}/tasks', { params: { path: { teamId: team.id } }, body: { title: 'Book the Rotterdam slot', ownerId: member.user.id, dueDate: '2026-12-02' } }));
    const tag = client.etagOf(created);
    const params = { path: { id: created.id } };

    const changed = await client.PATCH('/tasks/{id}', { params: { ...params, header: { 'If-Match': tag } }, body: { dueDate: '2026-12-04' } });
    const stale = await client.PATCH('/tasks/{id}', { params: { ...params, header: { 'If-Match': tag } }, body: { completed: true } });

    expect([changed.response.status, stale.response.status]).toEqual([200, 412]);
  });

  it('refuses to give a guard for a record that came without an ETag, rather than let the change go unguarded', async () => {
    const { team, person } = await createTeamWorld(app.db);
    const member = await person('MEMBER', 'MEMBER');
    await createTask(app.db, team.id, member.user.id);
    const client = createTeamOsClient({ baseUrl: baseUrl(), apiKey: member.key });
    const page = unwrap(await client.GET('/teams/{teamId}/tasks', { params: { path: { teamId: team.id } } }));

    expect(() => client.etagOf(page.data[0])).toThrow(/came without an ETag/);
    expect(() => client.etagOf({ ...page.data[0] })).toThrow(TypeError);
  });

  it('surfaces a 412 as a TeamOsError (preconditionFailed, with the request id) when the task changed since it was read', async () => {
    const { team, person } = await createTeamWorld(app.db);
    const member = await person('MEMBER', 'MEMBER');
    const stored = await createTask(app.db, team.id, member.user.id, { title: 'Renew the customs bond' });
    const client = createTeamOsClient({ baseUrl: baseUrl(), apiKey: member.key });
    const params = { path: { id: stored.id } };

    const read = unwrap(await client.GET('/tasks/{id}', { params }));
    const tag = client.etagOf(read);
    const changed = unwrap(await client.PATCH('/tasks/{id}', { params: { ...params, header: { 'If-Match': tag } }, body: { dueDate: '2026-12-04' } }));
    const stale = await client.PATCH('/tasks/{id}', { params: { ...params, header: { 'If-Match': tag } }, body: { completed: true } });

    expect(tag).toMatch(/^"/);
    expect(client.etagOf(changed)).not.toBe(tag);
    const error = (() => {
      try {
        unwrap(stale);
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toBeInstanceOf(TeamOsError);
    expect(error).toMatchObject({ status: 412, code: 'preconditionFailed', requestId: stale.response.headers.get('x-request-id') });
    expect(stale.error?.error.code).toBe('preconditionFailed');
    expect((await app.db.selectFrom('tasks').select('completed').where('id', '=', stored.id).executeTakeFirstOrThrow()).completed).toBe(false);
  });
});

describe(`the typed client waiting out the rate limit (${databaseLabel})`, () => {
  // The app's clock stands 3 s before a minute's end while the app starts and the budget is spent,
  // and runs from the moment the 429 comes back: the budget renews 3 s of real time after it.
  const minuteEnd = (Math.floor(Date.now() / 60_000) + 1) * 60_000;
  let clock = () => minuteEnd - 3_000;
  const started = useProxiedApp({ rateLimitPerMinute: 2, now: () => new Date(clock()) });

  it('waits out a 429 until the next minute, as Retry-After says, and then gets its answer', async () => {
    const { app, proxy } = started;
    const { person } = await createTeamWorld(app.db);
    const member = await person('MEMBER', 'MEMBER');
    const send = async (request: Request) => {
      const response = await fetch(request);
      if (response.status === 429) {
        const limitedAt = Date.now();
        clock = () => minuteEnd - 3_000 + (Date.now() - limitedAt);
      }
      return response;
    };
    const client = createTeamOsClient({ baseUrl: `${proxy.url}/v1`, apiKey: member.key, retry: { baseDelayMs: 10 }, fetch: send });
    for (let spent = 0; spent < 2; spent += 1) unwrap(await client.GET('/me'));
    const waitedFrom = Date.now();

    const me = unwrap(await client.GET('/me'));

    expect(me.user.id).toBe(member.user.id);
    expect(proxy.passed.map((request) => request.status).slice(2)).toEqual([429, 200]);
    expect(Date.now() - waitedFrom).toBeGreaterThanOrEqual(1_000);
    expect(proxy.violations).toEqual([]);
  });
});

describe(`the typed client verifying webhooks (${databaseLabel})`, () => {
  let app: TestApp;
  let receiver: Receiver;
  // Started before the test, under the hooks' longer limit: the embedded database opens slowly on a busy machine.
  beforeAll(async () => {
    app = await startTestApp({ webhooks: { allowPrivateTargets: true, deliver: { pollMs: 50 } } });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await app?.close();
  });

  it('verifies a delivery with the secret it was created with and returns the typed event; a changed body or another secret fails', async () => {
    const { org, team, person } = await createTeamWorld(app.db);
    const owner = await person('OWNER', 'MEMBER');
    const client = createTeamOsClient({ baseUrl: `${app.url}/v1`, apiKey: owner.key });
    const { secret } = unwrap(await client.POST('/orgs/{orgId}/webhooks', { params: { path: { orgId: org.id } }, body: { url: receiver.url, events: ['task.created'] } }));
    const task = unwrap(await client.POST('/teams/{teamId}/tasks', { params: { path: { teamId: team.id } }, body: { title: 'Check the Hamburg manifest', ownerId: owner.user.id, dueDate: '2026-12-03' } }));
    const received = (await receiver.waitFor(2)).find((delivery) => delivery.event.type === 'task.created')!;
    const other = `whsec_${Buffer.from('another secret of 24 bytes').toString('base64')}`;

    const event = verifyWebhook(secret, received.headers, received.raw);

    expect(event.type).toBe('task.created');
    if (event.type !== 'task.created') return;
    expect(event.data.object).toEqual(task);
    expect(verifyWebhook([other, secret], received.headers, new TextEncoder().encode(received.raw)).type).toBe('task.created');
    expect(() => verifyWebhook(secret, received.headers, received.raw.replace('Hamburg', 'Hamburk'))).toThrow();
    expect(() => verifyWebhook(other, received.headers, received.raw)).toThrow();
  });
});

describe('the typed client against the Prism mock', () => {
  let mock: MockServer;
  let proxy: Proxy;
  beforeAll(async () => {
    mock = await startMock(await freePort(), await freePort());
    proxy = await startProxy(mock.url.replace(/\/v1$/, ''));
  }, 90_000);
  afterAll(async () => {
    await proxy?.close();
    await mock?.stop();
  });

  it("runs the README's ten lines unchanged", async () => {
    const printed = await runReadmeExample(`${proxy.url}/v1`, 'ak_mock_key_for_the_example_0000000000');

    expect(printed.length).toBeGreaterThan(1);
    expect(printed.at(-1)).toMatch(/^completed: /);
    expect(proxy.violations).toEqual([]);
  });

  it('runs client/examples/openTasks.ts unchanged', async () => {
    const printed = await runScript(example, `${proxy.url}/v1`, 'ak_mock_key_for_the_example_0000000000');

    expect(printed.filter((line) => line.startsWith('open: ')).length).toBeGreaterThan(0);
    expect(printed.at(-1)).toMatch(/^completed: /);
    expect(proxy.violations).toEqual([]);
  });
});

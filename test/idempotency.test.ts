/**
 * The contract's "Retries and concurrent edits": a changing request sent with `Idempotency-Key` runs
 * once; a retry gets the stored answer, byte for byte, with `Idempotent-Replayed: true`; the same key
 * with another request is 422 `idempotencyKeyReused`, and while the first still runs 409
 * `idempotencyKeyInUse`. Keys are scoped to the caller and the operation and kept for 24 hours.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseLabel } from './support/database.js';
import { createMeeting, createTask } from './support/executionFactories.js';
import { expectReplayOf } from './support/expectations.js';
import { createTeamWorld } from './support/factories.js';
import { purgeOutcomes } from '../src/db/queries/idempotency.js';
import { startTestApp, type ApiResponse, type TestApp } from './support/testApp.js';

let app: TestApp;
let clock = new Date();
beforeAll(async () => {
  app = await startTestApp({ now: () => clock });
});
afterAll(() => app.close());

const day = 24 * 60 * 60 * 1000;
let keys = 0;
const newKey = () => `retry-${process.pid}-${++keys}`;

async function setup() {
  const world = await createTeamWorld(app.db);
  return { ...world, member: await world.person('MEMBER', 'MEMBER'), admin: await world.person('MEMBER', 'ADMIN') };
}

const tasksOf = (teamId: string) => app.db.selectFrom('tasks').selectAll().where('team_id', '=', teamId).execute();
const storedKeys = (userId: string) => app.db.selectFrom('idempotency_keys').selectAll().where('user_id', '=', userId).execute();

function postTask(teamId: string, key: string, idempotencyKey: string | undefined, body: Record<string, unknown>): Promise<ApiResponse> {
  return app.request('POST', `/v1/teams/${teamId}/tasks`, {
    key,
    body,
    headers: idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey },
  });
}

const taskBody = (ownerId: string, title = 'Send the revised freight quote') => ({ title, ownerId, dueDate: '2026-11-27' });

describe(`Idempotency-Key: a retry never makes a change twice (${databaseLabel})`, () => {
  it('a POST sent twice with one key makes one task, and the retry gets the first answer byte for byte, headers included, marked as replayed', async () => {
    const { team, member } = await setup();
    const idempotencyKey = newKey();
    const first = await postTask(team.id, member.key, idempotencyKey, taskBody(member.user.id));
    const retry = await postTask(team.id, member.key, idempotencyKey, taskBody(member.user.id));

    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expectReplayOf(retry, first);
    expect(await tasksOf(team.id)).toHaveLength(1);
  });

  it('a PATCH retried gets the first answer\'s ETag, the tag its next If-Match needs', async () => {
    const { team, member } = await setup();
    const task = await createTask(app.db, team.id, member.user.id);
    const headers = { 'idempotency-key': newKey() };
    const first = await app.request('PATCH', `/v1/tasks/${task.id}`, { key: member.key, body: { title: 'Send the signed freight quote' }, headers });
    const retry = await app.request('PATCH', `/v1/tasks/${task.id}`, { key: member.key, body: { title: 'Send the signed freight quote' }, headers });

    expect(first.status).toBe(200);
    expect(first.headers.get('etag')).toMatch(/^"/);
    expectReplayOf(retry, first);
    const next = await app.request('PATCH', `/v1/tasks/${task.id}`, { key: member.key, body: { completed: true }, headers: { 'if-match': retry.headers.get('etag')! } });
    expect(next.status).toBe(200);
  });

  it('ten parallel requests with one key make one task: one runs, the others get 409 idempotencyKeyInUse or the replay', async () => {
    const { team, member } = await setup();
    const idempotencyKey = newKey();
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => postTask(team.id, member.key, idempotencyKey, taskBody(member.user.id))),
    );

    expect(await tasksOf(team.id)).toHaveLength(1);
    const created = answers.filter((answer) => answer.status === 201);
    const busy = answers.filter((answer) => answer.status === 409);
    expect(created.length + busy.length).toBe(10);
    expect(created.filter((answer) => answer.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    expect(new Set(created.map((answer) => answer.text)).size).toBe(1);
    for (const answer of busy) expect(answer.body.error.code).toBe('idempotencyKeyInUse');
  });

  it('ten parallel retries of a finished request all get its answer: replays never refuse each other', async () => {
    const { team, member } = await setup();
    const idempotencyKey = newKey();
    const first = await postTask(team.id, member.key, idempotencyKey, taskBody(member.user.id));
    const retries = await Promise.all(Array.from({ length: 10 }, () => postTask(team.id, member.key, idempotencyKey, taskBody(member.user.id))));

    expect(first.status).toBe(201);
    for (const retry of retries) expectReplayOf(retry, first);
    expect(await tasksOf(team.id)).toHaveLength(1);
  });

  it('the same key with another body is 422 idempotencyKeyReused and changes nothing', async () => {
    const { team, member } = await setup();
    const idempotencyKey = newKey();
    await postTask(team.id, member.key, idempotencyKey, taskBody(member.user.id));
    const reused = await postTask(team.id, member.key, idempotencyKey, taskBody(member.user.id, 'Another task'));

    expect(reused.status).toBe(422);
    expect(reused.body).toEqual({ error: { code: 'idempotencyKeyReused', message: expect.any(String) } });
    expect((await tasksOf(team.id)).map((task) => task.title)).toEqual(['Send the revised freight quote']);
  });

  it('the same key on another path of the same operation is 422 idempotencyKeyReused', async () => {
    const { team, member, org } = await setup();
    const idempotencyKey = newKey();
    const first = await app.request('PATCH', `/v1/tasks/${(await createTask(app.db, team.id, member.user.id)).id}`, {
      key: member.key,
      body: { completed: true },
      headers: { 'idempotency-key': idempotencyKey },
    });
    const other = await createTask(app.db, team.id, member.user.id);
    const reused = await app.request('PATCH', `/v1/tasks/${other.id}`, {
      key: member.key,
      body: { completed: true },
      headers: { 'idempotency-key': idempotencyKey },
    });

    expect(first.status).toBe(200);
    expect([reused.status, reused.body.error.code]).toEqual([422, 'idempotencyKeyReused']);
    expect((await app.db.selectFrom('tasks').select('completed').where('id', '=', other.id).executeTakeFirstOrThrow()).completed).toBe(false);
    expect(org.id).toBeTruthy();
  });

  it('a key is scoped to the operation: the same key on another operation runs as a new request', async () => {
    const { team, member } = await setup();
    const idempotencyKey = newKey();
    const task = await postTask(team.id, member.key, idempotencyKey, taskBody(member.user.id));
    const issue = await app.request('POST', `/v1/teams/${team.id}/issues`, {
      key: member.key,
      body: { title: 'Quotes go out late' },
      headers: { 'idempotency-key': idempotencyKey },
    });

    expect([task.status, issue.status]).toEqual([201, 201]);
    expect(issue.headers.get('idempotent-replayed')).toBeNull();
  });

  it('a key is scoped to the caller: another person with the same key makes their own task', async () => {
    const { team, member, admin } = await setup();
    const idempotencyKey = newKey();
    await postTask(team.id, member.key, idempotencyKey, taskBody(member.user.id));
    const theirs = await postTask(team.id, admin.key, idempotencyKey, taskBody(member.user.id));

    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(await tasksOf(team.id)).toHaveLength(2);
  });

  it('a key is kept for 24 hours: a retry after them runs again', async () => {
    const { team, member } = await setup();
    const idempotencyKey = newKey();
    const started = clock;
    try {
      await postTask(team.id, member.key, idempotencyKey, taskBody(member.user.id));
      clock = new Date(started.getTime() + day - 1000);
      expect((await postTask(team.id, member.key, idempotencyKey, taskBody(member.user.id))).headers.get('idempotent-replayed')).toBe('true');
      clock = new Date(started.getTime() + day + 1000);
      const later = await postTask(team.id, member.key, idempotencyKey, taskBody(member.user.id));

      expect(later.status).toBe(201);
      expect(later.headers.get('idempotent-replayed')).toBeNull();
      expect(await tasksOf(team.id)).toHaveLength(2);
    } finally {
      clock = new Date();
    }
  });

  it('outcomes older than 24 hours are purged; younger ones stay', async () => {
    const { team, member } = await setup();
    await postTask(team.id, member.key, newKey(), taskBody(member.user.id));
    await app.db.updateTable('idempotency_keys').set({ created_at: new Date(clock.getTime() - day - 1000) }).where('user_id', '=', member.user.id).execute();
    await postTask(team.id, member.key, newKey(), taskBody(member.user.id, 'A younger task'));

    expect(await purgeOutcomes(app.db, new Date(clock.getTime() - day))).toBeGreaterThanOrEqual(1);
    expect(await storedKeys(member.user.id)).toHaveLength(1);
  });

  it('a DELETE retried after its answer was lost gets its 204 again instead of 404', async () => {
    const { team, admin } = await setup();
    const task = await createTask(app.db, team.id, admin.user.id);
    const idempotencyKey = newKey();
    const headers = { 'idempotency-key': idempotencyKey };
    const first = await app.request('DELETE', `/v1/tasks/${task.id}`, { key: admin.key, headers });
    const retry = await app.request('DELETE', `/v1/tasks/${task.id}`, { key: admin.key, headers });

    expect([first.status, first.text]).toEqual([204, '']);
    expectReplayOf(retry, first);
  });

  it('a change that runs in a transaction of its own (a meeting status step) joins the transaction of its stored answer', async () => {
    const { team, admin } = await setup();
    const meeting = await createMeeting(app.db, team.id, admin.user.id);
    const headers = { 'idempotency-key': newKey() };
    const first = await app.request('PATCH', `/v1/meetings/${meeting.id}`, { key: admin.key, body: { status: 'IN_PROGRESS' }, headers });
    const retry = await app.request('PATCH', `/v1/meetings/${meeting.id}`, { key: admin.key, body: { status: 'IN_PROGRESS' }, headers });

    expect(first.status).toBe(200);
    expectReplayOf(retry, first);
  });

  it('a quoted key (a structured-field string) is the same key as the bare one', async () => {
    const { team, member } = await setup();
    const idempotencyKey = newKey();
    await postTask(team.id, member.key, idempotencyKey, taskBody(member.user.id));
    const quoted = await postTask(team.id, member.key, `"${idempotencyKey}"`, taskBody(member.user.id));

    expect(quoted.headers.get('idempotent-replayed')).toBe('true');
    expect(await tasksOf(team.id)).toHaveLength(1);
  });
});

describe(`Idempotency-Key: which answers are stored (${databaseLabel})`, () => {
  it('a rule answer of the operation is stored: the retry gets the same 422 even after the rule would pass', async () => {
    const { team, member, person } = await setup();
    const outsider = await person('MEMBER');
    const idempotencyKey = newKey();
    const first = await postTask(team.id, member.key, idempotencyKey, taskBody(outsider.user.id));
    await app.db.insertInto('team_members').values({ team_id: team.id, user_id: outsider.user.id, role: 'MEMBER' }).execute();
    const retry = await postTask(team.id, member.key, idempotencyKey, taskBody(outsider.user.id));

    expect(first.status).toBe(422);
    expectReplayOf(retry, first);
    expect(await tasksOf(team.id)).toHaveLength(0);
  });

  it('a format error is not stored: the corrected request with the same key runs', async () => {
    const { team, member } = await setup();
    const idempotencyKey = newKey();
    const broken = await postTask(team.id, member.key, idempotencyKey, { title: 'Send the quote', ownerId: member.user.id });
    const fixed = await postTask(team.id, member.key, idempotencyKey, taskBody(member.user.id));

    expect([broken.status, fixed.status]).toEqual([422, 201]);
    expect(fixed.headers.get('idempotent-replayed')).toBeNull();
  });

  it('a refusal by role is not stored: nothing is kept for the key', async () => {
    const { team, person } = await setup();
    const viewer = await person('MEMBER', 'VIEWER');
    const refused = await postTask(team.id, viewer.key, newKey(), taskBody(viewer.user.id));

    expect(refused.status).toBe(403);
    expect(await storedKeys(viewer.user.id)).toEqual([]);
  });

  it('a change that fails after writing stores neither the change nor an answer (one transaction)', async () => {
    const failing = await startTestApp({
      database: app.database,
      handlers: {
        createTask: async ({ params, body }, { db }) => {
          await db.insertInto('tasks').values({ team_id: params.teamId, title: body.title, owner_id: body.ownerId, due_date: body.dueDate }).execute();
          throw new Error('failure after the write');
        },
      },
    });
    try {
      const { team, member } = await setup();
      const response = await failing.request('POST', `/v1/teams/${team.id}/tasks`, {
        key: member.key,
        body: taskBody(member.user.id),
        headers: { 'idempotency-key': newKey() },
      });

      expect(response.status).toBe(500);
      expect(await tasksOf(team.id)).toHaveLength(0);
      expect(await storedKeys(member.user.id)).toEqual([]);
    } finally {
      await failing.close();
    }
  });
});

describe(`Idempotency-Key: the header's format (${databaseLabel})`, () => {
  it.each([
    ['over 255 characters', 'k'.repeat(256)],
    ['a control character', 'abc\tdef'],
    ['a character outside ASCII', 'schlüssel'],
    ['an unterminated quoted string', '"abc'],
    ['an empty quoted string', '""'],
    ['a quoted string with a bare quote inside', '"a"b"'],
  ])('a key with %s is a format error of the header, and nothing is created', async (_name, value) => {
    const { team, member } = await setup();
    const response = await postTask(team.id, member.key, value, taskBody(member.user.id));

    expect(response.status).toBe(422);
    expect(response.body.error.issues).toEqual([expect.objectContaining({ origin: 'header', code: 'invalid_format', path: ['Idempotency-Key'] })]);
    expect(await tasksOf(team.id)).toHaveLength(0);
  });

  it('a key of 255 characters is accepted', async () => {
    const { team, member } = await setup();
    const response = await postTask(team.id, member.key, 'k'.repeat(255), taskBody(member.user.id));
    expect(response.status).toBe(201);
  });

  it('reads ignore the header', async () => {
    const { team, member } = await setup();
    const response = await app.request('GET', `/v1/teams/${team.id}/tasks`, { key: member.key, headers: { 'idempotency-key': 'k'.repeat(300) } });
    expect(response.status).toBe(200);
  });
});

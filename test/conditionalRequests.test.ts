/**
 * The contract's "Retries and concurrent edits", conditional half: every read answers with a strong
 * `ETag`; `If-None-Match` with the current tag answers 304 (also from Node's fetch, which adds
 * `Cache-Control: no-cache`, and from curl); a change sent with `If-Match` applies only while the
 * resource still has that tag, else 412 and nothing changes.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseLabel } from './support/database.js';
import { createMeeting, createTask } from './support/executionFactories.js';
import { createTeamWorld } from './support/factories.js';
import { startTestApp, type ApiResponse, type TestApp } from './support/testApp.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

async function setup() {
  const world = await createTeamWorld(app.db);
  return { ...world, member: await world.person('MEMBER', 'MEMBER'), admin: await world.person('MEMBER', 'ADMIN') };
}

const tagOf = (response: ApiResponse) => {
  const tag = response.headers.get('etag');
  expect(tag).toMatch(/^"[\w-]+"$/);
  return tag!;
};

describe(`ETag and If-None-Match on reads (${databaseLabel})`, () => {
  it('a read answers with a strong ETag, the same on every read while nothing changes', async () => {
    const { team, member } = await setup();
    const task = await createTask(app.db, team.id, member.user.id);
    const first = await app.request('GET', `/v1/tasks/${task.id}`, { key: member.key });
    const again = await app.request('GET', `/v1/tasks/${task.id}`, { key: member.key });
    expect(tagOf(again)).toBe(tagOf(first));
  });

  it("If-None-Match with the current tag answers 304 without a body and with the same ETag, from Node's fetch", async () => {
    const { team, member } = await setup();
    const task = await createTask(app.db, team.id, member.user.id);
    const tag = tagOf(await app.request('GET', `/v1/tasks/${task.id}`, { key: member.key }));
    const cached = await app.request('GET', `/v1/tasks/${task.id}`, { key: member.key, headers: { 'if-none-match': tag } });

    expect([cached.status, cached.text, cached.headers.get('etag')]).toEqual([304, '', tag]);
  });

  it('If-None-Match answers 304 to curl as well', async () => {
    const { team, member } = await setup();
    const tag = tagOf(await app.request('GET', `/v1/teams/${team.id}/tasks`, { key: member.key }));
    const { stdout } = await promisify(execFile)('curl', [
      '-s',
      '-o',
      '/dev/null',
      '-w',
      '%{http_code}',
      '-H',
      `Authorization: Bearer ${member.key}`,
      '-H',
      `If-None-Match: ${tag}`,
      `${app.url}/v1/teams/${team.id}/tasks`,
    ]);
    expect(stdout).toBe('304');
  });

  it('a list page has a tag too, and a weak form of the tag or * also answers 304', async () => {
    const { team, member } = await setup();
    const tag = tagOf(await app.request('GET', `/v1/teams/${team.id}/tasks`, { key: member.key }));
    for (const condition of [`W/${tag}`, '*', `"other", ${tag}`]) {
      const cached = await app.request('GET', `/v1/teams/${team.id}/tasks`, { key: member.key, headers: { 'if-none-match': condition } });
      expect(cached.status, condition).toBe(304);
    }
  });

  it('after a change the old tag answers 200 with the new tag, which the change itself answered with', async () => {
    const { team, member } = await setup();
    const task = await createTask(app.db, team.id, member.user.id);
    const old = tagOf(await app.request('GET', `/v1/tasks/${task.id}`, { key: member.key }));
    const changed = await app.request('PATCH', `/v1/tasks/${task.id}`, { key: member.key, body: { title: 'Call the carrier' } });
    const read = await app.request('GET', `/v1/tasks/${task.id}`, { key: member.key, headers: { 'if-none-match': old } });

    expect(read.status).toBe(200);
    expect(tagOf(read)).not.toBe(old);
    expect(tagOf(changed)).toBe(tagOf(read));
  });

  it('a malformed If-None-Match is ignored: the full answer', async () => {
    const { team, member } = await setup();
    const read = await app.request('GET', `/v1/teams/${team.id}`, { key: member.key, headers: { 'if-none-match': 'no quotes' } });
    expect(read.status).toBe(200);
  });
});

describe(`If-Match on changes (${databaseLabel})`, () => {
  it('two editors of a task with the same tag: the first wins, the second gets 412 and the first one\'s title stays', async () => {
    const { team, member, admin } = await setup();
    const task = await createTask(app.db, team.id, member.user.id);
    const tag = tagOf(await app.request('GET', `/v1/tasks/${task.id}`, { key: member.key }));
    const first = await app.request('PATCH', `/v1/tasks/${task.id}`, { key: member.key, body: { title: 'First' }, headers: { 'if-match': tag } });
    const second = await app.request('PATCH', `/v1/tasks/${task.id}`, { key: admin.key, body: { title: 'Second' }, headers: { 'if-match': tag } });

    expect(first.status).toBe(200);
    expect([second.status, second.body.error.code]).toEqual([412, 'preconditionFailed']);
    expect((await app.db.selectFrom('tasks').select('title').where('id', '=', task.id).executeTakeFirstOrThrow()).title).toBe('First');
  });

  it('two editors of a vision field: the second write with the old tag is refused', async () => {
    const { team, admin } = await setup();
    const created = await app.request('POST', `/v1/teams/${team.id}/vision`, { key: admin.key });
    const tag = tagOf(created);
    const first = await app.request('PATCH', `/v1/teams/${team.id}/vision`, {
      key: admin.key,
      body: { field: 'tenYearTarget', value: 'Largest carrier in the region' },
      headers: { 'if-match': tag },
    });
    const second = await app.request('PATCH', `/v1/teams/${team.id}/vision`, {
      key: admin.key,
      body: { field: 'tenYearTarget', value: 'Something else' },
      headers: { 'if-match': tag },
    });

    expect([first.status, second.status]).toEqual([200, 412]);
    expect((await app.request('GET', `/v1/teams/${team.id}/vision`, { key: admin.key })).body.tenYearTarget).toBe('Largest carrier in the region');
  });

  it('two editors of a meeting: notes written with an old tag are refused, and a rating with the meeting\'s old tag too', async () => {
    const { team, admin } = await setup();
    const meeting = await createMeeting(app.db, team.id, admin.user.id);
    const tag = tagOf(await app.request('GET', `/v1/meetings/${meeting.id}`, { key: admin.key }));
    const started = await app.request('PATCH', `/v1/meetings/${meeting.id}`, { key: admin.key, body: { status: 'IN_PROGRESS' }, headers: { 'if-match': tag } });
    const notes = await app.request('PATCH', `/v1/meetings/${meeting.id}`, { key: admin.key, body: { notes: 'Late' }, headers: { 'if-match': tag } });
    const rating = await app.request('PUT', `/v1/meetings/${meeting.id}/ratings/me`, { key: admin.key, body: { rating: 8 }, headers: { 'if-match': tag } });
    const current = await app.request('PUT', `/v1/meetings/${meeting.id}/ratings/me`, {
      key: admin.key,
      body: { rating: 8 },
      headers: { 'if-match': tagOf(started) },
    });

    expect([started.status, notes.status, rating.status, current.status]).toEqual([200, 412, 412, 200]);
  });

  it('of two simultaneous changes with the same tag exactly one is applied', async () => {
    const { team, member, admin } = await setup();
    const task = await createTask(app.db, team.id, member.user.id);
    const tag = tagOf(await app.request('GET', `/v1/tasks/${task.id}`, { key: member.key }));
    const answers = await Promise.all(
      [member, admin, member, admin].map((editor, index) =>
        app.request('PATCH', `/v1/tasks/${task.id}`, { key: editor.key, body: { title: `Edit ${index}` }, headers: { 'if-match': tag } }),
      ),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 412, 412, 412]);
  });

  it('If-Match: * applies to an existing resource; a weak tag never matches', async () => {
    const { team, member } = await setup();
    const task = await createTask(app.db, team.id, member.user.id);
    const tag = tagOf(await app.request('GET', `/v1/tasks/${task.id}`, { key: member.key }));
    const weak = await app.request('PATCH', `/v1/tasks/${task.id}`, { key: member.key, body: { completed: true }, headers: { 'if-match': `W/${tag}` } });
    const any = await app.request('PATCH', `/v1/tasks/${task.id}`, { key: member.key, body: { completed: true }, headers: { 'if-match': '*' } });
    expect([weak.status, any.status]).toEqual([412, 200]);
  });

  it('a DELETE with a stale tag is refused and the task stays', async () => {
    const { team, member, admin } = await setup();
    const task = await createTask(app.db, team.id, member.user.id);
    const tag = tagOf(await app.request('GET', `/v1/tasks/${task.id}`, { key: member.key }));
    await app.request('PATCH', `/v1/tasks/${task.id}`, { key: member.key, body: { title: 'Changed' } });
    const refused = await app.request('DELETE', `/v1/tasks/${task.id}`, { key: admin.key, headers: { 'if-match': tag } });

    expect(refused.status).toBe(412);
    expect(await app.db.selectFrom('tasks').select('id').where('id', '=', task.id).executeTakeFirst()).toBeDefined();
  });

  it('a caller the change refuses gets 403, not 412, whatever the tag', async () => {
    const { team, member, person } = await setup();
    const viewer = await person('MEMBER', 'VIEWER');
    const task = await createTask(app.db, team.id, member.user.id);
    const refused = await app.request('PATCH', `/v1/tasks/${task.id}`, { key: viewer.key, body: { title: 'x' }, headers: { 'if-match': '"stale"' } });
    expect(refused.status).toBe(403);
  });

  it('an unknown resource is 404, also with If-Match: *', async () => {
    const { member } = await setup();
    const missing = await app.request('PATCH', '/v1/tasks/00000000-0000-4000-8000-000000000000', {
      key: member.key,
      body: { title: 'x' },
      headers: { 'if-match': '*' },
    });
    expect(missing.status).toBe(404);
  });

  it('a malformed If-Match is a format error of the header', async () => {
    const { team, member } = await setup();
    const task = await createTask(app.db, team.id, member.user.id);
    const response = await app.request('PATCH', `/v1/tasks/${task.id}`, { key: member.key, body: { title: 'x' }, headers: { 'if-match': 'abc' } });
    expect(response.status).toBe(422);
    expect(response.body.error.issues).toEqual([expect.objectContaining({ origin: 'header', path: ['If-Match'] })]);
  });

  it('an If-Match or If-None-Match of more than 1024 characters is a format error of the header; 1024 are read', async () => {
    const { team, member } = await setup();
    const task = await createTask(app.db, team.id, member.user.id);
    const tagOfLength = (length: number) => `"${'a'.repeat(length - 2)}"`;
    const change = (ifMatch: string) => app.request('PATCH', `/v1/tasks/${task.id}`, { key: member.key, body: { title: 'x' }, headers: { 'if-match': ifMatch } });
    const read = (ifNoneMatch: string) => app.request('GET', `/v1/tasks/${task.id}`, { key: member.key, headers: { 'if-none-match': ifNoneMatch } });
    const headerIssue = (name: string) => [{ origin: 'header', path: [name], code: 'too_big', message: 'Must be at most 1024 characters.', maximum: 1024, inclusive: true }];

    const [changeAtLimit, readAtLimit] = [await change(tagOfLength(1024)), await read(tagOfLength(1024))];
    const [changeTooLong, readTooLong] = [await change(tagOfLength(1025)), await read(tagOfLength(1025))];

    expect([changeAtLimit.status, readAtLimit.status]).toEqual([412, 200]);
    expect([changeTooLong.status, changeTooLong.body.error.issues]).toEqual([422, headerIssue('If-Match')]);
    expect([readTooLong.status, readTooLong.body.error.issues]).toEqual([422, headerIssue('If-None-Match')]);
  });

  it('a 412 is not stored under an Idempotency-Key: the retry with the current tag applies', async () => {
    const { team, member } = await setup();
    const task = await createTask(app.db, team.id, member.user.id);
    const headers = { 'idempotency-key': `conditional-${task.id}` };
    const stale = await app.request('PATCH', `/v1/tasks/${task.id}`, { key: member.key, body: { title: 'x' }, headers: { ...headers, 'if-match': '"stale"' } });
    const tag = tagOf(await app.request('GET', `/v1/tasks/${task.id}`, { key: member.key }));
    const fresh = await app.request('PATCH', `/v1/tasks/${task.id}`, { key: member.key, body: { title: 'x' }, headers: { ...headers, 'if-match': tag } });
    expect([stale.status, fresh.status]).toEqual([412, 200]);
  });
});

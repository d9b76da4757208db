/**
 * Changes in one statement (issue 32): a task or an issue created, changed or deleted without `Idempotency-Key`
 * or `If-Match` is one statement after authentication — the access check the authorization module
 * granted, the rules, the change and its event. Its answer and its event's object are PostgreSQL's
 * JSON, held here byte for byte to what the mapper and `eventText` write; a refusal changes nothing,
 * writes no event and is decided by a second statement; when the statement changed nothing and
 * nothing refuses the change, it runs again in a transaction and is recorded once.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTask as createTaskHandler } from '../src/handlers/tasks.js';
import { writingItsEvent, type Handler } from '../src/handlers/types.js';
import { ChangedMeanwhile, eventText } from '../src/events/outbox.js';
import { createTestDatabase, databaseLabel, type TestDatabase } from './support/database.js';
import { createMeeting, createTask } from './support/executionFactories.js';
import { createTeamWorld } from './support/factories.js';
import { startTestApp, type TestApp } from './support/testApp.js';

let statements: string[] | undefined;
let database: TestDatabase;
let app: TestApp;
beforeAll(async () => {
  database = await createTestDatabase({ onQuery: (text) => statements?.push(text) });
  // The refresh of the log's end that reads state (Log-Position) belongs to the process, not to a request: it waits a minute here.
  app = await startTestApp({ database, logPositions: { refreshMs: 60_000 }, callerCache: { silenceMs: 60_000 } });
});
afterAll(async () => {
  await app.close();
  await database.close();
});

async function setup() {
  const world = await createTeamWorld(app.db);
  return { ...world, member: await world.person('MEMBER', 'MEMBER'), outsider: await world.person('MEMBER') };
}

interface LoggedEvent {
  id: string;
  type: string;
  event: string;
  team_id: string | null;
  traceparent: string | null;
}

/** The events of the log whose object is (or names) `id`, in log order. */
async function eventsOf(id: string): Promise<LoggedEvent[]> {
  const { rows } = await sql<LoggedEvent>`
    select id, type, event, team_id, traceparent from webhook_events where event::json -> 'data' -> 'object' ->> 'id' = ${id} order by txid, position
  `.execute(app.db);
  return rows;
}

/**
 * The statements a request sends for its operation: authentication aside (the key's lookup, sent
 * only while the caller is not kept in memory) and the recording of a key's use.
 */
async function counted<T>(work: () => Promise<T>): Promise<{ result: T; sent: string[] }> {
  statements = [];
  try {
    const result = await work();
    return { result, sent: statements.filter((text) => !/^update "api_keys" set "last_used_at"|^select "api_keys"\."id"/.test(text)) };
  } finally {
    statements = undefined;
  }
}

/** The event's text as `eventText` writes it for the answer `answer` (JSON text). */
function expectedText(event: LoggedEvent, answer: string) {
  const { type, timestamp, data } = JSON.parse(event.event) as { type: string; timestamp: string; data: { orgId: string; teamId: string } };
  return eventText(event.id, type, new Date(timestamp), { orgId: data.orgId, teamId: data.teamId, object: JSON.parse(answer) });
}

const unusualTitle = 'Quote "Baltic" \\ Trade: naïve café, 𝄞 and \u2028 a line separator';

describe(`a task's changes in one statement (${databaseLabel})`, () => {
  it('with an Idempotency-Key the new task and its event are still one statement, inside the key\'s transaction', async () => {
    const { team, member } = await setup();

    const { result: created, sent } = await counted(() =>
      app.request('POST', `/v1/teams/${team.id}/tasks`, {
        key: member.key,
        headers: { 'idempotency-key': `one-statement-${team.id}` },
        body: { title: 'Book the ferry', ownerId: member.user.id, dueDate: '2026-12-01' },
      }),
    );

    expect(created.status).toBe(201);
    const changing = sent.filter((text) => /webhook_events/.test(text));
    expect(changing, sent.join('\n')).toHaveLength(1);
    expect(changing[0]).toMatch(/insert into "?tasks"?/i);
    expect(sent.filter((text) => /^begin/i.test(text)), sent.join('\n')).toHaveLength(1);
    const events = await eventsOf(created.body.id);
    expect(events.map((event) => event.type)).toEqual(['task.created']);
    expect(events[0]!.event).toBe(expectedText(events[0]!, created.text));
  });

  it('a new task is answered, and its event written, byte for byte as the mapper and eventText write them, in one statement', async () => {
    const { org, team, member } = await setup();
    const meeting = await createMeeting(app.db, team.id, member.user.id);

    const { result: created, sent } = await counted(() =>
      app.request('POST', `/v1/teams/${team.id}/tasks`, { key: member.key, body: { title: unusualTitle, ownerId: member.user.id, dueDate: '2026-12-01', meetingId: meeting.id } }),
    );

    expect(created.status).toBe(201);
    expect(sent, sent.join('\n')).toHaveLength(1);
    const read = await app.request('GET', `/v1/tasks/${created.body.id}`, { key: member.key });
    expect(created.text).toBe(read.text);
    const [event, ...others] = await eventsOf(created.body.id);
    expect(others).toEqual([]);
    expect([event!.type, event!.team_id]).toEqual(['task.created', team.id]);
    expect(event!.event).toBe(expectedText(event!, created.text));
    expect(JSON.parse(event!.event).data.orgId).toBe(org.id);
  });

  it('a change is answered, and its event written, byte for byte as the mapper and eventText write them, in one statement', async () => {
    const { team, member } = await setup();
    const task = await createTask(app.db, team.id, member.user.id);

    const { result: changed, sent } = await counted(() =>
      app.request('PATCH', `/v1/tasks/${task.id}`, { key: member.key, body: { title: unusualTitle, completed: true } }),
    );

    expect(changed.status).toBe(200);
    expect(sent, sent.join('\n')).toHaveLength(1);
    expect(changed.body.completedAt).not.toBeNull();
    const read = await app.request('GET', `/v1/tasks/${task.id}`, { key: member.key });
    expect(changed.text).toBe(read.text);
    expect(changed.headers.get('etag')).toBe(read.headers.get('etag'));
    const events = await eventsOf(task.id);
    expect(events.map((event) => event.type)).toEqual(['task.updated']);
    expect(events[0]!.event).toBe(expectedText(events[0]!, changed.text));
  });

  it('a deletion writes its event with the id of what is gone, in one statement', async () => {
    const world = await createTeamWorld(app.db);
    const admin = await world.person('MEMBER', 'ADMIN');
    const task = await createTask(app.db, world.team.id, admin.user.id);

    const { result: deleted, sent } = await counted(() => app.request('DELETE', `/v1/tasks/${task.id}`, { key: admin.key }));

    expect(deleted.status).toBe(204);
    expect(sent, sent.join('\n')).toHaveLength(1);
    const events = await eventsOf(task.id);
    expect(events.map((event) => [event.type, event.team_id])).toEqual([['task.deleted', world.team.id]]);
    // Its revision is the log position of the deletion, drawn by the same statement: above the task's last.
    const { revision } = JSON.parse(events[0]!.event).data.object;
    expect(revision).toBeGreaterThan(Number(task.revision));
    expect(events[0]!.event).toBe(expectedText(events[0]!, JSON.stringify({ id: task.id, revision })));
  });

  it("the event keeps the request's traceparent, as a change in a transaction does", async () => {
    const { team, member } = await setup();
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const plain = await app.request('POST', `/v1/teams/${team.id}/tasks`, {
      key: member.key,
      body: { title: 'Traced', ownerId: member.user.id, dueDate: '2026-12-01' },
      headers: { traceparent },
    });
    expect(plain.status).toBe(201);
    const [event] = await eventsOf(plain.body.id);
    expect(event!.traceparent).toBe(plain.headers.get('traceresponse'));
    expect(event!.traceparent).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/);
  });
});

describe(`an issue's changes in one statement (${databaseLabel})`, () => {
  it('a new issue, a change clearing its description and solving it, and its deletion: answers and events byte for byte, one statement each', async () => {
    const { team, member, person } = await setup();
    const admin = await person('MEMBER', 'ADMIN');

    const created = await counted(() =>
      app.request('POST', `/v1/teams/${team.id}/issues`, { key: member.key, body: { title: unusualTitle, description: 'Line one\nline "two"', priority: 'HIGH' } }),
    );
    const id = created.result.body.id as string;
    const changed = await counted(() => app.request('PATCH', `/v1/issues/${id}`, { key: member.key, body: { description: '', status: 'SOLVED' } }));
    const read = await app.request('GET', `/v1/issues/${id}`, { key: member.key });
    const deleted = await counted(() => app.request('DELETE', `/v1/issues/${id}`, { key: admin.key }));

    expect([created.result.status, changed.result.status, deleted.result.status]).toEqual([201, 200, 204]);
    expect([created.sent.length, changed.sent.length, deleted.sent.length]).toEqual([1, 1, 1]);
    expect(changed.result.body).toMatchObject({ description: null, status: 'SOLVED' });
    expect(changed.result.text).toBe(read.text);
    const events = await eventsOf(id);
    expect(events.map((event) => event.type)).toEqual(['issue.created', 'issue.updated', 'issue.deleted']);
    expect(events[0]!.event).toBe(expectedText(events[0]!, created.result.text));
    expect(events[1]!.event).toBe(expectedText(events[1]!, changed.result.text));
    const { revision } = JSON.parse(events[2]!.event).data.object;
    expect(revision).toBeGreaterThan(JSON.parse(changed.result.text).revision);
    expect(events[2]!.event).toBe(expectedText(events[2]!, JSON.stringify({ id, revision })));
  });
});

describe(`a change its statement refuses changes nothing, and a second statement says why (${databaseLabel})`, () => {
  it('a new owner outside the team: 422, the task unchanged, no event', async () => {
    const { team, member, outsider } = await setup();
    const task = await createTask(app.db, team.id, member.user.id);
    const before = await app.request('GET', `/v1/tasks/${task.id}`, { key: member.key });

    const refused = await app.request('PATCH', `/v1/tasks/${task.id}`, { key: member.key, body: { title: 'Never stored', ownerId: outsider.user.id } });

    expect([refused.status, refused.body.error.code]).toEqual([422, 'invalid']);
    expect(refused.body.error.message).toBe("The task's owner must be a member of its team.");
    expect((await app.request('GET', `/v1/tasks/${task.id}`, { key: member.key })).text).toBe(before.text);
    expect(await eventsOf(task.id)).toEqual([]);
  });

  it('a new task from a meeting of another team: 422, no task, no event', async () => {
    const { team, member } = await setup();
    const elsewhere = await createTeamWorld(app.db);
    const meeting = await createMeeting(app.db, elsewhere.team.id, member.user.id);
    const count = async () => (await sql<{ n: number }>`select count(*)::int as n from tasks where team_id = ${team.id}`.execute(app.db)).rows[0]!.n;

    const refused = await app.request('POST', `/v1/teams/${team.id}/tasks`, {
      key: member.key,
      body: { title: 'Never stored', ownerId: member.user.id, dueDate: '2026-12-01', meetingId: meeting.id },
    });

    expect([refused.status, refused.body.error.message]).toEqual([422, 'The meeting must be a meeting of the same team.']);
    expect(await count()).toBe(0);
  });

  it('a Viewer: 403, decided by the load path after the statement changed nothing; an outsider: 404', async () => {
    const world = await createTeamWorld(app.db);
    const viewer = await world.person('MEMBER', 'VIEWER');
    const outsider = await world.person('MEMBER');
    const task = await createTask(app.db, world.team.id, viewer.user.id);

    const { result: forbidden, sent } = await counted(() => app.request('PATCH', `/v1/tasks/${task.id}`, { key: viewer.key, body: { title: 'No' } }));
    const hidden = await app.request('DELETE', `/v1/tasks/${task.id}`, { key: outsider.key });

    expect([forbidden.status, forbidden.body.error.code]).toEqual([403, 'forbidden']);
    expect(sent, sent.join('\n')).toHaveLength(2);
    expect(sent.some((text) => /^begin/i.test(text))).toBe(false);
    expect([hidden.status, hidden.body.error.code]).toEqual([404, 'notFound']);
    expect(await eventsOf(task.id)).toEqual([]);
  });
});

describe(`a change its statement did not make, and nothing refuses, runs again in a transaction (${databaseLabel})`, () => {
  let raced: TestApp;
  beforeAll(async () => {
    // What a change between the statement and the load path looks like to the outbox: the statement
    // changed nothing (a role or a member moved), and the load path found nothing to refuse.
    const racing: Handler<'createTask'> = writingItsEvent(async (request, context) => {
      if (context.event) throw new ChangedMeanwhile();
      return createTaskHandler(request, context);
    });
    raced = await startTestApp({ database, handlers: { createTask: racing } });
  });
  afterAll(() => raced.close());

  it('the task is created once, in a transaction, with its event once', async () => {
    const { team, member } = await setup();

    const { result: created, sent } = await counted(() =>
      raced.request('POST', `/v1/teams/${team.id}/tasks`, { key: member.key, body: { title: 'Created the second time', ownerId: member.user.id, dueDate: '2026-12-01' } }),
    );

    expect(created.status).toBe(201);
    expect(sent.filter((text) => /^begin/i.test(text)), sent.join('\n')).toHaveLength(1);
    const stored = await sql<{ n: number }>`select count(*)::int as n from tasks where team_id = ${team.id}`.execute(app.db);
    expect(stored.rows[0]!.n).toBe(1);
    const events = await eventsOf(created.body.id);
    expect(events.map((event) => event.type)).toEqual(['task.created']);
    expect(events[0]!.event).toBe(expectedText(events[0]!, created.text));
  });
});

/**
 * The event log (issue 29): every successful change writes exactly its events, in its own
 * transaction, whether or not anyone subscribes, and nothing is left by a change refused or rolled
 * back; the log is read gap-free below the horizon of running transactions; a subscription gets the
 * events committed after it was created; the worker purges what is older than the retention.
 *
 * The fan-out is driven by the tests with the worker's own statement (`fanOut`): no app of this file
 * runs a worker but the retention test's, so nothing moves the log's position behind a test's back.
 * Changes are held open inside their transaction by a lock of a session of the test's own (see
 * test/support/eventLog.ts), and the tests wait on what PostgreSQL says is waiting, never on time.
 * PGlite runs one transaction at a time, so the tests of overlapping transactions run on PostgreSQL only;
 * eventLog.pglite.test.ts shows the feed's horizon on PGlite with a transaction prepared for two-phase commit.
 */
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Database } from '../src/db/database.js';
import { belowHorizon, eventPage, findEvent, insertEvents, logHorizon } from '../src/db/queries/events.js';
import { fanOut, purgeEvents, purgeStatement } from '../src/db/queries/webhooks.js';
import { deliveryBody, eventText } from '../src/events/outbox.js';
import { purgeExpiredEvents } from '../src/webhooks/worker.js';
import { createTask as createTaskHandler, deleteTask as deleteTaskHandler } from '../src/handlers/tasks.js';
import type { Handler } from '../src/handlers/types.js';
import { matrixRows } from './permissions/rows.js';
import { allowedCaller, callerNames, createWorld, type World } from './permissions/world.js';
import { checkWebhookEvent, operations } from './support/contract.js';
import { createPostgresDatabase, createTestDatabase, databaseLabel, postgresUrl, type TestDatabase } from './support/database.js';
import { eventObjectOf, eventOf, eventsOf, fannedOut, fanOutAll, holdKeyedChange, holdKeyedChanges, whereEventsAreDeclared, type Hold } from './support/eventLog.js';
import { createTask } from './support/executionFactories.js';
import { createTeamWorld } from './support/factories.js';
import { createMeetingIn, createMessage } from './support/meetingFactories.js';
import { waitFor } from './support/processes.js';
import { startReceiver } from './support/receiver.js';
import { startTestApp, type TestApp } from './support/testApp.js';

const organizationEvents = /^(organization|organization_member)\./;
const pingType = 'webhook.ping';
const day = 24 * 60 * 60 * 1000;
/** How long any wait may last, and the tests that wait on the database or a worker (a sound log answers at once). */
const patienceMs = 60_000;
const testMs = 2 * patienceMs;

let database: TestDatabase;
let app: TestApp;
let world: World;
const now = () => new Date();

const methodOf = (operationId: string) => operations.find((op) => op.operationId === operationId)!.method.toUpperCase();

interface LogRow {
  id: string;
  org_id: string;
  team_id: string | null;
  type: string;
  event: string;
  created_at: Date;
  txid: string;
  position: string;
}

/** Where a reader of the log stands: after the event at (txid, position). */
interface Cursor {
  txid: string;
  position: string;
}

const logColumns = sql`id, org_id, team_id, type, event, created_at, txid::text as txid, position::text as position`;

/** The events after `cursor` (the log's end when none is given), in log order, pings aside. */
async function logAfter(db: Kysely<Database>, cursor: Cursor): Promise<LogRow[]> {
  const { rows } = await sql<LogRow>`
    select ${logColumns} from webhook_events
    where (txid, position) > (${cursor.txid}::xid8, ${cursor.position}::bigint) and type <> ${pingType}
    order by txid, position
  `.execute(db);
  return rows;
}

/** Where the log ends now: a reader starting here reads only what is written after. */
async function logEnd(db: Kysely<Database>): Promise<Cursor> {
  const { rows } = await sql<Cursor>`
    select coalesce(max(txid), '0'::xid8)::text as txid, coalesce(max(position), 0)::text as position from webhook_events
  `.execute(db);
  return rows[0]!;
}

/** A reader of an organization's log after `cursor` as the feed reads it: below the horizon (`belowHorizon`), or without it (the control). */
async function readFeed(db: Kysely<Database>, orgId: string, cursor: Cursor, guard: 'below the horizon' | 'without the guard'): Promise<LogRow[]> {
  const horizon = guard === 'below the horizon' ? sql`and ${belowHorizon(sql`txid`)}` : sql``;
  const { rows } = await sql<LogRow>`
    select ${logColumns} from webhook_events
    where org_id = ${orgId} and (txid, position) > (${cursor.txid}::xid8, ${cursor.position}::bigint) and type <> ${pingType} ${horizon}
    order by txid, position
  `.execute(db);
  return rows;
}

const cursorOf = (row: LogRow): Cursor => ({ txid: row.txid, position: row.position });
const objectIdOf = (row: LogRow) => (JSON.parse(row.event) as { data: { object: { id?: string } } }).data.object.id;

/** The ids of the events a subscription has deliveries of, pings aside, in log order. */
async function deliveredEvents(db: Kysely<Database>, subscriptionId: string): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    select e.id from webhook_deliveries d join webhook_events e on e.id = d.event_id
    where d.subscription_id = ${subscriptionId} and e.type <> ${pingType}
    order by e.txid, e.position
  `.execute(db);
  return rows.map((row) => row.id);
}

/** How far the fan-out has passed the log. */
async function fanOutPosition(db: Kysely<Database>): Promise<Cursor> {
  const { rows } = await sql<Cursor>`select last_txid::text as txid, last_position::text as position from webhook_fanout where id = 1`.execute(db);
  return rows[0]!;
}

/** The log's horizon now: the oldest transaction of the database still running (a transaction id only grows, so the horizon never moves back). */
async function horizon(db: Kysely<Database>): Promise<bigint> {
  const { rows } = await sql<{ horizon: string }>`select ${logHorizon}::text as horizon`.execute(db);
  return BigInt(rows[0]!.horizon);
}

const before = (a: Cursor, b: Cursor) => BigInt(a.txid) < BigInt(b.txid) || (a.txid === b.txid && BigInt(a.position) < BigInt(b.position));

async function subscribe(key: string, orgId: string, options: { url?: string; events?: string[]; headers?: Record<string, string> } = {}) {
  const response = await app.request('POST', `/v1/orgs/${orgId}/webhooks`, {
    key,
    body: { url: options.url ?? 'https://hooks.northwind.example/teamos', events: options.events ?? ['*'] },
    headers: options.headers,
  });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body as { id: string; secret: string };
}

/** An organization with one team and its Owner, who is also the team's Admin: a caller who may change tasks and subscriptions. */
async function ownOrganization(db: Kysely<Database> = app.db) {
  const own = await createTeamWorld(db);
  const owner = await own.person('OWNER', 'ADMIN');
  return { org: own.org, team: own.team, owner };
}

function newTask(target: TestApp, owner: { key: string; user: { id: string } }, teamId: string, headers?: Record<string, string>) {
  return target.request('POST', `/v1/teams/${teamId}/tasks`, {
    key: owner.key,
    body: { title: `Confirm the Gdańsk pickup window ${randomUUID().slice(0, 8)}`, ownerId: owner.user.id, dueDate: '2026-12-01' },
    headers,
  });
}

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startTestApp({ database });
  world = await createWorld(app);
});

afterAll(async () => {
  await app.close();
  await database.close();
});

describe(`every change leaves exactly its events in the log, with no subscription anywhere (${databaseLabel})`, () => {
  const rows = matrixRows.filter((row) => row.variant === undefined && eventOf(row.operationId) !== undefined);
  const subscriptions = async () => (await sql<{ n: number }>`select count(*)::int as n from webhook_subscriptions`.execute(app.db)).rows[0]!.n;


  it.each(rows.map((row) => [row.operationId, row] as const))(
    '%s writes exactly its event, as the contract’s webhook says, with the organization and team its body names',
    async (operationId, row) => {
      expect(await subscriptions()).toBe(0);
      const caller = allowedCaller(row);
      const target = row.prepare ? await row.prepare(world) : undefined;
      const { path, body } = row.request(world, target);
      const end = await logEnd(app.db);
      const response = await app.request(methodOf(operationId), path, { key: world.keys[caller], body });
      expect(response.status, JSON.stringify(response.body)).toBeLessThan(300);

      const written = await logAfter(app.db, end);
      const expected = eventOf(operationId)!;
      const where = whereEventsAreDeclared(operationId, expected);
      expect(written.map((event) => event.type), where).toEqual(eventsOf(operationId));
      const [event] = written;
      const sent = JSON.parse(deliveryBody(event!.id, event!.event));
      expect(checkWebhookEvent(sent).problems, where).toEqual([]);
      expect(sent.type).toBe(event!.type);
      expect(sent.timestamp).toBe(event!.created_at.toISOString());
      expect(sent.data.orgId).toBe(world.org.id);
      expect(event!.org_id).toBe(sent.data.orgId);
      expect(event!.team_id).toBe(sent.data.teamId);
      if (organizationEvents.test(event!.type)) expect(sent.data.teamId).toBeNull();
      else expect(sent.data.teamId).toEqual(expect.any(String));
      const answered = eventObjectOf(operationId, response.body);
      if (response.status !== 204 && !event!.type.startsWith('meeting_rating.')) expect(sent.data.object).toEqual(answered);
    },
  );

  const refusable = rows
    .map((row) => ({ row, caller: callerNames[row.expect.findIndex((expected) => expected === 403 || expected === 404)] }))
    .filter((refused) => refused.caller !== undefined);
  it.each(refusable.map(({ row, caller }) => [row.operationId, caller!, row] as const))('%s refused to %s writes nothing', async (operationId, caller, row) => {
    const target = row.prepare ? await row.prepare(world) : undefined;
    const { path, body } = row.request(world, target);
    const end = await logEnd(app.db);
    const response = await app.request(methodOf(operationId), path, { key: world.keys[caller], body });
    expect(response.status).toBe(row.expect[callerNames.indexOf(caller)]);
    expect(await logAfter(app.db, end)).toEqual([]);
  });

  it('a change its rules refuse (422) writes nothing, with an Idempotency-Key (its answer stored) or without', async () => {
    const end = await logEnd(app.db);
    const refused = (headers?: Record<string, string>) =>
      app.request('POST', `/v1/teams/${world.team.id}/tasks`, {
        key: world.keys.teamMember,
        body: { title: 'Call Baltic Trade', ownerId: world.users.outsider.id, dueDate: '2026-12-01' },
        headers,
      });
    expect((await refused()).status).toBe(422);
    const key = { 'idempotency-key': randomUUID() };
    expect((await refused(key)).status).toBe(422);
    expect((await refused(key)).headers.get('idempotent-replayed')).toBe('true');
    expect(await logAfter(app.db, end)).toEqual([]);
  });

  it('a change rolled back after its write writes nothing: a creation, and a deletion (its subject looked up before it)', async () => {
    const failingCreate: Handler<'createTask'> = async (request, context) => {
      await createTaskHandler(request, context);
      throw new Error('failure after the write');
    };
    const failingDelete: Handler<'deleteTask'> = async (request, context) => {
      await deleteTaskHandler(request, context);
      throw new Error('failure after the write');
    };
    const broken = await startTestApp({ database, handlers: { createTask: failingCreate, deleteTask: failingDelete } });
    try {
      const task = await createTask(app.db, world.team.id, world.users.teamMember.id);
      const tasks = async () => (await sql<{ n: number }>`select count(*)::int as n from tasks`.execute(app.db)).rows[0]!.n;
      const tasksBefore = await tasks();
      const end = await logEnd(app.db);
      const created = await broken.request('POST', `/v1/teams/${world.team.id}/tasks`, {
        key: world.keys.teamMember,
        body: { title: 'Never stored', ownerId: world.users.teamMember.id, dueDate: '2026-12-01' },
      });
      expect(created.status).toBe(500);
      const deleted = await broken.request('DELETE', `/v1/tasks/${task.id}`, { key: world.keys.teamAdmin });
      expect(deleted.status).toBe(500);
      expect(await logAfter(app.db, end)).toEqual([]);
      expect(await tasks()).toBe(tasksBefore);
    } finally {
      await broken.close();
    }
  });

  it('a change retried with its Idempotency-Key is in the log once', async () => {
    const end = await logEnd(app.db);
    const headers = { 'idempotency-key': randomUUID() };
    const body = { title: 'Book the Riga warehouse', ownerId: world.users.teamMember.id, dueDate: '2026-12-01' };
    const first = await app.request('POST', `/v1/teams/${world.team.id}/tasks`, { key: world.keys.teamMember, body, headers });
    const again = await app.request('POST', `/v1/teams/${world.team.id}/tasks`, { key: world.keys.teamMember, body, headers });
    expect([first.status, again.status, again.headers.get('idempotent-replayed')]).toEqual([201, 201, 'true']);
    expect((await logAfter(app.db, end)).map((event) => [event.type, objectIdOf(event)])).toEqual([['task.created', first.body.id]]);
  });

  it('a change of several resources writes one event each: two messages acknowledged; acknowledged again, none', async () => {
    const meeting = await createMeetingIn(app.db, world.team.id, world.users.teamAdmin.id, { status: 'IN_PROGRESS' });
    const messages = [
      await createMessage(app.db, { id: meeting.id, orgId: world.org.id }, world.users.teamAdmin.id),
      await createMessage(app.db, { id: meeting.id, orgId: world.org.id }, world.users.teamAdmin.id),
    ];
    const ids = messages.map((message) => message.id);
    const acknowledge = () => app.request('POST', '/v1/messages/acknowledge', { key: world.keys.teamMember, body: { ids } });
    const end = await logEnd(app.db);
    expect((await acknowledge()).status).toBe(204);
    const written = await logAfter(app.db, end);
    expect(written.map((event) => event.type)).toEqual(['cascading_message.acknowledged', 'cascading_message.acknowledged']);
    expect(written.map(objectIdOf).sort()).toEqual([...ids].sort());
    const next = cursorOf(written.at(-1)!);
    expect((await acknowledge()).status).toBe(204);
    expect(await logAfter(app.db, next)).toEqual([]);
  });
});

describe(`a subscription receives the events committed after it was created (${databaseLabel})`, () => {
  it('an event committed before the subscription was created is not delivered to it; one committed after is', async () => {
    const { org, team, owner } = await ownOrganization();
    const earlier = await newTask(app, owner, team.id);
    const subscription = await subscribe(owner.key, org.id);
    const later = await newTask(app, owner, team.id);
    await fanOutAll(app.db, now, patienceMs);
    const events = await logAfter(app.db, { txid: '0', position: '0' });
    const eventFor = (taskId: string) => events.find((event) => event.org_id === org.id && objectIdOf(event) === taskId)?.id;
    expect(eventFor(earlier.body.id)).toBeDefined();
    expect(await deliveredEvents(app.db, subscription.id)).toEqual([eventFor(later.body.id)]);
  }, testMs);

  it.skipIf(!postgresUrl)('(PostgreSQL only: PGlite runs one transaction at a time) an event whose transaction was open when the subscription was created, committed after, is delivered to it', async () => {
    const { org, team, owner } = await ownOrganization();
    const earlier = await newTask(app, owner, team.id);
    const hold = await holdKeyedChanges(database.url!);
    let open: ReturnType<typeof newTask> | undefined;
    let subscription: { id: string };
    try {
      open = newTask(app, owner, team.id, { 'idempotency-key': randomUUID() });
      // Its task and event are written; its transaction waits to store its outcome.
      await hold.waiting(1, patienceMs);
      subscription = await subscribe(owner.key, org.id);
    } finally {
      await hold.release();
    }
    const during = await open;
    expect(during.status).toBe(201);
    const later = await newTask(app, owner, team.id);
    await fanOutAll(app.db, now, patienceMs);
    const events = await readFeed(app.db, org.id, { txid: '0', position: '0' }, 'without the guard');
    expect(events.map(objectIdOf)).toEqual([earlier.body.id, during.body.id, later.body.id]);
    const [, ...afterCreation] = events.map((event) => event.id);
    expect(await deliveredEvents(app.db, subscription!.id)).toEqual(afterCreation);
  }, testMs);

  it.skipIf(!postgresUrl)(
    '(PostgreSQL only) an event whose transaction was open when the subscription was created is delivered to it even when the worker fans out before the subscription commits',
    async () => {
      const { org, team, owner } = await ownOrganization();
      // The change, held open after writing its event.
      const changeKey = randomUUID();
      const holdChange = await holdKeyedChange(database.url!, { userId: owner.user.id, operationId: 'createTask', key: changeKey });
      const subscriptionKey = randomUUID();
      let holdSubscription: Hold | undefined;
      try {
        const open = newTask(app, owner, team.id, { 'idempotency-key': changeKey });
        await holdChange.waiting(1, patienceMs);
        // The subscription, created while the change runs (its snapshot sees the change running), held open before its commit.
        holdSubscription = await holdKeyedChange(database.url!, { userId: owner.user.id, operationId: 'createWebhook', key: subscriptionKey });
        const creating = subscribe(owner.key, org.id, { headers: { 'idempotency-key': subscriptionKey } });
        await holdSubscription.waiting(1, patienceMs);
        // The change commits, and the worker fans out while the subscription is still uncommitted,
        // once the change's event lies below the horizon (the subscription's transaction began after it).
        await holdChange.release();
        const during = await open;
        expect(during.status).toBe(201);
        const event = (await readFeed(app.db, org.id, { txid: '0', position: '0' }, 'without the guard')).find((row) => objectIdOf(row) === during.body.id)!;
        await waitFor('the change’s event below the horizon', async () => (await horizon(app.db)) > BigInt(event.txid), patienceMs);
        await fanOut(app.db, now(), 500);
        await holdSubscription.release();
        const subscription = await creating;
        await fanOutAll(app.db, now, patienceMs);
        expect(await deliveredEvents(app.db, subscription.id), 'the subscription’s deliveries').toEqual([event.id]);
      } finally {
        await holdChange.release();
        await holdSubscription?.release();
      }
    },
    testMs,
  );
});

describe.skipIf(!postgresUrl)('the log is gap-free: a change that began first and commits last is neither passed nor skipped (PostgreSQL only: PGlite runs one transaction at a time)', () => {
  /**
   * Change A begins first and writes its event, and waits (held) before its commit; change B begins
   * later, writes its event and commits. Readers then read: the fan-out (the worker's statement) and
   * a feed reader (`belowHorizon`); a control reads the same without the guard. Then A commits and
   * they read again.
   */
  async function overlappingChanges() {
    const { org, team, owner } = await ownOrganization();
    const subscription = await subscribe(owner.key, org.id, { events: ['task.created'] });
    await fanOutAll(app.db, now, patienceMs);
    const start = await logEnd(app.db);
    const hold = await holdKeyedChanges(database.url!);
    try {
      expect(hold.xid, 'the hold itself takes no transaction id').toBeNull();
      const changeA = newTask(app, owner, team.id, { 'idempotency-key': randomUUID() });
      await hold.waiting(1, patienceMs);
      const [xidA] = await hold.waiterXids();
      const b = await newTask(app, owner, team.id);
      expect(b.status).toBe(201);
      // Only B's event is committed; it was written by a later transaction than A's.
      const [eventB, ...others] = await readFeed(app.db, org.id, start, 'without the guard');
      expect(others).toEqual([]);
      expect(objectIdOf(eventB!)).toBe(b.body.id);
      expect(BigInt(eventB!.txid)).toBeGreaterThan(BigInt(xidA!));
      expect(await horizon(app.db)).toBeLessThanOrEqual(BigInt(xidA!));

      // While A runs.
      await fanOut(app.db, now(), 500);
      const whileOpen = {
        fanOutPosition: await fanOutPosition(app.db),
        delivered: await deliveredEvents(app.db, subscription.id),
        feed: await readFeed(app.db, org.id, start, 'below the horizon'),
        control: await readFeed(app.db, org.id, start, 'without the guard'),
      };
      await hold.release();
      const a = await changeA;
      expect(a.status).toBe(201);
      return { org, subscription, start, xidA: xidA!, a, b, eventB: eventB!, whileOpen };
    } finally {
      await hold.release();
    }
  }

  it('while A runs, neither the fan-out nor a feed reader passes B; after A commits, both get A then B, none skipped', async () => {
    const { org, subscription, start, xidA, a, b, eventB, whileOpen } = await overlappingChanges();
    expect(before(whileOpen.fanOutPosition, cursorOf(eventB)), 'the fan-out passed B while A ran').toBe(true);
    expect(whileOpen.delivered).toEqual([]);
    expect(whileOpen.feed).toEqual([]);

    let feed: LogRow[] = [];
    await waitFor('A and B below the horizon', async () => (feed = await readFeed(app.db, org.id, start, 'below the horizon')).length >= 2, patienceMs);
    expect(feed.map(objectIdOf)).toEqual([a.body.id, b.body.id]);
    expect(feed[0]!.txid).toBe(xidA);
    await fanOutAll(app.db, now, patienceMs);
    expect(await deliveredEvents(app.db, subscription.id)).toEqual(feed.map((event) => event.id));
  }, testMs);

  it('the control: read without the guard, B is passed while A runs and A, committed last, is skipped', async () => {
    const { org, a, b, whileOpen } = await overlappingChanges();
    expect(whileOpen.control.map(objectIdOf)).toEqual([b.body.id]);
    const cursor = cursorOf(whileOpen.control.at(-1)!);
    expect(await readFeed(app.db, org.id, cursor, 'without the guard')).toEqual([]);
    const all = await readFeed(app.db, org.id, { txid: '0', position: '0' }, 'without the guard');
    expect(all.map(objectIdOf)).toEqual([a.body.id, b.body.id]);
  }, testMs);
});

describe.skipIf(!postgresUrl)('a writing transaction in another database of the server holds nothing back (PostgreSQL only: PGlite is one database)', () => {
  /**
   * Runs `work` while a transaction that has written (it has a transaction id) is open in another
   * database of the same server, created for the test, for the whole of `work`. It is older than
   * anything the app writes meanwhile, so the snapshot's oldest running transaction
   * (`pg_snapshot_xmin`, the horizon before) stays at or below it until it ends.
   */
  async function whileAnotherDatabaseWrites(work: () => Promise<void>): Promise<void> {
    const other = await createPostgresDatabase('teamos_other');
    const session = new pg.Client({ connectionString: other.url });
    await session.connect();
    try {
      await session.query('begin');
      const { rows } = await session.query<{ xid: string }>('select pg_current_xact_id()::text as xid');
      const { rows: snapshot } = await sql<{ xmin: string }>`select pg_snapshot_xmin(pg_current_snapshot())::text as xmin`.execute(app.db);
      expect(BigInt(snapshot[0]!.xmin), 'the other database’s transaction holds the server’s oldest running transaction').toBeLessThanOrEqual(BigInt(rows[0]!.xid));
      await work();
      const { rows: still } = await session.query<{ xid: string }>('select pg_current_xact_id_if_assigned()::text as xid');
      expect(still[0]!.xid, 'the other database’s transaction was open all along').toBe(rows[0]!.xid);
    } finally {
      await session.query('rollback').catch(() => undefined);
      await session.end();
      await other.drop();
    }
  }

  /**
   * Only the bug could miss it: the other transaction stays open for the whole test (up to a minute)
   * and held the event back for all of it, while nothing of this database is running after the
   * change's answer; 1 s is room for a busy machine, not a wait the feed needs.
   */
  const withinMs = 1_000;

  it('a change’s event is in the feed at once', async () => {
    await whileAnotherDatabaseWrites(async () => {
      const { org, team, owner } = await ownOrganization();
      const created = await newTask(app, owner, team.id);
      expect(created.status).toBe(201);
      let reads = 0;
      await waitFor(
        'the task’s event in the feed',
        async () => {
          reads += 1;
          const feed = await app.request('GET', `/v1/orgs/${org.id}/events?types=task.created`, { key: owner.key });
          return (feed.body.data as { data: { object: { id: string } } }[]).some((event) => event.data.object.id === created.body.id);
        },
        withinMs,
      );
      console.info(`another database's open transaction: the change's event in the feed at read ${reads} after the change's answer`);
    });
  }, testMs);

  it('a change’s event is fanned out to its subscription at once', async () => {
    await whileAnotherDatabaseWrites(async () => {
      const { org, team, owner } = await ownOrganization();
      const subscription = await subscribe(owner.key, org.id, { events: ['task.created'] });
      const created = await newTask(app, owner, team.id);
      expect(created.status).toBe(201);
      await waitFor(
        'the task’s event fanned out',
        async () => {
          await fanOut(app.db, now(), 500);
          return (await deliveredEvents(app.db, subscription.id)).length === 1;
        },
        withinMs,
      );
    });
  }, testMs);
});

describe.skipIf(!postgresUrl)('a page reads up to the log’s end its instance knows, however low its own statement’s horizon (PostgreSQL only: a transaction held open in a session of its own)', () => {
  /**
   * A statement's horizon can be lower than one its instance read before: another database's
   * transaction that ends as the statement starts can no longer be left out. That moment cannot be
   * made on purpose, so a transaction of this database, held open with an id, holds the statement's
   * horizon back below two events instead, and the page is given a known end between them.
   */
  it('shows the events below the known end, not those at or past it, whichever way it reads them', async () => {
    const { org } = await ownOrganization();
    const held = new pg.Client({ connectionString: database.url });
    await held.connect();
    try {
      await held.query('begin');
      await held.query('select pg_current_xact_id()');
      const ids = [randomUUID(), randomUUID()];
      for (const id of ids) {
        const at = now();
        const event = eventText(id, 'task.deleted', at, { orgId: org.id, teamId: null, object: { id: randomUUID() } });
        await app.db.transaction().execute((trx) => insertEvents(trx, [{ id, orgId: org.id, teamId: null, type: 'task.deleted', event }], at));
      }
      const second = await app.db.selectFrom('webhook_events').select(sql<string>`txid::text`.as('txid')).where('id', '=', ids[1]!).executeTakeFirstOrThrow();
      const between = { txid: second.txid, position: '0' };
      const cursors = app.secrets.tokens('feed cursor');
      const pageIds = async (known: { txid: string; position: string }) =>
        (await eventPage(app.db, org.id, {}, { limit: 100 }, cursors, known))!.events.map((event) => (JSON.parse(event) as { id: string }).id);

      expect(await pageIds({ txid: '0', position: '0' }), 'the statement’s own horizon holds both back').toEqual([]);
      expect(await pageIds(between)).toEqual([ids[0]]);
      expect((await findEvent(app.db, ids[0]!, between))?.org_id).toBe(org.id);
      expect(await findEvent(app.db, ids[1]!, between)).toBeUndefined();
    } finally {
      await held.query('rollback').finally(() => held.end());
    }
  }, testMs);
});

describe(`retention (${databaseLabel})`, () => {
  it('the worker purges the events older than its retention, with their deliveries and attempts, in batches; newer events stay', async () => {
    const retentionDays = 2;
    const clock = { at: Date.now() };
    let purges = 0;
    const own = await createTestDatabase({ onQuery: (text) => void (/^\s*delete from webhook_events/i.test(text) && (purges += 1)) });
    const receiver = await startReceiver();
    // The worker purges on an interval of its own: faked, so that the test says when.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    let keeper: TestApp | undefined;
    try {
      keeper = await startTestApp({
        database: own,
        now: () => new Date(clock.at),
        webhooks: { allowPrivateTargets: true, deliver: { listen: own.listen, pollMs: 50, retentionDays } },
      });
      const { org, team, owner } = await ownOrganization(own.db);
      const subscription = await keeper.request('POST', `/v1/orgs/${org.id}/webhooks`, {
        key: owner.key,
        body: { url: receiver.url, events: ['task.created'] },
      });
      expect(subscription.status).toBe(201);
      const old = [await newTask(keeper, owner, team.id), await newTask(keeper, owner, team.id)];
      // More old events than a batch of the purge holds, written straight into the log.
      await sql`
        insert into webhook_events (id, org_id, team_id, type, event, created_at)
        select x.id, ${org.id}, ${team.id}, 'task.deleted',
          json_build_object('id', x.id, 'type', 'task.deleted', 'timestamp', ${new Date(clock.at).toISOString()}::text,
            'data', json_build_object('orgId', ${org.id}::text, 'teamId', ${team.id}::text, 'object', json_build_object('id', gen_random_uuid()::text)))::text,
          ${new Date(clock.at)}
        from (select gen_random_uuid()::text as id from generate_series(1, 1200)) x
      `.execute(own.db);
      clock.at += 2 * 60 * 1000;
      const edge = await newTask(keeper, owner, team.id);
      clock.at += retentionDays * day - 60 * 1000;
      const recent = await newTask(keeper, owner, team.id);
      const deliveries = async () =>
        (
          await sql<{ id: string; state: string; event: string; attempts: string[] }>`
            select d.id, d.state, e.type || ' ' || coalesce((e.event::json)->'data'->'object'->>'id', '') as event,
              array(select a.id from webhook_attempts a where a.delivery_id = d.id order by a.id) as attempts
            from webhook_deliveries d join webhook_events e on e.id = d.event_id order by d.id`.execute(own.db)
        ).rows;
      // The ping and four tasks, each delivered.
      await waitFor(
        'every delivery made',
        async () => (await fannedOut(own.db)) && (await deliveries()).filter((delivery) => delivery.state === 'DELIVERED').length === 5,
        patienceMs,
      ).catch(async (error: Error) => {
        throw new Error(`${error.message}: ${JSON.stringify(await deliveries())}`);
      });
      const kept = (await deliveries()).filter((delivery) => [edge.body.id, recent.body.id].some((id) => delivery.event.endsWith(id)));
      expect(kept).toHaveLength(2);

      const events = async () =>
        (await sql<{ id: string; type: string; object: string }>`
          select id, type, (event::json)->'data'->'object'->>'id' as object from webhook_events order by created_at, position`.execute(own.db)).rows;
      // The bulk, the ping, the old tasks, and the two within the retention.
      expect((await events()).length).toBe(1200 + 1 + old.length + 2);
      expect(purges).toBe(0);

      vi.advanceTimersByTime(10 * 60 * 1000);
      await waitFor('the purge to finish', async () => (await events()).length === 2, patienceMs).catch(async (error: Error) => {
        throw new Error(`${error.message}: ${(await events()).length} events left after ${purges} purge statements`);
      });
      expect((await events()).map((event) => event.object)).toEqual([edge.body.id, recent.body.id]);
      expect(purges, 'purge statements: more than one batch').toBeGreaterThan(1);
      // The deliveries and attempts of the events kept, and none of the others.
      expect(await deliveries()).toEqual(kept);
      const attempts = await sql<{ n: number }>`select count(*)::int as n from webhook_attempts`.execute(own.db);
      expect(attempts.rows[0]!.n).toBe(kept.flatMap((delivery) => delivery.attempts).length);
    } finally {
      try {
        await keeper?.close();
      } finally {
        vi.useRealTimers();
        await receiver.close();
        await own.close();
      }
    }
  }, testMs);

  it('one purge statement deletes at most its batch, the oldest events first', async () => {
    const { org } = await ownOrganization();
    const at = new Date(Date.now() - 400 * day);
    const ids = Array.from({ length: 5 }, (_, n) => `purge-${n}-${randomUUID()}`);
    for (const [n, id] of ids.entries()) {
      await app.db
        .insertInto('webhook_events')
        .values({ id, org_id: org.id, team_id: null, type: 'organization.updated', event: '{}', created_at: new Date(at.getTime() + n * 1000) })
        .execute();
    }
    const left = async () => (await app.db.selectFrom('webhook_events').select('id').where('id', 'in', ids).orderBy('created_at').execute()).map((row) => row.id);
    expect(await purgeEvents(app.db, new Date(at.getTime() + 3_500), 2)).toBe(2);
    expect(await left()).toEqual(ids.slice(2));
    expect(await purgeEvents(app.db, new Date(at.getTime() + 3_500), 2)).toBe(2);
    expect(await purgeEvents(app.db, new Date(at.getTime() + 3_500), 2)).toBe(0);
    expect(await left()).toEqual(ids.slice(4));
  });

  it.skipIf(postgresUrl)('a request is answered while a long purge runs, not after it (PGlite: its statements run in the thread of the server)', async () => {
    const { org, owner } = await ownOrganization();
    const at = new Date(Date.now() - 600 * day);
    // Twenty batches: on PGlite, a purge that never let the process's I/O in answered the request only after all of them.
    await sql`
      insert into webhook_events (id, org_id, team_id, type, event, created_at)
      select 'long-purge-' || n, ${org.id}, null, 'organization.updated', '{}', ${at}::timestamptz + n * interval '1 second'
      from generate_series(1, 10000) as n
    `.execute(app.db);
    let purging = true;
    const purge = purgeExpiredEvents(app.db, new Date(at.getTime() + 20_000 * 1000), { inThread: true }).finally(() => (purging = false));
    try {
      const response = await app.request('GET', '/v1/me', { key: owner.key });
      expect(response.status).toBe(200);
      expect(purging).toBe(true);
    } finally {
      await purge;
    }
  });

  it.skipIf(postgresUrl)('with the database in this thread, the purge pauses on a timer after a batch, not for one turn of the event loop only (PGlite: a statement waits for the one before it)', async () => {
    const { org } = await ownOrganization();
    const at = new Date(Date.now() - 900 * day);
    const total = 1200;
    await sql`
      insert into webhook_events (id, org_id, team_id, type, event, created_at)
      select 'paused-purge-' || n, ${org.id}, null, 'organization.updated', '{}', ${at}::timestamptz + n * interval '1 second'
      from generate_series(1, ${total}) as n
    `.execute(app.db);
    const left = async () => (await sql<{ n: number }>`select count(*)::int as n from webhook_events where id like 'paused-purge-%'`.execute(app.db)).rows[0]!.n;
    const turn = () => new Promise((next) => setImmediate(next));
    const before = new Date(at.getTime() + 2 * total * 1000);
    let stop = false;
    // Only setTimeout: a pause then lasts until the test moves the clock, however fast or slow the machine.
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    try {
      const purge = purgeExpiredEvents(app.db, before, { stopped: () => stop, inThread: true });
      while ((await left()) === total) await turn();
      const afterFirst = await left();
      // A second batch sent at one of these turns would run before the count, which waits for it.
      for (let n = 0; n < 20; n += 1) await turn();
      expect(await left()).toBe(afterFirst);
      // The pause is the earliest timer: the second batch follows it, and then the purge stops.
      stop = true;
      await vi.advanceTimersToNextTimerAsync();
      const purged = await purge;
      expect(purged).toBe(total - (await left()));
      expect(purged).toBeGreaterThan(total - afterFirst);
    } finally {
      vi.useRealTimers();
    }
    await purgeExpiredEvents(app.db, before);
    expect(await left()).toBe(0);
  }, testMs);

  it('a purge statement finds its batch through the indexes, never by reading the whole log, in the plan the pool runs it with', async () => {
    const { org } = await ownOrganization();
    const at = new Date(Date.now() - 500 * day);
    // Enough events that reading the whole log costs more than finding a small batch by index.
    await sql`
      insert into webhook_events (id, org_id, team_id, type, event, created_at)
      select 'plan-' || n, ${org.id}, null, 'organization.updated', '{}', ${at}::timestamptz + n * interval '1 second'
      from generate_series(1, 50000) as n
    `.execute(app.db);
    await sql`analyze webhook_events`.execute(app.db);
    // The plan PostgreSQL keeps for the prepared statement, as the pool's connections run every statement
    // (plan_cache_mode=force_generic_plan), set here so that PGlite plans the same way.
    const statement = purgeStatement(new Date(at.getTime() + 60_000), 10).compile(app.db);
    const literal = (value: unknown) => (value instanceof Date ? `'${value.toISOString()}'::timestamptz` : String(Number(value)));
    try {
      const plan = await app.db.connection().execute(async (connection) => {
        await sql`set plan_cache_mode = force_generic_plan`.execute(connection);
        await sql.raw(`prepare purge_plan as ${statement.sql}`).execute(connection);
        try {
          const { rows } = await sql.raw<{ 'QUERY PLAN': unknown }>(`explain (format json) execute purge_plan(${statement.parameters.map(literal).join(', ')})`).execute(connection);
          return JSON.stringify(rows[0]!['QUERY PLAN']);
        } finally {
          await sql`deallocate purge_plan`.execute(connection);
          await sql`reset plan_cache_mode`.execute(connection);
        }
      });
      expect(plan).toContain('Index');
      expect(plan).not.toContain('Seq Scan');
    } finally {
      await sql`delete from webhook_events where id like 'plan-%'`.execute(app.db);
    }
  });
});

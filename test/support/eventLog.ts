import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import type { OperationId } from '../../src/api/operations.js';
import type { Database } from '../../src/db/database.js';
import { fanOut } from '../../src/db/queries/webhooks.js';
import { eventSpecOf } from '../../src/events/catalog.js';
import { operations } from './contract.js';
import { waitFor } from './processes.js';

/** The operations of the contract that change something (every one but a GET): each has its line in the event catalog. */
export const changingOperations = operations.filter((op) => op.method !== 'get').map((op) => op.operationId as OperationId);

/** Which of its declared types the matrix row's request of an operation with several sends. */
const sentByItsRow: Partial<Record<OperationId, string>> = {
  updateMeeting: 'meeting.status_changed',
  setMeetingRating: 'meeting_rating.set',
};

/** The one event the matrix row's request of `operationId` sends, or undefined when it declares none. */
export function eventOf(operationId: OperationId): string | undefined {
  const spec = eventSpecOf(operationId);
  if (!spec) return undefined;
  if (spec.types.length === 1) return spec.types[0];
  const sent = sentByItsRow[operationId];
  if (sent === undefined) throw new Error(`${operationId} declares several event types: say in test/support/eventLog.ts which one its matrix row's request sends`);
  return sent;
}

/**
 * Every event the matrix row's request of `operationId` sends: its own, then one for each record it
 * alters as a side effect (the catalog's `alsoSends`: the row's request alters one of each).
 */
export function eventsOf(operationId: OperationId): string[] {
  const own = eventOf(operationId);
  if (own === undefined) return [];
  return [own, ...(eventSpecOf(operationId)!.alsoSends ?? []).map((effect) => effect.type)];
}

/** Which part of an operation's answer its matrix row's event carries as its object, when not the whole answer. */
const objectInTheAnswer: Partial<Record<OperationId, (answer: any) => unknown>> = {
  // A Scorecard week sends one event per value it saved (the row saves one), each the value as answered.
  putScorecardWeek: (answer) => answer.values[0],
};

/** What the event sent by `operationId`'s matrix row carries as `data.object`, taken from the operation's answer. */
export function eventObjectOf(operationId: OperationId, answer: unknown): unknown {
  const part = objectInTheAnswer[operationId];
  return part ? part(answer) : answer;
}

/** The changing operations that send events, each with a matrix row's request to drive it. */
export const eventfulOperations = changingOperations.filter((operationId) => eventSpecOf(operationId) !== undefined);

/** Where the contract declares an event type: what a type new to it needs. */
export function contractPlacesOf(type = '<resource>.<action>'): string {
  return (
    `openapi/webhooks/${type}.yaml listed under webhooks: in openapi/openapi.yaml, its body in openapi/components/schemas/, ` +
    `and its branch of the Event and WebhookEvent unions and of EventType and WebhookEventType (openapi/components/schemas/), ` +
    `then npm run generate`
  );
}

/** What to change where when an operation does not send exactly its event, as the contract says it. */
export function whereEventsAreDeclared(operationId: string, type = '<resource>.<action>'): string {
  return (
    `${operationId} must send exactly one ${type} event, valid against the contract. Declare it in src/events/catalog.ts ` +
    `(or noEvent('why') there); a type new to the contract needs ${contractPlacesOf(type)}; a handler wrapped in ` +
    `writingItsEvent (src/handlers/types.ts) writes the event in its own statement (src/db/changes.ts)`
  );
}

/** Whether the worker has fanned every committed event of the log out into deliveries (pings need none). */
export async function fannedOut(db: Kysely<Database>): Promise<boolean> {
  const { rows } = await sql<{ left: boolean }>`
    select exists (
      select 1 from webhook_events e, webhook_fanout f
      where (e.txid, e.position) > (f.last_txid, f.last_position) and e.type <> 'webhook.ping'
    ) as left
  `.execute(db);
  return !rows[0]!.left;
}

/**
 * Fans the log out with the worker's own statement (`fanOut`) until every committed event is passed.
 * Repeated, not once: a transaction of the database still running (a test's hold, a change in
 * flight) may hold an event back for a while.
 */
export async function fanOutAll(db: Kysely<Database>, now: () => Date, timeoutMs?: number): Promise<void> {
  await waitFor(
    'every committed event of the log fanned out',
    async () => {
      await fanOut(db, now(), 500);
      return fannedOut(db);
    },
    timeoutMs,
  );
}

/**
 * A session of its own on a PostgreSQL database, outside the app's pool, that holds a lock inside an
 * open transaction so that the app's changes wait inside theirs: `release` rolls it back.
 */
export interface Hold {
  /** The session's backend process id. */
  pid: number;
  /** The transaction id the hold itself took, if any (it moves the log's horizon too). */
  xid: string | null;
  /** Resolves once `count` sessions wait for the hold (PostgreSQL's own `pg_blocking_pids`). */
  waiting(count?: number, timeoutMs?: number): Promise<void>;
  /** The transaction ids of the sessions waiting for the hold (their changes are written, not committed). */
  waiterXids(): Promise<string[]>;
  release(): Promise<void>;
}

async function hold(url: string, take: (client: pg.Client) => Promise<void>): Promise<Hold> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
  const pid = rows[0]!.pid;
  await client.query('begin');
  await take(client);
  const { rows: ids } = await client.query<{ xid: string | null }>('select pg_current_xact_id_if_assigned()::text as xid');
  // Asked from a second session: the hold's own waits in its transaction.
  const observer = new pg.Client({ connectionString: url });
  await observer.connect();
  const waiters = async () =>
    (
      await observer.query<{ xid: string | null }>('select backend_xid::text as xid from pg_stat_activity where $1 = any(pg_blocking_pids(pid))', [pid])
    ).rows;
  let released = false;
  return {
    pid,
    xid: ids[0]!.xid,
    waiting: (count = 1, timeoutMs = 30_000) =>
      waitFor(`${count} session(s) waiting for the hold of session ${pid}`, async () => (await waiters()).length >= count, timeoutMs),
    waiterXids: async () => (await waiters()).map((row) => row.xid!),
    release: async () => {
      if (released) return;
      released = true;
      await client.query('rollback').finally(() => client.end());
      await observer.end();
    },
  };
}

/**
 * Holds every change sent with an `Idempotency-Key` open after it has written its events: its
 * outcome, stored last in its transaction, waits for a SHARE lock on `idempotency_keys`. The hold
 * takes no transaction id (a table lock needs none), so it does not move the log's horizon itself.
 * Changes sent without a key pass.
 */
export function holdKeyedChanges(url: string): Promise<Hold> {
  return hold(url, async (client) => {
    await client.query('lock table idempotency_keys in share mode');
  });
}

/**
 * Holds one change sent with an `Idempotency-Key` open after it has written its events: an outcome
 * under the same key, inserted and not committed, makes the change's own outcome wait for this
 * transaction (a unique key's conflict). Other changes pass. The hold takes a transaction id.
 */
export function holdKeyedChange(url: string, key: { userId: string; operationId: OperationId; key: string }): Promise<Hold> {
  return hold(url, async (client) => {
    await client.query(
      `insert into idempotency_keys (user_id, operation_id, key, fingerprint, status, body, headers, created_at)
       values ($1, $2, $3, 'held by a test', 500, null, '{}', now())`,
      [key.userId, key.operationId, key.key],
    );
  });
}

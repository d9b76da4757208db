/**
 * Queries of outgoing webhooks: subscriptions, pings, the fan-out of the log into deliveries, the
 * worker's claims and attempts, the delivery log and the log's purge. The log itself (writing it, its
 * horizon, reading it) is the events' module, ./events.ts.
 */
import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { Database, WebhookAttemptsTable, WebhookDeliveryState, WebhookSubscriptionRow, WebhookSubscriptionUpdate } from '../database.js';
import { jsonRecord, type JsonShape } from '../json.js';
import { preparedJsonPages } from '../pagination.js';
import { belowHorizon, logChannel, pingType, type NewEvent } from './events.js';

type Db = Kysely<Database> | Transaction<Database>;

/** Channel of PostgreSQL's NOTIFY that wakes the workers of every server process (a ping or a redelivery). */
export const deliveriesChannel = 'webhook_deliveries';

// ---------------------------------------------------------------------------------------------------
// Subscriptions

/**
 * Creates a subscription; `trx` must be the creating transaction. It first takes the fan-out's row in
 * share mode, in a statement of its own: while the subscription is not committed the fan-out cannot
 * pass any event (it skips a locked row), so an event committed after the subscription's snapshot is
 * never passed before the subscription can be seen; and a fan-out already running is waited for, so
 * the snapshot taken next sees every event it passed as committed (not the subscription's).
 */
export async function insertSubscription(
  trx: Transaction<Database>,
  values: { orgId: string; url: string; events: string[]; description: string | null; secret: string },
): Promise<WebhookSubscriptionRow> {
  await sql`select 1 from webhook_fanout where id = 1 for share`.execute(trx);
  return trx
    .insertInto('webhook_subscriptions')
    .values({ org_id: values.orgId, url: values.url, events: values.events, description: values.description, secret: values.secret })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findSubscription(db: Db, id: string): Promise<WebhookSubscriptionRow | undefined> {
  return db.selectFrom('webhook_subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
}

const subscriptionRows = (db: Db, { orgId }: { orgId: string }) => db.selectFrom('webhook_subscriptions').selectAll().where('org_id', '=', orgId);

/** An organization's subscriptions, oldest first, written as JSON by `shape` (given by the handler). */
export function subscriptionPages<R>(shape: JsonShape<WebhookSubscriptionRow, R>) {
  const pages = preparedJsonPages(
    subscriptionRows,
    [
      { column: 'created_at', direction: 'asc', type: 'instant' },
      { column: 'id', direction: 'asc', type: 'string' },
    ],
    shape,
  );
  return (db: Db, orgId: string, page: { limit: number; cursor?: string | undefined }) => pages(db, { orgId }, page);
}

export async function updateSubscription(db: Db, id: string, values: WebhookSubscriptionUpdate): Promise<WebhookSubscriptionRow | undefined> {
  return db
    .updateTable('webhook_subscriptions')
    .set({ ...values, updated_at: sql`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** A new sealed secret; the one it replaces keeps signing until `previousUntil`. One statement, so two rotations never lose a secret between them. */
export async function rotateSecret(db: Db, id: string, secret: string, previousUntil: Date): Promise<WebhookSubscriptionRow | undefined> {
  return db
    .updateTable('webhook_subscriptions')
    .set((eb) => ({ previous_secret: eb.ref('secret'), secret, previous_secret_expires_at: previousUntil, updated_at: sql`now()` }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteSubscription(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('webhook_subscriptions').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

// ---------------------------------------------------------------------------------------------------
// Pings

/** One event to one subscription only (a ping, which is no change: outside the feed and the fan-out): the delivery's id. */
export async function insertEventFor(db: Db, subscriptionId: string, event: Omit<NewEvent, 'teamId'>, now: Date): Promise<string> {
  const { rows } = await sql<{ id: string }>`
    with event as (
      insert into webhook_events (id, org_id, type, event, traceparent, created_at)
      values (${event.id}, ${event.orgId}, ${event.type}, ${event.event}, ${event.traceparent ?? null}::text, ${now})
      returning id
    )
    insert into webhook_deliveries (event_id, subscription_id, next_attempt_at, created_at)
    select event.id, ${subscriptionId}, ${now}, ${now} from event
    returning id, pg_notify(${deliveriesChannel}, '') is null as notified
  `.execute(db);
  return rows[0]!.id;
}

// ---------------------------------------------------------------------------------------------------
// The fan-out

/**
 * Writes the deliveries of the next `limit` events of the log, in log order, to the active
 * subscriptions that want them and were created before the event committed, and moves the fan-out's
 * position past them: one statement, after the position's row is taken with `SKIP LOCKED` in a
 * transaction — while one process fans out (or a subscription is being created) the others find
 * nothing to do; a delivery written twice is refused by its unique index. Answers how many events
 * it passed, or undefined when another process held the position. When it passed any, it tells every
 * process's live streams (`logChannel`): the events it passed are below the horizon. The
 * notification lock its commit takes is the fan-out's alone, one
 * process at a time, at most once per pass; a change never waits for it.
 */
export async function fanOut(db: Kysely<Database>, now: Date, limit: number): Promise<number | undefined> {
  return db.transaction().execute(async (trx) => {
    // The row first, in a statement of its own: the statement that reads the events then takes its
    // snapshot after the lock, so it sees every subscription whose creation held the row (insertSubscription).
    const { rows: positions } = await sql<{ last_txid: string; last_position: string }>`
      select last_txid, last_position from webhook_fanout where id = 1 for update skip locked
    `.execute(trx);
    const position = positions[0];
    if (!position) return undefined;
    const { rows } = await sql<{ events: number }>`
      with batch as (
        select e.id, e.org_id, e.type, e.txid, e.position from webhook_events e
        where (e.txid, e.position) > (${position.last_txid}::xid8, ${position.last_position}::bigint) and ${belowHorizon(sql`e.txid`)}
        order by e.txid, e.position
        limit ${limit}
      ),
      delivered as (
        insert into webhook_deliveries (event_id, subscription_id, next_attempt_at, created_at)
        select b.id, s.id, ${now}, ${now} from batch b
        join webhook_subscriptions s on s.org_id = b.org_id and s.is_active and s.events && array[b.type, '*']
          and not pg_visible_in_snapshot(b.txid, s.created_snapshot)
        where b.type <> ${pingType}
        on conflict (event_id, subscription_id) do nothing
      ),
      last as (select txid, position from batch order by txid desc, position desc limit 1),
      moved as (update webhook_fanout f set last_txid = last.txid, last_position = last.position from last where f.id = 1)
      select count(*)::int as events, (select count(pg_notify(${logChannel}, '')) from last) as notified from batch
    `.execute(trx);
    return rows[0]?.events ?? 0;
  });
}

// ---------------------------------------------------------------------------------------------------
// The delivery log

export interface DeliveryRow {
  id: string;
  subscription_id: string;
  event_id: string;
  event_type: string;
  state: WebhookDeliveryState;
  created_at: Date;
  next_attempt_at: Date | null;
  attempts: { attemptedAt: string; statusCode: number | null; latencyMs: number; error: string | null; responseBody: string | null }[];
}

/**
 * An attempt as the contract's record. The row query writes the attempts as JSON text (cast to `json`,
 * whose text stays as written): the list sends it as it is and the single reads get it parsed.
 */
const attemptJson: JsonShape<Selectable<WebhookAttemptsTable>, DeliveryRow['attempts'][number]> = {
  attemptedAt: ['instant', 'attempted_at'],
  statusCode: ['integer', 'status_code'],
  latencyMs: ['integer', 'latency_ms'],
  error: ['text', 'error'],
  responseBody: ['text', 'response_body'],
};

/**
 * Deliveries with their attempts, oldest attempt first. The attempt being sent (the one its delivery's
 * lease names, see `claimDue`) is left out until its answer is recorded or another claim takes over.
 * Tables by their names, not aliases: the page builders (pagination.ts) take queries over `Database`.
 */
function deliveries(db: Db) {
  return db
    .selectFrom('webhook_deliveries')
    .innerJoin('webhook_events', 'webhook_events.id', 'webhook_deliveries.event_id')
    .select([
      'webhook_deliveries.id',
      'webhook_deliveries.subscription_id',
      'webhook_deliveries.event_id',
      'webhook_events.type as event_type',
      'webhook_deliveries.state',
      'webhook_deliveries.created_at',
      'webhook_deliveries.next_attempt_at',
      sql<DeliveryRow['attempts']>`coalesce((
        select ('[' || string_agg(${jsonRecord(attemptJson, 'a')}, ',' order by a.attempted_at, a.id) || ']')::json
        from webhook_attempts a where a.delivery_id = webhook_deliveries.id and a.id is distinct from webhook_deliveries.lease_token
      ), '[]'::json)`.as('attempts'),
    ]);
}

type DeliveryPageArgs = { subscriptionId: string; state: WebhookDeliveryState | undefined };

const deliveryPageRows = (db: Db, { subscriptionId, state }: DeliveryPageArgs) => {
  let query = deliveries(db).where('webhook_deliveries.subscription_id', '=', subscriptionId);
  if (state !== undefined) query = query.where('webhook_deliveries.state', '=', state);
  return query;
};

/** A subscription's deliveries, newest first, each with its attempts, written as JSON by `shape` (one statement). */
export function deliveryPages<R>(shape: JsonShape<DeliveryRow, R>) {
  const pages = preparedJsonPages(
    deliveryPageRows,
    [
      { column: 'webhook_deliveries.created_at', direction: 'desc', type: 'instant' },
      { column: 'webhook_deliveries.id', direction: 'desc', type: 'string' },
    ],
    shape,
  );
  return (db: Db, subscriptionId: string, state: WebhookDeliveryState | undefined, page: { limit: number; cursor?: string | undefined }) =>
    pages(db, { subscriptionId, state }, page);
}

export async function findDelivery(db: Db, subscriptionId: string, id: string): Promise<DeliveryRow | undefined> {
  return deliveries(db).where('webhook_deliveries.subscription_id', '=', subscriptionId).where('webhook_deliveries.id', '=', id).executeTakeFirst();
}

/** Makes a delivery due at once again, with the whole schedule of retries before it. */
export async function redeliver(db: Db, subscriptionId: string, id: string, now: Date): Promise<boolean> {
  const { rows } = await sql<{ id: string }>`
    update webhook_deliveries set state = 'PENDING', attempt_count = 0, next_attempt_at = ${now}, lease_until = null, lease_token = null
    where id = ${id} and subscription_id = ${subscriptionId}
    returning id, pg_notify(${deliveriesChannel}, '') is null as notified
  `.execute(db);
  return rows.length > 0;
}

// ---------------------------------------------------------------------------------------------------
// The worker

/**
 * What the delivery log says of an attempt whose sender stopped (killed, or cut off from the
 * database) between claiming it and recording the answer: the endpoint may or may not have got it.
 */
export const outcomeUnknown = 'outcome unknown: the sending server stopped before it recorded the answer';

export interface ClaimedDelivery {
  id: string;
  /** The claim's own token, which is also the id of the attempt it recorded. */
  lease_token: string;
  attempt_count: number;
  event_id: string;
  event_created_at: Date;
  /** The event's text, which is sent without its `id` (`deliveryBody`). */
  event: string;
  /** The `traceparent` of the change that wrote the event, sent with it. */
  traceparent: string | null;
  subscription_id: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  failing_since: Date | null;
}

/**
 * Claims up to `limit` due deliveries of active subscriptions for `leaseMs` and records an attempt of
 * each, in one short statement. `FOR UPDATE SKIP LOCKED` lets several processes claim side by side
 * without taking the same one; a lease that ran out (its process died: a live one renews it,
 * `renewLeases`) makes a delivery claimable again. Each claim gets a token of its own, which is also
 * the id of its attempt: the attempt is written as `outcomeUnknown` before anything is sent, the
 * delivery log leaves it out while the delivery's lease names it, and `recordAttempt` writes what
 * came of it. An attempt whose process died first thus shows as `outcomeUnknown` from the moment
 * another claim takes its delivery over.
 */
export async function claimDue(db: Db, claim: { now: Date; leaseMs: number; limit: number }): Promise<ClaimedDelivery[]> {
  const leaseUntil = new Date(claim.now.getTime() + claim.leaseMs);
  const { rows } = await sql<ClaimedDelivery>`
    with due as (
      select d.id from webhook_deliveries d
      join webhook_subscriptions s on s.id = d.subscription_id and s.is_active
      where d.state = 'PENDING' and d.next_attempt_at <= ${claim.now} and (d.lease_until is null or d.lease_until <= ${claim.now})
      order by d.next_attempt_at
      limit ${claim.limit}
      for update of d skip locked
    ),
    claimed as (
      update webhook_deliveries d set lease_until = ${leaseUntil}, lease_token = gen_random_uuid()::text
      from due, webhook_events e, webhook_subscriptions s
      where d.id = due.id and e.id = d.event_id and s.id = d.subscription_id
      returning d.id, d.lease_token, d.attempt_count, d.event_id, e.created_at as event_created_at, e.event, e.traceparent, s.id as subscription_id, s.url,
        s.secret, s.previous_secret, s.previous_secret_expires_at, s.failing_since
    ),
    attempts as (
      insert into webhook_attempts (id, delivery_id, attempted_at, latency_ms, error)
      select lease_token, id, ${claim.now}, 0, ${outcomeUnknown} from claimed
    )
    select * from claimed
  `.execute(db);
  return rows;
}

/** Extends the leases of the deliveries a worker is sending (by their tokens) to `until`, in one statement. */
export async function renewLeases(db: Db, tokens: readonly string[], until: Date): Promise<void> {
  await sql`update webhook_deliveries set lease_until = ${until} where lease_token = any(${tokens}::text[])`.execute(db);
}

/** Gives claimed deliveries back at once, with their attempts unmade (a worker that stopped before sending them). */
export async function releaseClaims(db: Db, tokens: readonly string[]): Promise<void> {
  await sql`
    with released as (
      update webhook_deliveries set lease_until = null, lease_token = null where lease_token = any(${tokens}::text[])
    )
    delete from webhook_attempts where id = any(${tokens}::text[])
  `.execute(db);
}

export interface Attempt {
  deliveryId: string;
  leaseToken: string;
  subscriptionId: string;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  responseBody: string | null;
  state: WebhookDeliveryState;
  nextAttemptAt: Date | null;
  failingSince: Date | null;
  disableReason: string | undefined;
}

/**
 * Records what came of an attempt and what follows from it in one statement: the attempt's outcome
 * (always: it happened, even if the lease was lost meanwhile), the delivery's new state (only while
 * the lease is still this worker's), and the subscription's failure streak or disabling — written
 * only when it changes, so that deliveries of one subscription do not queue on its row.
 */
export async function recordAttempt(db: Db, attempt: Attempt): Promise<void> {
  await sql`
    with outcome as (
      update webhook_attempts set status_code = ${attempt.statusCode}, latency_ms = ${attempt.latencyMs}, error = ${attempt.error},
        response_body = ${attempt.responseBody}
      where id = ${attempt.leaseToken}
    ),
    delivery as (
      update webhook_deliveries set state = ${attempt.state}, attempt_count = attempt_count + 1,
        next_attempt_at = ${attempt.nextAttemptAt}, lease_until = null, lease_token = null
      where id = ${attempt.deliveryId} and lease_token = ${attempt.leaseToken}
      returning id
    )
    update webhook_subscriptions set
      failing_since = ${attempt.failingSince},
      is_active = case when ${attempt.disableReason ?? null}::text is null then is_active else false end,
      disabled_reason = coalesce(${attempt.disableReason ?? null}::text, disabled_reason),
      updated_at = case when ${attempt.disableReason ?? null}::text is null then updated_at else now() end
    where id = ${attempt.subscriptionId} and exists (select 1 from delivery)
      and (failing_since is distinct from ${attempt.failingSince}::timestamptz or ${attempt.disableReason ?? null}::text is not null)
  `.execute(db);
}

/**
 * The statement of `purgeEvents`. The batch is a literal, not a parameter: in a generic plan (the pool
 * forces them) `limit $2` is estimated at a tenth of the log, and PostgreSQL then joined the batch's
 * ids to a scan of the whole log (14 s a batch of 500 in a log of 5,000,000 events, against
 * milliseconds through the primary key).
 */
export const purgeStatement = (before: Date, batch: number) => sql`
  delete from webhook_events where id in (
    select id from webhook_events where created_at < ${before} order by created_at limit ${sql.lit(batch)}
  )
`;

/**
 * Deletes up to `batch` events older than `before` (and with them their deliveries and attempts),
 * oldest first: a short statement that holds its locks only on the rows it deletes.
 */
export async function purgeEvents(db: Db, before: Date, batch: number): Promise<number> {
  const result = await purgeStatement(before, batch).execute(db);
  return Number(result.numAffectedRows ?? 0n);
}

/**
 * How many deliveries to active subscriptions are due now, and when the oldest of them came due: one
 * statement over the partial index of pending deliveries (the metrics read it at each scrape).
 */
export async function dueBacklog(db: Db, now: Date): Promise<{ due: number; oldestDueAt: Date | null }> {
  const { rows } = await sql<{ due: number; oldest_due_at: Date | null }>`
    select count(*)::int as due, min(d.next_attempt_at) as oldest_due_at from webhook_deliveries d
    join webhook_subscriptions s on s.id = d.subscription_id and s.is_active
    where d.state = 'PENDING' and d.next_attempt_at <= ${now}
  `.execute(db);
  return { due: rows[0]!.due, oldestDueAt: rows[0]!.oldest_due_at };
}

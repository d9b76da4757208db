import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import type { OperationId } from '../../src/api/operations.js';
import type { Database } from '../../src/db/database.js';
import { fanOut } from '../../src/db/queries/webhooks.js';
import { waitFor } from './processes.js';

/** The event each changing operation of an organization's records writes (the contract's `webhooks`). */
export const eventOf: Partial<Record<OperationId, string>> = {
  updateOrganization: 'organization.updated',
  addOrganizationMember: 'organization_member.added',
  updateOrganizationMember: 'organization_member.updated',
  removeOrganizationMember: 'organization_member.removed',
  createTeam: 'team.created',
  updateTeam: 'team.updated',
  deleteTeam: 'team.deleted',
  addTeamMember: 'team_member.added',
  updateTeamMember: 'team_member.updated',
  removeTeamMember: 'team_member.removed',
  createTask: 'task.created',
  updateTask: 'task.updated',
  deleteTask: 'task.deleted',
  createIssue: 'issue.created',
  updateIssue: 'issue.updated',
  deleteIssue: 'issue.deleted',
  createGoal: 'goal.created',
  updateGoal: 'goal.updated',
  deleteGoal: 'goal.deleted',
  createMilestone: 'milestone.created',
  updateMilestone: 'milestone.updated',
  deleteMilestone: 'milestone.deleted',
  createMetric: 'metric.created',
  updateMetric: 'metric.updated',
  deleteMetric: 'metric.deleted',
  putMetricValue: 'metric_value.set',
  createMeeting: 'meeting.created',
  updateMeeting: 'meeting.status_changed',
  rateMeetingAsMe: 'meeting_rating.set',
  setMeetingRating: 'meeting_rating.set',
  revealMeetingRatings: 'meeting.ratings_revealed',
  createSegue: 'segue.created',
  createHeadline: 'headline.created',
  createCascadingMessage: 'cascading_message.created',
  deleteCascadingMessage: 'cascading_message.deleted',
  acknowledgeCascadingMessages: 'cascading_message.acknowledged',
  createTeamVision: 'vision.created',
  updateTeamVision: 'vision.updated',
  createSeat: 'seat.created',
  updateSeat: 'seat.updated',
  deleteSeat: 'seat.deleted',
  putPeopleReview: 'people_review.set',
  createDocument: 'document.created',
  deleteDocument: 'document.deleted',
};

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

/**
 * Safe retries: a changing request sent with `Idempotency-Key` runs once. Its outcome is stored in
 * the same transaction as its change, so a change is never stored without its outcome nor the other
 * way round; a retry with the same key, operation, path and body gets that outcome again, byte for
 * byte, and changes nothing. Keys are scoped to the caller and the operation and kept for 24 hours.
 *
 * Stored: what running the change decided — a success, and the errors `errorTable` marks replayed
 * (src/errors.ts `isReplayed`). Not stored: answers decided before the change runs and 5xx, so the
 * client may fix what was wrong and retry with the same key.
 */
import { createHash } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, IdempotencyKeyRow } from '../db/database.js';
import { findOutcome, saveOutcome, tryLockKey, type OutcomeKey } from '../db/queries/idempotency.js';
import { FormatError, IdempotencyKeyInUse, IdempotencyKeyReused, isReplayed, type ApiError } from '../errors.js';
import type { Metrics } from '../observability/metrics.js';

/** How long an outcome is kept and replayed. */
export const idempotencyKeyLifetimeMs = 24 * 60 * 60 * 1000;

/** What is answered, and stored for a replay. */
export interface Outcome {
  status: number;
  /** The exact text of the body; null for an answer without one (204). */
  body: string | null;
  headers: Record<string, string>;
}

const bare = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;
const quoted = /^"((?:[\x20-\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/;

const invalidKey = (message: string) =>
  new FormatError([{ origin: 'header', code: 'invalid_format', path: ['Idempotency-Key'], message, format: 'idempotency-key' }]);

/**
 * The key of a request: 1 to 255 printable ASCII characters, sent bare or as a structured-field
 * string (`"…"`, RFC 8941), as the IETF draft writes it; undefined when the header is absent.
 */
export function idempotencyKeyOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  let key = header;
  if (header.startsWith('"')) {
    const match = quoted.exec(header);
    if (!match) throw invalidKey('A quoted Idempotency-Key must be one structured-field string.');
    key = match[1]!.replace(/\\(["\\])/g, '$1');
  } else if (!bare.test(header)) {
    throw invalidKey('Idempotency-Key must be 1 to 255 printable ASCII characters.');
  }
  if (key.length < 1 || key.length > 255) throw invalidKey('Idempotency-Key must be 1 to 255 printable ASCII characters.');
  return key;
}

/** What a retry must repeat exactly: the method, the path as sent and the body as parsed. */
export function fingerprintOf(method: string, path: string, body: unknown): string {
  return createHash('sha256').update(JSON.stringify([method, path, body ?? null])).digest('base64url');
}

/** The replay of an outcome stored in the last 24 hours; another request under its key is refused. */
function storedOutcome(row: IdempotencyKeyRow | undefined, request: IdempotentRequest): { outcome: Outcome; replayed: true } | undefined {
  if (!row || request.now.getTime() - row.created_at.getTime() >= idempotencyKeyLifetimeMs) return undefined;
  if (row.fingerprint !== request.fingerprint) throw new IdempotencyKeyReused();
  return { outcome: { status: row.status, body: row.body, headers: row.headers }, replayed: true };
}

export interface IdempotentRequest extends OutcomeKey {
  fingerprint: string;
  now: Date;
}

/**
 * Runs `change` once for the key, in one transaction with the stored outcome, or answers the stored
 * outcome of an earlier run (`replayed`). `change` gets the transaction and must do all its work in
 * it; `answerError` turns an error `change` threw into the answer the error handler would give.
 * Replays and 409s are counted in `counts`.
 */
export async function runIdempotent(
  db: Kysely<Database>,
  request: IdempotentRequest,
  change: (trx: Transaction<Database>) => Promise<Outcome>,
  answerError: (error: ApiError) => Outcome,
  counts: Metrics['idempotency'],
): Promise<{ outcome: Outcome; replayed: boolean }> {
  // A stored outcome never changes while it lives, so replays read it without the key's lock and
  // never wait for, or refuse, each other.
  const stored = storedOutcome(await findOutcome(db, request), request);
  if (stored) {
    counts.replays.inc();
    return stored;
  }
  const trx = await db.startTransaction().execute();
  try {
    if (!(await tryLockKey(trx, request))) {
      counts.keyInUse.inc();
      throw new IdempotencyKeyInUse();
    }
    // Looked for again under the lock: a request with the key may have finished meanwhile.
    const finished = storedOutcome(await findOutcome(trx, request), request);
    if (finished) {
      await trx.rollback().execute();
      counts.replays.inc();
      return finished;
    }
    // A rule answer is stored, but whatever the change wrote before it failed is undone.
    await sql`savepoint idempotent_change`.execute(trx);
    let outcome: Outcome;
    try {
      outcome = await change(trx);
    } catch (error) {
      if (!isReplayed(error)) throw error;
      await sql`rollback to savepoint idempotent_change`.execute(trx);
      outcome = answerError(error);
    }
    await saveOutcome(trx, { ...request, ...outcome, createdAt: request.now });
    await trx.commit().execute();
    return { outcome, replayed: false };
  } catch (error) {
    // A failed rollback (the connection is gone) must not hide the error that caused it.
    if (!trx.isCommitted && !trx.isRolledBack) await trx.rollback().execute().catch(() => undefined);
    throw error;
  }
}

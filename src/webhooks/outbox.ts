/**
 * The transactional outbox: a change whose events some subscription wants writes them, and one
 * delivery per subscription, in its own transaction — a change rolled back emits nothing, a change
 * committed always its events. Every changing operation passes through `withEvents`; handlers know
 * nothing of it. A change in an organization without subscriptions runs as it would without webhooks
 * (the key's lookup tells which organizations have any); in one with, it pays one statement that
 * writes the event, finding the resource's organization and team as it does — and, for a deletion or
 * a change defined by what it alters, a lookup before the change, while the subject still exists.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { OperationId } from '../api/operations.js';
import type { Database } from '../db/database.js';
import { inTransaction } from '../db/transaction.js';
import { insertEventOf, insertEvents, wantedSubjects, type NewEvent } from '../db/queries/webhooks.js';
import { eventCatalog, type ChangeInput, type ChangeResult } from './catalog.js';

/** The exact JSON text an event is sent and signed as (Standard Webhooks' `type`, `timestamp`, `data`). */
export function eventBody(type: string, at: Date, data: { orgId: string; teamId: string | null; object: unknown }): string {
  return JSON.stringify({ type, timestamp: at.toISOString(), data });
}

/**
 * Runs `change` (given the database or transaction to work in) and writes the events it causes in
 * the same transaction: the request's own (an `Idempotency-Key`'s), or one opened here.
 */
export async function withEvents<R extends ChangeResult>(
  db: Kysely<Database>,
  operationId: OperationId,
  input: ChangeInput,
  now: () => Date,
  change: (db: Kysely<Database>) => Promise<R>,
): Promise<R> {
  const spec = eventCatalog[operationId];
  // Every change an event describes needs membership of the resource's organization.
  if (!spec || input.subscribedOrgIds.length === 0) return change(db);
  const from = spec.subject.from(input);
  if (!spec.before) {
    return inTransaction(db, async (trx) => {
      const result = await change(trx);
      const key = from as string;
      const { type, object } = spec.event(input, result, key);
      const at = now();
      await insertEventOf(trx, { kind: spec.subject.kind, key, userId: input.userId, type, teamId: spec.teamOf?.(result), object: JSON.stringify(object), at });
      return result;
    });
  }
  const keys = typeof from === 'string' ? [from] : from;
  const subjects = await wantedSubjects(db, spec.subject.kind, keys, spec.types, input.userId);
  if (subjects.length === 0) return change(db);
  return inTransaction(db, async (trx) => {
    const result = await change(trx);
    const at = now();
    const events: NewEvent[] = subjects.map((subject) => {
      const { type, object } = spec.event(input, result, subject.id);
      return { id: randomUUID(), orgId: subject.org_id, type, body: eventBody(type, at, { orgId: subject.org_id, teamId: spec.teamOf?.(result) ?? subject.team_id, object }) };
    });
    await insertEvents(trx, events, at);
    return result;
  });
}

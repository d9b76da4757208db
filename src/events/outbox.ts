/**
 * The event log's writer: every successful change writes its events in its own transaction — the
 * request's own (an `Idempotency-Key`'s), or one opened here — so a change rolled back leaves none and
 * a change committed always its events, whether or not anyone subscribes. Nothing else is added to
 * the change: the worker fans events out into deliveries afterwards (src/webhooks/worker.ts). Every
 * changing operation passes through `withEvents`; handlers know nothing of it.
 *
 * An event costs its change one statement, which finds the resource's organization and team as it
 * writes; a deletion, or a change defined by what it alters, looks its subject up before the change
 * instead, while it still exists.
 *
 * A handler that writes its own event (`writingItsEvent`, src/handlers/types.ts) makes the change,
 * its access check and its event one statement on the plain path (no `Idempotency-Key`, no
 * `If-Match`): the outbox stamps the event and opens no transaction (`changeWithEvent`,
 * src/db/queries/events.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { bodyText } from '../api/jsonText.js';
import type { OperationId } from '../api/operations.js';
import type { Database } from '../db/database.js';
import { inTransaction } from '../db/transaction.js';
import { insertEventOf, insertEvents, subjectsBefore, type EventStamp, type NewEvent } from '../db/queries/events.js';
import { eventSpecOf, type ChangeInput, type ChangeResult } from './catalog.js';

/** The JSON text of an event as the log keeps it and the feed answers it: `{"id","type","timestamp","data"}`, compact. */
export function eventText(id: string, type: string, at: Date, data: { orgId: string; teamId: string | null; object: unknown }): string {
  return JSON.stringify({ id, type, timestamp: at.toISOString(), data });
}

/**
 * The exact JSON text an event is sent and signed as (Standard Webhooks' `type`, `timestamp`, `data`):
 * the event without its leading `id` member, which travels as `webhook-id`. Cut off here rather than
 * in SQL, where taking a text apart walks it character by character.
 */
export function deliveryBody(id: string, event: string): string {
  const idMember = `{"id":${JSON.stringify(id)},`;
  if (!event.startsWith(idMember)) throw new Error(`The event ${id} is not kept with its id first`);
  return `{${event.slice(idMember.length)}`;
}

/**
 * Thrown by a change that writes its own event when its one statement changed nothing and the load
 * path found no refusal either: what the statement read moved between the two (a role, a member).
 * The outbox then runs the change again as any other, in a transaction.
 */
export class ChangedMeanwhile extends Error {
  constructor() {
    super('The change’s statement changed nothing, yet nothing refuses it now');
  }
}

/**
 * The plain path of a change that writes its own event: `changed` is its one statement (whose guard
 * holds the access check and the rules) and `refusal`, run only when that changed nothing, the load
 * path that throws what the change would be refused with (404, 403, 409, 422) — a second statement
 * only on failure, so that every refusal keeps its status and body. Answers the statement's `object`.
 */
export async function changedOrRefused(changed: Promise<string | undefined>, refusal: () => Promise<unknown>): Promise<string> {
  const object = await changed;
  if (object !== undefined) return object;
  await refusal();
  throw new ChangedMeanwhile();
}

/**
 * Runs `change` (given the database or transaction to work in) and writes the events it causes in its
 * transaction, each with the `traceparent` of the request (its deliveries send it). With `itsOwnEvent`
 * (a handler that writes its event; not under If-Match) the change gets the event stamped and writes
 * it in its own statement: no transaction is opened, and within an Idempotency-Key's the statement is
 * one of it. A statement that changed nothing changed nothing in the transaction either, so the
 * change can run again there the old way when the facts moved in between.
 */
export async function withEvents<R extends ChangeResult>(
  db: Kysely<Database>,
  operationId: OperationId,
  input: ChangeInput,
  now: () => Date,
  traceparent: string | null,
  change: (db: Kysely<Database>, event?: EventStamp) => Promise<R>,
  itsOwnEvent = false,
): Promise<R> {
  const spec = eventSpecOf(operationId);
  if (!spec) return change(db);
  const [onlyType, ...otherTypes] = spec.types;
  if (itsOwnEvent && otherTypes.length === 0) {
    try {
      return await change(db, { id: randomUUID(), type: onlyType, at: now(), traceparent });
    } catch (error) {
      if (!(error instanceof ChangedMeanwhile)) throw error;
    }
  }
  const from = spec.subject.from(input);
  if (!spec.before) {
    return inTransaction(db, async (trx) => {
      const result = await change(trx);
      const key = from as string;
      const { type, object } = spec.event(input, result, key);
      const at = now();
      await insertEventOf(trx, {
        id: randomUUID(),
        kind: spec.subject.kind,
        key,
        userId: input.userId,
        type,
        teamId: spec.teamOf?.(result),
        object: bodyText(object),
        at,
        traceparent,
      });
      return result;
    });
  }
  const keys = typeof from === 'string' ? [from] : from;
  const subjects = await subjectsBefore(db, spec.subject.kind, keys, input.userId);
  if (subjects.length === 0) return change(db);
  return inTransaction(db, async (trx) => {
    const result = await change(trx);
    const at = now();
    const events: NewEvent[] = subjects.map((subject) => {
      const { type, object } = spec.event(input, result, subject.id);
      const teamId = spec.teamOf?.(result) ?? subject.team_id;
      const id = randomUUID();
      return { id, orgId: subject.org_id, teamId, type, event: eventText(id, type, at, { orgId: subject.org_id, teamId, object }), traceparent };
    });
    await insertEvents(trx, events, at);
    return result;
  });
}

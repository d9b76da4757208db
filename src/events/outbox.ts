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
import { insertChangeEvents, lookupsBefore, type EventOf, type EventStamp, type NewEvent, type Subject } from '../db/queries/events.js';
import { eventSpecOf, type ChangeInput, type ChangeResult, type SideEffect } from './catalog.js';

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
 * Reads a record as its GET answers it (the path of the GET, its parameters filled in) in the change's
 * transaction, as the caller: the object of a side effect's event. The router gives it (it knows the
 * reads); undefined outside a request.
 */
export type RecordRead = (path: string, db: Kysely<Database>) => Promise<unknown>;

/** The side effects whose altered record is looked up before the change (it runs through a row the change deletes). */
const lookedUpBefore = (effects: readonly SideEffect[], input: ChangeInput) =>
  effects.flatMap((effect) => (typeof effect.of === 'function' ? [] : [{ kind: effect.of.before, keys: [effect.of.from(input)] }]));

/** The altered record of each side effect looked up before the change (undefined for the others, and when none was found). */
function alteredBefore(effects: readonly SideEffect[], found: readonly Subject[][]): (string | undefined)[] {
  let next = 0;
  return effects.map((effect) => (typeof effect.of === 'function' ? undefined : found[next++]![0]?.id));
}

/**
 * The events of the records the change altered as a side effect (`alsoSends`), each with the altered
 * record as its GET answers in the change's transaction, as every reader may see it.
 */
async function sideEffectEvents(
  trx: Kysely<Database>,
  effects: readonly SideEffect[],
  before: readonly (string | undefined)[],
  input: ChangeInput,
  result: ChangeResult,
  stamp: { at: Date; traceparent: string | null },
  read: RecordRead | undefined,
): Promise<EventOf[]> {
  if (effects.length === 0) return [];
  const events: EventOf[] = [];
  for (const [index, effect] of effects.entries()) {
    const key = typeof effect.of === 'function' ? effect.of(input, result) : before[index];
    if (key === undefined) continue;
    if (!effect.readForEvent && !read) throw new Error('A change with side effects needs the reads of their records');
    const own = effect.readForEvent ? await effect.readForEvent(trx, key, input, stamp.at) : undefined;
    const record = own ? own.record : await read!(effect.read.replace('{id}', encodeURIComponent(key)), trx);
    const object = effect.seen ? effect.seen(record) : record;
    events.push({ id: randomUUID(), kind: effect.kind, key, userId: input.userId, type: effect.type, object: bodyText(object), reduced: own?.reduced, ...stamp });
  }
  return events;
}

/**
 * Runs `change` (given the database or transaction to work in) and writes the events it causes in its
 * transaction, each with the `traceparent` of the request (its deliveries send it): its own, then
 * those of the records it altered as a side effect (`alsoSends`), all in one statement. With
 * `itsOwnEvent` (a handler that writes its event; not under If-Match) the change gets the event
 * stamped and writes it in its own statement: no transaction is opened, and within an
 * Idempotency-Key's the statement is one of it. A statement that changed nothing changed nothing in
 * the transaction either, so the change can run again there the old way when the facts moved in
 * between.
 */
export async function withEvents<R extends ChangeResult>(
  db: Kysely<Database>,
  operationId: OperationId,
  input: ChangeInput,
  now: () => Date,
  traceparent: string | null,
  change: (db: Kysely<Database>, event?: EventStamp) => Promise<R>,
  itsOwnEvent = false,
  read?: RecordRead,
): Promise<R> {
  const spec = eventSpecOf(operationId);
  if (!spec) return change(db);
  const effects = spec.alsoSends ?? [];
  const [onlyType, ...otherTypes] = spec.types;
  // A change written in one statement has no side effects to send (test/eventCatalog.test.ts).
  if (itsOwnEvent && otherTypes.length === 0 && effects.length === 0) {
    try {
      return await change(db, { id: randomUUID(), type: onlyType, at: now(), traceparent });
    } catch (error) {
      if (!(error instanceof ChangedMeanwhile)) throw error;
    }
  }
  const from = spec.subject.from(input);
  if (!spec.before) {
    const sideLookups = lookedUpBefore(effects, input);
    return inTransaction(db, async (trx) => {
      const before = alteredBefore(effects, sideLookups.length === 0 ? [] : await lookupsBefore(trx, sideLookups, input.userId));
      const result = await change(trx);
      const key = from as string;
      const { type, object, logRevision } = spec.event(input, result, key);
      const at = now();
      const own: EventOf = { id: randomUUID(), kind: spec.subject.kind, key, userId: input.userId, type, teamId: spec.teamOf?.(result), object: bodyText(object), logRevision, at, traceparent };
      const sides = await sideEffectEvents(trx, effects, before, input, result, { at, traceparent }, read);
      await insertChangeEvents(trx, [], [own, ...sides], at);
      return result;
    });
  }
  const keys = typeof from === 'string' ? [from] : from;
  // The change's own subjects and the records its side effects alter through a row it deletes, in one statement.
  const [subjects, ...sideFound] = await lookupsBefore(db, [{ kind: spec.subject.kind, keys }, ...lookedUpBefore(effects, input)], input.userId);
  if (subjects!.length === 0) return change(db);
  const before = alteredBefore(effects, sideFound);
  return inTransaction(db, async (trx) => {
    const result = await change(trx);
    const at = now();
    const events: NewEvent[] = subjects!.map((subject) => {
      const { type, object, logRevision } = spec.event(input, result, subject.id);
      const teamId = spec.teamOf?.(result) ?? subject.team_id;
      const id = randomUUID();
      return { id, orgId: subject.org_id, teamId, type, event: eventText(id, type, at, { orgId: subject.org_id, teamId, object }), traceparent, logRevision };
    });
    const sides = await sideEffectEvents(trx, effects, before, input, result, { at, traceparent }, read);
    await insertChangeEvents(trx, events, sides, at);
    return result;
  });
}

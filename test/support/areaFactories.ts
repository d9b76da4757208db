/** Factories for documents, people reviews, the accountability chart and the vision: rows inserted straight into the database. */
import { randomUUID } from 'node:crypto';
import type { Insertable, Kysely } from 'kysely';
import type { Database, DocumentType, VisionsTable, WebhookDeliveryState } from '../../src/db/database.js';
import { eventText } from '../../src/events/outbox.js';

// ---------------------------------------------------------------------------------------------------
// Documents

export interface DocumentOptions {
  name?: string;
  url?: string;
  type?: DocumentType;
  createdAt?: Date;
}

const documentValues = (teamId: string, createdById: string, options: DocumentOptions) => ({
  team_id: teamId,
  created_by_id: createdById,
  name: options.name ?? 'Pipeline dashboard',
  url: options.url ?? 'https://crm.northwind.example/dashboards/pipeline',
  type: options.type ?? 'LINK',
  ...(options.createdAt ? { created_at: options.createdAt } : {}),
});

export function createDocument(db: Kysely<Database>, teamId: string, createdById: string, options: DocumentOptions = {}) {
  return db.insertInto('documents').values(documentValues(teamId, createdById, options)).returningAll().executeTakeFirstOrThrow();
}

/** Many documents in one insert; `options(i)` shapes the i-th. */
export function createDocuments(
  db: Kysely<Database>,
  teamId: string,
  createdById: string,
  count: number,
  options: (index: number) => DocumentOptions = () => ({}),
) {
  const rows = Array.from({ length: count }, (_, index) => documentValues(teamId, createdById, options(index)));
  return db.insertInto('documents').values(rows).returningAll().execute();
}

// ---------------------------------------------------------------------------------------------------
// People reviews

export interface PeopleReviewOptions {
  quarter?: string;
  coreValuesScores?: Record<string, boolean>;
  gwc?: { getsIt: boolean; wantsIt: boolean; capacityToDoIt: boolean };
  notes?: string | null;
  updatedAt?: Date;
}

export function createPeopleReview(db: Kysely<Database>, teamId: string, userId: string, evaluatorId: string, options: PeopleReviewOptions = {}) {
  return db
    .insertInto('people_reviews')
    .values({
      team_id: teamId,
      user_id: userId,
      evaluator_id: evaluatorId,
      quarter: options.quarter ?? '2026-Q4',
      core_values_scores: JSON.stringify(options.coreValuesScores ?? { 'Deliver on our promises': true, 'Grow or die': false }),
      gwc: JSON.stringify(options.gwc ?? { getsIt: true, wantsIt: true, capacityToDoIt: false }),
      notes: options.notes ?? null,
      ...(options.updatedAt ? { updated_at: options.updatedAt } : {}),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

// ---------------------------------------------------------------------------------------------------
// Accountability chart

export interface SeatOptions {
  title?: string;
  parentId?: string | null;
  userId?: string | null;
  responsibilities?: string | null;
  position?: number;
}

export function createSeat(db: Kysely<Database>, teamId: string, options: SeatOptions = {}) {
  return db
    .insertInto('seats')
    .values({
      team_id: teamId,
      parent_id: options.parentId ?? null,
      user_id: options.userId ?? null,
      title: options.title ?? 'Head of Sales',
      responsibilities: options.responsibilities ?? null,
      position: options.position ?? 1,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

// ---------------------------------------------------------------------------------------------------
// Vision

/** A vision holding exactly the given stored forms (JSON text for lists and objects, or older free text). */
export function createVision(db: Kysely<Database>, teamId: string, stored: Omit<Insertable<VisionsTable>, 'team_id'> = {}) {
  return db
    .insertInto('visions')
    .values({ team_id: teamId, ...stored })
    .returningAll()
    .executeTakeFirstOrThrow();
}

// ---------------------------------------------------------------------------------------------------
// Webhooks

export interface WebhookOptions {
  url?: string;
  events?: string[];
  isActive?: boolean;
  /** The sealed secret as stored; a stand-in unless the test delivers. */
  secret?: string;
  description?: string | null;
  disabledReason?: string | null;
  createdAt?: Date;
  updatedAt?: Date;
}

export function createWebhook(db: Kysely<Database>, orgId: string, options: WebhookOptions = {}) {
  return db
    .insertInto('webhook_subscriptions')
    .values({
      org_id: orgId,
      url: options.url ?? 'https://hooks.northwind.example/teamos',
      events: options.events ?? ['*'],
      description: options.description ?? null,
      secret: options.secret ?? 'sealed-secret-stand-in',
      disabled_reason: options.disabledReason ?? null,
      ...(options.isActive === undefined ? {} : { is_active: options.isActive }),
      ...(options.createdAt ? { created_at: options.createdAt } : {}),
      ...(options.updatedAt ? { updated_at: options.updatedAt } : {}),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface DeliveryOptions {
  type?: string;
  state?: WebhookDeliveryState;
  createdAt?: Date;
  nextAttemptAt?: Date | null;
  attempts?: { attemptedAt: Date; statusCode: number | null; latencyMs: number; error: string | null; responseBody: string | null }[];
}

/** A delivery of a new event to the subscription, with its attempts: its id. */
export async function createDelivery(db: Kysely<Database>, webhook: { id: string; org_id: string }, options: DeliveryOptions = {}) {
  const type = options.type ?? 'webhook.ping';
  const id = randomUUID();
  const text = eventText(id, type, new Date(), { orgId: webhook.org_id, teamId: null, object: { webhookId: webhook.id } });
  const event = await db.insertInto('webhook_events').values({ id, org_id: webhook.org_id, type, event: text }).returning('id').executeTakeFirstOrThrow();
  const delivery = await db
    .insertInto('webhook_deliveries')
    .values({
      event_id: event.id,
      subscription_id: webhook.id,
      state: options.state ?? 'PENDING',
      next_attempt_at: options.nextAttemptAt === undefined ? new Date() : options.nextAttemptAt,
      ...(options.createdAt ? { created_at: options.createdAt } : {}),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const attempts = options.attempts ?? [];
  if (attempts.length > 0) {
    await db
      .insertInto('webhook_attempts')
      .values(attempts.map((attempt) => ({
        delivery_id: delivery.id,
        attempted_at: attempt.attemptedAt,
        status_code: attempt.statusCode,
        latency_ms: attempt.latencyMs,
        error: attempt.error,
        response_body: attempt.responseBody,
      })))
      .execute();
  }
  return delivery.id;
}

/** An inactive subscription with `count` ping deliveries not yet sent: the last one's id. */
export async function createWebhookWithDelivery(db: Kysely<Database>, orgId: string, count = 1) {
  const webhook = await createWebhook(db, orgId, { isActive: false });
  let deliveryId = '';
  for (let made = 0; made < count; made += 1) {
    const id = randomUUID();
    const text = eventText(id, 'webhook.ping', new Date(), { orgId, teamId: null, object: { webhookId: webhook.id } });
    const event = await db.insertInto('webhook_events').values({ id, org_id: orgId, type: 'webhook.ping', event: text }).returning('id').executeTakeFirstOrThrow();
    const delivery = await db
      .insertInto('webhook_deliveries')
      .values({ event_id: event.id, subscription_id: webhook.id, next_attempt_at: new Date() })
      .returning('id')
      .executeTakeFirstOrThrow();
    deliveryId = delivery.id;
  }
  return { webhook, deliveryId };
}

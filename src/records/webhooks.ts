/** Rows → the contract's webhook subscription and delivery records. */
import type { Schemas } from '../api/operations.js';
import type { WebhookSubscriptionRow } from '../db/database.js';
import type { JsonShape } from '../db/json.js';
import type { DeliveryRow } from '../db/queries/webhooks.js';

export const toWebhook = (row: WebhookSubscriptionRow): Schemas['Webhook'] => ({
  id: row.id,
  orgId: row.org_id,
  url: row.url,
  events: row.events as Schemas['Webhook']['events'],
  description: row.description,
  isActive: row.is_active,
  disabledReason: row.disabled_reason,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

/** `toWebhook` written by PostgreSQL, for the list (src/db/json.ts): no secret, as in `toWebhook`. */
export const webhookJson: JsonShape<WebhookSubscriptionRow, Schemas['Webhook']> = {
  id: ['id', 'id'],
  orgId: ['id', 'org_id'],
  url: ['text', 'url'],
  events: ['texts', 'events'],
  description: ['text', 'description'],
  isActive: ['boolean', 'is_active'],
  disabledReason: ['text', 'disabled_reason'],
  createdAt: ['instant', 'created_at'],
  updatedAt: ['instant', 'updated_at'],
};

/** The subscription with its secret in clear: only in the answers that create or rotate it. */
export const toWebhookWithSecret = (row: WebhookSubscriptionRow, secret: string): Schemas['WebhookWithSecret'] => ({
  ...toWebhook(row),
  secret,
  previousSecretExpiresAt: row.previous_secret_expires_at?.toISOString() ?? null,
});

export const toWebhookDelivery = (row: DeliveryRow): Schemas['WebhookDelivery'] => ({
  id: row.id,
  webhookId: row.subscription_id,
  eventId: row.event_id,
  eventType: row.event_type as Schemas['WebhookDelivery']['eventType'],
  state: row.state,
  createdAt: row.created_at.toISOString(),
  nextAttemptAt: row.next_attempt_at?.toISOString() ?? null,
  attempts: row.attempts,
});

/** `toWebhookDelivery` written by PostgreSQL, for the list; `attempts` is JSON the row query wrote. */
export const webhookDeliveryJson: JsonShape<DeliveryRow, Schemas['WebhookDelivery']> = {
  id: ['id', 'id'],
  webhookId: ['id', 'subscription_id'],
  eventId: ['id', 'event_id'],
  eventType: ['enum', 'event_type'],
  state: ['enum', 'state'],
  createdAt: ['instant', 'created_at'],
  nextAttemptAt: ['instant', 'next_attempt_at'],
  attempts: ['json', 'attempts'],
};

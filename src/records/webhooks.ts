/** Rows → the contract's webhook subscription and delivery records. */
import type { Schemas } from '../api/operations.js';
import type { WebhookSubscriptionRow } from '../db/database.js';
import { declareRecord } from '../db/json.js';
import type { DeliveryRow } from '../db/queries/webhooks.js';

/** `toWebhook` for single reads and changes, `webhookJson` for the list (src/db/json.ts): neither has the secret. */
export const { toRecord: toWebhook, shape: webhookJson } = declareRecord<WebhookSubscriptionRow, Schemas['Webhook']>({
  id: ['id', 'id'],
  revision: ['integer', 'revision'],
  orgId: ['id', 'org_id'],
  url: ['text', 'url'],
  events: ['texts', 'events'],
  description: ['text', 'description'],
  isActive: ['boolean', 'is_active'],
  disabledReason: ['text', 'disabled_reason'],
  createdAt: ['instant', 'created_at'],
  updatedAt: ['instant', 'updated_at'],
});

/** The subscription with its secret in clear: only in the answers that create or rotate it. */
export const toWebhookWithSecret = (row: WebhookSubscriptionRow, secret: string): Schemas['WebhookWithSecret'] => ({
  ...toWebhook(row),
  secret,
  previousSecretExpiresAt: row.previous_secret_expires_at?.toISOString() ?? null,
});

/**
 * `toWebhookDelivery` for single reads, `webhookDeliveryJson` for the list: `attempts` is the JSON the
 * row query wrote, parsed by the driver for the single reads.
 */
export const { toRecord: toWebhookDelivery, shape: webhookDeliveryJson } = declareRecord<DeliveryRow, Schemas['WebhookDelivery']>({
  id: ['id', 'id'],
  webhookId: ['id', 'subscription_id'],
  eventId: ['id', 'event_id'],
  eventType: ['enum', 'event_type'],
  state: ['enum', 'state'],
  createdAt: ['instant', 'created_at'],
  nextAttemptAt: ['instant', 'next_attempt_at'],
  attempts: ['json', 'attempts'],
});

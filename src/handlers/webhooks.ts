/** Handlers of the webhooks area: an organization's subscriptions to its events, and their delivery log. */
import { locationOf } from '../api/location.js';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Caller } from '../auth/caller.js';
import { loadOrganizationAccess } from '../auth/access.js';
import { requireActive, webhookAccess } from '../auth/permissions.js';
import type { Database } from '../db/database.js';
import { pageLimit } from '../db/pagination.js';
import { pingType } from '../db/queries/events.js';
import * as webhooks from '../db/queries/webhooks.js';
import { inTransaction } from '../db/transaction.js';
import { NotFound, RuleViolation } from '../errors.js';
import { toWebhook, toWebhookDelivery, toWebhookWithSecret, webhookDeliveryJson, webhookJson } from '../records/webhooks.js';
import { pageText } from '../api/jsonText.js';
import { eventText } from '../events/outbox.js';
import { targetFault } from '../webhooks/targets.js';
import type { AreaHandlers, Handler } from './types.js';

/** After a rotation, deliveries are signed with the previous secret too for this long. */
const previousSecretLifetimeMs = 24 * 60 * 60 * 1000;

/** A Standard Webhooks secret: `whsec_` and the base64 of 24 random bytes. */
export const newWebhookSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

async function requireTarget(url: string, allowPrivate: boolean): Promise<void> {
  const fault = await targetFault(url, allowPrivate);
  if (fault) throw new RuleViolation(fault);
}

/** The event types as stored: each once, in the order sent. */
const eventsOf = (events: readonly string[]): string[] => [...new Set(events)];

/** The subscription and the caller's access to it. */
async function loadWebhook(db: Kysely<Database>, caller: Caller, webhookId: string) {
  const webhook = await webhooks.findSubscription(db, webhookId);
  const access = webhookAccess(caller, webhook?.org_id);
  return { webhook: webhook!, access };
}

/** A ping to one subscription, due at once (its event and delivery written in one statement): the delivery it made. */
async function ping(db: Kysely<Database>, webhook: { id: string; org_id: string }, now: Date) {
  const id = randomUUID();
  const event = eventText(id, pingType, now, { orgId: webhook.org_id, teamId: null, object: { webhookId: webhook.id } });
  const deliveryId = await webhooks.insertEventFor(db, webhook.id, { id, orgId: webhook.org_id, type: pingType, event }, now);
  return (await webhooks.findDelivery(db, webhook.id, deliveryId))!;
}

export const createWebhook: Handler<'createWebhook'> = async ({ params, body }, { db, caller, secrets, now, allowPrivateWebhookTargets }) => {
  const access = await loadOrganizationAccess(db, caller, params.orgId, 'administration');
  requireActive(access);
  await requireTarget(body.url, allowPrivateWebhookTargets);
  const secret = newWebhookSecret();
  const created = await inTransaction(db, async (trx) => {
    const webhook = await webhooks.insertSubscription(trx, {
      orgId: params.orgId,
      url: body.url,
      events: eventsOf(body.events),
      description: body.description || null,
      secret: secrets.seal(secret),
    });
    await ping(trx, webhook, now());
    return webhook;
  });
  return { status: 201, body: toWebhookWithSecret(created, secret), headers: { Location: locationOf('/webhooks/{webhookId}', { webhookId: created.id }) } };
};

const subscriptionPages = webhooks.subscriptionPages(webhookJson);

export const listWebhooks: Handler<'listWebhooks'> = async ({ params, query }, { db, caller }) => {
  await loadOrganizationAccess(db, caller, params.orgId, 'administration');
  const page = await subscriptionPages(db, params.orgId, { limit: pageLimit(query.limit), cursor: query.cursor });
  return { status: 200, body: pageText(page) };
};

export const getWebhook: Handler<'getWebhook'> = async ({ params }, { db, caller }) => {
  const { webhook } = await loadWebhook(db, caller, params.webhookId);
  return { status: 200, body: toWebhook(webhook) };
};

/** Enabling clears why the server disabled it and its failure streak; disabling by hand gives no reason. */
export const updateWebhook: Handler<'updateWebhook'> = async ({ params, body }, { db, caller, allowPrivateWebhookTargets }) => {
  const { access } = await loadWebhook(db, caller, params.webhookId);
  requireActive(access);
  if (body.url !== undefined) await requireTarget(body.url, allowPrivateWebhookTargets);
  const updated = await webhooks.updateSubscription(db, params.webhookId, {
    url: body.url,
    events: body.events === undefined ? undefined : eventsOf(body.events),
    description: body.description === undefined ? undefined : body.description || null,
    ...(body.isActive === undefined ? {} : { is_active: body.isActive, disabled_reason: null, failing_since: null }),
  });
  if (!updated) throw new NotFound();
  return { status: 200, body: toWebhook(updated) };
};

export const deleteWebhook: Handler<'deleteWebhook'> = async ({ params }, { db, caller }) => {
  const { access } = await loadWebhook(db, caller, params.webhookId);
  requireActive(access);
  if (!(await webhooks.deleteSubscription(db, params.webhookId))) throw new NotFound();
  return { status: 204, body: undefined };
};

export const pingWebhook: Handler<'pingWebhook'> = async ({ params }, { db, caller, now }) => {
  const { webhook, access } = await loadWebhook(db, caller, params.webhookId);
  requireActive(access);
  return { status: 202, body: toWebhookDelivery(await ping(db, webhook, now())) };
};

/** The new secret signs every delivery; the previous one too, for 24 hours, so receivers can switch without losing any. */
export const rotateWebhookSecret: Handler<'rotateWebhookSecret'> = async ({ params }, { db, caller, secrets, now }) => {
  const { access } = await loadWebhook(db, caller, params.webhookId);
  requireActive(access);
  const secret = newWebhookSecret();
  const rotated = await webhooks.rotateSecret(db, params.webhookId, secrets.seal(secret), new Date(now().getTime() + previousSecretLifetimeMs));
  if (!rotated) throw new NotFound();
  return { status: 200, body: toWebhookWithSecret(rotated, secret) };
};

const deliveryPages = webhooks.deliveryPages(webhookDeliveryJson);

export const listWebhookDeliveries: Handler<'listWebhookDeliveries'> = async ({ params, query }, { db, caller }) => {
  await loadWebhook(db, caller, params.webhookId);
  const page = await deliveryPages(db, params.webhookId, query.state, { limit: pageLimit(query.limit), cursor: query.cursor });
  return { status: 200, body: pageText(page) };
};

export const redeliverWebhookDelivery: Handler<'redeliverWebhookDelivery'> = async ({ params }, { db, caller, now }) => {
  const { access } = await loadWebhook(db, caller, params.webhookId);
  requireActive(access);
  if (!(await webhooks.redeliver(db, params.webhookId, params.deliveryId, now()))) throw new NotFound();
  return { status: 202, body: toWebhookDelivery((await webhooks.findDelivery(db, params.webhookId, params.deliveryId))!) };
};

export const webhooksHandlers: AreaHandlers<'Webhooks'> = {
  listWebhooks,
  createWebhook,
  getWebhook,
  updateWebhook,
  deleteWebhook,
  pingWebhook,
  rotateWebhookSecret,
  listWebhookDeliveries,
  redeliverWebhookDelivery,
};

/**
 * `@team-os/client/webhooks`: verifying deliveries, for receivers. A separate entry so that the
 * client itself has one dependency (openapi-fetch); this one also needs `standardwebhooks`, an
 * optional peer dependency: `npm install standardwebhooks` beside the client.
 */
import { Webhook } from 'standardwebhooks';
import type { components, webhooks } from '../../generated/api.js';

/** Every event type of the contract's `webhooks` section. */
export type WebhookEventType = keyof webhooks;

/** The body of an event of `type`, as the contract describes it. */
export type WebhookEventOf<Type extends WebhookEventType> = webhooks[Type] extends {
  post: { requestBody: { content: { 'application/json': infer Body } } };
}
  ? Body
  : never;

/** Any event; narrow it by `type`. The contract's `WebhookEvent`: every event of its `webhooks` section. */
export type WebhookEvent = components['schemas']['WebhookEvent'];

/** Request headers as a Fetch `Headers`, or as Node's `IncomingHttpHeaders` (lower-case names). */
export type HeadersLike = Headers | Record<string, string | string[] | undefined>;

function headerRecord(headers: HeadersLike): Record<string, string> {
  const record: Record<string, string> = {};
  if (typeof (headers as Headers).forEach === 'function' && typeof (headers as Headers).get === 'function') {
    (headers as Headers).forEach((value, name) => (record[name.toLowerCase()] = value));
    return record;
  }
  for (const [name, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (value !== undefined) record[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return record;
}

/**
 * Verifies a delivery (Standard Webhooks, through the `standardwebhooks` package) and returns its
 * event, typed by the contract. `rawBody` must be the body exactly as received — bytes or their text —
 * never JSON parsed and serialised again, which changes the bytes the signature covers. Give the
 * previous secret too (`[current, previous]`) while a rotation is under way. Throws when no secret
 * matches or the `webhook-timestamp` is more than 5 minutes from the clock.
 */
export function verifyWebhook(secret: string | readonly string[], headers: HeadersLike, rawBody: string | Uint8Array): WebhookEvent {
  const body = typeof rawBody === 'string' ? rawBody : new TextDecoder('utf-8', { fatal: true }).decode(rawBody);
  const record = headerRecord(headers);
  const secrets = typeof secret === 'string' ? [secret] : secret;
  if (secrets.length === 0) throw new Error('verifyWebhook: no secret given');
  let failure: unknown;
  for (const candidate of secrets) {
    try {
      return new Webhook(candidate).verify(body, record) as WebhookEvent;
    } catch (error) {
      failure = error;
    }
  }
  throw failure;
}

/**
 * Matrix rows of the webhook operations and of the event feed: the organization's Owners and Admins
 * only. By id, a webhook is hidden (404) from anyone outside its organization and refused (403) to its
 * other members; an event is hidden (404) from everyone else. The subscriptions are made inactive so
 * that they change nothing for the rows that come after them.
 */
import { createWebhook, createWebhookWithDelivery } from '../support/areaFactories.js';
import { createEvents } from '../support/eventFactories.js';
import { row, rowFor, type World } from './world.js';

const S = 'scope';

const newWebhook = (w: World) => createWebhook(w.db, w.org.id, { isActive: false });

// prettier-ignore
export const webhookRows = [
  //                                  noKey readOnly orgOwner orgAdmin implementer teamOwner teamAdmin teamMember teamViewer orgMember outsider superadmin superadminMember formerSuperadmin
  row('listWebhooks',                  [401, 200,     200,     200,     403,        403,      403,      403,       403,       403,      403,     403,       403,             S],
    (w) => ({ path: `/v1/orgs/${w.org.id}/webhooks` })),
  row('createWebhook',                 [401, S,       201,     201,     403,        403,      403,      403,       403,       403,      403,     403,       403,             S],
    (w) => ({ path: `/v1/orgs/${w.org.id}/webhooks`, body: { url: 'https://hooks.northwind.example/teamos', events: ['task.created'] } })),
  rowFor('getWebhook',                 [401, 200,     200,     200,     403,        403,      403,      403,       403,       403,      404,     404,       403,             S],
    newWebhook,
    (_w, webhook) => ({ path: `/v1/webhooks/${webhook.id}` })),
  rowFor('updateWebhook',              [401, S,       200,     200,     403,        403,      403,      403,       403,       403,      404,     404,       403,             S],
    newWebhook,
    (_w, webhook) => ({ path: `/v1/webhooks/${webhook.id}`, body: { description: 'Issues to the ops channel' } })),
  rowFor('deleteWebhook',              [401, S,       204,     204,     403,        403,      403,      403,       403,       403,      404,     404,       403,             S],
    newWebhook,
    (_w, webhook) => ({ path: `/v1/webhooks/${webhook.id}` })),
  rowFor('pingWebhook',                [401, S,       202,     202,     403,        403,      403,      403,       403,       403,      404,     404,       403,             S],
    newWebhook,
    (_w, webhook) => ({ path: `/v1/webhooks/${webhook.id}/ping` })),
  rowFor('rotateWebhookSecret',        [401, S,       200,     200,     403,        403,      403,      403,       403,       403,      404,     404,       403,             S],
    newWebhook,
    (_w, webhook) => ({ path: `/v1/webhooks/${webhook.id}/rotate-secret` })),
  rowFor('listWebhookDeliveries',      [401, 200,     200,     200,     403,        403,      403,      403,       403,       403,      404,     404,       403,             S],
    (w) => createWebhookWithDelivery(w.db, w.org.id),
    (_w, { webhook }) => ({ path: `/v1/webhooks/${webhook.id}/deliveries` })),
  rowFor('redeliverWebhookDelivery',   [401, S,       202,     202,     403,        403,      403,      403,       403,       403,      404,     404,       403,             S],
    (w) => createWebhookWithDelivery(w.db, w.org.id),
    (_w, { webhook, deliveryId }) => ({ path: `/v1/webhooks/${webhook.id}/deliveries/${deliveryId}/redeliver` })),
  rowFor('listOrganizationEvents',     [401, 200,     200,     200,     403,        403,      403,      403,       403,       403,      403,     403,       403,             S],
    (w) => createEvents(w.db, w.team),
    (w) => ({ path: `/v1/orgs/${w.org.id}/events` })),
  rowFor('getEvent',                   [401, 200,     200,     200,     404,        404,      404,      404,       404,       404,      404,     404,       404,             S],
    (w) => createEvents(w.db, w.team),
    (_w, [eventId]) => ({ path: `/v1/events/${eventId}` })),
];

/**
 * Matrix rows of the webhook operations and of the event feeds: the organization's Owners and Admins
 * only, but a team's feed, which everyone who can see the team reads. By id, a webhook is hidden (404) from anyone outside its organization and refused (403) to its
 * other members; an event is hidden (404) from everyone else. The live stream is for whoever may
 * read what it follows. The subscriptions are made inactive so
 * that they change nothing for the rows that come after them.
 */
import { createWebhook, createWebhookWithDelivery } from '../support/areaFactories.js';
import { createEvents } from '../support/eventFactories.js';
import { row, rowFor, variantRow, type AreaRows, type World } from './world.js';

const S = 'scope';

const newWebhook = (w: World) => createWebhook(w.db, w.org.id, { isActive: false });

// prettier-ignore
export const webhookRows: AreaRows<'Webhooks' | 'Events'> = {
  //                                  noKey readOnly orgOwner orgAdmin implementer teamOwner teamAdmin teamMember teamViewer orgMember outsider superadmin superadminMember formerSuperadmin
  listWebhooks: row(                   [401, 200,     200,     200,     403,        403,      403,      403,       403,       403,      403,     403,       403,             S],
    (w) => ({ path: `/v1/orgs/${w.org.id}/webhooks` })),
  createWebhook: row(                  [401, S,       201,     201,     403,        403,      403,      403,       403,       403,      403,     403,       403,             S],
    (w) => ({ path: `/v1/orgs/${w.org.id}/webhooks`, body: { url: 'https://hooks.northwind.example/teamos', events: ['task.created'] } })),
  getWebhook: rowFor(                  [401, 200,     200,     200,     403,        403,      403,      403,       403,       403,      404,     404,       403,             S],
    newWebhook,
    (_w, webhook) => ({ path: `/v1/webhooks/${webhook.id}` })),
  updateWebhook: rowFor(               [401, S,       200,     200,     403,        403,      403,      403,       403,       403,      404,     404,       403,             S],
    newWebhook,
    (_w, webhook) => ({ path: `/v1/webhooks/${webhook.id}`, body: { description: 'Issues to the ops channel' } })),
  deleteWebhook: rowFor(               [401, S,       204,     204,     403,        403,      403,      403,       403,       403,      404,     404,       403,             S],
    newWebhook,
    (_w, webhook) => ({ path: `/v1/webhooks/${webhook.id}` })),
  pingWebhook: rowFor(                 [401, S,       202,     202,     403,        403,      403,      403,       403,       403,      404,     404,       403,             S],
    newWebhook,
    (_w, webhook) => ({ path: `/v1/webhooks/${webhook.id}/ping` })),
  rotateWebhookSecret: rowFor(         [401, S,       200,     200,     403,        403,      403,      403,       403,       403,      404,     404,       403,             S],
    newWebhook,
    (_w, webhook) => ({ path: `/v1/webhooks/${webhook.id}/rotate-secret` })),
  listWebhookDeliveries: rowFor(       [401, 200,     200,     200,     403,        403,      403,      403,       403,       403,      404,     404,       403,             S],
    (w) => createWebhookWithDelivery(w.db, w.org.id),
    (_w, { webhook }) => ({ path: `/v1/webhooks/${webhook.id}/deliveries` })),
  redeliverWebhookDelivery: rowFor(    [401, S,       202,     202,     403,        403,      403,      403,       403,       403,      404,     404,       403,             S],
    (w) => createWebhookWithDelivery(w.db, w.org.id),
    (_w, { webhook, deliveryId }) => ({ path: `/v1/webhooks/${webhook.id}/deliveries/${deliveryId}/redeliver` })),
  listOrganizationEvents: rowFor(      [401, 200,     200,     200,     403,        403,      403,      403,       403,       403,      403,     403,       403,             S],
    (w) => createEvents(w.log, w.team),
    (w) => ({ path: `/v1/orgs/${w.org.id}/events` })),
  getEvent: rowFor(                    [401, 200,     200,     200,     404,        404,      404,      404,       404,       404,      404,     404,       404,             S],
    (w) => createEvents(w.log, w.team),
    (_w, [eventId]) => ({ path: `/v1/events/${eventId}` })),
  listTeamEvents: rowFor(              [401, 200,     200,     200,     200,        200,      200,      200,       200,       403,      403,     403,       200,             S],
    (w) => createEvents(w.log, w.team),
    (w) => ({ path: `/v1/teams/${w.team.id}/events` })),
  // Following one team: as the team's other lists.
  streamEvents: row(                   [401, 200,     200,     200,     200,        200,      200,      200,       200,       403,      403,     403,       200,             S],
    (w) => ({ path: `/v1/events/stream?teamId=${w.team.id}` })),
};

// prettier-ignore
export const webhookVariants = [
  // Following everything the caller may read: every member of an organization (the outsider owns
  // another one); a caller in none may read nothing.
  variantRow('streamEvents', 'every team', [401, 200, 200,     200,     200,        200,      200,      200,       200,       200,      200,     403,       200,             S],
    async () => undefined,
    () => ({ path: '/v1/events/stream' })),
];

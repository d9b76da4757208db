/** Handlers of the event feed: an organization's event log, read by its Owners and Admins, and the live stream of what each reader may see. */
import { loadOrganizationAccess } from '../auth/access.js';
import { eventAccess } from '../auth/permissions.js';
import { JsonText, pageText } from '../api/jsonText.js';
import type { Schemas } from '../api/operations.js';
import { StreamBody } from '../api/streamBody.js';
import { pageLimit } from '../db/pagination.js';
import { eventPage, findEvent } from '../db/queries/events.js';
import { EventsExpired } from '../errors.js';
import type { AreaHandlers, Handler } from './types.js';

export const listOrganizationEvents: Handler<'listOrganizationEvents'> = async ({ params, query }, { db, caller }) => {
  await loadOrganizationAccess(db, caller, params.orgId, 'administration');
  const page = await eventPage(db, params.orgId, { after: query.after, types: query.types, teamId: query.teamId }, { limit: pageLimit(query.limit), cursor: query.cursor });
  if (!page) throw new EventsExpired();
  return { status: 200, body: pageText<Schemas['Event']>(page) };
};

export const getEvent: Handler<'getEvent'> = async ({ params }, { db, caller }) => {
  const found = await findEvent(db, params.eventId);
  eventAccess(caller, found?.org_id);
  return { status: 200, body: new JsonText<Schemas['Event']>(found!.event) };
};

export const streamEvents: Handler<'streamEvents'> = async ({ query }, { caller, live }) => {
  if (!live) throw new Error('this app serves no event streams');
  const request = { caller, teamIds: query.teamId, types: query.types, after: query.after };
  return { status: 200, body: new StreamBody((req, res) => live.open(req, res, request)) };
};

export const eventsHandlers: AreaHandlers<'Events'> = {
  listOrganizationEvents,
  getEvent,
  streamEvents,
};

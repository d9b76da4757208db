/**
 * Handlers of the event feeds: an organization's event log, read whole by its Owners and Admins, and a
 * team's part of it, read by everyone who can see the team, each event in the reader's view; and the
 * live stream of every event a reader may see.
 */
import { loadOrganizationAccess, loadTeamAccess } from '../auth/access.js';
import { eventAccess, eventReader } from '../auth/permissions.js';
import { JsonText, pageText } from '../api/jsonText.js';
import type { Schemas } from '../api/operations.js';
import { StreamBody } from '../api/streamBody.js';
import { pageLimit } from '../db/pagination.js';
import { eventPage, findEvent } from '../db/queries/events.js';
import { EventsExpired } from '../errors.js';
import { eventViewTexts } from '../webhooks/views.js';
import type { AreaHandlers, Handler } from './types.js';

export const listOrganizationEvents: Handler<'listOrganizationEvents'> = async ({ params, query }, { db, caller }) => {
  await loadOrganizationAccess(db, caller, params.orgId, 'administration');
  const page = await eventPage(db, params.orgId, { after: query.after, types: query.types, teamId: query.teamId }, { limit: pageLimit(query.limit), cursor: query.cursor });
  if (!page) throw new EventsExpired();
  return { status: 200, body: pageText<Schemas['Event']>({ records: page.events.join(','), nextCursor: page.nextCursor }) };
};

export const getEvent: Handler<'getEvent'> = async ({ params }, { db, caller }) => {
  const found = await findEvent(db, params.eventId);
  eventAccess(caller, found?.org_id);
  return { status: 200, body: new JsonText<Schemas['Event']>(found!.event) };
};

/**
 * The organization's feed narrowed to the team, each event in the caller's view: those the caller may
 * not read are left out of the page, whose cursor still moves on past them.
 */
export const listTeamEvents: Handler<'listTeamEvents'> = async ({ params, query }, { db, caller }) => {
  const { access } = await loadTeamAccess(db, caller, params.teamId, 'collection');
  const page = await eventPage(db, access.orgId, { after: query.after, types: query.types, teamId: access.teamId }, { limit: pageLimit(query.limit), cursor: query.cursor });
  if (!page) throw new EventsExpired();
  const views = eventViewTexts(eventReader(caller, [access]), page.events);
  return { status: 200, body: pageText<Schemas['Event']>({ records: views.join(','), nextCursor: page.nextCursor }) };
};

export const streamEvents: Handler<'streamEvents'> = async ({ query }, { caller, live }) => {
  if (!live) throw new Error('this app serves no event streams');
  const request = { caller, teamIds: query.teamId, types: query.types, after: query.after };
  return { status: 200, body: new StreamBody((req, res) => live.open(req, res, request)) };
};

export const eventsHandlers: AreaHandlers<'Events'> = {
  listOrganizationEvents,
  getEvent,
  listTeamEvents,
  streamEvents,
};

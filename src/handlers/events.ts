/**
 * Handlers of the event feeds: an organization's event log, read whole by its Owners and Admins, and a
 * team's part of it, read by everyone who can see the team, each event in the reader's view; and the
 * live stream of every event a reader may see.
 */
import { loadOrganizationAccess, loadTeamAccess } from '../auth/access.js';
import { eventAccess, eventReader } from '../auth/permissions.js';
import { JsonText, pageText } from '../api/jsonText.js';
import type { Schemas } from '../api/operations.js';
import type { SecretBox } from '../auth/secrets.js';
import { StreamBody } from '../api/streamBody.js';
import { pageLimit } from '../db/pagination.js';
import { eventPage, findEvent } from '../db/queries/events.js';
import { EventsExpired } from '../errors.js';
import { logPositions } from '../events/positions.js';
import { eventViewText } from '../events/views.js';
import type { AreaHandlers, Handler } from './types.js';

/** The feeds' cursors: their place in the log, sealed with the server's key (every instance opens every other's). */
const feedCursors = (secrets: SecretBox) => secrets.tokens('feed cursor');

/**
 * Where a page starts: `after` as an event's id, or a log position of the organization opened (403 for
 * another's, 422 for one that does not open). Not read when a cursor is given, as `after` is not.
 */
function startOf(secrets: SecretBox, orgId: string, after: string | undefined, cursor: string | undefined) {
  if (after === undefined || cursor !== undefined) return after;
  const positions = logPositions(secrets);
  return positions.isPosition(after) ? positions.open(after, orgId, { origin: 'query', name: 'after' }) : after;
}

export const listOrganizationEvents: Handler<'listOrganizationEvents'> = async ({ params, query }, { db, caller, secrets, knownLogEnd }) => {
  await loadOrganizationAccess(db, caller, params.orgId, 'administration');
  const after = startOf(secrets, params.orgId, query.after, query.cursor);
  const page = await eventPage(
    db,
    params.orgId,
    { after, types: query.types, teamId: query.teamId },
    { limit: pageLimit(query.limit), cursor: query.cursor },
    feedCursors(secrets),
    knownLogEnd.at(),
  );
  if (!page) throw new EventsExpired();
  return { status: 200, body: pageText<Schemas['Event']>({ records: page.events.join(','), nextCursor: page.nextCursor }) };
};

export const getEvent: Handler<'getEvent'> = async ({ params }, { db, caller, knownLogEnd }) => {
  const found = await findEvent(db, params.eventId, knownLogEnd.at());
  eventAccess(caller, found?.org_id);
  return { status: 200, body: new JsonText<Schemas['Event']>(found!.event) };
};

/**
 * The organization's feed narrowed to the team, each event in the caller's view: the page reads on
 * past those the caller may not read, and neither its events nor its cursor tell of them.
 */
export const listTeamEvents: Handler<'listTeamEvents'> = async ({ params, query }, { db, caller, secrets, knownLogEnd }) => {
  const { access } = await loadTeamAccess(db, caller, params.teamId, 'collection');
  const reader = eventReader(caller, [access]);
  const page = await eventPage(
    db,
    access.orgId,
    { after: startOf(secrets, access.orgId, query.after, query.cursor), types: query.types, teamId: access.teamId },
    { limit: pageLimit(query.limit), cursor: query.cursor },
    feedCursors(secrets),
    knownLogEnd.at(),
    (event) => eventViewText(reader, event),
  );
  if (!page) throw new EventsExpired();
  return { status: 200, body: pageText<Schemas['Event']>({ records: page.events.join(','), nextCursor: page.nextCursor }) };
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

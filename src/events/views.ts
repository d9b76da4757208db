/**
 * One view of an event per reader: the event of the log as that reader would see its subject through
 * the API now, or nothing. Feeds and streams build the reader once (`eventReader`,
 * src/auth/permissions.ts, from the caller and their access to each team) and then judge every event
 * in memory, without a statement per event or per reader.
 *
 * Two clocks. What an event carries was fixed when the change happened, as every reader of it may see
 * it (a meeting without hidden ratings, no reader's own acknowledgement: `meetingSeenByEveryone`), so
 * a view never adds to it: `acknowledged: false` in a meeting or message of an event means "not told"
 * (what a record tells only its reader is outside its revision: a local copy keeps its own),
 * and a reader's own hidden rating is not in it either — `GET /meetings/{id}` tells both. Who may read
 * an event is judged when it is read: a member removed from a team no longer reads its old events.
 *
 * Only a field that names the reader is set for them: an organization's `role` is the reader's own,
 * as `GET /orgs/{orgId}` shows it (the log keeps the role of whoever changed the settings, which the
 * organization feed and webhook deliveries carry as documented).
 */
import type { Schemas } from '../api/operations.js';
import { mayReadEvent, type EventReader } from '../auth/permissions.js';

/** An event as the log keeps it and the feeds answer it. */
export type LoggedEvent = Schemas['Event'];

/**
 * The event as `reader` may see it, or undefined when they may not read it. The answer is the event
 * itself (the same object) unless a field names the reader.
 */
export function eventView(reader: EventReader, event: LoggedEvent): LoggedEvent | undefined {
  if (!mayReadEvent(reader, event)) return undefined;
  const role = reader.organizations.get(event.data.orgId)!;
  if (event.type === 'organization.updated' && event.data.object.role !== role) {
    return { ...event, data: { ...event.data, object: { ...event.data.object, role } } };
  }
  return event;
}

/**
 * The view of an event kept as JSON text (the log's), as JSON text; undefined when the reader may not
 * read it. An event seen unchanged keeps its stored text, byte for byte.
 */
export function eventViewText(reader: EventReader, text: string): string | undefined {
  const event = JSON.parse(text) as LoggedEvent;
  const view = eventView(reader, event);
  return view === undefined ? undefined : view === event ? text : JSON.stringify(view);
}

/**
 * 0016_reference_revisions: the events whose object is a reference — a deletion's id, a removal's
 * `userId`, a rating's meeting and person, an acknowledgement — carry `revision` too, the log
 * position of their change (docs/decisions.md, "Revisions"): a local copy then judges a removal and
 * a return delivered out of order as it judges two changes of a record.
 *
 * - The events the log kept before get their own position as revision, as 0012 gave the records of
 *   its events: a number of the same space, greater than every revision the reference's record had
 *   when its event was written, and smaller than any it got later.
 * - The object is the last member of `data`, and `data` of the event, so the event's text ends with
 *   the object's `}` and two more: `revision` goes in front of them, as the last member of the object.
 *   A reference is never kept reduced (it is far below 64 KB), so every one of these texts ends so.
 * - Down takes it out again.
 *
 * Frozen in time: imports nothing from the application, only `kysely`.
 */
import { sql, type Kysely } from 'kysely';

/** The event types whose object is a reference. */
const referenceEvents = [
  'team.deleted', 'task.deleted', 'issue.deleted', 'goal.deleted', 'milestone.deleted', 'metric.deleted', 'cascading_message.deleted',
  'seat.deleted', 'document.deleted', 'organization_member.removed', 'team_member.removed', 'meeting_rating.set', 'meeting_rating.deleted',
  'cascading_message.acknowledged',
];

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    update webhook_events set event = left(event, -3) || ',"revision":' || position || '}}}'
    where type in (${sql.join(referenceEvents)}) and event not like '%"revision":%'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    update webhook_events set event = regexp_replace(event, ',"revision":[0-9]+\\}\\}\\}$', '}}}')
    where type in (${sql.join(referenceEvents)})`.execute(db);
}

/**
 * The answers of the caller's own changes, turned into what the local copy applies at once: the
 * event the change will send (so that, when it arrives, it is a repeat and changes nothing), or,
 * where the answer is the caller's own view of a record (a meeting), the record itself. An answer
 * that is not the record (a rating, a meeting's creation, an acknowledgement) asks for the record to
 * be read. The table names each changing path of a team's records; `tsc` checks every path against
 * the contract's.
 */
import type { components, paths } from '../../generated/api.js';
import type { FeedEvent } from './events.js';
import type { FollowUp, LocalCopy, RecordKind, SyncRecords } from './localCopy.js';

type Schemas = components['schemas'];

/** The answer of one change the caller made through the client. */
export interface OwnAnswer {
  method: string;
  /** The contract's path: `/tasks/{id}`. */
  schemaPath: string;
  /** The path's parameters. */
  path: Record<string, string>;
  status: number;
  /** The answer's JSON; undefined for a 204. */
  body: unknown;
  /** The request's JSON, kept for the changes whose answer does not tell what changed. */
  requestBody: unknown;
}

export type OwnChange =
  | { teamId: string; event: FeedEvent }
  | { teamId: string; kind: RecordKind; record: SyncRecords[RecordKind] }
  | { teamId: string; followUp: FollowUp };

type Change = (answer: OwnAnswer, copy: LocalCopy) => OwnChange[];
type Path = keyof paths;
type Key = `${'POST' | 'PATCH' | 'PUT' | 'DELETE'} ${Path}`;

/** The event the change sends, in the team of the record it answered. */
const as =
  (type: string, teamOf: (answer: OwnAnswer, copy: LocalCopy) => string | undefined = (answer) => (answer.body as { teamId?: string }).teamId ?? answer.path.teamId): Change =>
  (answer, copy) => {
    const teamId = teamOf(answer, copy);
    return teamId === undefined ? [] : [{ teamId, event: eventOf(type, teamId, answer.body) }];
  };

/** The deletion event of the record named by the path's `id`, in the team holding it. */
const deletes =
  (type: string, kind: RecordKind): Change =>
  (answer, copy) => {
    const teamId = copy.teamOf(kind, answer.path.id!);
    return teamId === undefined ? [] : [{ teamId, event: eventOf(type, teamId, { id: answer.path.id }) }];
  };

/** An event of a record nested in another (a milestone, a message): offered to every team, and applied by the one holding its parent. */
const nested =
  (type: string, object: (answer: OwnAnswer) => unknown = (answer) => answer.body): Change =>
  (answer, copy) =>
    copy.teamIds().map((teamId) => ({ teamId, event: eventOf(type, teamId, object(answer)) }));

const readMeeting = (id: (answer: OwnAnswer) => string): Change => (answer, copy) => {
  const meetingId = id(answer);
  const teamId = copy.teamOf('meeting', meetingId) ?? (answer.body as { teamId?: string } | undefined)?.teamId;
  return teamId === undefined ? [] : [{ teamId, followUp: { action: 'refetch', kind: 'meeting', id: meetingId, teamId } }];
};

const meetingAnswer: Change = (answer) => {
  const meeting = answer.body as Schemas['MeetingDetail'];
  return [{ teamId: meeting.teamId, kind: 'meeting', record: meeting }];
};

const ofMetric = (answer: OwnAnswer, copy: LocalCopy) => copy.teamOf('metric', answer.path.id!);

const changes: Partial<Record<Key, Change>> = {
  'PATCH /teams/{teamId}': as('team.updated', (answer) => answer.path.teamId),
  'DELETE /teams/{teamId}': (answer) => [{ teamId: answer.path.teamId!, event: eventOf('team.deleted', answer.path.teamId!, { id: answer.path.teamId }) }],
  'POST /teams/{teamId}/members': as('team_member.added', (answer) => answer.path.teamId),
  'PATCH /teams/{teamId}/members/{userId}': as('team_member.updated', (answer) => answer.path.teamId),
  'DELETE /teams/{teamId}/members/{userId}': (answer) => [{ teamId: answer.path.teamId!, event: eventOf('team_member.removed', answer.path.teamId!, { userId: answer.path.userId }) }],
  'POST /teams/{teamId}/tasks': as('task.created'),
  'PATCH /tasks/{id}': as('task.updated'),
  'DELETE /tasks/{id}': deletes('task.deleted', 'task'),
  'POST /teams/{teamId}/issues': as('issue.created'),
  'PATCH /issues/{id}': as('issue.updated'),
  'DELETE /issues/{id}': deletes('issue.deleted', 'issue'),
  'POST /teams/{teamId}/goals': as('goal.created'),
  'PATCH /goals/{id}': as('goal.updated'),
  'DELETE /goals/{id}': deletes('goal.deleted', 'goal'),
  'POST /goals/{id}/milestones': nested('milestone.created'),
  'PATCH /milestones/{id}': nested('milestone.updated'),
  'DELETE /milestones/{id}': nested('milestone.deleted', (answer) => ({ id: answer.path.id })),
  'POST /teams/{teamId}/metrics': as('metric.created'),
  'PATCH /metrics/{id}': as('metric.updated'),
  'DELETE /metrics/{id}': deletes('metric.deleted', 'metric'),
  'PUT /metrics/{id}/values/{week}': as('metric_value.set', ofMetric),
  'PUT /teams/{teamId}/scorecard/weeks/{week}': (answer) =>
    (answer.body as Schemas['ScorecardWeek']).values.map((value) => ({ teamId: answer.path.teamId!, event: eventOf('metric_value.set', answer.path.teamId!, value) })),
  // A creation answers the meeting without what it holds: it is read whole.
  'POST /teams/{teamId}/meetings': readMeeting((answer) => (answer.body as Schemas['Meeting']).id),
  'PATCH /meetings/{id}': meetingAnswer,
  'POST /meetings/{id}/reveal-ratings': meetingAnswer,
  // A rating answers only itself; the meeting's summary moved with it.
  'PUT /meetings/{id}/ratings/me': readMeeting((answer) => answer.path.id!),
  'PUT /meetings/{id}/ratings/{userId}': readMeeting((answer) => answer.path.id!),
  'POST /meetings/{id}/segues': nested('segue.created'),
  'POST /meetings/{id}/headlines': nested('headline.created'),
  'POST /meetings/{id}/messages': nested('cascading_message.created'),
  'DELETE /messages/{id}': nested('cascading_message.deleted', (answer) => ({ id: answer.path.id })),
  'POST /messages/acknowledge': (answer, copy) =>
    ((answer.requestBody as { ids?: string[] } | undefined)?.ids ?? []).flatMap((id) =>
      copy.teamIds().map((teamId) => ({ teamId, event: eventOf('cascading_message.acknowledged', teamId, { id, userId: copy.userId }) })),
    ),
  'POST /teams/{teamId}/vision': as('vision.created'),
  'PATCH /teams/{teamId}/vision': as('vision.updated'),
  'POST /teams/{teamId}/org-chart/seats': as('seat.created'),
  'PATCH /org-chart/seats/{id}': as('seat.updated'),
  'DELETE /org-chart/seats/{id}': deletes('seat.deleted', 'seat'),
  'PUT /teams/{teamId}/people-reviews': as('people_review.set'),
  'POST /teams/{teamId}/documents': as('document.created'),
  'DELETE /documents/{id}': deletes('document.deleted', 'document'),
};

/** Whether the request of this change must be kept for its answer to be applied. */
export const needsRequestBody = (method: string, schemaPath: string) => `${method} ${schemaPath}` === 'POST /messages/acknowledge';

/** What the copy applies for the answer of an own change; nothing for a change that failed or holds no team's record. */
export function changesOfAnswer(answer: OwnAnswer, copy: LocalCopy): OwnChange[] {
  if (answer.status < 200 || answer.status > 299) return [];
  const change = changes[`${answer.method} ${answer.schemaPath}` as Key];
  if (!change) return [];
  // A rating removed answers 204 with no rating: the meeting is read as for a rating given.
  return change(answer, copy);
}

/** An event as the stream would bring it, without an id: applying it does not move the team's position. */
function eventOf(type: string, teamId: string, object: unknown): FeedEvent {
  return { type, timestamp: new Date().toISOString(), data: { orgId: '', teamId, object } } as unknown as FeedEvent;
}

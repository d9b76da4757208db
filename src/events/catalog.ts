/**
 * Which events each changing operation emits, and what they carry: the one table of the outbox. An
 * event names its resource and action (`task.created`), and its `object` is the resource exactly as
 * the change answered it (the same shape a GET answers); a deletion carries the deleted id, and a
 * meeting rating only who rated which meeting, because a rating may still be hidden. A whole meeting
 * is carried as every reader may see it (`meetingSeenByEveryone`), never as the writer's own answer.
 *
 * `subject` says where the resource lives: the organization and team the event belongs to, which the
 * feed filters on and subscriptions are matched on.
 *
 * Every changing operation of the contract (every one but a GET) has its line, typed so that `tsc`
 * names here an operation without one: it declares its events, or says with `noEvent` why it sends
 * none. Each type it declares is the contract's `webhooks` entry of that name (openapi/webhooks/) and a
 * branch of the Event and WebhookEvent unions; test/eventLog.test.ts checks that each operation
 * writes exactly its event, valid against that schema (`make check-op OP=…` runs its part).
 */
import type { ChangingOperation, OperationId, Schemas } from '../api/operations.js';
import type { SubjectKind } from '../db/queries/events.js';
import { meetingSeenByEveryone } from '../records/meetings.js';

export interface ChangeInput {
  params: Record<string, string>;
  body: unknown;
  /** The caller's user id. */
  userId: string;
}

export interface ChangeResult {
  status: number;
  body: unknown;
}

export interface EventSpec {
  /**
   * Every type the change may send. One alone is the type of all its events; with several (a meeting's
   * update, a rating), the change's input or answer decides in `event`.
   */
  types: readonly [string, ...string[]];
  /** Where the resource lives: a kind of lookup and the parameter (or body field) it starts from. */
  subject: { kind: SubjectKind; from: (input: ChangeInput) => string | readonly string[] };
  /**
   * Whether the subject must be looked up before the change: a row the change deletes, or a subject
   * defined by what the change alters (messages not yet acknowledged, a team without a vision).
   * Otherwise it is found after the change, in the statement that writes the event.
   */
  before?: true;
  /** The team of a resource the change created outside any team's rows (a new team); else the subject's. */
  teamOf?: (result: ChangeResult) => string;
  /** The event of a successful change of one subject; `subjectId` is the subject's own id where it has one. */
  event: (input: ChangeInput, result: ChangeResult, subjectId: string) => { type: string; object: unknown };
}

const param = (name: string) => (input: ChangeInput) => input.params[name]!;

/** A changing operation that deliberately sends no event, and why. */
export interface NoEvent {
  noEvent: string;
}

export const noEvent = (why: string): NoEvent => ({ noEvent: why });

export type EventDeclaration = EventSpec | NoEvent;

/** `x.created` / `x.updated` / … with the change's answer as the object. */
const answered = (type: string, kind: SubjectKind, from: string): EventSpec => ({
  types: [type],
  subject: { kind, from: param(from) },
  event: (_input, result) => ({ type, object: result.body }),
});

/** `x.deleted` with the id of what is gone. */
const deleted = (type: string, kind: SubjectKind, from: string): EventSpec => ({
  types: [type],
  before: true,
  subject: { kind, from: param(from) },
  event: (input) => ({ type, object: { id: input.params[from] } }),
});

/** `x_member.removed` with the user id of who left. */
const removed = (type: string, kind: SubjectKind, from: string): EventSpec => ({
  types: [type],
  subject: { kind, from: param(from) },
  event: (input) => ({ type, object: { userId: input.params.userId } }),
});

/** A single meeting as every reader of the event may see it, never as the writer's own answer shows it. */
const seenByEveryone = (result: ChangeResult) => meetingSeenByEveryone(result.body as Schemas['MeetingDetail']);

const ratingSet: EventSpec = {
  types: ['meeting_rating.set', 'meeting_rating.deleted'],
  subject: { kind: 'meeting', from: param('id') },
  event: (input, result) => ({
    type: result.status === 204 ? 'meeting_rating.deleted' : 'meeting_rating.set',
    object: { meetingId: input.params.id, userId: input.params.userId ?? input.userId },
  }),
};

const subscriptions = noEvent('a subscription is the integration’s own setting, not an organization’s record: its changes go to no one');
const platform = noEvent('platform administration is not an organization’s record, and no organization subscribes to it');

export const eventCatalog: Record<ChangingOperation, EventDeclaration> = {
  updateOrganization: answered('organization.updated', 'organization', 'orgId'),
  addOrganizationMember: answered('organization_member.added', 'organization', 'orgId'),
  updateOrganizationMember: answered('organization_member.updated', 'organization', 'orgId'),
  removeOrganizationMember: removed('organization_member.removed', 'organization', 'orgId'),
  createTeam: { ...answered('team.created', 'organization', 'orgId'), teamOf: (result) => (result.body as { id: string }).id },
  updateTeam: answered('team.updated', 'team', 'teamId'),
  deleteTeam: deleted('team.deleted', 'team', 'teamId'),
  addTeamMember: answered('team_member.added', 'team', 'teamId'),
  updateTeamMember: answered('team_member.updated', 'team', 'teamId'),
  removeTeamMember: removed('team_member.removed', 'team', 'teamId'),

  createTask: answered('task.created', 'team', 'teamId'),
  updateTask: answered('task.updated', 'task', 'id'),
  deleteTask: deleted('task.deleted', 'task', 'id'),
  createIssue: answered('issue.created', 'team', 'teamId'),
  updateIssue: answered('issue.updated', 'issue', 'id'),
  deleteIssue: deleted('issue.deleted', 'issue', 'id'),
  createGoal: answered('goal.created', 'team', 'teamId'),
  updateGoal: answered('goal.updated', 'goal', 'id'),
  deleteGoal: deleted('goal.deleted', 'goal', 'id'),
  createMilestone: answered('milestone.created', 'goal', 'id'),
  updateMilestone: answered('milestone.updated', 'milestone', 'id'),
  deleteMilestone: deleted('milestone.deleted', 'milestone', 'id'),
  createMetric: answered('metric.created', 'team', 'teamId'),
  updateMetric: answered('metric.updated', 'metric', 'id'),
  deleteMetric: deleted('metric.deleted', 'metric', 'id'),
  putMetricValue: answered('metric_value.set', 'metric', 'id'),
  putScorecardWeek: {
    types: ['metric_value.set'],
    before: true,
    subject: { kind: 'metric', from: (input) => (input.body as { values: { metricId: string }[] }).values.map((value) => value.metricId) },
    event: (_input, result, metricId) => ({
      type: 'metric_value.set',
      object: (result.body as Schemas['ScorecardWeek']).values.find((value) => value.metricId === metricId),
    }),
  },

  createMeeting: answered('meeting.created', 'team', 'teamId'),
  updateMeeting: {
    types: ['meeting.updated', 'meeting.status_changed'],
    subject: { kind: 'meeting', from: param('id') },
    event: (input, result) => ({
      type: (input.body as { status?: unknown }).status === undefined ? 'meeting.updated' : 'meeting.status_changed',
      object: seenByEveryone(result),
    }),
  },
  // One's own rating is set, never deleted (no 204): it sends only the first of the two.
  rateMeetingAsMe: { ...ratingSet, types: ['meeting_rating.set'] },
  setMeetingRating: ratingSet,
  revealMeetingRatings: {
    types: ['meeting.ratings_revealed'],
    subject: { kind: 'meeting', from: param('id') },
    event: (_input, result) => ({ type: 'meeting.ratings_revealed', object: seenByEveryone(result) }),
  },
  createSegue: answered('segue.created', 'meeting', 'id'),
  createHeadline: answered('headline.created', 'meeting', 'id'),
  createCascadingMessage: answered('cascading_message.created', 'meeting', 'id'),
  deleteCascadingMessage: deleted('cascading_message.deleted', 'message', 'id'),
  acknowledgeCascadingMessages: {
    types: ['cascading_message.acknowledged'],
    before: true,
    subject: { kind: 'unacknowledgedMessages', from: (input) => (input.body as { ids: string[] }).ids },
    event: (input, _result, messageId) => ({ type: 'cascading_message.acknowledged', object: { id: messageId, userId: input.userId } }),
  },

  createTeamVision: { ...answered('vision.created', 'teamWithoutVision', 'teamId'), before: true },
  updateTeamVision: answered('vision.updated', 'team', 'teamId'),
  createSeat: answered('seat.created', 'team', 'teamId'),
  updateSeat: answered('seat.updated', 'seat', 'id'),
  deleteSeat: deleted('seat.deleted', 'seat', 'id'),
  putPeopleReview: answered('people_review.set', 'team', 'teamId'),
  createDocument: answered('document.created', 'team', 'teamId'),
  deleteDocument: deleted('document.deleted', 'document', 'id'),

  createWebhook: subscriptions,
  updateWebhook: subscriptions,
  deleteWebhook: subscriptions,
  pingWebhook: noEvent('its webhook.ping goes to the one subscription pinged, whatever its events, and is no change of the organization'),
  rotateWebhookSecret: subscriptions,
  redeliverWebhookDelivery: noEvent('it sends an event already sent again, with its id'),

  createPlatformOrganization: platform,
  updatePlatformOrganization: platform,
  revokePlatformApiKey: platform,
  putPlatformAiProvider: platform,
  updatePlatformAiProvider: platform,
  deletePlatformAiProvider: platform,
  putPlatformAiPrompt: platform,
  deletePlatformAiPrompt: platform,
  startOrgExport: noEvent('it only queues the export: the job sends `export.completed` when the archive is written (`jobEvents`)'),
};

/**
 * Event types no request sends, but a background job of the server, after the operation that started
 * it answered: what the job is, and which operation starts it. The export's worker
 * (src/exports/worker.ts) writes `export.completed` in the transaction that completes the export.
 */
export const jobEvents: Readonly<Record<string, { startedBy: ChangingOperation; sentWhen: string }>> = {
  'export.completed': { startedBy: 'startOrgExport', sentWhen: 'the export’s archive is written, by the server that finished it' },
};

/** The events `operationId` sends, or undefined for a read and for a change that declares none. */
export function eventSpecOf(operationId: OperationId): EventSpec | undefined {
  const declared = (eventCatalog as Partial<Record<OperationId, EventDeclaration>>)[operationId];
  return declared === undefined || 'noEvent' in declared ? undefined : declared;
}

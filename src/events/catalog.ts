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
import type { Kysely } from 'kysely';
import type { Database } from '../db/database.js';
import { EVENT_MAX_BYTES, type SubjectKind } from '../db/queries/events.js';
import { findMeetingForEvent } from '../db/queries/meetings.js';
import { meetingSeenByEveryone, toMeetingDetail } from '../records/meetings.js';

export interface ChangeInput {
  params: Record<string, string>;
  /** The query parameters, validated (a CSV import's `dryRun`). */
  query?: Record<string, unknown>;
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
  /**
   * The event of a successful change of one subject; `subjectId` is the subject's own id where it has
   * one. `logRevision`: the object is a reference (what is gone, who was removed, which rating changed,
   * who acknowledged), which takes the log position of the change as its `revision`, drawn as the
   * event is written (`logRevision`, src/db/queries/events.ts).
   */
  event: (input: ChangeInput, result: ChangeResult, subjectId: string) => { type: string; object: unknown; logRevision?: true };
  /**
   * The events the change also sends for another record it alters (its side effects), in the same
   * transaction after its own. Each is declared here, and only here: the contract's description of
   * each of these events names every operation that sends it (test/eventCatalog.test.ts holds both).
   */
  alsoSends?: readonly SideEffect[];
  /** The events its own statements write for the records it alters in bulk (`BulkEffect`). */
  alsoWrites?: readonly BulkEffect[];
}

/**
 * Records a change alters in bulk, however many (the metrics a move or a deletion shifts, the seats
 * below a deleted one, the teams a leaving member leaves): the change's own statement writes an event
 * for each (`insertEventsOfRows`, src/db/queries/events.ts), in its transaction, with no round trip of
 * its own and none per record — a read per record, as `alsoSends` makes, would cost one each. Declared
 * here so that the contract's description of each event names the operation (test/eventCatalog.test.ts).
 */
export interface BulkEffect {
  /** The event written for each altered record. */
  type: string;
  /** Which records, as the contract's description says it. */
  which: string;
}

/**
 * Another record a change alters, so that what its GET answers changes (a milestone's goal, a segue's
 * meeting): its revision rises in the change's transaction (the database's triggers, 0012_revisions)
 * and it gets its own `x.updated` event, whose object is what its GET answers in that transaction.
 */
export interface SideEffect {
  /** The event sent for the altered record. */
  type: string;
  /** The altered record's kind, where its event belongs (its organization and team). */
  kind: SubjectKind;
  /** The path of the altered record's GET, `{id}` its id: the event's object is its answer, read in the change's transaction. */
  read: string;
  /**
   * The altered record's id: from the change's answer and input, or, where the change deletes the row
   * that points to it, looked up before the change (`before`: the kind of lookup, from the operation's
   * parameter).
   */
  of: ((input: ChangeInput, result: ChangeResult) => string) | { before: SubjectKind; from: (input: ChangeInput) => string };
  /** The object as every reader of the event may see it, from the GET's answer; the answer itself when absent. */
  seen?: (record: unknown) => unknown;
  /**
   * The altered record as its GET answers it to the caller at `at`, read for its event in one statement
   * without what its reduced event leaves out when that alone passes `EVENT_MAX_BYTES` (`reduced`):
   * a large meeting is then not read and written whole again for every segue added. Without it, the
   * GET itself is run.
   */
  readForEvent?: (db: Kysely<Database>, id: string, input: ChangeInput, at: Date) => Promise<{ record: unknown; reduced: boolean } | undefined>;
}

const param = (name: string) => (input: ChangeInput) => input.params[name]!;

/** A changing operation that deliberately sends no event, and why. */
export interface NoEvent {
  noEvent: string;
  /** The events it does write for the records it alters in bulk, none of its own (see `EventSpec`). */
  alsoWrites?: readonly BulkEffect[];
}

export const noEvent = (why: string, alsoWrites?: readonly BulkEffect[]): NoEvent => (alsoWrites ? { noEvent: why, alsoWrites } : { noEvent: why });

export type EventDeclaration = EventSpec | NoEvent;

/** `x.created` / `x.updated` / … with the change's answer as the object. */
const answered = (type: string, kind: SubjectKind, from: string): EventSpec => ({
  types: [type],
  subject: { kind, from: param(from) },
  event: (_input, result) => ({ type, object: result.body }),
});

/** `x.deleted` with the id of what is gone and the log position of its deletion. */
const deleted = (type: string, kind: SubjectKind, from: string): EventSpec => ({
  types: [type],
  before: true,
  subject: { kind, from: param(from) },
  event: (input) => ({ type, object: { id: input.params[from] }, logRevision: true }),
});

/** `x_member.removed` with the user id of who left and the log position of their removal. */
const removed = (type: string, kind: SubjectKind, from: string): EventSpec => ({
  types: [type],
  subject: { kind, from: param(from) },
  event: (input) => ({ type, object: { userId: input.params.userId }, logRevision: true }),
});

/** A single meeting as every reader of the event may see it, never as the writer's own answer shows it. */
const seenByEveryone = (result: ChangeResult) => meetingSeenByEveryone(result.body as Schemas['MeetingDetail']);


/** A goal shows its milestones: each change of one is a change of the goal. */
const goalOfMilestone = (of: SideEffect['of']): SideEffect => ({ type: 'goal.updated', kind: 'goal', read: '/goals/{id}', of });

/** A meeting shows its rating summary, segues, headlines and messages: each change of one is a change of the meeting. */
const meetingOf = (of: SideEffect['of']): SideEffect => ({
  type: 'meeting.updated',
  kind: 'meeting',
  read: '/meetings/{id}',
  of,
  seen: (record) => meetingSeenByEveryone(record as Schemas['MeetingDetail']),
  readForEvent: async (db, id, input, at) => {
    const row = await findMeetingForEvent(db, id, input.userId, EVENT_MAX_BYTES);
    return row && { record: toMeetingDetail(row, input.userId, at), reduced: row.large };
  },
});

/** The meeting named by the operation's `{id}`. */
const meetingInPath = meetingOf((input) => input.params.id!);

const ratingSet: EventSpec = {
  types: ['meeting_rating.set', 'meeting_rating.deleted'],
  alsoSends: [meetingInPath],
  subject: { kind: 'meeting', from: param('id') },
  event: (input, result) => ({
    type: result.status === 204 ? 'meeting_rating.deleted' : 'meeting_rating.set',
    object: { meetingId: input.params.id, userId: input.params.userId ?? input.userId },
    logRevision: true,
  }),
};

/**
 * A CSV import: one `csv_import.completed` for the whole file, its answer as the object, instead of
 * an event per row (10,000 rows would be 10,000 events in the log and as many webhook deliveries); a
 * dry run writes nothing and sends none (no subject).
 */
const csvImported: EventSpec = {
  types: ['csv_import.completed'],
  before: true,
  subject: { kind: 'team', from: (input) => (input.query?.dryRun === true ? [] : [input.params.teamId!]) },
  event: (_input, result) => ({ type: 'csv_import.completed', object: result.body }),
};

const subscriptions = noEvent('a subscription is the integration’s own setting, not an organization’s record: its changes go to no one');
const platform = noEvent('platform administration is not an organization’s record, and no organization subscribes to it');

export const eventCatalog: Record<ChangingOperation, EventDeclaration> = {
  updateOrganization: answered('organization.updated', 'organization', 'orgId'),
  addOrganizationMember: answered('organization_member.added', 'organization', 'orgId'),
  updateOrganizationMember: answered('organization_member.updated', 'organization', 'orgId'),
  removeOrganizationMember: {
    ...removed('organization_member.removed', 'organization', 'orgId'),
    alsoWrites: [{ type: 'team_member.removed', which: 'each team of the organization the member was in' }],
  },
  createTeam: { ...answered('team.created', 'organization', 'orgId'), teamOf: (result) => (result.body as { id: string }).id },
  updateTeam: answered('team.updated', 'team', 'teamId'),
  deleteTeam: deleted('team.deleted', 'team', 'teamId'),
  addTeamMember: answered('team_member.added', 'team', 'teamId'),
  updateTeamMember: answered('team_member.updated', 'team', 'teamId'),
  removeTeamMember: removed('team_member.removed', 'team', 'teamId'),

  createTask: answered('task.created', 'team', 'teamId'),
  updateTask: answered('task.updated', 'task', 'id'),
  deleteTask: deleted('task.deleted', 'task', 'id'),
  importTeamTasks: csvImported,
  createIssue: answered('issue.created', 'team', 'teamId'),
  updateIssue: answered('issue.updated', 'issue', 'id'),
  deleteIssue: deleted('issue.deleted', 'issue', 'id'),
  importTeamIssues: csvImported,
  createGoal: answered('goal.created', 'team', 'teamId'),
  updateGoal: answered('goal.updated', 'goal', 'id'),
  deleteGoal: deleted('goal.deleted', 'goal', 'id'),
  createMilestone: { ...answered('milestone.created', 'goal', 'id'), alsoSends: [goalOfMilestone((input) => input.params.id!)] },
  updateMilestone: {
    ...answered('milestone.updated', 'milestone', 'id'),
    alsoSends: [goalOfMilestone((_input, result) => (result.body as Schemas['Milestone']).goalId)],
  },
  deleteMilestone: { ...deleted('milestone.deleted', 'milestone', 'id'), alsoSends: [goalOfMilestone({ before: 'goalOfMilestone', from: param('id') })] },
  createMetric: answered('metric.created', 'team', 'teamId'),
  updateMetric: { ...answered('metric.updated', 'metric', 'id'), alsoWrites: [{ type: 'metric.updated', which: 'the neighbour a move swapped places with' }] },
  deleteMetric: { ...deleted('metric.deleted', 'metric', 'id'), alsoWrites: [{ type: 'metric.updated', which: 'each metric below, moved up one place' }] },
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

  importTeamScorecard: csvImported,

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
  createSegue: { ...answered('segue.created', 'meeting', 'id'), alsoSends: [meetingInPath] },
  createHeadline: { ...answered('headline.created', 'meeting', 'id'), alsoSends: [meetingInPath] },
  createCascadingMessage: { ...answered('cascading_message.created', 'meeting', 'id'), alsoSends: [meetingInPath] },
  deleteCascadingMessage: {
    ...deleted('cascading_message.deleted', 'message', 'id'),
    alsoSends: [meetingOf({ before: 'meetingOfMessage', from: param('id') })],
  },
  acknowledgeCascadingMessages: {
    types: ['cascading_message.acknowledged'],
    before: true,
    subject: { kind: 'unacknowledgedMessages', from: (input) => (input.body as { ids: string[] }).ids },
    event: (input, _result, messageId) => ({ type: 'cascading_message.acknowledged', object: { id: messageId, userId: input.userId }, logRevision: true }),
  },

  createTeamVision: { ...answered('vision.created', 'teamWithoutVision', 'teamId'), before: true },
  updateTeamVision: answered('vision.updated', 'team', 'teamId'),
  createSeat: answered('seat.created', 'team', 'teamId'),
  updateSeat: answered('seat.updated', 'seat', 'id'),
  deleteSeat: { ...deleted('seat.deleted', 'seat', 'id'), alsoWrites: [{ type: 'seat.deleted', which: 'each seat below it, deleted with it' }] },
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
  updatePlatformOrganization: noEvent('platform administration is not an organization’s record, and no organization subscribes to it', [
    { type: 'organization.updated', which: 'the organization whose status changed, which its members read' },
  ]),
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

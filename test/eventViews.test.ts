/**
 * The view of an event per reader (issue 38), as a matrix: every event type of the contract × every
 * kind of reader. Each scenario makes its change over HTTP as production does, takes the event the
 * log stored, and compares each reader's view (`eventView`, with the reader built as a feed or stream
 * builds it) with that reader's own GET of the event's subject right after the change — or right
 * before it, for a deletion or removal, whose event carries only an id: a refused GET (403/404), or a
 * list without the record, means no view; a record shown means the view's object is that record, as
 * every reader may see it. Where no GET shows the subject (a rating while hidden, who read a message),
 * the scenario names its audience.
 *
 * The organization's Owners and Admins read the log whole (the organization's feed, webhooks): their
 * view of every event is the stored event itself, but for the one field that names the reader
 * (an organization's `role`).
 *
 * Table-driven over the contract's `EventType`: a type without a scenario fails here, and without a
 * decision it fails `tsc` in src/auth/permissions.ts.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Schemas } from '../src/api/operations.js';
import type { Caller } from '../src/auth/caller.js';
import { eventReader, readableTeams, type EventReader } from '../src/auth/permissions.js';
import type { OrganizationRole, TeamRole } from '../src/db/database.js';
import { eventView, type LoggedEvent } from '../src/events/views.js';
import { runDueExports } from '../src/exports/worker.js';
import { contract } from './support/contract.js';
import { databaseLabel } from './support/database.js';
import { feedShowsAll } from './support/eventFactories.js';
import { addOrganizationMember, addTeamMember, createCaller, createOrganization, createTeam } from './support/factories.js';
import { createMeetingIn, createMessage, createRating } from './support/meetingFactories.js';
import { csvFile, startTestApp, type TestApp } from './support/testApp.js';

type EventType = Schemas['EventType'];

const readerNames = ['orgOwner', 'orgAdmin', 'implementer', 'teamOwner', 'teamAdmin', 'teamMember', 'teamViewer', 'otherTeamMember', 'outsider'] as const;
type ReaderName = (typeof readerNames)[number];

/** Who each reader is: an organization role (none: outside it) and a role in the world's team or in another team of the organization. */
const people: Record<ReaderName, { orgRole?: OrganizationRole; teamRole?: TeamRole; otherTeamRole?: TeamRole }> = {
  orgOwner: { orgRole: 'OWNER' },
  orgAdmin: { orgRole: 'ADMIN' },
  implementer: { orgRole: 'IMPLEMENTER' },
  teamOwner: { orgRole: 'MEMBER', teamRole: 'OWNER' },
  teamAdmin: { orgRole: 'MEMBER', teamRole: 'ADMIN' },
  teamMember: { orgRole: 'MEMBER', teamRole: 'MEMBER' },
  teamViewer: { orgRole: 'MEMBER', teamRole: 'VIEWER' },
  otherTeamMember: { orgRole: 'MEMBER', otherTeamRole: 'MEMBER' },
  outsider: {},
};

interface Person {
  id: string;
  key: string;
}

interface World {
  orgId: string;
  teamId: string;
  /** Makes every change unless a scenario says otherwise: organization Owner and Owner of the team. */
  actor: Person;
  readers: Record<ReaderName, Person>;
  /** A new team of the organization with the same members as the world's team. */
  newTeam(): Promise<string>;
  /** A new person in the organization, and in the world's team when a team role is given. */
  newMember(teamRole?: TeamRole): Promise<string>;
}

let app: TestApp;
let w: World;

async function call(method: string, path: string, key: string, body?: unknown) {
  const response = await app.request(method, `/v1${path}`, { key, body });
  expect(response.status, `${method} ${path}: ${response.text}`).toBeLessThan(300);
  return response.body;
}

/** Whatever a scenario's steps pass on to each other. */
type Ctx = Record<string, any>;

interface Scenario {
  type: EventType;
  /** What sets a second scenario of the same type apart. */
  variant?: string;
  /** What the change acts on, made before it. */
  prepare?: () => Promise<Ctx>;
  /** The change, over HTTP (by `w.actor` unless it says otherwise). */
  change: (ctx: Ctx) => Promise<Ctx | void>;
  /**
   * The GET of the subject, and the record a reader's view must carry given that GET's body (undefined:
   * the body does not show the record). Read after the change, or before it with `before`.
   */
  subject?: { path: (ctx: Ctx) => string; record?: (body: any, ctx: Ctx) => unknown; before?: true };
  /** Who reads an event whose subject no GET shows; every view is then the stored event. */
  audience?: ReaderName[];
}

const item = (items: any[], match: (candidate: any) => boolean) => items.find(match);
const byId = (id: string) => (candidate: { id: string }) => candidate.id === id;
const review = (userId: string) => ({ userId, quarter: '2026-Q4', coreValuesScores: { 'Customer first': true }, gwc: { getsIt: true, wantsIt: true, capacityToDoIt: false } });

/**
 * A single meeting as every reader of an event may see it, from the reader's own GET: while the
 * ratings are hidden no rating (not even the reader's own, which their GET shows them), and no
 * reader's own acknowledgement (`acknowledged` false: not told).
 */
const meetingForEveryone = (meeting: any) => ({
  ...meeting,
  ratings: meeting.ratingsHidden ? [] : meeting.ratings,
  messages: meeting.messages.map((message: object) => ({ ...message, acknowledged: false })),
});

/**
 * A meeting in progress whose ratings are hidden, rated by the team's Member and by the actor, with a
 * message the actor acknowledged: the actor's own answer to a change shows them their rating and
 * their acknowledgement.
 */
async function ratedMeeting(): Promise<Ctx> {
  const meeting = await createMeetingIn(app.db, w.teamId, w.actor.id, { status: 'IN_PROGRESS' });
  await createRating(app.db, meeting.id, w.readers.teamMember.id, 6);
  await createRating(app.db, meeting.id, w.actor.id, 9);
  const message = await createMessage(app.db, { id: meeting.id, orgId: w.orgId }, w.actor.id);
  await app.db.insertInto('message_acknowledgements').values({ message_id: message.id, user_id: w.actor.id }).execute();
  return { id: meeting.id };
}

const task = () => call('POST', `/teams/${w.teamId}/tasks`, w.actor.key, { title: 'Book the Rotterdam slot', ownerId: w.readers.teamMember.id, dueDate: '2026-12-02' });
const issue = () => call('POST', `/teams/${w.teamId}/issues`, w.actor.key, { title: 'Customs bond expires in March' });
const goal = (level: 'COMPANY' | 'DEPARTMENT') =>
  call('POST', `/teams/${w.teamId}/goals`, w.actor.key, { title: 'Open the Vienna depot', ownerId: w.readers.teamMember.id, quarter: '2026-Q4', level });
const milestone = async () => {
  const created = await goal('DEPARTMENT');
  return { goalId: created.id, ...(await call('POST', `/goals/${created.id}/milestones`, w.actor.key, { title: 'Sign the lease' })) };
};
const metric = () => call('POST', `/teams/${w.teamId}/metrics`, w.actor.key, { title: 'Trucks on the road', goal: '>= 40', ownerId: w.readers.teamMember.id });
const message = async () => {
  const meeting = await createMeetingIn(app.db, w.teamId, w.actor.id, { status: 'IN_PROGRESS' });
  return { meetingId: meeting.id, ...(await call('POST', `/meetings/${meeting.id}/messages`, w.actor.key, { content: 'Prices go up on 1 January.' })) };
};
const seat = () => call('POST', `/teams/${w.teamId}/org-chart/seats`, w.actor.key, { title: 'Head of operations' });
const documentLink = () => call('POST', `/teams/${w.teamId}/documents`, w.actor.key, { name: 'Freight price list', url: 'https://docs.northwind.example/prices' });

const members = { path: () => `/orgs/${w.orgId}/members?limit=200`, record: (body: any, ctx: Ctx) => item(body.data, (m) => m.userId === ctx.userId) };
const teamMembers = { path: () => `/teams/${w.teamId}/members?limit=200`, record: (body: any, ctx: Ctx) => item(body.data, (m) => m.userId === ctx.userId) };
const meetingPart = (part: 'segues' | 'headlines' | 'messages') => ({
  path: (ctx: Ctx) => `/meetings/${ctx.meetingId}`,
  record: (body: any, ctx: Ctx) => item(meetingForEveryone(body)[part], byId(ctx.id)),
});
/**
 * A deletion's event carries the id of what the reader's GET showed before it, and the log position of
 * the deletion as its revision (`ctx.logRevision`: a reference's revision is no GET's).
 */
const deletedFrom = (path: (ctx: Ctx) => string, shown: (body: any, ctx: Ctx) => unknown = () => true) => ({
  path,
  before: true as const,
  record: (body: any, ctx: Ctx) => (shown(body, ctx) ? { id: ctx.id, revision: ctx.logRevision } : undefined),
});

const scenarios: Record<EventType, Scenario[]> = {
  'organization.updated': [
    {
      type: 'organization.updated',
      change: () => call('PATCH', `/orgs/${w.orgId}`, w.actor.key, { name: `Northwind ${randomUUID().slice(0, 6)}` }),
      subject: { path: () => `/orgs/${w.orgId}` },
    },
  ],
  'organization_member.added': [
    {
      type: 'organization_member.added',
      change: async () => {
        const added = await call('POST', `/orgs/${w.orgId}/members`, w.actor.key, { email: `eva.${randomUUID()}@northwind.example`, role: 'MEMBER', externalOnly: true });
        return { userId: added.userId };
      },
      // `created` tells the change (a new account), not the member.
      subject: { path: members.path, record: (body, ctx) => ({ ...members.record(body, ctx), created: true }) },
    },
  ],
  'organization_member.updated': [
    {
      type: 'organization_member.updated',
      prepare: async () => ({ userId: await w.newMember() }),
      change: (ctx) => call('PATCH', `/orgs/${w.orgId}/members/${ctx.userId}`, w.actor.key, { role: 'IMPLEMENTER' }),
      subject: members,
    },
    {
      type: 'organization_member.updated',
      variant: 'of a reader, who reads their own membership (their role decides what they may see)',
      // Set to the role it has, so that the readers stay who they are for the scenarios after it.
      change: () => call('PATCH', `/orgs/${w.orgId}/members/${w.readers.otherTeamMember.id}`, w.actor.key, { role: 'MEMBER' }),
      audience: ['orgOwner', 'orgAdmin', 'otherTeamMember'],
    },
  ],
  'organization_member.removed': [
    {
      type: 'organization_member.removed',
      prepare: async () => ({ userId: await w.newMember() }),
      change: (ctx) => call('DELETE', `/orgs/${w.orgId}/members/${ctx.userId}`, w.actor.key),
      subject: { ...members, before: true, record: (body, ctx) => members.record(body, ctx) && { userId: ctx.userId, revision: ctx.logRevision } },
    },
  ],
  'team.created': [
    {
      type: 'team.created',
      change: async () => ({ id: (await call('POST', `/orgs/${w.orgId}/teams`, w.actor.key, { name: `Depot ${randomUUID().slice(0, 6)}` })).id }),
      subject: { path: (ctx) => `/teams/${ctx.id}` },
    },
  ],
  'team.updated': [
    {
      type: 'team.updated',
      change: () => call('PATCH', `/teams/${w.teamId}`, w.actor.key, { meetingDurationMin: 75 }),
      subject: { path: () => `/teams/${w.teamId}` },
    },
  ],
  'team.deleted': [
    {
      type: 'team.deleted',
      prepare: async () => ({ id: await w.newTeam() }),
      change: (ctx) => call('DELETE', `/teams/${ctx.id}`, w.actor.key),
      subject: deletedFrom((ctx) => `/teams/${ctx.id}`),
    },
  ],
  'team_member.added': [
    {
      type: 'team_member.added',
      prepare: async () => ({ userId: await w.newMember() }),
      change: (ctx) => call('POST', `/teams/${w.teamId}/members`, w.actor.key, { userId: ctx.userId, role: 'MEMBER' }),
      subject: teamMembers,
    },
  ],
  'team_member.updated': [
    {
      type: 'team_member.updated',
      prepare: async () => ({ userId: await w.newMember('MEMBER') }),
      change: (ctx) => call('PATCH', `/teams/${w.teamId}/members/${ctx.userId}`, w.actor.key, { role: 'ADMIN' }),
      subject: teamMembers,
    },
  ],
  'team_member.removed': [
    {
      type: 'team_member.removed',
      prepare: async () => ({ userId: await w.newMember('MEMBER') }),
      change: (ctx) => call('DELETE', `/teams/${w.teamId}/members/${ctx.userId}`, w.actor.key),
      subject: { ...teamMembers, before: true, record: (body, ctx) => teamMembers.record(body, ctx) && { userId: ctx.userId, revision: ctx.logRevision } },
    },
  ],
  'task.created': [{ type: 'task.created', change: task, subject: { path: (ctx) => `/tasks/${ctx.id}` } }],
  'task.updated': [
    { type: 'task.updated', prepare: task, change: (ctx) => call('PATCH', `/tasks/${ctx.id}`, w.actor.key, { completed: true }), subject: { path: (ctx) => `/tasks/${ctx.id}` } },
  ],
  'task.deleted': [{ type: 'task.deleted', prepare: task, change: (ctx) => call('DELETE', `/tasks/${ctx.id}`, w.actor.key), subject: deletedFrom((ctx) => `/tasks/${ctx.id}`) }],
  'issue.created': [{ type: 'issue.created', change: issue, subject: { path: (ctx) => `/issues/${ctx.id}` } }],
  'issue.updated': [
    { type: 'issue.updated', prepare: issue, change: (ctx) => call('PATCH', `/issues/${ctx.id}`, w.actor.key, { status: 'SOLVED' }), subject: { path: (ctx) => `/issues/${ctx.id}` } },
  ],
  'issue.deleted': [{ type: 'issue.deleted', prepare: issue, change: (ctx) => call('DELETE', `/issues/${ctx.id}`, w.actor.key), subject: deletedFrom((ctx) => `/issues/${ctx.id}`) }],
  'goal.created': [
    { type: 'goal.created', variant: 'department goal', change: () => goal('DEPARTMENT'), subject: { path: (ctx) => `/goals/${ctx.id}` } },
    { type: 'goal.created', variant: 'company goal', change: () => goal('COMPANY'), subject: { path: (ctx) => `/goals/${ctx.id}` } },
  ],
  'goal.updated': [
    {
      type: 'goal.updated',
      variant: 'department goal',
      prepare: () => goal('DEPARTMENT'),
      change: (ctx) => call('PATCH', `/goals/${ctx.id}`, w.actor.key, { status: 'OFF_TRACK' }),
      subject: { path: (ctx) => `/goals/${ctx.id}` },
    },
    {
      type: 'goal.updated',
      variant: 'company goal',
      prepare: () => goal('COMPANY'),
      change: (ctx) => call('PATCH', `/goals/${ctx.id}`, w.actor.key, { status: 'OFF_TRACK' }),
      subject: { path: (ctx) => `/goals/${ctx.id}` },
    },
  ],
  'goal.deleted': [{ type: 'goal.deleted', prepare: () => goal('DEPARTMENT'), change: (ctx) => call('DELETE', `/goals/${ctx.id}`, w.actor.key), subject: deletedFrom((ctx) => `/goals/${ctx.id}`) }],
  'milestone.created': [
    {
      type: 'milestone.created',
      prepare: async () => ({ goalId: (await goal('DEPARTMENT')).id }),
      change: async (ctx) => ({ id: (await call('POST', `/goals/${ctx.goalId}/milestones`, w.actor.key, { title: 'Sign the lease' })).id }),
      subject: { path: (ctx) => `/goals/${ctx.goalId}`, record: (body, ctx) => ({ goalId: body.id, ...item(body.milestones, byId(ctx.id)) }) },
    },
  ],
  'milestone.updated': [
    {
      type: 'milestone.updated',
      prepare: milestone,
      change: (ctx) => call('PATCH', `/milestones/${ctx.id}`, w.actor.key, { completed: true }),
      subject: { path: (ctx) => `/goals/${ctx.goalId}`, record: (body, ctx) => ({ goalId: body.id, ...item(body.milestones, byId(ctx.id)) }) },
    },
  ],
  'milestone.deleted': [
    {
      type: 'milestone.deleted',
      prepare: milestone,
      change: (ctx) => call('DELETE', `/milestones/${ctx.id}`, w.actor.key),
      subject: deletedFrom((ctx) => `/goals/${ctx.goalId}`, (body, ctx) => item(body.milestones, byId(ctx.id))),
    },
  ],
  'metric.created': [{ type: 'metric.created', change: metric, subject: { path: () => `/teams/${w.teamId}/metrics`, record: (body, ctx) => item(body.data, byId(ctx.id)) } }],
  'metric.updated': [
    {
      type: 'metric.updated',
      prepare: metric,
      change: (ctx) => call('PATCH', `/metrics/${ctx.id}`, w.actor.key, { unit: 'trucks' }),
      subject: { path: () => `/teams/${w.teamId}/metrics`, record: (body, ctx) => item(body.data, byId(ctx.id)) },
    },
  ],
  'metric.deleted': [
    {
      type: 'metric.deleted',
      prepare: metric,
      change: (ctx) => call('DELETE', `/metrics/${ctx.id}`, w.actor.key),
      subject: deletedFrom(() => `/teams/${w.teamId}/metrics`, (body, ctx) => item(body.data, byId(ctx.id))),
    },
  ],
  'metric_value.set': [
    {
      type: 'metric_value.set',
      prepare: metric,
      change: (ctx) => call('PUT', `/metrics/${ctx.id}/values/2026-11-16`, w.actor.key, { value: '42' }),
      subject: { path: (ctx) => `/metrics/${ctx.id}/values?limit=200`, record: (body) => item(body.data, (value) => value.week === '2026-11-16') },
    },
  ],
  'csv_import.completed': [
    {
      type: 'csv_import.completed',
      change: () => call('POST', `/teams/${w.teamId}/issues/csv`, w.actor.key, csvFile('title\r\nLate deliveries\r\n')),
      // No GET shows an import: its event goes to those who read the team's records it wrote.
      audience: ['orgOwner', 'orgAdmin', 'implementer', 'teamOwner', 'teamAdmin', 'teamMember', 'teamViewer'],
    },
  ],
  'meeting.created': [
    {
      type: 'meeting.created',
      change: () => call('POST', `/teams/${w.teamId}/meetings`, w.actor.key, { date: '2026-12-07' }),
      // The event carries the meeting as its list shows it: the single meeting's fields without its parts.
      subject: {
        path: (ctx) => `/meetings/${ctx.id}`,
        record: ({ id, revision, teamId, date, status, startedAt, endedAt, durationMin, createdById, rating }) => ({ id, revision, teamId, date, status, startedAt, endedAt, durationMin, createdById, rating }),
      },
    },
  ],
  'meeting.updated': [
    {
      type: 'meeting.updated',
      variant: 'notes while the Member’s rating is hidden',
      prepare: ratedMeeting,
      change: (ctx) => call('PATCH', `/meetings/${ctx.id}`, w.actor.key, { notes: 'Vienna depot: lease signed.' }),
      subject: { path: (ctx) => `/meetings/${ctx.id}`, record: meetingForEveryone },
    },
  ],
  'meeting.status_changed': [
    {
      type: 'meeting.status_changed',
      prepare: () => createMeetingIn(app.db, w.teamId, w.actor.id),
      change: (ctx) => call('PATCH', `/meetings/${ctx.id}`, w.actor.key, { status: 'IN_PROGRESS' }),
      subject: { path: (ctx) => `/meetings/${ctx.id}`, record: meetingForEveryone },
    },
  ],
  'meeting.ratings_revealed': [
    {
      type: 'meeting.ratings_revealed',
      prepare: ratedMeeting,
      change: (ctx) => call('POST', `/meetings/${ctx.id}/reveal-ratings`, w.actor.key),
      subject: { path: (ctx) => `/meetings/${ctx.id}`, record: meetingForEveryone },
    },
  ],
  // A rating's events name who was rated, never the value: read by whoever reads the meeting.
  'meeting_rating.set': [
    {
      type: 'meeting_rating.set',
      prepare: () => createMeetingIn(app.db, w.teamId, w.actor.id, { status: 'IN_PROGRESS' }),
      change: (ctx) => call('PUT', `/meetings/${ctx.id}/ratings/${w.readers.teamMember.id}`, w.actor.key, { rating: 8 }),
      subject: { path: (ctx) => `/meetings/${ctx.id}`, record: (body, ctx) => ({ meetingId: body.id, userId: w.readers.teamMember.id, revision: ctx.logRevision }) },
    },
  ],
  'meeting_rating.deleted': [
    {
      type: 'meeting_rating.deleted',
      prepare: ratedMeeting,
      change: (ctx) => app.request('PUT', `/v1/meetings/${ctx.id}/ratings/${w.readers.teamMember.id}`, { key: w.actor.key, body: { rating: 0 } }),
      subject: { path: (ctx) => `/meetings/${ctx.id}`, record: (body, ctx) => ({ meetingId: body.id, userId: w.readers.teamMember.id, revision: ctx.logRevision }) },
    },
  ],
  'segue.created': [
    {
      type: 'segue.created',
      prepare: async () => ({ meetingId: (await createMeetingIn(app.db, w.teamId, w.actor.id, { status: 'IN_PROGRESS' })).id }),
      change: async (ctx) => ({ id: (await call('POST', `/meetings/${ctx.meetingId}/segues`, w.actor.key, { content: 'Ran my first half marathon.' })).id }),
      subject: meetingPart('segues'),
    },
  ],
  'headline.created': [
    {
      type: 'headline.created',
      prepare: async () => ({ meetingId: (await createMeetingIn(app.db, w.teamId, w.actor.id, { status: 'IN_PROGRESS' })).id }),
      change: async (ctx) => ({ id: (await call('POST', `/meetings/${ctx.meetingId}/headlines`, w.actor.key, { type: 'CUSTOMER', content: 'Baltic Trade renewed.' })).id }),
      subject: meetingPart('headlines'),
    },
  ],
  'cascading_message.created': [
    {
      type: 'cascading_message.created',
      prepare: async () => ({ meetingId: (await createMeetingIn(app.db, w.teamId, w.actor.id, { status: 'IN_PROGRESS' })).id }),
      change: async (ctx) => ({ id: (await call('POST', `/meetings/${ctx.meetingId}/messages`, w.actor.key, { content: 'Prices go up on 1 January.' })).id }),
      subject: meetingPart('messages'),
    },
  ],
  'cascading_message.deleted': [
    {
      type: 'cascading_message.deleted',
      prepare: message,
      change: (ctx) => call('DELETE', `/messages/${ctx.id}`, w.actor.key),
      subject: deletedFrom((ctx) => `/meetings/${ctx.meetingId}`, (body, ctx) => item(body.messages, byId(ctx.id))),
    },
  ],
  // Whether someone read a message is theirs to know: every GET shows a reader only their own `acknowledged`.
  'cascading_message.acknowledged': [
    {
      type: 'cascading_message.acknowledged',
      prepare: message,
      change: (ctx) => call('POST', '/messages/acknowledge', w.readers.teamMember.key, { ids: [ctx.id] }),
      audience: ['orgOwner', 'orgAdmin', 'teamMember'],
    },
  ],
  'vision.created': [
    {
      type: 'vision.created',
      prepare: async () => ({ teamId: await w.newTeam() }),
      change: (ctx) => call('POST', `/teams/${ctx.teamId}/vision`, w.actor.key),
      subject: { path: (ctx) => `/teams/${ctx.teamId}/vision` },
    },
  ],
  'vision.updated': [
    {
      type: 'vision.updated',
      change: () => call('PATCH', `/teams/${w.teamId}/vision`, w.actor.key, { field: 'coreValues', value: ['Customer first', `Own it ${randomUUID().slice(0, 4)}`] }),
      subject: { path: () => `/teams/${w.teamId}/vision` },
    },
  ],
  'seat.created': [{ type: 'seat.created', change: seat, subject: { path: () => `/teams/${w.teamId}/org-chart`, record: (body, ctx) => item(body.data, byId(ctx.id)) } }],
  'seat.updated': [
    {
      type: 'seat.updated',
      prepare: seat,
      change: (ctx) => call('PATCH', `/org-chart/seats/${ctx.id}`, w.actor.key, { userId: w.readers.teamViewer.id }),
      subject: { path: () => `/teams/${w.teamId}/org-chart`, record: (body, ctx) => item(body.data, byId(ctx.id)) },
    },
  ],
  'seat.deleted': [
    {
      type: 'seat.deleted',
      prepare: seat,
      change: (ctx) => call('DELETE', `/org-chart/seats/${ctx.id}`, w.actor.key),
      subject: deletedFrom(() => `/teams/${w.teamId}/org-chart`, (body, ctx) => item(body.data, byId(ctx.id))),
    },
  ],
  'people_review.set': [
    {
      type: 'people_review.set',
      variant: "the Member's review of the Viewer",
      change: () => call('PUT', `/teams/${w.teamId}/people-reviews`, w.readers.teamMember.key, review(w.readers.teamViewer.id)),
      subject: { path: () => `/teams/${w.teamId}/people-reviews?limit=200`, record: (body, ctx) => item(body.data, byId(ctx.id)) },
    },
    {
      type: 'people_review.set',
      variant: "the team Owner's review of the Member",
      change: () => call('PUT', `/teams/${w.teamId}/people-reviews`, w.readers.teamOwner.key, review(w.readers.teamMember.id)),
      subject: { path: () => `/teams/${w.teamId}/people-reviews?limit=200`, record: (body, ctx) => item(body.data, byId(ctx.id)) },
    },
  ],
  'document.created': [
    { type: 'document.created', change: documentLink, subject: { path: () => `/teams/${w.teamId}/documents?limit=200`, record: (body, ctx) => item(body.data, byId(ctx.id)) } },
  ],
  'document.deleted': [
    {
      type: 'document.deleted',
      prepare: documentLink,
      change: (ctx) => call('DELETE', `/documents/${ctx.id}`, w.actor.key),
      subject: deletedFrom(() => `/teams/${w.teamId}/documents?limit=200`, (body, ctx) => item(body.data, byId(ctx.id))),
    },
  ],
  'export.completed': [
    {
      type: 'export.completed',
      // The export's job sends it (this app runs no worker: the test runs the job), to the feed's audience alone.
      change: async () => {
        const started = await call('POST', `/orgs/${w.orgId}/exports`, w.actor.key);
        await runDueExports({ db: app.db, logger: pino({ level: 'silent' }), now: () => new Date() });
        return { id: started.id };
      },
      audience: ['orgOwner', 'orgAdmin'],
    },
  ],
};

async function createWorld(): Promise<World> {
  const org = await createOrganization(app.db);
  const elsewhere = await createOrganization(app.db);
  // A leadership team: company goals are set only there.
  const team = await createTeam(app.db, org.id, { isLeadership: true });
  const otherTeam = await createTeam(app.db, org.id);
  const person = async (orgId: string | undefined, orgRole: OrganizationRole | undefined, teamRole?: TeamRole, otherTeamRole?: TeamRole): Promise<Person> => {
    const caller = await createCaller(app.db);
    if (orgId && orgRole) await addOrganizationMember(app.db, orgId, caller.user.id, orgRole);
    if (teamRole) await addTeamMember(app.db, team.id, caller.user.id, teamRole);
    if (otherTeamRole) await addTeamMember(app.db, otherTeam.id, caller.user.id, otherTeamRole);
    return { id: caller.user.id, key: caller.key };
  };
  const actor = await person(org.id, 'OWNER', 'OWNER');
  const readers = {} as Record<ReaderName, Person>;
  for (const name of readerNames) {
    const { orgRole, teamRole, otherTeamRole } = people[name];
    readers[name] = orgRole ? await person(org.id, orgRole, teamRole, otherTeamRole) : await person(elsewhere.id, 'OWNER');
  }
  return {
    orgId: org.id,
    teamId: team.id,
    actor,
    readers,
    async newTeam() {
      const created = await createTeam(app.db, org.id);
      const rows = await app.db.selectFrom('team_members').select(['user_id', 'role']).where('team_id', '=', team.id).execute();
      for (const row of rows) await addTeamMember(app.db, created.id, row.user_id, row.role);
      return created.id;
    },
    async newMember(teamRole) {
      return (await person(org.id, 'MEMBER', teamRole)).id;
    },
  };
}

/**
 * Each reader as a feed or a stream builds them: the caller (as authentication reads them) and their
 * access to every team of their organizations, decided once from their standing in each.
 */
async function eventReaders(): Promise<Record<ReaderName, EventReader>> {
  const built = {} as Record<ReaderName, EventReader>;
  for (const name of readerNames) {
    const person = w.readers[name];
    const me = await app.request('GET', '/v1/me', { key: person.key });
    const caller = { userId: person.id, organizations: me.body.orgs } as Caller;
    const { rows } = await sql<{ teamId: string; orgId: string; callerTeamRole: TeamRole | null }>`
      select t.id as "teamId", t.org_id as "orgId", tm.role as "callerTeamRole" from teams t
      left join team_members tm on tm.team_id = t.id and tm.user_id = ${person.id}
      where t.org_id = any(${caller.organizations.map((membership) => membership.id)}::text[])
    `.execute(app.db);
    built[name] = eventReader(caller, readableTeams(caller, rows));
  }
  return built;
}

/** Each reader's GET of `path`: its status and body. */
async function readsOf(path: string): Promise<Record<ReaderName, { status: number; body: any }>> {
  const reads = {} as Record<ReaderName, { status: number; body: any }>;
  for (const name of readerNames) {
    const response = await app.request('GET', `/v1${path}`, { key: w.readers[name].key });
    expect([200, 403, 404], `GET ${path} as ${name}: ${response.text}`).toContain(response.status);
    reads[name] = { status: response.status, body: response.body };
  }
  return reads;
}

/** The last event of `type` the organization's log stored, as the feeds answer it. */
async function storedEvent(type: EventType): Promise<LoggedEvent> {
  await feedShowsAll(app);
  const { rows } = await sql<{ event: string }>`
    select event from webhook_events where org_id = ${w.orgId} and type = ${type} order by txid desc, position desc limit 1
  `.execute(app.db);
  expect(rows, `a ${type} event in the log`).toHaveLength(1);
  return JSON.parse(rows[0]!.event) as LoggedEvent;
}

beforeAll(async () => {
  app = await startTestApp();
  w = await createWorld();
});
afterAll(() => app.close());

const eventTypes = (contract.components!.schemas!.EventType as { enum: EventType[] }).enum;

describe(`the view of an event per reader (${databaseLabel})`, () => {
  it('has a scenario for every event type of the contract', () => {
    expect(Object.keys(scenarios).sort()).toEqual([...eventTypes].sort());
    for (const [type, list] of Object.entries(scenarios)) expect(list.length, type).toBeGreaterThan(0);
  });

  const cases = Object.values(scenarios)
    .flat()
    .map((scenario) => [scenario.variant ? `${scenario.type} (${scenario.variant})` : scenario.type, scenario] as const);

  it.each(cases)("%s: each reader sees what their own GET of the subject shows, or nothing; the organization's Owners and Admins the stored event", async (_name, scenario) => {
    const ctx: Ctx = { ...(await scenario.prepare?.()) };
    const before = scenario.subject?.before ? await readsOf(scenario.subject.path(ctx)) : undefined;
    // A deleted team leaves no standing to read: its readers are those who could read it before.
    const readersBefore = scenario.type === 'team.deleted' ? await eventReaders() : undefined;
    Object.assign(ctx, await scenario.change(ctx));
    const stored = await storedEvent(scenario.type);
    Object.assign(ctx, { id: ctx.id ?? (stored.data.object as { id?: string }).id, logRevision: (stored.data.object as { revision?: number }).revision });
    const reads = scenario.subject && !scenario.subject.before ? await readsOf(scenario.subject.path(ctx)) : before;
    const readers = readersBefore ?? (await eventReaders());

    const outcome = readerNames.map((name) => {
      const view = eventView(readers[name], stored);
      let expected: unknown;
      if (scenario.audience) expected = scenario.audience.includes(name) ? stored.data.object : undefined;
      else {
        const read = reads![name];
        const record = scenario.subject!.record ?? ((body: unknown) => body);
        expected = read.status === 200 ? record(read.body, ctx) : undefined;
      }
      return { name, view: view?.data.object, expected };
    });

    for (const { name, view, expected } of outcome) expect(view, `${scenario.type} as ${name}`).toEqual(expected);
    expect(outcome[0]!.expected, 'the record the organization Owner’s GET shows').toBeDefined();
    for (const name of ['orgOwner', 'orgAdmin'] as const) {
      const view = eventView(readers[name], stored);
      if (stored.type === 'organization.updated') {
        // The one field that names the reader: their own role, as their GET shows it.
        expect(view, name).toEqual({ ...stored, data: { ...stored.data, object: { ...stored.data.object, role: people[name].orgRole } } });
      } else expect(view, `${name}: the stored event itself`).toBe(stored);
    }
  });

  it('shows a reader no event of a type it has no decision for, but the organization’s Owners and Admins', async () => {
    const readers = await eventReaders();
    const unknown = { id: randomUUID(), type: 'invoice.paid', timestamp: new Date().toISOString(), data: { orgId: w.orgId, teamId: w.teamId, object: { id: randomUUID() } } };

    const seen = readerNames.filter((name) => eventView(readers[name], unknown as unknown as LoggedEvent) !== undefined);

    expect(seen).toEqual(['orgOwner', 'orgAdmin']);
  });
});

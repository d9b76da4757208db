/**
 * The items the fuzzer's requests act on: the permission matrix's world (one organization, one team,
 * a key for every kind of caller) with a few items every body may refer to, and for each path
 * parameter an existing item made afresh for the request, so that deletes and changes never wear the
 * world out and path ids hit real rows, not only unknown ones.
 */
import type { MeetingStatus } from '../../src/db/database.js';
import { createDocument, createDocuments, createPeopleReview, createSeat, createWebhook, createWebhookWithDelivery } from '../support/areaFactories.js';
import { createEvents, type AppLog } from '../support/eventFactories.js';
import { createGoal, createGoals, createIssue, createIssues, createMilestone, createTask, createTasks } from '../support/executionFactories.js';
import { createCaller, createOrganization } from '../support/factories.js';
import { createMeetingIn, createMessage, createRating } from '../support/meetingFactories.js';
import { createMetric, createMetricValues } from '../support/scorecardFactories.js';
import { createWorld, type World } from '../permissions/world.js';
import type { IdPool } from './schemaArbitraries.js';

export interface FuzzWorld {
  world: World;
  pool: IdPool;
  /** Existing items for the path parameters of `path` (an operation's template), made for one request. */
  existing(path: string, method: string, variant: number): Promise<Record<string, string>>;
}

const statuses: MeetingStatus[] = ['SCHEDULED', 'IN_PROGRESS', 'COMPLETED'];

/** The fuzzer's world in the app's database; its events once the app's feeds show them. */
export async function createFuzzWorld(app: AppLog): Promise<FuzzWorld> {
  const { db } = app;
  const world = await createWorld(app);
  const { team, org, users } = world;
  const members = [users.teamOwner, users.teamAdmin, users.teamMember, users.teamViewer, users.superadminMember].map((user) => user.id);
  const meeting = await createMeetingIn(db, team.id, users.teamAdmin.id, { status: 'IN_PROGRESS' });
  const message = await createMessage(db, { id: meeting.id, orgId: org.id }, users.teamAdmin.id);
  let seatPosition = 1;
  const seat = await createSeat(db, team.id, { position: seatPosition++, userId: users.teamMember.id });
  const provider = await db
    .insertInto('ai_providers')
    .values({ type: 'OPENAI', api_key_encrypted: 'not-a-real-secret', api_key_last4: 'abcd', default_model: 'model-1' })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db.insertInto('ai_prompts').values({ input_type: 'HEADLINE', system_prompt: 'Write a headline.' }).execute();

  // Two items in every list, so that a page of one has a next cursor to learn the list's cursor from.
  await createTasks(db, team.id, users.teamMember.id, 2);
  await createIssues(db, team.id, users.teamMember.id, 2);
  await createGoals(db, team, users.teamMember.id, 2);
  await createGoals(db, await world.newTeam({ isLeadership: true }), users.teamMember.id, 2, () => ({ level: 'COMPANY' }));
  await createMeetingIn(db, team.id, users.teamAdmin.id, { status: 'COMPLETED', createdAt: new Date(Date.now() - 86_400_000) });
  await createDocuments(db, team.id, users.teamMember.id, 2);
  await createPeopleReview(db, team.id, users.teamMember.id, users.teamAdmin.id, { quarter: '2026-Q3' });
  await createPeopleReview(db, team.id, users.teamViewer.id, users.teamAdmin.id, { quarter: '2026-Q4' });
  await createWebhook(db, org.id, { isActive: false });
  await createWebhook(db, org.id, { isActive: false });
  await createEvents(app, team, 2);

  const pool: IdPool = {
    any: [...members, meeting.id, message.id, seat.id, team.id, org.id],
    byField: {
      ownerId: [...members, users.orgMember.id],
      userId: [...members, users.orgMember.id, users.outsider.id, users.orgAdmin.id],
      meetingId: [meeting.id],
      parentId: [seat.id],
      providerId: [provider.id],
      ids: [message.id],
      id: [message.id],
    },
  };

  const meetingFor = async (variant: number) => {
    const created = await createMeetingIn(db, team.id, users.teamAdmin.id, { status: statuses[variant % 3] });
    if (variant % 2 === 0) await createRating(db, created.id, users.teamMember.id, 7);
    return created;
  };
  const goal = () => createGoal(db, team, users.teamMember.id);
  const completedExport = () =>
    db.insertInto('org_exports').values({ org_id: org.id, state: 'COMPLETED', records_total: 0, completed_at: new Date(), expires_at: new Date(Date.now() + 86_400_000) }).returning('id').executeTakeFirstOrThrow();

  /** Existing items by path template; parameters not named here fall back to the world's org, team or a member. */
  const byPath: Record<string, (method: string, variant: number) => Promise<Record<string, string>>> = {
    '/orgs/{orgId}/members/{userId}': async () => ({ orgId: org.id, userId: (await world.newMember('MEMBER')).id }),
    '/teams/{teamId}': async (method) => ({ teamId: method === 'delete' ? (await world.newTeam()).id : team.id }),
    '/teams/{teamId}/members/{userId}': async () => ({ teamId: team.id, userId: (await world.newMember('MEMBER', 'MEMBER')).id }),
    '/tasks/{id}': async () => ({ id: (await createTask(db, team.id, users.teamMember.id)).id }),
    '/issues/{id}': async () => ({ id: (await createIssue(db, team.id, users.teamMember.id)).id }),
    '/goals/{id}': async () => ({ id: (await goal()).id }),
    '/goals/{id}/milestones': async () => ({ id: (await goal()).id }),
    '/milestones/{id}': async () => ({ id: (await createMilestone(db, (await goal()).id)).id }),
    '/metrics/{id}': async () => ({ id: (await createMetric(db, team.id, users.teamMember.id)).id }),
    '/metrics/{id}/values': async (_method, variant) => {
      const metric = await createMetric(db, team.id, users.teamMember.id);
      if (variant % 2 === 0) await createMetricValues(db, metric.id, users.teamMember.id, '2026-09-07', 5);
      return { id: metric.id };
    },
    '/metrics/{id}/values/{week}': async () => ({ id: (await createMetric(db, team.id, users.teamMember.id)).id }),
    '/meetings/{id}': async (_method, variant) => ({ id: (await meetingFor(variant)).id }),
    '/meetings/{id}/recap': async (_method, variant) => ({ id: (await meetingFor(variant)).id }),
    '/meetings/{id}/ratings/me': async (_method, variant) => ({ id: (await meetingFor(variant)).id }),
    '/meetings/{id}/ratings/{userId}': async (_method, variant) => ({ id: (await meetingFor(variant)).id, userId: users.teamMember.id }),
    '/meetings/{id}/reveal-ratings': async (_method, variant) => ({ id: (await meetingFor(variant)).id }),
    '/meetings/{id}/segues': async (_method, variant) => ({ id: (await meetingFor(variant)).id }),
    '/meetings/{id}/headlines': async (_method, variant) => ({ id: (await meetingFor(variant)).id }),
    '/meetings/{id}/messages': async (_method, variant) => ({ id: (await meetingFor(variant)).id }),
    '/messages/{id}': async () => ({ id: (await createMessage(db, { id: meeting.id, orgId: org.id }, users.teamMember.id)).id }),
    '/org-chart/seats/{id}': async (_method, variant) => {
      const created = await createSeat(db, team.id, { position: seatPosition++ });
      if (variant % 2 === 0) await createSeat(db, team.id, { parentId: created.id, position: 1 });
      return { id: created.id };
    },
    '/documents/{id}': async () => ({ id: (await createDocument(db, team.id, users.teamMember.id)).id }),
    '/platform/orgs/{id}': async () => ({ id: (await createOrganization(db)).id }),
    '/platform/users/{id}/api-keys': async () => ({ id: users.teamMember.id }),
    '/platform/api-keys/{id}': async () => ({ id: (await createCaller(db)).keyRow.id }),
    // Inactive: a subscription would make every later change of the run write events.
    '/webhooks/{webhookId}': async () => ({ webhookId: (await createWebhook(db, org.id, { isActive: false })).id }),
    '/webhooks/{webhookId}/ping': async () => ({ webhookId: (await createWebhook(db, org.id, { isActive: false })).id }),
    '/webhooks/{webhookId}/rotate-secret': async () => ({ webhookId: (await createWebhook(db, org.id, { isActive: false })).id }),
    '/webhooks/{webhookId}/deliveries': async () => ({ webhookId: (await createWebhookWithDelivery(db, org.id, 2)).webhook.id }),
    '/events/{eventId}': async () => ({ eventId: (await createEvents(app, team))[0]! }),
    // COMPLETED (no worker runs in the fuzzer's app): its read and its archive (of no chunk) answer.
    '/orgs/{orgId}/exports/{exportId}': async () => ({ orgId: org.id, exportId: (await completedExport()).id }),
    '/orgs/{orgId}/exports/{exportId}/archive': async () => ({ orgId: org.id, exportId: (await completedExport()).id }),
    '/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver': async () => {
      const { webhook, deliveryId } = await createWebhookWithDelivery(db, org.id);
      return { webhookId: webhook.id, deliveryId };
    },
  };

  return {
    world,
    pool,
    async existing(path, method, variant) {
      const made = (await byPath[path]?.(method, variant)) ?? {};
      const fallback: Record<string, string> = { orgId: org.id, teamId: team.id, userId: users.teamMember.id };
      const names = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
      return Object.fromEntries(
        names
          .filter((name) => !valueParameters.includes(name))
          .map((name) => {
            const value = made[name] ?? (name === 'id' ? undefined : fallback[name]);
            if (value === undefined) throw new Error(`${path}: no existing item for {${name}}; add one to test/fuzz/fixtures.ts`);
            return [name, value];
          }),
      );
    },
  };
}

/** Path parameters whose existing value the fixtures cannot make: the schema's own values are used. */
export const valueParameters = ['week', 'type', 'inputType'];

/**
 * `GET /teams/{teamId}/snapshot`: what a team's screen shows, each record as the reader's own lists
 * and GETs answer it, at one log position; compressed on request; refused as the team's other reads;
 * built with flat memory for a large team.
 */
import { get, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logPositions } from '../src/events/positions.js';
import { addWeeks } from '../src/time.js';
import { createPeopleReview, createSeat, createVision, createDocument } from './support/areaFactories.js';
import { databaseLabel } from './support/database.js';
import { createGoal, createIssue, createMilestone, createTask, createTasks } from './support/executionFactories.js';
import { createTeamWorld } from './support/factories.js';
import { createHeadline, createMeetingIn, createMessage, createRating, createSegue } from './support/meetingFactories.js';
import { createMetric, createMetricValues } from './support/scorecardFactories.js';
import { send, startTestApp, type TestApp } from './support/testApp.js';

// A Wednesday morning in every organization's zone: today, this week and this quarter are certain.
const NOW = new Date('2026-11-18T10:00:00.000Z');
const DAY_MS = 24 * 60 * 60 * 1000;

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ now: () => NOW });
});
afterAll(() => app.close());

/** Every record of a list, page after page. */
async function everything(path: string, key: string): Promise<any[]> {
  const records: any[] = [];
  let cursor: string | null = null;
  do {
    const separator = path.includes('?') ? '&' : '?';
    const page: { status: number; text: string; body: any } = await app.request('GET', `${path}${separator}limit=200${cursor ? `&cursor=${cursor}` : ''}`, { key });
    expect(page.status, page.text).toBe(200);
    records.push(...page.body.data);
    cursor = page.body.nextCursor;
  } while (cursor);
  return records;
}

/** The snapshot as the reader's own reads compose it: the contract's description, part by part. */
async function composed(teamId: string, key: string, takenAt: string) {
  const vision = await app.request('GET', `/v1/teams/${teamId}/vision`, { key });
  const meetings = (await everything(`/v1/teams/${teamId}/meetings`, key)).filter((meeting) => meeting.date >= addWeeks('2026-11-18', -13));
  const since = new Date(takenAt).getTime() - 14 * DAY_MS;
  return {
    team: (await app.request('GET', `/v1/teams/${teamId}`, { key })).body,
    members: await everything(`/v1/teams/${teamId}/members`, key),
    vision: vision.status === 404 ? null : vision.body,
    seats: (await app.request('GET', `/v1/teams/${teamId}/org-chart`, { key })).body.data,
    documents: await everything(`/v1/teams/${teamId}/documents`, key),
    peopleReviews: await everything(`/v1/teams/${teamId}/people-reviews`, key),
    goals: [...(await everything(`/v1/teams/${teamId}/goals?quarter=2026-Q4`, key)), ...(await everything(`/v1/teams/${teamId}/goals?quarter=2026-Q3`, key))],
    scorecard: (await app.request('GET', `/v1/teams/${teamId}/scorecard`, { key })).body,
    meetings: await Promise.all(meetings.map(async (meeting) => (await app.request('GET', `/v1/meetings/${meeting.id}`, { key })).body)),
    issues: [...(await everything(`/v1/teams/${teamId}/issues?status=OPEN`, key)), ...(await everything(`/v1/teams/${teamId}/issues?status=SOLVING`, key))],
    tasks: [
      ...(await everything(`/v1/teams/${teamId}/tasks?completed=false`, key)),
      ...(await everything(`/v1/teams/${teamId}/tasks?completed=true`, key)).filter((task) => new Date(task.completedAt).getTime() >= since),
    ],
  };
}

/** A team with something in every part, and something just outside each window. */
async function furnishedTeam() {
  const world = await createTeamWorld(app.db);
  const owner = await world.person('MEMBER', 'OWNER');
  const member = await world.person('MEMBER', 'MEMBER');
  const viewer = await world.person('MEMBER', 'VIEWER');
  const implementer = await world.person('IMPLEMENTER');
  const outsider = await world.person('MEMBER');
  const { team } = world;
  const userId = member.user.id;

  await createVision(app.db, team.id, { ten_year_target: 'Largest carrier in the region' });
  await createSeat(app.db, team.id, { title: 'Visionary', userId: owner.user.id });
  await createDocument(app.db, team.id, owner.user.id);
  await createPeopleReview(app.db, team.id, userId, owner.user.id, { quarter: '2026-Q4' });
  await createPeopleReview(app.db, team.id, owner.user.id, viewer.user.id, { quarter: '2026-Q3' });
  for (const quarter of ['2026-Q4', '2026-Q3', '2026-Q2']) {
    const goal = await createGoal(app.db, team, userId, { quarter });
    await createMilestone(app.db, goal.id);
  }
  const metric = await createMetric(app.db, team.id, userId);
  await createMetricValues(app.db, metric.id, userId, '2026-08-03', 20);
  const upcoming = await createMeetingIn(app.db, team.id, owner.user.id, { date: '2026-11-25' });
  const running = await createMeetingIn(app.db, team.id, owner.user.id, { status: 'IN_PROGRESS', createdAt: new Date('2026-11-16T09:00:00.000Z') });
  await createRating(app.db, running.id, userId, 8);
  await createRating(app.db, running.id, owner.user.id, 9);
  await createSegue(app.db, running.id, userId);
  await createHeadline(app.db, running.id, owner.user.id);
  await createMessage(app.db, { id: running.id, orgId: world.org.id }, owner.user.id);
  await createMeetingIn(app.db, team.id, owner.user.id, { status: 'COMPLETED', createdAt: new Date('2026-08-24T09:00:00.000Z') });
  await createMeetingIn(app.db, team.id, owner.user.id, { status: 'COMPLETED', createdAt: new Date('2026-08-10T09:00:00.000Z') });
  await createIssue(app.db, team.id, userId, { status: 'SOLVING' });
  await createIssue(app.db, team.id, userId, { status: 'OPEN' });
  await createIssue(app.db, team.id, userId, { status: 'SOLVED' });
  await createTask(app.db, team.id, userId, { meetingId: upcoming.id });
  await createTask(app.db, team.id, userId, { completedAt: new Date(NOW.getTime() - 2 * DAY_MS) });
  await createTask(app.db, team.id, userId, { completedAt: new Date(NOW.getTime() - 20 * DAY_MS) });
  return { ...world, owner, member, viewer, implementer, outsider };
}

describe(`a team's snapshot (${databaseLabel})`, () => {
  it('holds for each reader exactly what their own lists and GETs answer, part by part, in the documented order', async () => {
    const world = await furnishedTeam();
    for (const reader of [world.member, world.owner, world.viewer, world.implementer]) {
      const snapshot = await app.request('GET', `/v1/teams/${world.team.id}/snapshot`, { key: reader.key });
      expect(snapshot.status, snapshot.text).toBe(200);
      const { position, takenAt, ...parts } = snapshot.body;
      expect([position, takenAt]).toEqual([expect.stringMatching(/^lp_/), NOW.toISOString()]);
      expect(Object.keys(snapshot.body)).toEqual(['position', 'takenAt', 'team', 'members', 'vision', 'seats', 'documents', 'peopleReviews', 'goals', 'scorecard', 'meetings', 'issues', 'tasks']);
      expect(parts).toEqual(await composed(world.team.id, reader.key, takenAt));
    }
  });

  it('leaves out what lies outside its windows and what the reader may not read', async () => {
    const world = await furnishedTeam();
    const ofMember = (await app.request('GET', `/v1/teams/${world.team.id}/snapshot`, { key: world.member.key })).body;
    const ofOwner = (await app.request('GET', `/v1/teams/${world.team.id}/snapshot`, { key: world.owner.key })).body;

    expect(ofMember.goals.map((goal: any) => goal.quarter)).toEqual(['2026-Q4', '2026-Q3']);
    expect(ofMember.issues.map((issue: any) => issue.status)).toEqual(['OPEN', 'SOLVING']);
    expect(ofMember.tasks.map((task: any) => task.completed)).toEqual([false, true]);
    expect(ofMember.meetings.map((meeting: any) => meeting.date)).toEqual(['2026-11-25', '2026-11-16', '2026-08-24']);
    expect(ofMember.scorecard.weeks).toHaveLength(13);
    // The running meeting's ratings are hidden: each reader sees their own only.
    expect(ofMember.meetings[1].ratings.map((rating: any) => rating.rating)).toEqual([8]);
    expect(ofOwner.meetings[1].ratings.map((rating: any) => rating.rating)).toEqual([9]);
    // A Member reads the reviews they wrote or that review them; the team's Owner reads all.
    expect([ofMember.peopleReviews.length, ofOwner.peopleReviews.length]).toEqual([1, 2]);
  });

  it('answers 403 to a member of the organization outside the team, and 404 for an unknown team', async () => {
    const world = await furnishedTeam();
    const outside = await app.request('GET', `/v1/teams/${world.team.id}/snapshot`, { key: world.outsider.key });
    const unknown = await app.request('GET', '/v1/teams/0c0c0000-0000-4000-8000-00000000ffff/snapshot', { key: world.member.key });
    expect([outside.status, outside.body.error.code]).toEqual([403, 'forbidden']);
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'notFound']);
  });

  it('is gzip-compressed when the request accepts gzip, and the same JSON either way; it has no ETag', async () => {
    const world = await furnishedTeam();
    await createTasks(app.db, world.team.id, world.member.user.id, 50);
    const path = `/v1/teams/${world.team.id}/snapshot`;
    const gzipped = await app.request('GET', path, { key: world.member.key, headers: { 'accept-encoding': 'gzip' } });
    const plain = await app.request('GET', path, { key: world.member.key, headers: { 'accept-encoding': 'identity' } });

    expect([gzipped.headers.get('content-encoding'), plain.headers.get('content-encoding')]).toEqual(['gzip', null]);
    expect(Number(plain.headers.get('content-length'))).toBe(Buffer.byteLength(plain.text));
    // Positions are sealed afresh on every answer: the same place, another text.
    expect({ ...gzipped.body, position: undefined }).toEqual({ ...plain.body, position: undefined });
    expect([gzipped.headers.get('etag'), plain.headers.get('etag')]).toEqual([null, null]);
  });

  it('is taken at one position: each change made meanwhile is in the snapshot or after its position, never neither', async () => {
    const world = await furnishedTeam();
    const tasks = await createTasks(app.db, world.team.id, world.member.user.id, 30);
    const path = `/v1/teams/${world.team.id}/snapshot`;
    const changes = tasks.map((task) => app.request('PATCH', `/v1/tasks/${task.id}`, { key: world.member.key, body: { title: 'Changed meanwhile' } }));
    const snapshots = [0, 10, 20].map(async (wait) => {
      await new Promise((resolve) => setTimeout(resolve, wait));
      return app.request('GET', path, { key: world.member.key });
    });
    const answered = await Promise.all(changes);
    expect(answered.map((change) => change.status)).toEqual(tasks.map(() => 200));

    const events = await app.db
      .selectFrom('webhook_events')
      .select(['event', 'txid', 'position'])
      .where('org_id', '=', world.org.id)
      .where('type', '=', 'task.updated')
      .execute();
    const placeOf = new Map(events.map((row) => [JSON.parse(row.event).data.object.id as string, { txid: BigInt(row.txid), position: BigInt(row.position), revision: JSON.parse(row.event).data.object.revision }]));
    for (const snapshot of await Promise.all(snapshots)) {
      expect(snapshot.status).toBe(200);
      const at = logPositions(app.secrets).open(snapshot.body.position, world.org.id, { origin: 'query', name: 'after' });
      const [txid, position] = [BigInt(at.txid), BigInt(at.position)];
      for (const task of tasks) {
        const held = snapshot.body.tasks.find((candidate: any) => candidate.id === task.id);
        const event = placeOf.get(task.id)!;
        const after = event.txid > txid || (event.txid === txid && event.position > position);
        const inSnapshot = held.title === 'Changed meanwhile';
        // Never neither: a change the snapshot lacks comes after its position.
        expect(inSnapshot || after, task.id).toBe(true);
        // A change at or before the position is in the snapshot; one both in it and after it is the same revision.
        if (!after) expect(inSnapshot, task.id).toBe(true);
        if (inSnapshot && after) expect(held.revision, task.id).toBe(event.revision);
      }
    }
  });

  it('keeps memory flat for a team of 20,000 open tasks: the answer is spooled, not held', async () => {
    const world = await createTeamWorld(app.db);
    const member = await world.person('MEMBER', 'MEMBER');
    for (let made = 0; made < 20_000; made += 1_000) await createTasks(app.db, world.team.id, member.user.id, 1_000);

    const before = process.memoryUsage().heapUsed;
    let peak = before;
    const sampling = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 5);
    // Read as it comes and counted, not kept: the client's copy is not the server's memory. A connection
    // of its own: one the pool kept idle through the inserts may be closing (keep-alive ends after 5 s).
    const response = await new Promise<IncomingMessage>((resolve, reject) =>
      get(`${app.url}/v1/teams/${world.team.id}/snapshot`, { agent: false, headers: { authorization: `Bearer ${member.key}` } }, resolve).on('error', reject),
    );
    let bytes = 0;
    let tail = '';
    for await (const chunk of response) {
      bytes += (chunk as Buffer).length;
      tail = (tail + (chunk as Buffer).toString('latin1')).slice(-2);
    }
    clearInterval(sampling);

    expect(response.statusCode, tail).toBe(200);
    expect(bytes).toBe(Number(response.headers['content-length']));
    expect(bytes).toBeGreaterThan(4 * 1024 * 1024);
    expect(tail).toBe(']}');
    // Loose: the answer itself is several MB, its records as objects several times that.
    expect(peak - before).toBeLessThan(64 * 1024 * 1024);
  }, 120_000);
});

describe(`the snapshot's contents are what the lists answer, also past one batch (${databaseLabel})`, () => {
  it('holds every open task of a team of 2,500, in the list order', async () => {
    const world = await createTeamWorld(app.db);
    const member = await world.person('MEMBER', 'MEMBER');
    for (let made = 0; made < 2_500; made += 500) await createTasks(app.db, world.team.id, member.user.id, 500, (index) => ({ title: `Task ${made + index}` }));
    const snapshot = await send(app.url, 'GET', `/v1/teams/${world.team.id}/snapshot`, { key: member.key });
    expect(snapshot.body.tasks).toEqual(await everything(`/v1/teams/${world.team.id}/tasks?completed=false`, member.key));
  }, 60_000);
});

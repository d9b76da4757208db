/**
 * Events too large to carry their subject whole (issue 43): text fields accept control characters,
 * which JSON writes as 6 bytes each (`\u0001`), so three members posting 70 segues of 1,000 of them
 * make a meeting whose JSON passes 1.2 MB. Its `meeting.updated` event is kept in its reduced form
 * (at most 64 KB), so every live stream keeps receiving, a resume with `Last-Event-ID` goes past it,
 * and a feed page stays within its 1 MB budget. The changes are made over HTTP, as an integrator
 * would, with the server's own stream buffer (1 MB).
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertEvents, logAfter } from '../src/db/queries/events.js';
import { eventText } from '../src/events/outbox.js';
import { databaseLabel } from './support/database.js';
import { feedShowsAll } from './support/eventFactories.js';
import { streamsOf, type OpenedStream } from './support/eventStream.js';
import { createTeamWorld } from './support/factories.js';
import { createMeetingIn } from './support/meetingFactories.js';
import { startTestApp, type TestApp } from './support/testApp.js';

const controlCharacters = '\u0001'.repeat(1_000);
const pageBudget = 1024 * 1024;
const eventLimit = 64 * 1024;

let app: TestApp;
const streams = streamsOf(() => app);
const open = streams.open;
beforeAll(async () => {
  app = await startTestApp({ webhooks: { allowPrivateTargets: true, deliver: { pollMs: 100 } } });
});
afterAll(async () => {
  streams.closeAll();
  await app.close();
});

/**
 * A running meeting with 210 segues of 1,000 control characters (70 from each of three members),
 * posted while `before` streams were open, each followed by its side effect's `meeting.updated`; then
 * its notes written (`meeting.updated`, the whole meeting) and a task created after it.
 */
async function largeMeeting(before: (world: { owner: { key: string }; teamId: string; orgId: string }) => Promise<OpenedStream[]> = async () => []) {
  const { org, team, person } = await createTeamWorld(app.db);
  const owner = await person('OWNER', 'MEMBER');
  const members = [await person('MEMBER', 'MEMBER'), await person('MEMBER', 'MEMBER'), await person('MEMBER', 'MEMBER')];
  const streams = await before({ owner, teamId: team.id, orgId: org.id });
  const meeting = await createMeetingIn(app.db, team.id, owner.user.id, { status: 'IN_PROGRESS' });
  for (let round = 0; round < 70; round += 1) {
    for (const member of members) {
      const segue = await app.request('POST', `/v1/meetings/${meeting.id}/segues`, { key: member.key, body: { content: controlCharacters } });
      expect(segue.status, segue.text).toBe(201);
    }
  }
  const notes = await app.request('PATCH', `/v1/meetings/${meeting.id}`, { key: owner.key, body: { notes: 'Baltic Trade expects the revised quote.' } });
  expect(notes.status, notes.text).toBe(200);
  expect(Buffer.byteLength(notes.text)).toBeGreaterThan(pageBudget);
  const task = await app.request('POST', `/v1/teams/${team.id}/tasks`, { key: owner.key, body: { title: 'Send the quote', ownerId: owner.user.id, dueDate: '2026-12-02' } });
  expect(task.status, task.text).toBe(201);
  await feedShowsAll(app);
  return { org, team, owner, members, meeting, streams, taskId: task.body.id as string };
}

describe(`events larger than the log keeps (${databaseLabel})`, () => {
  it('keeps every open stream receiving past a meeting of 1.2 MB: its reduced event, then the next task', async () => {
    const world = await largeMeeting(async ({ owner, teamId }) => [await open('/v1/events/stream', owner.key), await open(`/v1/events/stream?teamId=${teamId}`, owner.key)]);

    for (const stream of world.streams) {
      const messages = await stream.waitForMessages(422);
      const updates = messages.filter((message) => message.event === 'meeting.updated');
      expect(updates).toHaveLength(211);
      for (const update of updates) expect(Buffer.byteLength(update.data)).toBeLessThanOrEqual(eventLimit);
      const updated = updates.at(-1)!;
      expect(JSON.parse(updated.data).data.object).toMatchObject({ id: world.meeting.id, revision: expect.any(Number), reduced: true, kind: 'meeting', status: 'IN_PROGRESS' });
      expect(messages.at(-1)!.event).toBe('task.created');
      expect(stream.isEnded()).toBe(false);
    }
  });

  it('resumes with Last-Event-ID past the large event, never to it again', async () => {
    const world = await largeMeeting();
    const { rows } = await sql<{ id: string }>`
      select id from webhook_events where team_id = ${world.team.id} and type = 'segue.created' order by txid desc, position desc limit 1
    `.execute(app.db);
    const lastSegue = rows[0]!.id;
    const first = await open(`/v1/events/stream?teamId=${world.team.id}`, world.owner.key, { 'Last-Event-ID': lastSegue });
    const resumed = await first.waitForMessages(3);
    // The last segue's side effect, then the notes.
    expect(resumed.map((message) => message.event)).toEqual(['meeting.updated', 'meeting.updated', 'task.created']);

    const after = await open(`/v1/events/stream?teamId=${world.team.id}`, world.owner.key, { 'Last-Event-ID': resumed[1]!.id! });
    expect((await after.waitForMessages(1)).map((message) => message.id)).toEqual([resumed[2]!.id]);
  });

  it('stops a feed page at its 1 MB budget with a cursor, and the walk brings every event', async () => {
    const world = await largeMeeting();

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `?types=segue.created,meeting.updated,task.created&limit=200${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
      for (const path of [`/v1/teams/${world.team.id}/events${query}`, `/v1/orgs/${world.org.id}/events${query}`]) {
        const page = await app.request('GET', path, { key: world.owner.key });
        expect(page.status, page.text).toBe(200);
        expect(Buffer.byteLength(page.text)).toBeLessThanOrEqual(pageBudget);
      }
      const page = await app.request('GET', `/v1/teams/${world.team.id}/events${query}`, { key: world.owner.key });
      seen.push(...(page.body.data as { type: string }[]).map((event) => event.type));
      cursor = page.body.nextCursor;
    } while (cursor !== null);
    expect(seen).toEqual([...Array.from({ length: 210 }, () => ['segue.created', 'meeting.updated']).flat(), 'meeting.updated', 'task.created']);
  });

  it('judges a reduced event as the whole: a people review reaches whom it concerns, its writer and the team Admins only', async () => {
    const { team, person } = await createTeamWorld(app.db);
    const teamAdmin = await person('MEMBER', 'ADMIN');
    const member = await person('MEMBER', 'MEMBER');
    const viewer = await person('MEMBER', 'VIEWER');
    const otherViewer = await person('MEMBER', 'VIEWER');
    const at = new Date();
    const id = randomUUID();
    // As the contract's limits allow: 50 core values of 200 characters and notes of 5,000, all control characters.
    const coreValuesScores = Object.fromEntries(Array.from({ length: 50 }, (_, n) => [`${n}`.padStart(200, '\u0001'), true]));
    const review = { id: randomUUID(), revision: 7, teamId: team.id, userId: viewer.user.id, evaluatorId: member.user.id, quarter: '2026-Q4', coreValuesScores, gwc: { getsIt: true, wantsIt: true, capacityToDoIt: true }, notes: '\u0001'.repeat(5_000), updatedAt: at.toISOString() };
    const event = eventText(id, 'people_review.set', at, { orgId: team.org_id, teamId: team.id, object: review });
    expect(Buffer.byteLength(event)).toBeGreaterThan(eventLimit);
    await app.db.transaction().execute((trx) => insertEvents(trx, [{ id, orgId: team.org_id, teamId: team.id, type: 'people_review.set', event }], at));
    await feedShowsAll(app);

    const shown = [];
    for (const reader of [viewer, member, teamAdmin, otherViewer]) {
      const page = await app.request('GET', `/v1/teams/${team.id}/events?types=people_review.set`, { key: reader.key });
      expect(page.status, page.text).toBe(200);
      shown.push((page.body.data as { data: { object: unknown } }[]).map((shownEvent) => shownEvent.data.object));
    }

    const reduced = { id: review.id, revision: 7, teamId: team.id, userId: viewer.user.id, evaluatorId: member.user.id, quarter: '2026-Q4', updatedAt: review.updatedAt, reduced: true, kind: 'people_review' };
    expect(shown).toEqual([[reduced], [reduced], [reduced], []]);
  });

  it('reads the log for the live streams at most 512 KB at a time, however large the events, and brings every one', async () => {
    const { org, team } = await createTeamWorld(app.db);
    const { rows } = await sql<{ txid: string; position: string }>`
      select txid::text as txid, position::text as position from webhook_events order by txid desc, position desc limit 1
    `.execute(app.db);
    const start = rows[0] ?? { txid: '0', position: '0' };
    const ids: string[] = [];
    for (let made = 0; made < 40; made += 1) {
      const id = randomUUID();
      const at = new Date();
      const event = eventText(id, 'task.updated', at, { orgId: org.id, teamId: team.id, object: { id: randomUUID(), title: 'x'.repeat(60 * 1024) } });
      await app.db.transaction().execute((trx) => insertEvents(trx, [{ id, orgId: org.id, teamId: team.id, type: 'task.updated', event }], at));
      ids.push(id);
    }
    await feedShowsAll(app);

    const read: string[] = [];
    const sizes: number[] = [];
    let from = start;
    for (let reads = 0; reads < 40; reads += 1) {
      const { events, full } = await logAfter(app.db, { after: from, orgIds: [org.id], limit: 500 });
      sizes.push(events.reduce((sum, event) => sum + Buffer.byteLength(event.event), 0));
      read.push(...events.map((event) => event.id));
      if (!full) break;
      from = events.at(-1)!;
    }

    expect(Math.max(...sizes)).toBeLessThanOrEqual(512 * 1024);
    expect(read).toEqual(ids);
  });
});

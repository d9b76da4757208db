import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { MeetingStatus } from '../src/db/database.js';
import { findMeeting } from '../src/db/queries/meetings.js';
import { toMeeting } from '../src/records/meetings.js';
import { databaseLabel } from './support/database.js';
import { createIssue } from './support/executionFactories.js';
import { expectNow } from './support/expectations.js';
import { createCaller, createTeam } from './support/factories.js';
import { expectPagesAsMapped, trickyInstants, trickyTexts } from './support/jsonBodies.js';
import { createHeadline, createMeetingIn, createMeetingWorld, createMessage, createRating, createSegue } from './support/meetingFactories.js';
import { walkPages } from './support/pages.js';
import { startTestApp, type TestApp } from './support/testApp.js';

/** The app's clock: the real time unless a test sets it. */
let clock: Date | null = null;
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ now: () => clock ?? new Date() });
});
afterAll(() => app.close());
afterEach(() => {
  clock = null;
});

const unknownId = '00000000-0000-4000-8000-000000000000';
const storedMeeting = (id: string) => app.db.selectFrom('meetings').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const meetingsOf = (teamId: string) => app.db.selectFrom('meetings').selectAll().where('team_id', '=', teamId).execute();
const minutes = (count: number) => count * 60_000;

function expectRuleViolation(response: { status: number; body: any }) {
  expect(response.status, JSON.stringify(response.body)).toBe(422);
  expect(response.body.error.code).toBe('invalid');
  expect(response.body.error.issues).toBeUndefined();
}

function expectFormatError(response: { status: number; body: any }) {
  expect(response.status, JSON.stringify(response.body)).toBe(422);
  expect(response.body.error.code).toBe('invalid');
  expect(response.body.error.issues.length).toBeGreaterThan(0);
}

describe(`scheduling and recording meetings (${databaseLabel})`, () => {
  it('POST /teams/{teamId}/meetings with {date} schedules a meeting: SCHEDULED, no times, no ratings', async () => {
    const { team, admin } = await createMeetingWorld(app.db);

    const response = await app.request('POST', `/v1/teams/${team.id}/meetings`, { key: admin.key, body: { date: '2026-11-23' } });

    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: response.body.id,
      revision: expect.any(Number),
      teamId: team.id,
      date: '2026-11-23',
      status: 'SCHEDULED',
      startedAt: null,
      endedAt: null,
      durationMin: null,
      createdById: admin.user.id,
      rating: { average: null, ratedCount: 0, absentCount: 0 },
    });
    expect((await storedMeeting(response.body.id)).status).toBe('SCHEDULED');
  });

  it('{startedAt, durationMin} records a past meeting as COMPLETED; an offset start is returned in UTC with milliseconds', async () => {
    const { team, admin } = await createMeetingWorld(app.db);

    const response = await app.request('POST', `/v1/teams/${team.id}/meetings`, {
      key: admin.key,
      body: { startedAt: '2026-11-16T09:00:00+01:00', durationMin: 88 },
    });

    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      date: '2026-11-16',
      status: 'COMPLETED',
      startedAt: '2026-11-16T08:00:00.000Z',
      endedAt: '2026-11-16T09:28:00.000Z',
      durationMin: 88,
      createdById: admin.user.id,
      rating: { average: null, ratedCount: 0, absentCount: 0 },
    });
  });

  it('the day of a recorded meeting is the day of its start in the caller’s profile zone, else the organization’s', async () => {
    // 23:30 UTC on 15 November is already 16 November in Bratislava (UTC+1) and still 15 November in New York.
    const { team, admin, person } = await createMeetingWorld(app.db, { timezone: 'Europe/Bratislava' });
    const newYorker = await person('MEMBER', 'ADMIN', { timezone: 'America/New_York' });
    const body = { startedAt: '2026-11-15T23:30:00Z', durationMin: 60 };

    const byOrganizationZone = await app.request('POST', `/v1/teams/${team.id}/meetings`, { key: admin.key, body });
    const byProfileZone = await app.request('POST', `/v1/teams/${team.id}/meetings`, { key: newYorker.key, body });

    expect([byOrganizationZone.body.date, byProfileZone.body.date]).toEqual(['2026-11-16', '2026-11-15']);
    expect(byOrganizationZone.body.startedAt).toBe('2026-11-15T23:30:00.000Z');
  });

  it('the day follows daylight saving time: the zone’s offset on the day of the start counts', async () => {
    const { team, admin } = await createMeetingWorld(app.db, { timezone: 'America/Los_Angeles' });
    const record = (startedAt: string) =>
      app.request('POST', `/v1/teams/${team.id}/meetings`, { key: admin.key, body: { startedAt, durationMin: 30 } });

    // 1 November 2026, 07:30 UTC is 00:30 PDT (UTC-7) on the last morning of summer time; PST would give 31 October.
    expect((await record('2026-11-01T07:30:00Z')).body.date).toBe('2026-11-01');
    // 8 March 2026, 07:30 UTC is 23:30 PST (UTC-8) on 7 March, just before summer time starts; PDT would give 8 March.
    expect((await record('2026-03-08T07:30:00Z')).body.date).toBe('2026-03-07');
  });

  it('a start in the future is a rule violation and nothing is stored; a start at this very moment is accepted', async () => {
    const { team, admin } = await createMeetingWorld(app.db);
    clock = new Date('2026-11-16T10:00:00.000Z');

    const future = await app.request('POST', `/v1/teams/${team.id}/meetings`, {
      key: admin.key,
      body: { startedAt: '2026-11-16T10:00:00.001Z', durationMin: 30 },
    });
    expectRuleViolation(future);
    expect(await meetingsOf(team.id)).toEqual([]);

    const now = await app.request('POST', `/v1/teams/${team.id}/meetings`, {
      key: admin.key,
      body: { startedAt: '2026-11-16T11:00:00+01:00', durationMin: 30 },
    });
    expect(now.status).toBe(201);
  });

  it('a durationMin outside 1-600 or not whole is a rule violation; 1 and 600 are accepted', async () => {
    const { team, admin } = await createMeetingWorld(app.db);
    const record = (durationMin: unknown) =>
      app.request('POST', `/v1/teams/${team.id}/meetings`, { key: admin.key, body: { startedAt: '2026-11-16T08:00:00Z', durationMin } });

    for (const durationMin of [0, 601, -5]) expectRuleViolation(await record(durationMin));
    expectFormatError(await record(1.5));
    expectFormatError(await record('60'));
    expect(await meetingsOf(team.id)).toEqual([]);
    expect([(await record(1)).status, (await record(600)).status]).toEqual([201, 201]);
  });

  it('a start of 35 characters (nanoseconds and an offset) is kept to the millisecond; a longer one is a rule violation', async () => {
    const { team, admin } = await createMeetingWorld(app.db);
    const record = (startedAt: string) => app.request('POST', `/v1/teams/${team.id}/meetings`, { key: admin.key, body: { startedAt, durationMin: 30 } });

    const longest = await record('2026-11-16T09:00:00.123456789+01:00');
    const tooLong = await record('2026-11-16T09:00:00.1234567891+01:00');

    expect([longest.status, longest.body.startedAt]).toEqual([201, '2026-11-16T08:00:00.123Z']);
    expectRuleViolation(tooLong);
    expect(await meetingsOf(team.id)).toHaveLength(1);
  });

  it('a start without a zone, a malformed day, both shapes, neither, or an unknown field is a format error and nothing is stored', async () => {
    const { team, admin } = await createMeetingWorld(app.db);
    const bodies = [
      { startedAt: '2026-11-16T08:00:00', durationMin: 60 },
      { startedAt: '2026-11-16', durationMin: 60 },
      { date: '2026-02-30' },
      { date: '2026-11-16T08:00:00Z' },
      { date: '2026-11-23', startedAt: '2026-11-16T08:00:00Z', durationMin: 60 },
      { date: '2026-11-23', notes: 'Agenda' },
      { startedAt: '2026-11-16T08:00:00Z' },
      { durationMin: 60 },
      {},
    ];
    for (const body of bodies) expectFormatError(await app.request('POST', `/v1/teams/${team.id}/meetings`, { key: admin.key, body }));

    const noZone = await app.request('POST', `/v1/teams/${team.id}/meetings`, { key: admin.key, body: bodies[0] });
    expect(noZone.body.error.issues.map((issue: { path: string[] }) => issue.path)).toContainEqual(['startedAt']);
    expect(await meetingsOf(team.id)).toEqual([]);
  });

  it('team Members and Viewers get 403, an unknown team 404, a suspended organization 409', async () => {
    const { team, member, viewer } = await createMeetingWorld(app.db);
    const suspended = await createMeetingWorld(app.db, { suspended: true });
    const body = { date: '2026-11-23' };

    expect((await app.request('POST', `/v1/teams/${team.id}/meetings`, { key: member.key, body })).status).toBe(403);
    expect((await app.request('POST', `/v1/teams/${team.id}/meetings`, { key: viewer.key, body })).status).toBe(403);
    expect((await app.request('POST', `/v1/teams/${unknownId}/meetings`, { key: member.key, body })).status).toBe(404);
    const refused = await app.request('POST', `/v1/teams/${suspended.team.id}/meetings`, { key: suspended.admin.key, body });
    expect([refused.status, refused.body.error.code]).toEqual([409, 'orgSuspended']);
    expect(await meetingsOf(team.id)).toEqual([]);
  });
});

describe(`listing meetings (${databaseLabel})`, () => {
  it('GET /teams/{teamId}/meetings lists newest first by day, then by creation, across pages', async () => {
    const { team, admin } = await createMeetingWorld(app.db);
    const base = Date.parse('2026-11-01T08:00:00.000Z');
    const days = ['2026-11-09', '2026-11-23', '2026-11-16', '2026-11-16', '2026-11-02', '2026-11-16', '2026-11-30'];
    const created = [];
    for (const [index, date] of days.entries()) {
      created.push(await createMeetingIn(app.db, team.id, admin.user.id, { date, createdAt: new Date(base + minutes(index)) }));
    }
    // Two meetings created at the same moment are told apart by id.
    created.push(await createMeetingIn(app.db, team.id, admin.user.id, { date: '2026-11-16', createdAt: new Date(base + minutes(3)) }));

    const expected = [...created]
      .sort(
        (a, b) =>
          b.date.localeCompare(a.date) || b.created_at.getTime() - a.created_at.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0),
      )
      .map((meeting) => meeting.id);
    const { items, sizes } = await walkPages(app, `/v1/teams/${team.id}/meetings`, admin.key, { limit: 3 });

    expect(items.map((meeting) => meeting.id)).toEqual(expected);
    expect(sizes).toEqual([3, 3, 2]);
  });

  it('filters by status, and the filter combines with pagination', async () => {
    const { team, admin, member } = await createMeetingWorld(app.db);
    const completed = [];
    for (const date of ['2026-10-05', '2026-10-12', '2026-10-19']) {
      completed.push(await createMeetingIn(app.db, team.id, admin.user.id, { status: 'COMPLETED', date }));
    }
    await createMeetingIn(app.db, team.id, admin.user.id, { status: 'SCHEDULED', date: '2026-10-26' });
    await createMeetingIn(app.db, team.id, admin.user.id, { status: 'IN_PROGRESS', date: '2026-10-20' });

    const { items } = await walkPages(app, `/v1/teams/${team.id}/meetings?status=COMPLETED`, member.key, { limit: 2 });
    expect(items.map((meeting) => meeting.id)).toEqual(completed.reverse().map((meeting) => meeting.id));
    const scheduled = await app.request('GET', `/v1/teams/${team.id}/meetings?status=SCHEDULED`, { key: member.key });
    expect(scheduled.body.data.map((meeting: { status: string }) => meeting.status)).toEqual(['SCHEDULED']);
    expect((await app.request('GET', `/v1/teams/${team.id}/meetings?status=DONE`, { key: member.key })).status).toBe(422);
  });

  it('each meeting carries its rating summary: the average leaves out absent members and those who did not rate', async () => {
    const { team, admin, member, viewer, person } = await createMeetingWorld(app.db);
    const other = await person('MEMBER', 'MEMBER');
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id, { status: 'COMPLETED' });
    await createRating(app.db, meeting.id, admin.user.id, 9);
    await createRating(app.db, meeting.id, member.user.id, 8);
    await createRating(app.db, meeting.id, viewer.user.id, 0, { absent: true });
    // `other` attended without rating: not counted at all.
    void other;
    const unrated = await createMeetingIn(app.db, team.id, admin.user.id, { status: 'COMPLETED', date: '2026-01-05' });

    const response = await app.request('GET', `/v1/teams/${team.id}/meetings`, { key: viewer.key });

    const byId = new Map(response.body.data.map((item: { id: string; rating: unknown }) => [item.id, item.rating]));
    expect(byId.get(meeting.id)).toEqual({ average: 8.5, ratedCount: 2, absentCount: 1 });
    expect(byId.get(unrated.id)).toEqual({ average: null, ratedCount: 0, absentCount: 0 });
  });

  it('a meeting in progress with hidden ratings lists its counts but not its average; revealed, the average shows', async () => {
    const { team, admin, member } = await createMeetingWorld(app.db);
    const hidden = await createMeetingIn(app.db, team.id, admin.user.id, { status: 'IN_PROGRESS', date: '2026-11-23' });
    const revealed = await createMeetingIn(app.db, team.id, admin.user.id, { status: 'IN_PROGRESS', date: '2026-11-16', ratingsRevealedAt: new Date() });
    for (const meeting of [hidden, revealed]) {
      await createRating(app.db, meeting.id, admin.user.id, 7);
      await createRating(app.db, meeting.id, member.user.id, 10);
    }

    const response = await app.request('GET', `/v1/teams/${team.id}/meetings`, { key: admin.key });

    expect(response.body.data.map((item: { rating: unknown }) => item.rating)).toEqual([
      { average: null, ratedCount: 2, absentCount: 0 },
      { average: 8.5, ratedCount: 2, absentCount: 0 },
    ]);
  });

  it('GET /teams/{teamId}/meetings answers byte for byte what toMeeting writes', async () => {
    const { team, admin, member, viewer } = await createMeetingWorld(app.db);
    // IN_PROGRESS twice: once with its ratings hidden (not revealed), once revealed.
    const statuses: MeetingStatus[] = ['SCHEDULED', 'IN_PROGRESS', 'COMPLETED', 'IN_PROGRESS'];
    const dates = ['2026-11-16', '2026-11-23', '2100-12-27'];
    for (let index = 0; index < 13; index++) {
      const status = statuses[index % statuses.length]!;
      const meeting = await createMeetingIn(app.db, team.id, admin.user.id, {
        status,
        date: dates[index % dates.length],
        startedAt: status === 'SCHEDULED' ? null : trickyInstants[(index + 1) % trickyInstants.length]!,
        durationMin: 30 + index,
        ratingsRevealedAt: index % 4 === 3 ? trickyInstants[(index + 2) % trickyInstants.length]! : null,
        notes: index % 5 === 0 ? null : trickyTexts[index % trickyTexts.length]!,
        // Two meetings on the same day and instant are told apart by id.
        createdAt: trickyInstants[index % 4]!,
      });
      if (status === 'SCHEDULED' || index % 7 === 6) continue;
      await createRating(app.db, meeting.id, admin.user.id, index % 11);
      await createRating(app.db, meeting.id, member.user.id, 7);
      await createRating(app.db, meeting.id, viewer.user.id, index % 3 ? 10 : 0, { absent: index % 3 === 0 });
    }
    const stored = await app.db
      .selectFrom('meetings')
      .select('id')
      .where('team_id', '=', team.id)
      .orderBy('date', 'desc')
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
    const rows = await Promise.all(stored.map(async ({ id }) => (await findMeeting(app.db, id, member.user.id))!));
    const summaries = rows.filter((row) => row.status === 'IN_PROGRESS' && row.rating_summary.rated_count > 0).map((row) => toMeeting(row).rating.average);
    expect(summaries, 'a meeting with hidden ratings and one with shown ratings').toContain(null);
    expect(summaries.some((average) => average !== null)).toBe(true);
    const list = { key: member.key, map: toMeeting, cursorOf: (row: (typeof rows)[number]) => [row.date, row.created_at, row.id] };
    await expectPagesAsMapped(app, { ...list, path: `/v1/teams/${team.id}/meetings`, rows }, 4);
    const inProgress = rows.filter((row) => row.status === 'IN_PROGRESS');
    await expectPagesAsMapped(app, { ...list, path: `/v1/teams/${team.id}/meetings?status=IN_PROGRESS`, rows: inProgress }, 2);
  });

  it('a cursor that was not handed out, or a limit outside 1-200, is a format error', async () => {
    const { team, admin } = await createMeetingWorld(app.db);
    for (const query of ['cursor=not-a-cursor', 'limit=0', 'limit=201']) {
      expectFormatError(await app.request('GET', `/v1/teams/${team.id}/meetings?${query}`, { key: admin.key }));
    }
  });

  it('a cursor whose day is in the year 0000, which the database cannot hold, is a format error', async () => {
    const { team, admin } = await createMeetingWorld(app.db);
    await createMeetingIn(app.db, team.id, admin.user.id);
    const cursor = Buffer.from(JSON.stringify(['0000-01-01', '2026-11-16T09:00:00.000Z', unknownId])).toString('base64url');
    expectFormatError(await app.request('GET', `/v1/teams/${team.id}/meetings?cursor=${cursor}`, { key: admin.key }));
  });

  it('organization Members outside the team and other organizations get 403, an unknown team 404', async () => {
    const { team, person } = await createMeetingWorld(app.db);
    const orgMember = await person('MEMBER');
    const outsider = await createCaller(app.db);
    expect((await app.request('GET', `/v1/teams/${team.id}/meetings`, { key: orgMember.key })).status).toBe(403);
    expect((await app.request('GET', `/v1/teams/${team.id}/meetings`, { key: outsider.key })).status).toBe(403);
    expect((await app.request('GET', `/v1/teams/${unknownId}/meetings`, { key: orgMember.key })).status).toBe(404);
  });
});

describe(`reading one meeting (${databaseLabel})`, () => {
  it('GET /meetings/{id} returns the meeting with notes, ratings, segues, headlines, messages and its rating window', async () => {
    const { org, team, admin, member, viewer } = await createMeetingWorld(app.db);
    const startedAt = new Date(Date.now() - minutes(120));
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id, {
      status: 'COMPLETED',
      startedAt,
      durationMin: 88,
      createdAt: new Date(startedAt.getTime() - minutes(60 * 24)),
      notes: 'Baltic Trade expects the revised freight quote by 27 November.',
    });
    await createRating(app.db, meeting.id, member.user.id, 8, { createdAt: new Date(startedAt.getTime() + minutes(80)) });
    await createRating(app.db, meeting.id, admin.user.id, 9, { createdAt: new Date(startedAt.getTime() + minutes(85)) });
    await createRating(app.db, meeting.id, viewer.user.id, 0, { absent: true, createdAt: new Date(startedAt.getTime() + minutes(86)) });
    const segue = await createSegue(app.db, meeting.id, member.user.id);
    const headline = await createHeadline(app.db, meeting.id, admin.user.id, { type: 'EMPLOYEE', content: 'Eva passed her certification.' });
    const message = await createMessage(app.db, { id: meeting.id, orgId: org.id }, admin.user.id);
    await app.db.insertInto('message_acknowledgements').values({ message_id: message.id, user_id: viewer.user.id }).execute();

    const response = await app.request('GET', `/v1/meetings/${meeting.id}`, { key: viewer.key });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id: meeting.id,
      revision: expect.any(Number),
      teamId: team.id,
      date: meeting.date,
      status: 'COMPLETED',
      startedAt: startedAt.toISOString(),
      endedAt: new Date(startedAt.getTime() + minutes(88)).toISOString(),
      durationMin: 88,
      createdById: admin.user.id,
      rating: { average: 8.5, ratedCount: 2, absentCount: 1 },
      notes: 'Baltic Trade expects the revised freight quote by 27 November.',
      ratings: [
        { userId: member.user.id, rating: 8, absent: false },
        { userId: admin.user.id, rating: 9, absent: false },
        { userId: viewer.user.id, rating: 0, absent: true },
      ],
      segues: [{ id: segue.id, revision: expect.any(Number), meetingId: meeting.id, userId: member.user.id, content: segue.content, createdAt: segue.created_at.toISOString() }],
      headlines: [
        {
          id: headline.id,
          revision: expect.any(Number),
          meetingId: meeting.id,
          userId: admin.user.id,
          type: 'EMPLOYEE',
          content: 'Eva passed her certification.',
          createdAt: headline.created_at.toISOString(),
        },
      ],
      messages: [
        {
          id: message.id,
          revision: expect.any(Number),
          meetingId: meeting.id,
          userId: admin.user.id,
          content: message.content,
          createdAt: message.created_at.toISOString(),
          acknowledged: true,
        },
      ],
      ratingWindow: { open: true, closesAt: new Date(startedAt.getTime() + minutes(7 * 24 * 60)).toISOString() },
      ratingsHidden: false,
    });
    const asAdmin = await app.request('GET', `/v1/meetings/${meeting.id}`, { key: admin.key });
    expect(asAdmin.body.messages[0].acknowledged).toBe(false);
  });

  it('a SCHEDULED meeting shows a closed window without a closing time', async () => {
    const { team, admin } = await createMeetingWorld(app.db);
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id);
    const response = await app.request('GET', `/v1/meetings/${meeting.id}`, { key: admin.key });
    expect(response.body).toMatchObject({ ratingWindow: { open: false, closesAt: null }, ratingsHidden: false, ratings: [], notes: null });
  });

  it('a meeting of a team the caller cannot see is 404, exactly like one that does not exist', async () => {
    const { team, admin, person } = await createMeetingWorld(app.db);
    const orgMember = await person('MEMBER');
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id);
    for (const path of [`/v1/meetings/${meeting.id}`, `/v1/meetings/${unknownId}`]) {
      const response = await app.request('GET', path, { key: orgMember.key });
      expect([response.status, response.body.error.code]).toEqual([404, 'notFound']);
    }
  });
});

describe(`moving a meeting through its states (${databaseLabel})`, () => {
  it('SCHEDULED → IN_PROGRESS sets startedAt to now; IN_PROGRESS → COMPLETED sets endedAt and the rounded minutes', async () => {
    const { team, admin } = await createMeetingWorld(app.db);
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id, { date: '2026-11-16' });

    clock = new Date('2026-11-16T08:00:00.000Z');
    const started = await app.request('PATCH', `/v1/meetings/${meeting.id}`, { key: admin.key, body: { status: 'IN_PROGRESS' } });
    expect(started.status).toBe(200);
    expect(started.body).toMatchObject({ status: 'IN_PROGRESS', startedAt: '2026-11-16T08:00:00.000Z', endedAt: null, durationMin: null, date: '2026-11-16' });
    expect(started.body.ratingsHidden).toBe(true);

    clock = new Date('2026-11-16T09:28:29.999Z');
    const ended = await app.request('PATCH', `/v1/meetings/${meeting.id}`, { key: admin.key, body: { status: 'COMPLETED' } });
    expect(ended.status).toBe(200);
    expect(ended.body).toMatchObject({ status: 'COMPLETED', startedAt: '2026-11-16T08:00:00.000Z', endedAt: '2026-11-16T09:28:29.999Z', durationMin: 88 });
    expect(ended.body.ratingsHidden).toBe(false);
  });

  it('a meeting ended within its first minute lasted 1 minute; one ended after 89.5 minutes lasted 90', async () => {
    const { team, admin } = await createMeetingWorld(app.db);
    const start = Date.parse('2026-11-16T08:00:00.000Z');
    const quick = await createMeetingIn(app.db, team.id, admin.user.id, { status: 'IN_PROGRESS', startedAt: new Date(start) });
    const long = await createMeetingIn(app.db, team.id, admin.user.id, { status: 'IN_PROGRESS', startedAt: new Date(start) });

    clock = new Date(start + 20_000);
    const first = await app.request('PATCH', `/v1/meetings/${quick.id}`, { key: admin.key, body: { status: 'COMPLETED' } });
    clock = new Date(start + minutes(89.5));
    const second = await app.request('PATCH', `/v1/meetings/${long.id}`, { key: admin.key, body: { status: 'COMPLETED' } });

    expect([first.body.durationMin, second.body.durationMin]).toEqual([1, 90]);
  });

  it('with the real clock, starting stamps the moment of the request', async () => {
    const { team, admin } = await createMeetingWorld(app.db);
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id);
    const before = Date.now();
    const response = await app.request('PATCH', `/v1/meetings/${meeting.id}`, { key: admin.key, body: { status: 'IN_PROGRESS' } });
    expectNow(response.body.startedAt, before, Date.now());
  });

  it.each([
    ['SCHEDULED', 'COMPLETED'],
    ['IN_PROGRESS', 'IN_PROGRESS'],
    ['COMPLETED', 'IN_PROGRESS'],
    ['COMPLETED', 'COMPLETED'],
  ] as const)('%s → %s is a rule violation and nothing changes', async (from, to) => {
    const { team, admin } = await createMeetingWorld(app.db);
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id, { status: from });

    expectRuleViolation(await app.request('PATCH', `/v1/meetings/${meeting.id}`, { key: admin.key, body: { status: to } }));
    expect(await storedMeeting(meeting.id)).toEqual(meeting);
  });

  it('a move back to SCHEDULED is not a status a meeting can be given: a format error', async () => {
    const { team, admin } = await createMeetingWorld(app.db);
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id, { status: 'IN_PROGRESS' });
    expectFormatError(await app.request('PATCH', `/v1/meetings/${meeting.id}`, { key: admin.key, body: { status: 'SCHEDULED' } }));
    expect(await storedMeeting(meeting.id)).toEqual(meeting);
  });

  it('two simultaneous starts of one meeting: exactly one succeeds, the other is refused as a repeated step', async () => {
    const { team, admin, person } = await createMeetingWorld(app.db);
    const otherAdmin = await person('ADMIN');
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id);

    const answers = await Promise.all(
      [admin, otherAdmin, admin, otherAdmin].map((caller) =>
        app.request('PATCH', `/v1/meetings/${meeting.id}`, { key: caller.key, body: { status: 'IN_PROGRESS' } }),
      ),
    );

    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 422, 422, 422]);
    const winner = answers.find((answer) => answer.status === 200)!;
    expect((await storedMeeting(meeting.id)).started_at?.toISOString()).toBe(winner.body.startedAt);
  });

  it('a simultaneous end and start of one meeting in progress: only the end succeeds', async () => {
    const { team, admin } = await createMeetingWorld(app.db);
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id, { status: 'IN_PROGRESS' });

    const answers = await Promise.all(
      (['COMPLETED', 'COMPLETED', 'IN_PROGRESS'] as const).map((status) =>
        app.request('PATCH', `/v1/meetings/${meeting.id}`, { key: admin.key, body: { status } }),
      ),
    );

    expect(answers.map((answer) => answer.status)).toEqual(expect.arrayContaining([200, 422, 422]));
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
    expect((await storedMeeting(meeting.id)).status).toBe('COMPLETED');
  });

  it('team Members get 403 and nothing changes; a suspended organization 409', async () => {
    const { team, admin, member } = await createMeetingWorld(app.db);
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id);
    expect((await app.request('PATCH', `/v1/meetings/${meeting.id}`, { key: member.key, body: { status: 'IN_PROGRESS' } })).status).toBe(403);
    expect(await storedMeeting(meeting.id)).toEqual(meeting);

    const suspended = await createMeetingWorld(app.db, { suspended: true });
    const frozen = await createMeetingIn(app.db, suspended.team.id, suspended.admin.user.id);
    const refused = await app.request('PATCH', `/v1/meetings/${frozen.id}`, { key: suspended.admin.key, body: { status: 'IN_PROGRESS' } });
    expect([refused.status, refused.body.error.code]).toEqual([409, 'orgSuspended']);
  });
});

describe(`correcting the times of a completed meeting (${databaseLabel})`, () => {
  it('startedAt and durationMin: endedAt is recomputed and the day follows the new start in the caller’s zone', async () => {
    const { team, admin } = await createMeetingWorld(app.db, { timezone: 'Europe/Bratislava' });
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id, {
      status: 'COMPLETED',
      date: '2026-11-16',
      startedAt: new Date('2026-11-16T08:00:00.000Z'),
      durationMin: 88,
    });

    const response = await app.request('PATCH', `/v1/meetings/${meeting.id}`, {
      key: admin.key,
      body: { startedAt: '2026-11-17T00:30:00+01:00', durationMin: 75 },
    });

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      status: 'COMPLETED',
      date: '2026-11-17',
      startedAt: '2026-11-16T23:30:00.000Z',
      endedAt: '2026-11-17T00:45:00.000Z',
      durationMin: 75,
    });
  });

  it('durationMin alone keeps the start and the day; startedAt alone keeps the length', async () => {
    const { team, admin } = await createMeetingWorld(app.db);
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id, {
      status: 'COMPLETED',
      date: '2026-11-16',
      startedAt: new Date('2026-11-16T08:00:00.000Z'),
      durationMin: 88,
    });

    const longer = await app.request('PATCH', `/v1/meetings/${meeting.id}`, { key: admin.key, body: { durationMin: 95 } });
    expect(longer.body).toMatchObject({ date: '2026-11-16', startedAt: '2026-11-16T08:00:00.000Z', endedAt: '2026-11-16T09:35:00.000Z', durationMin: 95 });

    const later = await app.request('PATCH', `/v1/meetings/${meeting.id}`, { key: admin.key, body: { startedAt: '2026-11-16T08:15:00Z' } });
    expect(later.body).toMatchObject({ date: '2026-11-16', startedAt: '2026-11-16T08:15:00.000Z', endedAt: '2026-11-16T09:50:00.000Z', durationMin: 95 });
  });

  it.each(['SCHEDULED', 'IN_PROGRESS'] as const)('on a %s meeting it is a rule violation and nothing changes', async (status) => {
    const { team, admin } = await createMeetingWorld(app.db);
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id, { status });
    for (const body of [{ durationMin: 60 }, { startedAt: '2026-11-16T08:00:00Z' }]) {
      expectRuleViolation(await app.request('PATCH', `/v1/meetings/${meeting.id}`, { key: admin.key, body }));
    }
    expect(await storedMeeting(meeting.id)).toEqual(meeting);
  });

  it('a start in the future or a length outside 1-600 is a rule violation; a body mixing shapes is a format error; nothing changes', async () => {
    const { team, admin } = await createMeetingWorld(app.db);
    clock = new Date('2026-11-20T12:00:00.000Z');
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id, { status: 'COMPLETED', startedAt: new Date('2026-11-16T08:00:00.000Z') });

    for (const body of [{ startedAt: '2026-11-20T12:00:01Z', durationMin: 60 }, { durationMin: 0 }, { durationMin: 601 }]) {
      expectRuleViolation(await app.request('PATCH', `/v1/meetings/${meeting.id}`, { key: admin.key, body }));
    }
    for (const body of [{}, { durationMin: 60, notes: 'x' }, { status: 'COMPLETED', durationMin: 60 }, { startedAt: '2026-11-16T08:00:00' }, { title: 'x' }]) {
      expectFormatError(await app.request('PATCH', `/v1/meetings/${meeting.id}`, { key: admin.key, body }));
    }
    expect(await storedMeeting(meeting.id)).toEqual(meeting);
  });
});

describe(`meeting notes (${databaseLabel})`, () => {
  it('PATCH {notes} writes trimmed notes in any status; "" and null clear them', async () => {
    const { team, admin } = await createMeetingWorld(app.db);
    for (const status of ['SCHEDULED', 'IN_PROGRESS', 'COMPLETED'] as const) {
      const meeting = await createMeetingIn(app.db, team.id, admin.user.id, { status });
      const written = await app.request('PATCH', `/v1/meetings/${meeting.id}`, { key: admin.key, body: { notes: '  Quote by 27 November. ' } });
      expect([written.status, written.body.notes, written.body.status]).toEqual([200, 'Quote by 27 November.', status]);
      for (const notes of ['  ', null]) {
        await app.request('PATCH', `/v1/meetings/${meeting.id}`, { key: admin.key, body: { notes: 'Something' } });
        const cleared = await app.request('PATCH', `/v1/meetings/${meeting.id}`, { key: admin.key, body: { notes } });
        expect(cleared.body.notes).toBeNull();
        expect((await storedMeeting(meeting.id)).notes).toBeNull();
      }
    }
  });

  it('notes of 20,000 characters are accepted, longer ones are a rule violation; team Members get 403', async () => {
    const { team, admin, member } = await createMeetingWorld(app.db);
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id, { status: 'COMPLETED' });
    expectRuleViolation(await app.request('PATCH', `/v1/meetings/${meeting.id}`, { key: admin.key, body: { notes: 'x'.repeat(20_001) } }));
    expect((await app.request('PATCH', `/v1/meetings/${meeting.id}`, { key: member.key, body: { notes: 'Mine' } })).status).toBe(403);
    expect((await storedMeeting(meeting.id)).notes).toBeNull();
    const longest = await app.request('PATCH', `/v1/meetings/${meeting.id}`, { key: admin.key, body: { notes: 'x'.repeat(20_000) } });
    expect(longest.body.notes).toHaveLength(20_000);
  });
});

describe(`the recap of a meeting (${databaseLabel})`, () => {
  it('lists the new to-dos with owners, the issues raised in it and those solved during it, headlines, messages and notes', async () => {
    const { team, admin, member } = await createMeetingWorld(app.db);
    const solvedBefore = await createIssue(app.db, team.id, member.user.id, { title: 'Solved last week', status: 'SOLVED' });
    const toSolve = await createIssue(app.db, team.id, member.user.id, { title: 'Deliveries on the Košice route arrive a day late', priority: 'HIGH' });
    const created = await app.request('POST', `/v1/teams/${team.id}/meetings`, { key: admin.key, body: { date: '2026-11-16' } });
    const meetingId = created.body.id;
    await app.request('PATCH', `/v1/meetings/${meetingId}`, { key: admin.key, body: { status: 'IN_PROGRESS' } });

    const task = await app.request('POST', `/v1/teams/${team.id}/tasks`, {
      key: member.key,
      body: { title: 'Send the revised freight quote', ownerId: member.user.id, dueDate: '2026-11-27', meetingId },
    });
    const raised = await app.request('POST', `/v1/teams/${team.id}/issues`, { key: member.key, body: { title: 'Pallet shortage in Žilina', meetingId } });
    await app.request('POST', `/v1/teams/${team.id}/tasks`, { key: member.key, body: { title: 'Unrelated', ownerId: member.user.id, dueDate: '2026-11-27' } });
    await app.request('PATCH', `/v1/issues/${toSolve.id}`, { key: member.key, body: { status: 'SOLVED' } });
    const headline = await app.request('POST', `/v1/meetings/${meetingId}/headlines`, { key: member.key, body: { type: 'CUSTOMER', content: 'Baltic Trade renewed.' } });
    const message = await app.request('POST', `/v1/meetings/${meetingId}/messages`, { key: admin.key, body: { content: 'Quotes within one day.' } });
    await app.request('PUT', `/v1/meetings/${meetingId}/ratings/me`, { key: member.key, body: { rating: 9 } });
    await app.request('PATCH', `/v1/meetings/${meetingId}`, { key: admin.key, body: { notes: 'Quote by 27 November.' } });
    const ended = await app.request('PATCH', `/v1/meetings/${meetingId}`, { key: admin.key, body: { status: 'COMPLETED' } });
    expect([task.status, raised.status, ended.status]).toEqual([201, 201, 200]);

    const recap = await app.request('GET', `/v1/meetings/${meetingId}/recap`, { key: member.key });

    expect(recap.status).toBe(200);
    expect(recap.body).toEqual({
      meetingId,
      teamId: team.id,
      date: '2026-11-16',
      startedAt: ended.body.startedAt,
      endedAt: ended.body.endedAt,
      durationMin: 1,
      rating: { average: 9, ratedCount: 1, absentCount: 0 },
      newTasks: [
        { id: task.body.id, title: 'Send the revised freight quote', ownerId: member.user.id, ownerName: member.user.name, dueDate: '2026-11-27', completed: false },
      ],
      solvedIssues: [{ id: toSolve.id, title: toSolve.title, priority: 'HIGH', status: 'SOLVED' }],
      raisedIssues: [{ id: raised.body.id, title: 'Pallet shortage in Žilina', priority: 'MEDIUM', status: 'OPEN' }],
      headlines: [headline.body],
      messages: [message.body],
      notes: 'Quote by 27 November.',
    });
    expect(recap.body.solvedIssues.map((issue: { id: string }) => issue.id)).not.toContain(solvedBefore.id);
  });

  it.each(['SCHEDULED', 'IN_PROGRESS'] as const)('a %s meeting has no recap yet: a rule violation', async (status) => {
    const { team, admin } = await createMeetingWorld(app.db);
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id, { status });
    expectRuleViolation(await app.request('GET', `/v1/meetings/${meeting.id}/recap`, { key: admin.key }));
  });

  it('a task or issue cannot name a meeting of another team (422)', async () => {
    const { org, team, admin, member } = await createMeetingWorld(app.db);
    const otherTeam = await createTeam(app.db, org.id);
    const elsewhere = await createMeetingIn(app.db, otherTeam.id, admin.user.id);
    expectRuleViolation(
      await app.request('POST', `/v1/teams/${team.id}/tasks`, {
        key: member.key,
        body: { title: 'Call', ownerId: member.user.id, dueDate: '2026-11-27', meetingId: elsewhere.id },
      }),
    );
    expectRuleViolation(await app.request('POST', `/v1/teams/${team.id}/issues`, { key: member.key, body: { title: 'Late', meetingId: elsewhere.id } }));
  });
});

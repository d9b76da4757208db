import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { databaseLabel } from './support/database.js';
import { createMeetingIn, createMeetingWorld, createRating } from './support/meetingFactories.js';
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

const ratingsOf = (meetingId: string) =>
  app.db.selectFrom('meeting_ratings').select(['user_id', 'rating', 'absent']).where('meeting_id', '=', meetingId).orderBy('user_id').execute();
const at = (instant: string) => new Date(instant);
const shift = (instant: Date, ms: number) => new Date(instant.getTime() + ms);
const DAY = 24 * 60 * 60_000;

function expectRuleViolation(response: { status: number; body: any }) {
  expect(response.status, JSON.stringify(response.body)).toBe(422);
  expect(response.body.error.issues).toBeUndefined();
}

function expectFormatError(response: { status: number; body: any }) {
  expect(response.status, JSON.stringify(response.body)).toBe(422);
  expect(response.body.error.issues.length).toBeGreaterThan(0);
}

function expectRatingClosed(response: { status: number; body: any }) {
  expect([response.status, response.body.error?.code], JSON.stringify(response.body)).toEqual([409, 'ratingClosed']);
}

const rateMe = (meetingId: string, key: string, body: unknown) => app.request('PUT', `/v1/meetings/${meetingId}/ratings/me`, { key, body });
const rate = (meetingId: string, userId: string, key: string, body: unknown) =>
  app.request('PUT', `/v1/meetings/${meetingId}/ratings/${userId}`, { key, body });

describe(`rating a meeting oneself (${databaseLabel})`, () => {
  it('PUT /meetings/{id}/ratings/me stores the caller’s rating and replaces an earlier one', async () => {
    const { team, admin, member } = await createMeetingWorld(app.db);
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id, { status: 'IN_PROGRESS', startedAt: new Date() });

    const first = await rateMe(meeting.id, member.key, { rating: 7 });
    const second = await rateMe(meeting.id, member.key, { rating: 9 });

    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.body).toEqual({ userId: member.user.id, rating: 9, absent: false });
    expect(await ratingsOf(meeting.id)).toEqual([{ user_id: member.user.id, rating: 9, absent: false }]);
  });

  it('rating oneself marks the caller present after being marked absent', async () => {
    const { team, admin, member } = await createMeetingWorld(app.db);
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id, { status: 'COMPLETED', startedAt: new Date() });
    await createRating(app.db, meeting.id, member.user.id, 0, { absent: true });

    const response = await rateMe(meeting.id, member.key, { rating: 8 });

    expect(response.body).toEqual({ userId: member.user.id, rating: 8, absent: false });
    expect(await ratingsOf(meeting.id)).toEqual([{ user_id: member.user.id, rating: 8, absent: false }]);
  });

  it('a rating that is not an integer 1-10 is a rule violation; a missing or non-numeric one a format error; other fields are ignored', async () => {
    const { team, admin, member } = await createMeetingWorld(app.db);
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id, { status: 'IN_PROGRESS', startedAt: new Date() });

    for (const rating of [0, 11, 7.5, -1]) expectRuleViolation(await rateMe(meeting.id, member.key, { rating }));
    for (const body of [{}, { rating: '7' }, { rating: null }]) expectFormatError(await rateMe(meeting.id, member.key, body));
    expect(await ratingsOf(meeting.id)).toEqual([]);
    const extra = await rateMe(meeting.id, member.key, { rating: 10, comment: 'Great meeting' });
    expect([extra.status, extra.body.rating]).toEqual([200, 10]);
    expect((await rateMe(meeting.id, member.key, { rating: 1 })).body.rating).toBe(1);
  });

  it('Viewers, Implementers (even in the team) and organization Owners and Admins outside the team get 403', async () => {
    const { team, admin, viewer, person } = await createMeetingWorld(app.db);
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id, { status: 'IN_PROGRESS', startedAt: new Date() });
    const refused = [viewer, await person('IMPLEMENTER', 'MEMBER'), await person('IMPLEMENTER'), await person('OWNER'), await person('ADMIN')];

    for (const caller of refused) {
      const response = await rateMe(meeting.id, caller.key, { rating: 8 });
      expect([response.status, response.body.error.code]).toEqual([403, 'forbidden']);
    }
    expect(await ratingsOf(meeting.id)).toEqual([]);
  });

  it('organization Owners and Admins who are members of the team rate themselves', async () => {
    const { team, admin, person } = await createMeetingWorld(app.db);
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id, { status: 'IN_PROGRESS', startedAt: new Date() });
    for (const caller of [await person('OWNER', 'MEMBER'), await person('ADMIN', 'VIEWER')]) {
      expect((await rateMe(meeting.id, caller.key, { rating: 8 })).status).toBe(200);
    }
  });

  it('a SCHEDULED meeting cannot be rated by anyone, team Admins included: 409 ratingClosed', async () => {
    const { team, admin, member, person } = await createMeetingWorld(app.db);
    const owner = await person('OWNER', 'OWNER');
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id);

    for (const caller of [member, admin, owner]) expectRatingClosed(await rateMe(meeting.id, caller.key, { rating: 8 }));
    expect(await ratingsOf(meeting.id)).toEqual([]);
  });

  it('checks in the documented order: format, visibility, suspension, permission, then the meeting’s state', async () => {
    const { team, admin, viewer, person } = await createMeetingWorld(app.db);
    const orgMember = await person('MEMBER');
    const scheduled = await createMeetingIn(app.db, team.id, admin.user.id);

    expectRuleViolation(await rateMe(scheduled.id, orgMember.key, { rating: 11 }));
    expect((await rateMe(scheduled.id, orgMember.key, { rating: 8 })).status).toBe(404);
    expect((await rateMe(scheduled.id, viewer.key, { rating: 8 })).status).toBe(403);
    expectRatingClosed(await rateMe(scheduled.id, admin.key, { rating: 8 }));
  });

  it('an invisible or unknown meeting is 404; a suspended organization 409 orgSuspended', async () => {
    const { team, admin, person } = await createMeetingWorld(app.db);
    const orgMember = await person('MEMBER');
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id, { status: 'IN_PROGRESS', startedAt: new Date() });
    expect((await rateMe(meeting.id, orgMember.key, { rating: 8 })).status).toBe(404);
    expect((await rateMe('00000000-0000-4000-8000-000000000000', admin.key, { rating: 8 })).status).toBe(404);

    const suspended = await createMeetingWorld(app.db, { suspended: true });
    const frozen = await createMeetingIn(app.db, suspended.team.id, suspended.admin.user.id, { status: 'IN_PROGRESS', startedAt: new Date() });
    const response = await rateMe(frozen.id, suspended.member.key, { rating: 8 });
    expect([response.status, response.body.error.code]).toEqual([409, 'orgSuspended']);
  });

  it('many simultaneous ratings of one meeting keep exactly one rating per person', async () => {
    const { team, admin, member, person } = await createMeetingWorld(app.db);
    const others = [await person('MEMBER', 'MEMBER'), await person('MEMBER', 'MEMBER'), await person('MEMBER', 'ADMIN')];
    const raters = [admin, member, ...others];
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id, { status: 'IN_PROGRESS', startedAt: new Date() });

    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, index) => rateMe(meeting.id, raters[index % raters.length]!.key, { rating: (index % 10) + 1 })),
    );

    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    const stored = await ratingsOf(meeting.id);
    expect(stored.map((row) => row.user_id).sort()).toEqual(raters.map((rater) => rater.user.id).sort());
  });
});

describe(`setting, deleting and marking absent a member’s rating (${databaseLabel})`, () => {
  async function setup() {
    const world = await createMeetingWorld(app.db);
    const meeting = await createMeetingIn(app.db, world.team.id, world.admin.user.id, { status: 'COMPLETED', startedAt: new Date() });
    return { ...world, meeting };
  }

  it('{rating} 1-10, alone or with absent false, sets the rating and marks the person present (200)', async () => {
    const { meeting, admin, member, viewer } = await setup();

    const alone = await rate(meeting.id, member.user.id, admin.key, { rating: 6 });
    const withAbsentFalse = await rate(meeting.id, viewer.user.id, admin.key, { rating: 10, absent: false });

    expect(alone.body).toEqual({ userId: member.user.id, rating: 6, absent: false });
    expect(withAbsentFalse.body).toEqual({ userId: viewer.user.id, rating: 10, absent: false });
    expect([alone.status, withAbsentFalse.status]).toEqual([200, 200]);
  });

  it('{absent: true} marks absent with rating 0, and absent members are left out of the average', async () => {
    const { meeting, admin, member, viewer } = await setup();
    await createRating(app.db, meeting.id, member.user.id, 9);
    await createRating(app.db, meeting.id, viewer.user.id, 4);

    const response = await rate(meeting.id, viewer.user.id, admin.key, { absent: true });

    expect([response.status, response.body]).toEqual([200, { userId: viewer.user.id, rating: 0, absent: true }]);
    const detail = await app.request('GET', `/v1/meetings/${meeting.id}`, { key: member.key });
    expect(detail.body.rating).toEqual({ average: 9, ratedCount: 1, absentCount: 1 });
  });

  it('{rating: 0} deletes the rating (present, unrated): 204, and deleting again changes nothing', async () => {
    const { meeting, admin, member } = await setup();
    await createRating(app.db, meeting.id, member.user.id, 9);

    const deleted = await rate(meeting.id, member.user.id, admin.key, { rating: 0 });
    const again = await rate(meeting.id, member.user.id, admin.key, { rating: 0, absent: false });

    expect([deleted.status, deleted.text, again.status]).toEqual([204, '', 204]);
    expect(await ratingsOf(meeting.id)).toEqual([]);
  });

  it('an empty body, absent false alone, rating with absent true, or an unknown field is a format error; nothing changes', async () => {
    const { meeting, admin, member } = await setup();
    await createRating(app.db, meeting.id, member.user.id, 9);

    for (const body of [{}, { absent: false }, { rating: 5, absent: true }, { rating: 0, absent: true }, { rating: 5, comment: 'x' }, { absent: true, note: 'x' }, { rating: '5' }]) {
      expectFormatError(await rate(meeting.id, member.user.id, admin.key, body));
    }
    for (const rating of [11, 7.5, -1]) expectRuleViolation(await rate(meeting.id, member.user.id, admin.key, { rating }));
    expect(await ratingsOf(meeting.id)).toEqual([{ user_id: member.user.id, rating: 9, absent: false }]);
  });

  it('the person must be a member of the meeting’s team (422), organization members outside it included', async () => {
    const { meeting, admin, person } = await setup();
    const orgAdmin = await person('ADMIN');
    for (const userId of [orgAdmin.user.id, '00000000-0000-4000-8000-000000000000']) {
      expectRuleViolation(await rate(meeting.id, userId, admin.key, { rating: 8 }));
    }
    expect(await ratingsOf(meeting.id)).toEqual([]);
  });

  it('organization Owners, Admins and Implementers outside the team may set ratings; team Members and Viewers get 403', async () => {
    const { meeting, member, viewer, person } = await setup();
    for (const role of ['OWNER', 'ADMIN', 'IMPLEMENTER'] as const) {
      expect((await rate(meeting.id, member.user.id, (await person(role)).key, { rating: 7 })).status).toBe(200);
    }
    for (const caller of [member, viewer]) expect((await rate(meeting.id, member.user.id, caller.key, { rating: 7 })).status).toBe(403);
  });

  it('a SCHEDULED meeting cannot be rated (409 ratingClosed), whoever asks, and this is checked before the person', async () => {
    const { team, admin, member, person } = await createMeetingWorld(app.db);
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id);
    const orgOwner = await person('OWNER');
    for (const body of [{ rating: 8 }, { absent: true }, { rating: 0 }]) {
      expectRatingClosed(await rate(meeting.id, member.user.id, orgOwner.key, body));
    }
    expectRatingClosed(await rate(meeting.id, orgOwner.user.id, orgOwner.key, { rating: 8 }));
    expect((await rate(meeting.id, member.user.id, member.key, { rating: 8 })).status).toBe(403);
    expect(await ratingsOf(meeting.id)).toEqual([]);
  });
});

describe(`the rating window (${databaseLabel})`, () => {
  it('a meeting started live is open to team Members for 7 days from its start, then closed to them but not to Admins', async () => {
    const { team, admin, member, person } = await createMeetingWorld(app.db);
    const orgOwnerInTeam = await person('OWNER', 'MEMBER');
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id, { createdAt: at('2026-11-09T10:00:00.000Z') });
    const start = at('2026-11-16T08:00:00.000Z');
    const closesAt = at('2026-11-23T08:00:00.000Z');
    clock = start;
    await app.request('PATCH', `/v1/meetings/${meeting.id}`, { key: admin.key, body: { status: 'IN_PROGRESS' } });

    clock = shift(closesAt, -1);
    expect((await app.request('GET', `/v1/meetings/${meeting.id}`, { key: member.key })).body.ratingWindow).toEqual({
      open: true,
      closesAt: closesAt.toISOString(),
    });
    expect((await rateMe(meeting.id, member.key, { rating: 7 })).status).toBe(200);

    clock = closesAt;
    expect((await app.request('GET', `/v1/meetings/${meeting.id}`, { key: member.key })).body.ratingWindow).toEqual({
      open: false,
      closesAt: closesAt.toISOString(),
    });
    expectRatingClosed(await rateMe(meeting.id, member.key, { rating: 8 }));
    expect((await rateMe(meeting.id, admin.key, { rating: 8 })).status).toBe(200);
    expect((await rateMe(meeting.id, orgOwnerInTeam.key, { rating: 9 })).status).toBe(200);
    expect((await rate(meeting.id, member.user.id, admin.key, { rating: 6 })).status).toBe(200);
  });

  it('the window closes as the team’s next meeting starts, when that is within the 7 days', async () => {
    const { team, admin, member } = await createMeetingWorld(app.db);
    const first = await createMeetingIn(app.db, team.id, admin.user.id, { createdAt: at('2026-11-01T10:00:00.000Z') });
    const next = await createMeetingIn(app.db, team.id, admin.user.id, { createdAt: at('2026-11-01T10:00:00.000Z') });
    clock = at('2026-11-16T08:00:00.000Z');
    await app.request('PATCH', `/v1/meetings/${first.id}`, { key: admin.key, body: { status: 'IN_PROGRESS' } });
    clock = at('2026-11-16T09:30:00.000Z');
    await app.request('PATCH', `/v1/meetings/${first.id}`, { key: admin.key, body: { status: 'COMPLETED' } });
    const nextStart = at('2026-11-19T08:00:00.000Z');
    clock = nextStart;
    await app.request('PATCH', `/v1/meetings/${next.id}`, { key: admin.key, body: { status: 'IN_PROGRESS' } });

    clock = shift(nextStart, -1);
    expect((await rateMe(first.id, member.key, { rating: 7 })).status).toBe(200);
    expect((await app.request('GET', `/v1/meetings/${first.id}`, { key: member.key })).body.ratingWindow).toEqual({
      open: true,
      closesAt: nextStart.toISOString(),
    });
    clock = nextStart;
    expectRatingClosed(await rateMe(first.id, member.key, { rating: 8 }));
    expect((await app.request('GET', `/v1/meetings/${first.id}`, { key: member.key })).body.ratingWindow.open).toBe(false);
    expect((await rateMe(next.id, member.key, { rating: 8 })).status).toBe(200);
  });

  it('a next meeting starting after the 7 days does not extend the window', async () => {
    const { team, admin, member } = await createMeetingWorld(app.db);
    const start = at('2026-11-02T08:00:00.000Z');
    const meeting = await createMeetingIn(app.db, team.id, admin.user.id, { status: 'COMPLETED', startedAt: start, createdAt: at('2026-10-30T08:00:00.000Z') });
    await createMeetingIn(app.db, team.id, admin.user.id, { status: 'COMPLETED', startedAt: shift(start, 10 * DAY), createdAt: at('2026-10-30T08:00:00.000Z') });

    clock = shift(start, 7 * DAY);
    const window = (await app.request('GET', `/v1/meetings/${meeting.id}`, { key: member.key })).body.ratingWindow;
    expect(window).toEqual({ open: false, closesAt: shift(start, 7 * DAY).toISOString() });
    expectRatingClosed(await rateMe(meeting.id, member.key, { rating: 8 }));
  });

  it('a meeting recorded after the fact is open for 7 days from the moment it was entered', async () => {
    const { team, admin, member } = await createMeetingWorld(app.db);
    const entered = at('2026-11-18T17:30:00.000Z');
    clock = entered;
    const recorded = await app.request('POST', `/v1/teams/${team.id}/meetings`, {
      key: admin.key,
      body: { startedAt: '2026-11-16T08:00:00Z', durationMin: 88 },
    });
    const closesAt = shift(entered, 7 * DAY);

    clock = shift(closesAt, -1);
    expect((await app.request('GET', `/v1/meetings/${recorded.body.id}`, { key: member.key })).body.ratingWindow).toEqual({
      open: true,
      closesAt: closesAt.toISOString(),
    });
    expect((await rateMe(recorded.body.id, member.key, { rating: 8 })).status).toBe(200);
    clock = closesAt;
    expectRatingClosed(await rateMe(recorded.body.id, member.key, { rating: 9 }));
  });
});

describe(`hidden ratings (${databaseLabel})`, () => {
  async function runningMeeting() {
    const world = await createMeetingWorld(app.db);
    const other = await world.person('MEMBER', 'MEMBER');
    const meeting = await createMeetingIn(app.db, world.team.id, world.admin.user.id, { status: 'IN_PROGRESS', startedAt: new Date() });
    await rateMe(meeting.id, world.member.key, { rating: 9 });
    await rateMe(meeting.id, other.key, { rating: 6 });
    return { ...world, other, meeting };
  }

  it('while a meeting runs, a Member sees only their own rating and no average; an Admin who has not rated sees none', async () => {
    const { meeting, member, admin } = await runningMeeting();

    const asMember = await app.request('GET', `/v1/meetings/${meeting.id}`, { key: member.key });
    const asAdmin = await app.request('GET', `/v1/meetings/${meeting.id}`, { key: admin.key });

    expect(asMember.body).toMatchObject({
      ratingsHidden: true,
      ratings: [{ userId: member.user.id, rating: 9, absent: false }],
      rating: { average: null, ratedCount: 2, absentCount: 0 },
    });
    expect(asAdmin.body).toMatchObject({ ratingsHidden: true, ratings: [], rating: { average: null, ratedCount: 2, absentCount: 0 } });
  });

  it('POST /meetings/{id}/reveal-ratings by a team Admin shows every rating and the average to everyone', async () => {
    const { meeting, member, admin, other } = await runningMeeting();

    const revealed = await app.request('POST', `/v1/meetings/${meeting.id}/reveal-ratings`, { key: admin.key });
    expect(revealed.status).toBe(200);
    expect(revealed.body).toMatchObject({ id: meeting.id, status: 'IN_PROGRESS', ratingsHidden: false, rating: { average: 7.5, ratedCount: 2 } });
    expect(revealed.body.ratings).toHaveLength(2);

    const asMember = await app.request('GET', `/v1/meetings/${meeting.id}`, { key: member.key });
    expect(asMember.body.ratings).toEqual([
      { userId: member.user.id, rating: 9, absent: false },
      { userId: other.user.id, rating: 6, absent: false },
    ]);
    await rateMe(meeting.id, admin.key, { rating: 10 });
    const after = await app.request('GET', `/v1/meetings/${meeting.id}`, { key: member.key });
    expect(after.body.ratings).toHaveLength(3);
    const again = await app.request('POST', `/v1/meetings/${meeting.id}/reveal-ratings`, { key: admin.key });
    expect([again.status, again.body.ratingsHidden]).toEqual([200, false]);
  });

  it('team Members cannot reveal (403) and the ratings stay hidden', async () => {
    const { meeting, member } = await runningMeeting();
    expect((await app.request('POST', `/v1/meetings/${meeting.id}/reveal-ratings`, { key: member.key })).status).toBe(403);
    expect((await app.request('GET', `/v1/meetings/${meeting.id}`, { key: member.key })).body.ratingsHidden).toBe(true);
  });

  it('completing the meeting shows all ratings; revealing a completed meeting changes nothing; a SCHEDULED one is a rule violation', async () => {
    const { team, meeting, admin, member } = await runningMeeting();
    await app.request('PATCH', `/v1/meetings/${meeting.id}`, { key: admin.key, body: { status: 'COMPLETED' } });

    const completed = await app.request('GET', `/v1/meetings/${meeting.id}`, { key: member.key });
    expect(completed.body).toMatchObject({ ratingsHidden: false, rating: { average: 7.5 } });
    expect(completed.body.ratings).toHaveLength(2);
    const before = await app.db.selectFrom('meetings').selectAll().where('id', '=', meeting.id).executeTakeFirstOrThrow();
    const revealed = await app.request('POST', `/v1/meetings/${meeting.id}/reveal-ratings`, { key: admin.key });
    expect([revealed.status, revealed.body.ratingsHidden]).toEqual([200, false]);
    expect(await app.db.selectFrom('meetings').selectAll().where('id', '=', meeting.id).executeTakeFirstOrThrow()).toEqual(before);

    const scheduled = await createMeetingIn(app.db, team.id, admin.user.id);
    expectRuleViolation(await app.request('POST', `/v1/meetings/${scheduled.id}/reveal-ratings`, { key: admin.key }));
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPeopleReview } from './support/areaFactories.js';
import { databaseLabel } from './support/database.js';
import { expectNow } from './support/expectations.js';
import { expectPagesAsMapped, trickyInstants, trickyTexts } from './support/jsonBodies.js';
import { toPeopleReview } from '../src/records/peopleReviews.js';
import { createCaller, createTeam, createTeamWorld } from './support/factories.js';
import { walkPages } from './support/pages.js';
import { startTestApp, type TestApp } from './support/testApp.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const unknownId = '00000000-0000-4000-8000-000000000000';

/** An organization with one team: a team Admin, two team Members and a team Viewer. */
async function setup(options: { suspended?: boolean } = {}) {
  const world = await createTeamWorld(app.db, options);
  return {
    ...world,
    admin: await world.person('MEMBER', 'ADMIN'),
    member: await world.person('MEMBER', 'MEMBER'),
    colleague: await world.person('MEMBER', 'MEMBER'),
    viewer: await world.person('MEMBER', 'VIEWER'),
  };
}

const reviewsOf = (teamId: string) => app.db.selectFrom('people_reviews').selectAll().where('team_id', '=', teamId).execute();

const scores = { 'Deliver on our promises': true, 'Do the right thing': true, 'Help first': true, 'Grow or die': false };
const gwc = { getsIt: true, wantsIt: true, capacityToDoIt: false };
const reviewOf = (userId: string, extra: Record<string, unknown> = {}) => ({ userId, quarter: '2026-Q4', coreValuesScores: scores, gwc, ...extra });

describe(`writing people reviews (${databaseLabel})`, () => {
  it('PUT /teams/{teamId}/people-reviews saves the caller\'s review of a team member, the caller as evaluator, notes trimmed', async () => {
    const { team, member, colleague } = await setup();

    const before = Date.now();
    const response = await app.request('PUT', `/v1/teams/${team.id}/people-reviews`, {
      key: member.key,
      body: reviewOf(colleague.user.id, { notes: '  Strong with existing customers. ', evaluatorId: unknownId }),
    });
    const after = Date.now();

    expect(response.status).toBe(200);
    const [stored] = await reviewsOf(team.id);
    expect(response.body).toEqual({
      id: stored!.id,
      revision: expect.any(Number),
      teamId: team.id,
      userId: colleague.user.id,
      evaluatorId: member.user.id,
      quarter: '2026-Q4',
      coreValuesScores: scores,
      gwc,
      notes: 'Strong with existing customers.',
      updatedAt: stored!.updated_at.toISOString(),
    });
    expectNow(response.body.updatedAt, before, after);
  });

  it('a second PUT for the same person, evaluator and quarter replaces the whole review: same id, notes left out become null', async () => {
    const { team, member, colleague } = await setup();
    const first = await app.request('PUT', `/v1/teams/${team.id}/people-reviews`, { key: member.key, body: reviewOf(colleague.user.id, { notes: 'First take.' }) });

    const second = await app.request('PUT', `/v1/teams/${team.id}/people-reviews`, {
      key: member.key,
      body: reviewOf(colleague.user.id, { coreValuesScores: { 'Help first': false }, gwc: { getsIt: false, wantsIt: false, capacityToDoIt: true } }),
    });

    expect(second.status).toBe(200);
    expect(second.body).toEqual({
      ...first.body,
      revision: expect.any(Number),
      coreValuesScores: { 'Help first': false },
      gwc: { getsIt: false, wantsIt: false, capacityToDoIt: true },
      notes: null,
      updatedAt: second.body.updatedAt,
    });
    expect(Date.parse(second.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(first.body.updatedAt));
    expect(await reviewsOf(team.id)).toHaveLength(1);
  });

  it('another evaluator, another quarter or another person makes another review; a member may review themselves', async () => {
    const { team, admin, member, colleague } = await setup();

    const bodies = [
      [member, reviewOf(colleague.user.id)],
      [admin, reviewOf(colleague.user.id)],
      [member, reviewOf(colleague.user.id, { quarter: '2026-Q3' })],
      [member, reviewOf(admin.user.id)],
      [member, reviewOf(member.user.id)],
    ] as const;
    for (const [caller, body] of bodies) {
      expect((await app.request('PUT', `/v1/teams/${team.id}/people-reviews`, { key: caller.key, body })).status).toBe(200);
    }
    expect(await reviewsOf(team.id)).toHaveLength(bodies.length);
  });

  it('concurrent PUTs of the same review leave exactly one review, holding one of the bodies sent', async () => {
    const { team, member, colleague } = await setup();
    const notes = Array.from({ length: 8 }, (_, index) => `Take ${index + 1}`);

    const responses = await Promise.all(
      notes.map((note) => app.request('PUT', `/v1/teams/${team.id}/people-reviews`, { key: member.key, body: reviewOf(colleague.user.id, { notes: note }) })),
    );

    expect(responses.map((response) => response.status)).toEqual(notes.map(() => 200));
    expect(new Set(responses.map((response) => response.body.id)).size).toBe(1);
    const stored = await reviewsOf(team.id);
    expect(stored).toHaveLength(1);
    expect(notes).toContain(stored[0]!.notes);
  });

  it('empty notes, or notes of spaces, or null, save no notes', async () => {
    const { team, member, colleague } = await setup();

    for (const notes of ['', '   ', null]) {
      const response = await app.request('PUT', `/v1/teams/${team.id}/people-reviews`, { key: member.key, body: reviewOf(colleague.user.id, { notes }) });
      expect(response.status).toBe(200);
      expect(response.body.notes).toBeNull();
    }
  });

  it('a reviewed person outside the team is a rule violation (422 without issues) and nothing is stored', async () => {
    const { org, team, member, person } = await setup();
    const orgAdmin = await person('ADMIN');
    const elsewhere = await createTeam(app.db, org.id);

    for (const userId of [orgAdmin.user.id, unknownId]) {
      const response = await app.request('PUT', `/v1/teams/${team.id}/people-reviews`, { key: member.key, body: reviewOf(userId) });
      expect(response.status).toBe(422);
      expect(response.body.error.code).toBe('invalid');
      expect(response.body.error.issues).toBeUndefined();
    }
    expect(await reviewsOf(team.id)).toEqual([]);
    expect(await reviewsOf(elsewhere.id)).toEqual([]);
  });

  it('a missing or mistyped field, a gwc missing one of its booleans or a malformed quarter is a format error on that field', async () => {
    const { team, member, colleague } = await setup();
    const base = reviewOf(colleague.user.id);

    const cases: [Record<string, unknown>, string[]][] = [
      [{ ...base, gwc: undefined }, ['gwc']],
      [{ ...base, gwc: { getsIt: true, wantsIt: true } }, ['gwc', 'capacityToDoIt']],
      [{ ...base, gwc: { ...gwc, getsIt: 'yes' } }, ['gwc', 'getsIt']],
      [{ ...base, coreValuesScores: { 'Help first': 1 } }, ['coreValuesScores', 'Help first']],
      [{ ...base, coreValuesScores: ['Help first'] }, ['coreValuesScores']],
      [{ ...base, quarter: '2026-Q5' }, ['quarter']],
      [{ ...base, quarter: undefined }, ['quarter']],
      [{ ...base, userId: undefined }, ['userId']],
      [{ ...base, notes: 7 }, ['notes']],
    ];
    for (const [body, path] of cases) {
      const response = await app.request('PUT', `/v1/teams/${team.id}/people-reviews`, { key: member.key, body });
      expect(response.status, JSON.stringify(body)).toBe(422);
      expect(response.body.error.issues.map((issue: { path: string[] }) => issue.path), JSON.stringify(body)).toEqual([path]);
    }
    expect(await reviewsOf(team.id)).toEqual([]);
  });

  it('at most 50 core values with names of 1-200 characters and notes of at most 5000; beyond is a rule violation', async () => {
    const { team, member, colleague } = await setup();
    const values = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, index) => [`Value ${index + 1}`, index % 2 === 0]));

    for (const extra of [{ coreValuesScores: values(51) }, { coreValuesScores: { ['x'.repeat(201)]: true } }, { coreValuesScores: { '': true } }, { notes: 'x'.repeat(5001) }]) {
      const response = await app.request('PUT', `/v1/teams/${team.id}/people-reviews`, { key: member.key, body: reviewOf(colleague.user.id, extra) });
      expect(response.status).toBe(422);
      expect(response.body.error.code).toBe('invalid');
      expect(response.body.error.issues).toBeUndefined();
    }
    expect(await reviewsOf(team.id)).toEqual([]);

    const largest = await app.request('PUT', `/v1/teams/${team.id}/people-reviews`, {
      key: member.key,
      body: reviewOf(colleague.user.id, { coreValuesScores: { ...values(49), ['x'.repeat(200)]: true }, notes: 'x'.repeat(5000) }),
    });
    expect(largest.status).toBe(200);
    expect(Object.keys(largest.body.coreValuesScores)).toHaveLength(50);
    const none = await app.request('PUT', `/v1/teams/${team.id}/people-reviews`, { key: member.key, body: reviewOf(colleague.user.id, { coreValuesScores: {} }) });
    expect(none.body.coreValuesScores).toEqual({});
  });

  it('organization Implementers write reviews; team Viewers and callers who cannot see the team get 403; an unknown team 404', async () => {
    const { team, member, viewer, person } = await setup();
    const implementer = await person('IMPLEMENTER');
    const orgMember = await person('MEMBER');
    const outsider = await createCaller(app.db);

    for (const caller of [viewer, orgMember, outsider]) {
      const response = await app.request('PUT', `/v1/teams/${team.id}/people-reviews`, { key: caller.key, body: reviewOf(member.user.id) });
      expect(response.status).toBe(403);
      expect(response.body.error.code).toBe('forbidden');
    }
    expect((await app.request('PUT', `/v1/teams/${unknownId}/people-reviews`, { key: member.key, body: reviewOf(member.user.id) })).status).toBe(404);
    expect(await reviewsOf(team.id)).toEqual([]);

    const response = await app.request('PUT', `/v1/teams/${team.id}/people-reviews`, { key: implementer.key, body: reviewOf(member.user.id) });
    expect(response.status).toBe(200);
    expect(response.body.evaluatorId).toBe(implementer.user.id);
  });

  it('in a suspended organization a review gives 409 orgSuspended, before the reviewed person is checked', async () => {
    const { team, member } = await setup({ suspended: true });

    for (const userId of [member.user.id, unknownId]) {
      const response = await app.request('PUT', `/v1/teams/${team.id}/people-reviews`, { key: member.key, body: reviewOf(userId) });
      expect(response.status).toBe(409);
      expect(response.body.error.code).toBe('orgSuspended');
    }
    expect(await reviewsOf(team.id)).toEqual([]);
  });
});

describe(`listing people reviews (${databaseLabel})`, () => {
  /** Reviews among admin, member, colleague and viewer over two quarters. */
  async function reviewedTeam() {
    const world = await setup();
    const { team, admin, member, colleague, viewer } = world;
    const review = (userId: string, evaluatorId: string, quarter = '2026-Q4') => createPeopleReview(app.db, team.id, userId, evaluatorId, { quarter });
    const reviews = {
      adminOnMember: await review(member.user.id, admin.user.id),
      memberOnColleague: await review(colleague.user.id, member.user.id),
      colleagueOnViewer: await review(viewer.user.id, colleague.user.id),
      adminOnColleague: await review(colleague.user.id, admin.user.id),
      adminOnMemberEarlier: await review(member.user.id, admin.user.id, '2026-Q3'),
      colleagueOnAdminEarlier: await review(admin.user.id, colleague.user.id, '2025-Q4'),
    };
    return { ...world, reviews };
  }

  /** Ids in the list order: newest quarter first, then reviewed person, then evaluator. */
  const inListOrder = (rows: { id: string; quarter: string; user_id: string; evaluator_id: string }[]) =>
    [...rows]
      .sort((a, b) => (a.quarter !== b.quarter ? (a.quarter < b.quarter ? 1 : -1) : a.user_id !== b.user_id ? (a.user_id < b.user_id ? -1 : 1) : a.evaluator_id < b.evaluator_id ? -1 : 1))
      .map((row) => row.id);

  it('team Admins get every review of the team, newest quarter first, then by reviewed person and evaluator, in the full shape', async () => {
    const { org, team, admin, member, reviews } = await reviewedTeam();
    await createPeopleReview(app.db, (await createTeam(app.db, org.id)).id, member.user.id, admin.user.id);

    const response = await app.request('GET', `/v1/teams/${team.id}/people-reviews`, { key: admin.key });

    expect(response.status).toBe(200);
    expect(response.body.data.map((review: { id: string }) => review.id)).toEqual(inListOrder(Object.values(reviews)));
    expect(response.body.nextCursor).toBeNull();
    const first = reviews.adminOnMemberEarlier;
    expect(response.body.data.find((review: { id: string }) => review.id === first.id)).toEqual({
      id: first.id,
      revision: expect.any(Number),
      teamId: team.id,
      userId: member.user.id,
      evaluatorId: admin.user.id,
      quarter: '2026-Q3',
      coreValuesScores: { 'Deliver on our promises': true, 'Grow or die': false },
      gwc: { getsIt: true, wantsIt: true, capacityToDoIt: false },
      notes: null,
      updatedAt: first.updated_at.toISOString(),
    });
  });

  it('team Owners and the organization\'s Owners, Admins and Implementers see every review too', async () => {
    const { team, person, reviews } = await reviewedTeam();

    for (const caller of [await person('MEMBER', 'OWNER'), await person('OWNER'), await person('ADMIN'), await person('IMPLEMENTER')]) {
      const response = await app.request('GET', `/v1/teams/${team.id}/people-reviews`, { key: caller.key });
      expect(response.body.data.map((review: { id: string }) => review.id)).toEqual(inListOrder(Object.values(reviews)));
    }
  });

  it('team Members and Viewers see only the reviews they wrote and those about themselves', async () => {
    const { team, member, colleague, viewer, reviews } = await reviewedTeam();
    const ids = async (key: string) => (await app.request('GET', `/v1/teams/${team.id}/people-reviews`, { key })).body.data.map((review: { id: string }) => review.id);

    expect(await ids(member.key)).toEqual(inListOrder([reviews.adminOnMember, reviews.memberOnColleague, reviews.adminOnMemberEarlier]));
    expect(await ids(colleague.key)).toEqual(
      inListOrder([reviews.memberOnColleague, reviews.colleagueOnViewer, reviews.adminOnColleague, reviews.colleagueOnAdminEarlier]),
    );
    expect(await ids(viewer.key)).toEqual([reviews.colleagueOnViewer.id]);
  });

  it('the quarter filter combines with visibility and with pagination', async () => {
    const { team, admin, member, reviews } = await reviewedTeam();

    const all = await walkPages<{ id: string }>(app, `/v1/teams/${team.id}/people-reviews?quarter=2026-Q4`, admin.key, { limit: 1 });
    expect(all.sizes).toEqual([1, 1, 1, 1]);
    expect(all.items.map((review) => review.id)).toEqual(inListOrder([reviews.adminOnMember, reviews.memberOnColleague, reviews.colleagueOnViewer, reviews.adminOnColleague]));
    const mine = await walkPages<{ id: string }>(app, `/v1/teams/${team.id}/people-reviews?quarter=2026-Q3`, member.key, { limit: 1 });
    expect(mine.items.map((review) => review.id)).toEqual([reviews.adminOnMemberEarlier.id]);
    const none = await app.request('GET', `/v1/teams/${team.id}/people-reviews?quarter=2024-Q1`, { key: admin.key });
    expect(none.body).toEqual({ data: [], nextCursor: null });
  });

  it('a walk with limit 7 over 40 reviews across quarters returns each exactly once, in order', async () => {
    const { team, admin, person } = await setup();
    const people = [admin, ...(await Promise.all([1, 2, 3].map(() => person('MEMBER', 'MEMBER'))))];
    const created = [];
    for (const [index, quarter] of ['2025-Q4', '2026-Q1', '2026-Q2', '2026-Q3'].entries()) {
      for (const subject of people) {
        for (const evaluator of people.slice(0, index === 0 ? 1 : 3)) created.push(await createPeopleReview(app.db, team.id, subject.user.id, evaluator.user.id, { quarter }));
      }
    }

    const { items } = await walkPages<{ id: string }>(app, `/v1/teams/${team.id}/people-reviews`, admin.key, { limit: 7 });

    expect(items.map((review) => review.id)).toEqual(inListOrder(created));
  });

  it('GET /teams/{teamId}/people-reviews answers byte for byte what toPeopleReview writes', async () => {
    const { team, admin, member, colleague, viewer } = await setup();
    const people = [admin, member, colleague, viewer];
    // Core value names as keys: JSON's escapes, and array-index keys, which JavaScript orders first.
    const scoreSets: Record<string, boolean>[] = [
      Object.fromEntries(trickyTexts.map((text, index) => [text, index % 2 === 0])),
      { 'Grow or die': true, 10: false, 2: true, 0: true, '01': false, 4294967295: true, 4294967294: false, '-1': true },
      {},
    ];
    let index = 0;
    for (const quarter of ['2026-Q4', '2026-Q3']) {
      for (const subject of people) {
        for (const evaluator of people.slice(0, 2)) {
          await createPeopleReview(app.db, team.id, subject.user.id, evaluator.user.id, {
            quarter,
            coreValuesScores: scoreSets[index % scoreSets.length],
            gwc: { getsIt: index % 2 === 0, wantsIt: index % 3 === 0, capacityToDoIt: index % 4 === 0 },
            notes: index % 3 ? trickyTexts[index % trickyTexts.length] : null,
            updatedAt: trickyInstants[index % trickyInstants.length],
          });
          index += 1;
        }
      }
    }
    const rows = await app.db
      .selectFrom('people_reviews')
      .selectAll()
      .where('team_id', '=', team.id)
      .orderBy('quarter', 'desc')
      .orderBy('user_id')
      .orderBy('evaluator_id')
      .execute();
    const list = { map: toPeopleReview, cursorOf: (row: (typeof rows)[number]) => [row.quarter, row.user_id, row.evaluator_id] };
    const path = `/v1/teams/${team.id}/people-reviews`;
    const involving = (userId: string) => rows.filter((row) => row.user_id === userId || row.evaluator_id === userId);
    await expectPagesAsMapped(app, { ...list, path, key: admin.key, rows }, 5);
    await expectPagesAsMapped(app, { ...list, path: `${path}?quarter=2026-Q3`, key: admin.key, rows: rows.filter((row) => row.quarter === '2026-Q3') }, 3);
    await expectPagesAsMapped(app, { ...list, path, key: colleague.key, rows: involving(colleague.user.id) }, 2);
    await expectPagesAsMapped(app, { ...list, path: `${path}?quarter=2026-Q4`, key: member.key, rows: involving(member.user.id).filter((row) => row.quarter === '2026-Q4') }, 2);
  });

  it('callers who cannot see the team get 403, an unknown team 404, a malformed quarter or cursor 422', async () => {
    const { team, member, person } = await setup();
    const orgMember = await person('MEMBER');
    const outsider = await createCaller(app.db);

    for (const caller of [orgMember, outsider]) {
      const response = await app.request('GET', `/v1/teams/${team.id}/people-reviews`, { key: caller.key });
      expect(response.status).toBe(403);
      expect(response.body.error.code).toBe('forbidden');
    }
    expect((await app.request('GET', `/v1/teams/${unknownId}/people-reviews`, { key: member.key })).status).toBe(404);
    for (const query of ['quarter=2026-4', 'quarter=1999-Q1', 'cursor=abc', 'userId=x']) {
      const response = await app.request('GET', `/v1/teams/${team.id}/people-reviews?${query}`, { key: member.key });
      expect(response.status, query).toBe(422);
      expect(response.body.error.issues).toHaveLength(1);
    }
  });

  it('reads still work in a suspended organization', async () => {
    const { team, member } = await setup({ suspended: true });
    const review = await createPeopleReview(app.db, team.id, member.user.id, member.user.id);

    const response = await app.request('GET', `/v1/teams/${team.id}/people-reviews`, { key: member.key });

    expect(response.status).toBe(200);
    expect(response.body.data.map((item: { id: string }) => item.id)).toEqual([review.id]);
  });
});

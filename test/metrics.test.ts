import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toMetricValue } from '../src/records/metrics.js';
import { databaseLabel } from './support/database.js';
import { createTeamWorld } from './support/factories.js';
import { expectPagesAsMapped, trickyTexts } from './support/jsonBodies.js';
import { createMetric, createMetricValues } from './support/scorecardFactories.js';
import { startTestApp, type TestApp } from './support/testApp.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const unknownId = '00000000-0000-4000-8000-000000000000';

/** An organization with one team, a team Admin and a team Member. */
async function setup(options: { suspended?: boolean } = {}) {
  const world = await createTeamWorld(app.db, options);
  return { ...world, admin: await world.person('MEMBER', 'ADMIN'), member: await world.person('MEMBER', 'MEMBER') };
}

const metricsOf = (teamId: string) => app.db.selectFrom('metrics').selectAll().where('team_id', '=', teamId).orderBy('position').execute();
const valuesOf = (metricId: string) => app.db.selectFrom('metric_values').selectAll().where('metric_id', '=', metricId).orderBy('week').execute();
const titlesInOrder = async (teamId: string) => (await metricsOf(teamId)).map((metric) => `${metric.position}:${metric.title}`);

describe(`the Scorecard's metrics (${databaseLabel})`, () => {
  it('GET /teams/{teamId}/metrics returns every metric in Scorecard order, with nextCursor null', async () => {
    const { team, admin, member } = await setup();
    const first = await createMetric(app.db, team.id, member.user.id, { title: 'New qualified leads', description: 'First calls done' });
    const second = await createMetric(app.db, team.id, admin.user.id, { title: 'On-time delivery', goal: '>=95', unit: '%' });

    const response = await app.request('GET', `/v1/teams/${team.id}/metrics`, { key: member.key });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: [
        { id: first.id, revision: expect.any(Number), teamId: team.id, title: 'New qualified leads', goal: '>=25', ownerId: member.user.id, unit: null, description: 'First calls done', position: 1 },
        { id: second.id, revision: expect.any(Number), teamId: team.id, title: 'On-time delivery', goal: '>=95', ownerId: admin.user.id, unit: '%', description: null, position: 2 },
      ],
      nextCursor: null,
    });
  });

  it('POST /teams/{teamId}/metrics adds the metric at the end, texts trimmed, unit and description null when omitted', async () => {
    const { team, admin, member } = await setup();
    await createMetric(app.db, team.id, member.user.id);

    const response = await app.request('POST', `/v1/teams/${team.id}/metrics`, {
      key: admin.key,
      body: { title: '  Cash in the bank ', goal: ' >=50000 ', ownerId: member.user.id },
    });

    expect(response.status).toBe(201);
    const stored = (await metricsOf(team.id))[1]!;
    expect(response.body).toEqual({
      id: stored.id,
      revision: expect.any(Number),
      teamId: team.id,
      title: 'Cash in the bank',
      goal: '>=50000',
      ownerId: member.user.id,
      unit: null,
      description: null,
      position: 2,
    });
  });

  it('keeps the goal exactly as sent: the operator stays, a bare number stays bare, text stays text', async () => {
    const { team, admin } = await setup();
    const goals = ['25', '<= 3', '=0', '>=95 %', 'Keep customers happy'];

    const created = [];
    for (const goal of goals) {
      created.push(await app.request('POST', `/v1/teams/${team.id}/metrics`, { key: admin.key, body: { title: 'Metric', goal, ownerId: admin.user.id } }));
    }

    expect(created.map((response) => response.body.goal)).toEqual(goals);
    expect(created.map((response) => response.body.position)).toEqual([1, 2, 3, 4, 5]);
  });

  it('an empty unit or description on creation is stored as null', async () => {
    const { team, admin } = await setup();

    const response = await app.request('POST', `/v1/teams/${team.id}/metrics`, {
      key: admin.key,
      body: { title: 'Leads', goal: '10', ownerId: admin.user.id, unit: '  ', description: '' },
    });

    expect(response.status).toBe(201);
    expect([response.body.unit, response.body.description]).toEqual([null, null]);
  });

  it('an owner who is not a member of the team is refused with 422 invalid and nothing is added', async () => {
    const { team, admin, person } = await setup();
    const implementer = await person('IMPLEMENTER');

    const response = await app.request('POST', `/v1/teams/${team.id}/metrics`, {
      key: admin.key,
      body: { title: 'Leads', goal: '>=25', ownerId: implementer.user.id },
    });

    expect([response.status, response.body.error.code, response.body.error.issues]).toEqual([422, 'invalid', undefined]);
    expect(await metricsOf(team.id)).toEqual([]);
  });

  it.each([
    ['a title over 200 characters', { title: 'x'.repeat(201) }],
    ['a title empty after trimming', { title: '   ' }],
    ['an empty goal', { goal: '' }],
    ['a goal over 200 characters', { goal: `>=${'9'.repeat(199)}` }],
    ['a unit over 20 characters', { unit: 'u'.repeat(21) }],
    ['a description over 5000 characters', { description: 'd'.repeat(5001) }],
  ])('%s is a rule violation (422 invalid without issues) and adds nothing', async (_case, override) => {
    const { team, admin } = await setup();

    const response = await app.request('POST', `/v1/teams/${team.id}/metrics`, {
      key: admin.key,
      body: { title: 'Leads', goal: '>=25', ownerId: admin.user.id, ...override },
    });

    expect([response.status, response.body.error.code, response.body.error.issues]).toEqual([422, 'invalid', undefined]);
    expect(await metricsOf(team.id)).toEqual([]);
  });

  it('the limits themselves are allowed: title and goal of 200, unit of 20, description of 5000 characters', async () => {
    const { team, admin } = await setup();

    const response = await app.request('POST', `/v1/teams/${team.id}/metrics`, {
      key: admin.key,
      body: { title: 't'.repeat(200), goal: `>=${'9'.repeat(198)}`, ownerId: admin.user.id, unit: 'u'.repeat(20), description: 'd'.repeat(5000) },
    });

    expect(response.status).toBe(201);
  });

  it('a missing title, goal or owner is a format error that names each field', async () => {
    const { team, admin } = await setup();

    const response = await app.request('POST', `/v1/teams/${team.id}/metrics`, { key: admin.key, body: { unit: '%' } });

    expect(response.status).toBe(422);
    expect(response.body.error.issues.map((issue: { path: string[] }) => issue.path.join('.')).sort()).toEqual(['goal', 'ownerId', 'title']);
  });

  it('two metrics added at the same time take consecutive places', async () => {
    const { team, admin } = await setup();

    const responses = await Promise.all(
      Array.from({ length: 6 }, (_, index) =>
        app.request('POST', `/v1/teams/${team.id}/metrics`, { key: admin.key, body: { title: `Metric ${index}`, goal: '1', ownerId: admin.user.id } }),
      ),
    );

    expect(responses.map((response) => response.status)).toEqual([201, 201, 201, 201, 201, 201]);
    expect(responses.map((response) => response.body.position).sort()).toEqual([1, 2, 3, 4, 5, 6]);
  });
});

describe(`changing and moving metrics (${databaseLabel})`, () => {
  it('PATCH /metrics/{id} changes the fields sent and keeps the others', async () => {
    const { team, admin, member } = await setup();
    const metric = await createMetric(app.db, team.id, admin.user.id, { unit: '%', description: 'Old' });

    const response = await app.request('PATCH', `/v1/metrics/${metric.id}`, {
      key: admin.key,
      body: { title: ' Qualified leads ', goal: '>30', ownerId: member.user.id },
    });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id: metric.id,
      revision: expect.any(Number),
      teamId: team.id,
      title: 'Qualified leads',
      goal: '>30',
      ownerId: member.user.id,
      unit: '%',
      description: 'Old',
      position: 1,
    });
  });

  it('an empty string clears the unit, null clears the description', async () => {
    const { team, admin } = await setup();
    const metric = await createMetric(app.db, team.id, admin.user.id, { unit: '%', description: 'Old' });

    const response = await app.request('PATCH', `/v1/metrics/${metric.id}`, { key: admin.key, body: { unit: '', description: null } });

    expect([response.status, response.body.unit, response.body.description]).toEqual([200, null, null]);
  });

  it('direction up and down swap the metric with its neighbour', async () => {
    const { team, admin } = await setup();
    for (const title of ['A', 'B', 'C']) await createMetric(app.db, team.id, admin.user.id, { title });
    const [, b] = await metricsOf(team.id);

    const up = await app.request('PATCH', `/v1/metrics/${b!.id}`, { key: admin.key, body: { direction: 'up' } });
    expect([up.status, up.body.position]).toEqual([200, 1]);
    expect(await titlesInOrder(team.id)).toEqual(['1:B', '2:A', '3:C']);

    const down = await app.request('PATCH', `/v1/metrics/${b!.id}`, { key: admin.key, body: { direction: 'down' } });
    expect([down.status, down.body.position]).toEqual([200, 2]);
    expect(await titlesInOrder(team.id)).toEqual(['1:A', '2:B', '3:C']);
  });

  it('moving the first metric up or the last one down changes nothing and still answers 200', async () => {
    const { team, admin } = await setup();
    for (const title of ['A', 'B']) await createMetric(app.db, team.id, admin.user.id, { title });
    const [a, b] = await metricsOf(team.id);

    const top = await app.request('PATCH', `/v1/metrics/${a!.id}`, { key: admin.key, body: { direction: 'up' } });
    const bottom = await app.request('PATCH', `/v1/metrics/${b!.id}`, { key: admin.key, body: { direction: 'down' } });

    expect([top.status, top.body.position, bottom.status, bottom.body.position]).toEqual([200, 1, 200, 2]);
    expect(await titlesInOrder(team.id)).toEqual(['1:A', '2:B']);
  });

  it('a move together with other fields applies both', async () => {
    const { team, admin } = await setup();
    for (const title of ['A', 'B']) await createMetric(app.db, team.id, admin.user.id, { title });
    const [, b] = await metricsOf(team.id);

    const response = await app.request('PATCH', `/v1/metrics/${b!.id}`, { key: admin.key, body: { direction: 'up', title: 'B first' } });

    expect([response.status, response.body.title, response.body.position]).toEqual([200, 'B first', 1]);
    expect(await titlesInOrder(team.id)).toEqual(['1:B first', '2:A']);
  });

  it('a move together with an owner outside the team is refused whole: nothing moves, nothing changes', async () => {
    const { team, admin, person } = await setup();
    const outsideTeam = await person('MEMBER');
    for (const title of ['A', 'B']) await createMetric(app.db, team.id, admin.user.id, { title });
    const [, b] = await metricsOf(team.id);

    const response = await app.request('PATCH', `/v1/metrics/${b!.id}`, {
      key: admin.key,
      body: { direction: 'up', title: 'Moved', ownerId: outsideTeam.user.id },
    });

    expect([response.status, response.body.error.code]).toEqual([422, 'invalid']);
    expect(await titlesInOrder(team.id)).toEqual(['1:A', '2:B']);
  });

  it('other fields can still be changed after the owner has left the team', async () => {
    const { team, admin, member } = await setup();
    const metric = await createMetric(app.db, team.id, member.user.id);
    await app.db.deleteFrom('team_members').where('team_id', '=', team.id).where('user_id', '=', member.user.id).execute();

    const response = await app.request('PATCH', `/v1/metrics/${metric.id}`, { key: admin.key, body: { goal: '>=30' } });

    expect([response.status, response.body.goal, response.body.ownerId]).toEqual([200, '>=30', member.user.id]);
  });

  it('a PATCH with only unknown fields is empty: 422 with an issue, nothing changes', async () => {
    const { team, admin } = await setup();
    const metric = await createMetric(app.db, team.id, admin.user.id);

    const response = await app.request('PATCH', `/v1/metrics/${metric.id}`, { key: admin.key, body: { position: 5, name: 'x' } });

    expect([response.status, response.body.error.code]).toEqual([422, 'invalid']);
    expect(response.body.error.issues.length).toBeGreaterThan(0);
    expect((await metricsOf(team.id))[0]).toEqual(metric);
  });

  it('an unknown direction is a format error', async () => {
    const { team, admin } = await setup();
    const metric = await createMetric(app.db, team.id, admin.user.id);

    const response = await app.request('PATCH', `/v1/metrics/${metric.id}`, { key: admin.key, body: { direction: 'UP' } });

    expect(response.status).toBe(422);
    expect(response.body.error.issues[0]).toMatchObject({ path: ['direction'], code: 'invalid_value' });
  });

  it('an unknown metric gives 404', async () => {
    const { admin } = await setup();

    const response = await app.request('PATCH', `/v1/metrics/${unknownId}`, { key: admin.key, body: { title: 'x' } });

    expect([response.status, response.body.error.code]).toEqual([404, 'notFound']);
  });

  it('simultaneous moves of every metric keep the positions a gapless order', async () => {
    const { team, admin } = await setup();
    for (const title of ['A', 'B', 'C', 'D', 'E']) await createMetric(app.db, team.id, admin.user.id, { title });
    const metrics = await metricsOf(team.id);

    const responses = await Promise.all(
      metrics.flatMap((metric) => [
        app.request('PATCH', `/v1/metrics/${metric.id}`, { key: admin.key, body: { direction: 'up' } }),
        app.request('PATCH', `/v1/metrics/${metric.id}`, { key: admin.key, body: { direction: 'down' } }),
      ]),
    );

    expect(responses.every((response) => response.status === 200)).toBe(true);
    expect((await metricsOf(team.id)).map((metric) => metric.position)).toEqual([1, 2, 3, 4, 5]);
  });
});

describe(`deleting metrics (${databaseLabel})`, () => {
  it('DELETE /metrics/{id} removes the metric with all its values, and the metrics below move up', async () => {
    const { team, admin } = await setup();
    for (const title of ['A', 'B', 'C']) await createMetric(app.db, team.id, admin.user.id, { title });
    const [, b] = await metricsOf(team.id);
    await createMetricValues(app.db, b!.id, admin.user.id, '2026-11-02', 3);

    const response = await app.request('DELETE', `/v1/metrics/${b!.id}`, { key: admin.key });

    expect(response.status).toBe(204);
    expect(await titlesInOrder(team.id)).toEqual(['1:A', '2:C']);
    expect(await valuesOf(b!.id)).toEqual([]);
  });

  it('deleting the last metric and then adding one keeps the order gapless', async () => {
    const { team, admin } = await setup();
    for (const title of ['A', 'B']) await createMetric(app.db, team.id, admin.user.id, { title });
    const [, b] = await metricsOf(team.id);

    await app.request('DELETE', `/v1/metrics/${b!.id}`, { key: admin.key });
    const added = await app.request('POST', `/v1/teams/${team.id}/metrics`, { key: admin.key, body: { title: 'N', goal: '1', ownerId: admin.user.id } });

    expect(added.body.position).toBe(2);
    expect(await titlesInOrder(team.id)).toEqual(['1:A', '2:N']);
  });

  it('a deleted metric is gone: deleting it again gives 404', async () => {
    const { team, admin } = await setup();
    const metric = await createMetric(app.db, team.id, admin.user.id);

    await app.request('DELETE', `/v1/metrics/${metric.id}`, { key: admin.key });
    const again = await app.request('DELETE', `/v1/metrics/${metric.id}`, { key: admin.key });

    expect([again.status, again.body.error.code]).toEqual([404, 'notFound']);
  });
});

describe(`entering weekly values (${databaseLabel})`, () => {
  it('PUT /metrics/{id}/values/{week} stores the value and judges it against the goal', async () => {
    const { team, member } = await setup();
    const metric = await createMetric(app.db, team.id, member.user.id, { goal: '>=25' });

    const response = await app.request('PUT', `/v1/metrics/${metric.id}/values/2026-11-16`, { key: member.key, body: { value: ' 27 ' } });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ metricId: metric.id, revision: expect.any(Number), week: '2026-11-16', value: '27', onTrack: true, enteredById: member.user.id });
    expect(await valuesOf(metric.id)).toMatchObject([{ week: '2026-11-16', value: '27', on_track: true, entered_by_id: member.user.id }]);
  });

  it.each([
    ['>=100', '99,5', false],
    ['>=100', '100', true],
    ['>=95', '96,5 %', true],
    ['<3', '2.5', true],
    ['<=3', '4', false],
    ['=0', '0,0', true],
    ['25', '24', false],
    ['>1000000', '1 500 000', true],
    ['>=1000', '1.500.000', true],
  ])('with the goal %j the value %j is on track: %s', async (goal, value, onTrack) => {
    const { team, member } = await setup();
    const metric = await createMetric(app.db, team.id, member.user.id, { goal });

    const response = await app.request('PUT', `/v1/metrics/${metric.id}/values/2026-11-16`, { key: member.key, body: { value } });

    expect([response.status, response.body.onTrack]).toEqual([200, onTrack]);
  });

  it('a sent onTrack is used as given, even against the goal', async () => {
    const { team, member } = await setup();
    const metric = await createMetric(app.db, team.id, member.user.id, { goal: '>=25' });

    const response = await app.request('PUT', `/v1/metrics/${metric.id}/values/2026-11-16`, { key: member.key, body: { value: '10', onTrack: true } });

    expect([response.status, response.body.onTrack]).toEqual([200, true]);
  });

  it.each([
    ['text', '>=25', 'No data, CRM outage'],
    ['a number mixing both separators', '>=25', '1,234.5'],
    ['a single separator followed by three digits', '>=1000', '1,500'],
    ['any value of a goal without a number', 'Most weeks', '30'],
  ])('%s cannot be judged: without onTrack 422 and nothing stored, with it 200', async (_case, goal, value) => {
    const { team, member } = await setup();
    const metric = await createMetric(app.db, team.id, member.user.id, { goal });

    const refused = await app.request('PUT', `/v1/metrics/${metric.id}/values/2026-11-16`, { key: member.key, body: { value } });
    expect([refused.status, refused.body.error.code, refused.body.error.issues]).toEqual([422, 'invalid', undefined]);
    expect(await valuesOf(metric.id)).toEqual([]);

    const judged = await app.request('PUT', `/v1/metrics/${metric.id}/values/2026-11-16`, { key: member.key, body: { value, onTrack: false } });
    expect([judged.status, judged.body.value, judged.body.onTrack]).toEqual([200, value, false]);
  });

  it('the same request twice gives the same result and one stored week', async () => {
    const { team, member } = await setup();
    const metric = await createMetric(app.db, team.id, member.user.id);
    const put = () => app.request('PUT', `/v1/metrics/${metric.id}/values/2026-11-16`, { key: member.key, body: { value: '31' } });

    const first = await put();
    const second = await put();

    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.body).toEqual(first.body);
    expect(await valuesOf(metric.id)).toHaveLength(1);
  });

  it('a replacement changes the value and keeps enteredById of the first person who entered the week', async () => {
    const { team, admin, member } = await setup();
    const metric = await createMetric(app.db, team.id, member.user.id, { goal: '>=25' });

    await app.request('PUT', `/v1/metrics/${metric.id}/values/2026-11-16`, { key: member.key, body: { value: '31' } });
    const replaced = await app.request('PUT', `/v1/metrics/${metric.id}/values/2026-11-16`, { key: admin.key, body: { value: '20' } });

    expect(replaced.body).toEqual({ metricId: metric.id, revision: expect.any(Number), week: '2026-11-16', value: '20', onTrack: false, enteredById: member.user.id });
  });

  it('simultaneous PUTs of one week leave exactly one stored value, equal to one of them', async () => {
    const { team, member } = await setup();
    const metric = await createMetric(app.db, team.id, member.user.id);
    const values = ['21', '22', '23', '24', '25', '26', '27', '28'];

    const responses = await Promise.all(
      values.map((value) => app.request('PUT', `/v1/metrics/${metric.id}/values/2026-11-16`, { key: member.key, body: { value } })),
    );

    expect(responses.map((response) => response.status)).toEqual(values.map(() => 200));
    const stored = await valuesOf(metric.id);
    expect(stored).toHaveLength(1);
    expect(values).toContain(stored[0]!.value);
  });

  it('a week given by a day other than its Monday is a rule violation and stores nothing', async () => {
    const { team, member } = await setup();
    const metric = await createMetric(app.db, team.id, member.user.id);

    const response = await app.request('PUT', `/v1/metrics/${metric.id}/values/2026-11-18`, { key: member.key, body: { value: '31' } });

    expect([response.status, response.body.error.code, response.body.error.issues]).toEqual([422, 'invalid', undefined]);
    expect(await valuesOf(metric.id)).toEqual([]);
  });

  it.each([['2026-11-31'], ['2026-11-16T00:00:00Z'], ['16.11.2026'], ['2026-W47']])('the week %j is a format error', async (week) => {
    const { team, member } = await setup();
    const metric = await createMetric(app.db, team.id, member.user.id);

    const response = await app.request('PUT', `/v1/metrics/${metric.id}/values/${encodeURIComponent(week)}`, { key: member.key, body: { value: '31' } });

    expect(response.status).toBe(422);
    expect(response.body.error.issues[0]).toMatchObject({ origin: 'path', path: ['week'] });
  });

  it('a value sent as a JSON number is a format error', async () => {
    const { team, member } = await setup();
    const metric = await createMetric(app.db, team.id, member.user.id);

    const response = await app.request('PUT', `/v1/metrics/${metric.id}/values/2026-11-16`, { key: member.key, body: { value: 31 } });

    expect(response.status).toBe(422);
    expect(response.body.error.issues[0]).toMatchObject({ path: ['value'], code: 'invalid_type' });
  });

  it.each([
    ['over 50 characters', 'x'.repeat(51)],
    ['empty after trimming', '   '],
  ])('a value %s is a rule violation', async (_case, value) => {
    const { team, member } = await setup();
    const metric = await createMetric(app.db, team.id, member.user.id);

    const response = await app.request('PUT', `/v1/metrics/${metric.id}/values/2026-11-16`, { key: member.key, body: { value, onTrack: true } });

    expect([response.status, response.body.error.code, response.body.error.issues]).toEqual([422, 'invalid', undefined]);
  });

  it('a value of exactly 50 characters is stored', async () => {
    const { team, member } = await setup();
    const metric = await createMetric(app.db, team.id, member.user.id);

    const response = await app.request('PUT', `/v1/metrics/${metric.id}/values/2026-11-16`, { key: member.key, body: { value: 'v'.repeat(50), onTrack: true } });

    expect(response.status).toBe(200);
  });

  it('an unknown metric gives 404', async () => {
    const { member } = await setup();

    const response = await app.request('PUT', `/v1/metrics/${unknownId}/values/2026-11-16`, { key: member.key, body: { value: '1' } });

    expect([response.status, response.body.error.code]).toEqual([404, 'notFound']);
  });
});

describe(`reading weekly values (${databaseLabel})`, () => {
  it('GET /metrics/{id}/values lists the values oldest week first', async () => {
    const { team, member } = await setup();
    const metric = await createMetric(app.db, team.id, member.user.id);
    await createMetricValues(app.db, metric.id, member.user.id, '2026-11-02', 3, (index) => ['27', '21', '31'][index]!);

    const response = await app.request('GET', `/v1/metrics/${metric.id}/values`, { key: member.key });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: [
        { metricId: metric.id, revision: expect.any(Number), week: '2026-11-02', value: '27', onTrack: true, enteredById: member.user.id },
        { metricId: metric.id, revision: expect.any(Number), week: '2026-11-09', value: '21', onTrack: false, enteredById: member.user.id },
        { metricId: metric.id, revision: expect.any(Number), week: '2026-11-16', value: '31', onTrack: true, enteredById: member.user.id },
      ],
      nextCursor: null,
    });
  });

  it('GET /metrics/{id}/values answers byte for byte what toMetricValue writes', async () => {
    const { team, admin, member } = await setup();
    const metric = await createMetric(app.db, team.id, member.user.id);
    await createMetricValues(app.db, metric.id, member.user.id, '2026-09-07', 13, (index) => trickyTexts[index % trickyTexts.length]!);
    await app.db.updateTable('metric_values').set({ entered_by_id: admin.user.id }).where('metric_id', '=', metric.id).where('week', '>', '2026-11-01').execute();
    const rows = await valuesOf(metric.id);
    const list = { key: member.key, map: toMetricValue, cursorOf: (row: (typeof rows)[number]) => [row.week] };
    const path = `/v1/metrics/${metric.id}/values`;
    await expectPagesAsMapped(app, { ...list, path, rows }, 5);
    const inRange = rows.filter((row) => row.week >= '2026-09-21' && row.week <= '2026-11-16');
    await expectPagesAsMapped(app, { ...list, path: `${path}?from=2026-09-21&to=2026-11-16`, rows: inRange }, 3);
    await expectPagesAsMapped(app, { ...list, path: `${path}?from=2026-10-19`, rows: rows.filter((row) => row.week >= '2026-10-19') }, 2);
  });

  it('from and to are inclusive days, and a from after to gives an empty list', async () => {
    const { team, member } = await setup();
    const metric = await createMetric(app.db, team.id, member.user.id);
    await createMetricValues(app.db, metric.id, member.user.id, '2026-10-05', 8);
    const weeks = async (query: string) =>
      (await app.request('GET', `/v1/metrics/${metric.id}/values?${query}`, { key: member.key })).body.data.map((value: { week: string }) => value.week);

    expect(await weeks('from=2026-10-12&to=2026-10-26')).toEqual(['2026-10-12', '2026-10-19', '2026-10-26']);
    expect(await weeks('from=2026-10-13&to=2026-10-25')).toEqual(['2026-10-19']);
    expect(await weeks('from=2026-11-16')).toEqual(['2026-11-16', '2026-11-23']);
    expect(await weeks('to=2026-10-05')).toEqual(['2026-10-05']);
    expect(await weeks('from=2026-11-01&to=2026-10-01')).toEqual([]);
  });

  it.each([['from=2026-13-01'], ['to=yesterday'], ['from=2026-11-16T00:00:00Z']])('a malformed day (%s) is a format error', async (query) => {
    const { team, member } = await setup();
    const metric = await createMetric(app.db, team.id, member.user.id);

    const response = await app.request('GET', `/v1/metrics/${metric.id}/values?${query}`, { key: member.key });

    expect(response.status).toBe(422);
    expect(response.body.error.issues[0]).toMatchObject({ origin: 'query' });
  });

  it('pages through more than 200 weeks, each week exactly once and in order, filters included', async () => {
    const { team, member } = await setup();
    const metric = await createMetric(app.db, team.id, member.user.id);
    const stored = await createMetricValues(app.db, metric.id, member.user.id, '2021-01-04', 260);
    const { walkPages } = await import('./support/pages.js');

    const all = await walkPages<{ week: string }>(app, `/v1/metrics/${metric.id}/values`, member.key, { limit: 37 });
    const filtered = await walkPages<{ week: string }>(app, `/v1/metrics/${metric.id}/values?from=2022-01-03&to=2024-12-30`, member.key, { limit: 50 });
    const byDefault = await walkPages<{ week: string }>(app, `/v1/metrics/${metric.id}/values`, member.key);

    const weeks = stored.map((row) => row.week);
    expect(all.items.map((value) => value.week)).toEqual(weeks);
    expect(all.sizes).toEqual([...Array(7).fill(37), 1]);
    expect(filtered.items.map((value) => value.week)).toEqual(weeks.filter((week) => week >= '2022-01-03' && week <= '2024-12-30'));
    expect(byDefault.sizes).toEqual([50, 50, 50, 50, 50, 10]);
  });

  it('a metric the caller cannot see gives 404, like one that does not exist', async () => {
    const { team, member, person } = await setup();
    const metric = await createMetric(app.db, team.id, member.user.id);
    const orgMember = await person('MEMBER');

    const hidden = await app.request('GET', `/v1/metrics/${metric.id}/values`, { key: orgMember.key });
    const missing = await app.request('GET', `/v1/metrics/${unknownId}/values`, { key: orgMember.key });

    expect([hidden.status, hidden.body.error.code]).toEqual([404, 'notFound']);
    expect([missing.status, missing.body.error.code]).toEqual([404, 'notFound']);
  });
});

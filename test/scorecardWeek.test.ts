/**
 * `PUT /teams/{teamId}/scorecard/weeks/{week}`: a Scorecard week in one request, with the rules of the
 * single value's PUT, all or nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseLabel } from './support/database.js';
import { createTeamWorld } from './support/factories.js';
import { createMetric } from './support/scorecardFactories.js';
import { startTestApp, type TestApp } from './support/testApp.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

/** A team with an Owner, a Member and three metrics: a number goal, a percentage, and a goal without a number. */
async function setup() {
  const { org, team, person } = await createTeamWorld(app.db);
  const owner = await person('OWNER', 'OWNER');
  const member = await person('MEMBER', 'MEMBER');
  const leads = await createMetric(app.db, team.id, member.user.id, { title: 'Leads', goal: '>=25' });
  const delivery = await createMetric(app.db, team.id, member.user.id, { title: 'On-time delivery', goal: '>=95', unit: '%' });
  const mood = await createMetric(app.db, team.id, member.user.id, { title: 'Mood', goal: 'Good' });
  return { org, team, owner, member, leads, delivery, mood };
}

const putWeek = (teamId: string, week: string, key: string, values: unknown, headers: Record<string, string> = {}) =>
  app.request('PUT', `/v1/teams/${teamId}/scorecard/weeks/${week}`, { key, body: { values }, headers });

const scorecardOf = (teamId: string, key: string) => app.request('GET', `/v1/teams/${teamId}/scorecard?from=2026-11-09&to=2026-11-16`, { key });

const valueEvents = async (orgId: string, key: string) =>
  ((await app.request('GET', `/v1/orgs/${orgId}/events?types=metric_value.set&limit=200`, { key })).body.data as { data: { object: unknown } }[]).map((event) => event.data.object);

describe(`a Scorecard week in one request (${databaseLabel})`, () => {
  it('saves every value of the week and answers them in the request order', async () => {
    const { team, member, leads, delivery, mood } = await setup();

    const response = await putWeek(team.id, '2026-11-16', member.key, [
      { metricId: mood.id, value: '  Tired ', onTrack: false },
      { metricId: leads.id, value: '27' },
      { metricId: delivery.id, value: '94,5 %' },
    ]);

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      teamId: team.id,
      week: '2026-11-16',
      values: [
        { metricId: mood.id, week: '2026-11-16', revision: expect.any(Number), value: 'Tired', onTrack: false, enteredById: member.user.id },
        { metricId: leads.id, week: '2026-11-16', revision: expect.any(Number), value: '27', onTrack: true, enteredById: member.user.id },
        { metricId: delivery.id, week: '2026-11-16', revision: expect.any(Number), value: '94,5 %', onTrack: false, enteredById: member.user.id },
      ],
    });
  });

  it("leaves the Scorecard's default view as the single PUTs would have left it", async () => {
    const byWeek = await setup();
    const bySingle = await setup();
    const entries = (s: typeof byWeek) => [
      { metric: s.leads, value: '31' },
      { metric: s.delivery, value: '1 500,25' },
      { metric: s.mood, value: 'Good', onTrack: true },
    ];
    // The week before was entered by the Owner; the Member replaces two of its values.
    for (const s of [byWeek, bySingle]) {
      for (const entry of entries(s).slice(0, 2)) {
        expect((await app.request('PUT', `/v1/metrics/${entry.metric.id}/values/2026-11-16`, { key: s.owner.key, body: { value: '20' } })).status).toBe(200);
      }
    }

    expect((await putWeek(byWeek.team.id, '2026-11-16', byWeek.member.key, entries(byWeek).map((e) => ({ metricId: e.metric.id, value: e.value, onTrack: e.onTrack })))).status).toBe(200);
    for (const entry of entries(bySingle)) {
      const body = entry.onTrack === undefined ? { value: entry.value } : { value: entry.value, onTrack: entry.onTrack };
      expect((await app.request('PUT', `/v1/metrics/${entry.metric.id}/values/2026-11-16`, { key: bySingle.member.key, body })).status).toBe(200);
    }

    const view = async (s: typeof byWeek) => {
      const names = new Map<string, string>([
        [s.team.id, 'team'],
        [s.owner.user.id, 'owner'],
        [s.member.user.id, 'member'],
        [s.leads.id, 'leads'],
        [s.delivery.id, 'delivery'],
        [s.mood.id, 'mood'],
      ]);
      const text = (await app.request('GET', `/v1/teams/${s.team.id}/scorecard`, { key: s.member.key })).text;
      return JSON.parse(text, (key, value) => (key === 'revision' ? 0 : typeof value === 'string' ? (names.get(value) ?? value) : value));
    };
    expect(await view(byWeek)).toEqual(await view(bySingle));
    expect((await view(byWeek)).metrics[0].values).toEqual([
      { metricId: 'leads', week: '2026-11-16', revision: 0, value: '31', onTrack: true, enteredById: 'owner' },
    ]);
  });

  it('names every bad item by its index and field, and saves none of the good ones', async () => {
    const { team, org, owner, member, leads, delivery, mood } = await setup();
    const other = await setup();
    const before = (await scorecardOf(team.id, member.key)).body;

    const response = await putWeek(team.id, '2026-11-16', member.key, [
      { metricId: leads.id, value: '27' },
      { metricId: other.leads.id, value: '27' },
      { metricId: delivery.id, value: '96' },
      { metricId: mood.id, value: 'Fine' },
      { metricId: delivery.id, value: '97' },
    ]);

    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe('invalid');
    expect(response.body.error.issues.map((issue: { path: string[]; code: string }) => [issue.path.join('.'), issue.code])).toEqual([
      ['values.1.metricId', 'invalid_value'],
      ['values.3.onTrack', 'invalid_type'],
      ['values.4.metricId', 'invalid_value'],
    ]);
    expect((await scorecardOf(team.id, member.key)).body).toEqual(before);
    expect(await valueEvents(org.id, owner.key)).toEqual([]);
  });

  it('refuses a week that is not a Monday with 422, as the single PUT does', async () => {
    const { team, member, leads } = await setup();

    const response = await putWeek(team.id, '2026-11-17', member.key, [{ metricId: leads.id, value: '27' }]);

    expect(response.status).toBe(422);
    expect(response.body.error.message).toContain('Monday');
  });

  it('keeps enteredById with the person who first entered the week', async () => {
    const { team, owner, member, leads } = await setup();
    expect((await putWeek(team.id, '2026-11-16', owner.key, [{ metricId: leads.id, value: '20' }])).status).toBe(200);

    const response = await putWeek(team.id, '2026-11-16', member.key, [{ metricId: leads.id, value: '30' }]);

    expect(response.body.values[0]).toMatchObject({ value: '30', onTrack: true, enteredById: owner.user.id });
  });

  it('sends one metric_value.set per saved value, each the value as the answer gave it', async () => {
    const { team, org, owner, member, leads, delivery } = await setup();

    const response = await putWeek(team.id, '2026-11-16', member.key, [
      { metricId: leads.id, value: '27' },
      { metricId: delivery.id, value: '99' },
    ]);

    const events = await valueEvents(org.id, owner.key);
    expect(events).toHaveLength(2);
    expect(events).toEqual(expect.arrayContaining(response.body.values));
  });

  it('answers a retry with the same Idempotency-Key from the first answer, saving nothing again', async () => {
    const { team, org, owner, member, leads } = await setup();
    const headers = { 'Idempotency-Key': `week-${team.id}` };

    const first = await putWeek(team.id, '2026-11-16', member.key, [{ metricId: leads.id, value: '27' }], headers);
    const retry = await putWeek(team.id, '2026-11-16', member.key, [{ metricId: leads.id, value: '27' }], headers);

    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect(await valueEvents(org.id, owner.key)).toHaveLength(1);
  });

  it("with If-Match, saves only while the Scorecard's default view still has that tag", async () => {
    const { team, owner, member, leads } = await setup();
    const tag = (await app.request('GET', `/v1/teams/${team.id}/scorecard`, { key: member.key })).headers.get('etag')!;

    const first = await putWeek(team.id, '2026-11-16', owner.key, [{ metricId: leads.id, value: '20' }], { 'If-Match': tag });
    const stale = await putWeek(team.id, '2026-11-16', member.key, [{ metricId: leads.id, value: '30' }], { 'If-Match': tag });

    expect(first.status).toBe(200);
    expect(stale.status).toBe(412);
    expect((await scorecardOf(team.id, member.key)).body.metrics[0].values).toEqual([expect.objectContaining({ value: '20' })]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseLabel } from './support/database.js';
import { addOrganizationMember, addTeamMember, createCaller, createOrganization, createTeam, createTeamWorld } from './support/factories.js';
import { toMetric, toMetricValue } from '../src/records/metrics.js';
import { addWeeks } from '../src/time.js';
import { trickyTexts } from './support/jsonBodies.js';
import { createMetric, createMetricValues } from './support/scorecardFactories.js';
import { startTestApp, type TestApp } from './support/testApp.js';

let app: TestApp;
/** The app's clock while a test sets it; the real time otherwise. */
let clock: Date | undefined;
beforeAll(async () => {
  app = await startTestApp({ now: () => clock ?? new Date() });
});
afterAll(() => app.close());

/** A team with a Member and two metrics with values in every week from 2026-09-07 to 2026-11-23. */
async function setup() {
  const { team, person } = await createTeamWorld(app.db);
  const member = await person('MEMBER', 'MEMBER');
  const leads = await createMetric(app.db, team.id, member.user.id, { title: 'Leads' });
  const delivery = await createMetric(app.db, team.id, member.user.id, { title: 'On-time delivery', goal: '>=95', unit: '%' });
  await createMetricValues(app.db, leads.id, member.user.id, '2026-09-07', 12);
  await createMetricValues(app.db, delivery.id, member.user.id, '2026-09-07', 12, (index) => `9${index % 10},5 %`);
  return { team, member, leads, delivery };
}

const scorecardOf = (teamId: string, key: string, query = '') => app.request('GET', `/v1/teams/${teamId}/scorecard${query}`, { key });

describe(`the Scorecard view (${databaseLabel})`, () => {
  it('GET /teams/{teamId}/scorecard returns every metric in Scorecard order with its values in the weeks asked for', async () => {
    const { team, member, leads, delivery } = await setup();

    const response = await scorecardOf(team.id, member.key, '?from=2026-11-02&to=2026-11-16');

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      teamId: team.id,
      from: '2026-11-02',
      to: '2026-11-16',
      weeks: ['2026-11-02', '2026-11-09', '2026-11-16'],
      metrics: [
        {
          id: leads.id,
          revision: expect.any(Number),
          teamId: team.id,
          title: 'Leads',
          goal: '>=25',
          ownerId: member.user.id,
          unit: null,
          description: null,
          position: 1,
          values: [
            { metricId: leads.id, revision: expect.any(Number), week: '2026-11-02', value: '28', onTrack: true, enteredById: member.user.id },
            { metricId: leads.id, revision: expect.any(Number), week: '2026-11-09', value: '29', onTrack: false, enteredById: member.user.id },
            { metricId: leads.id, revision: expect.any(Number), week: '2026-11-16', value: '20', onTrack: true, enteredById: member.user.id },
          ],
        },
        {
          id: delivery.id,
          revision: expect.any(Number),
          teamId: team.id,
          title: 'On-time delivery',
          goal: '>=95',
          ownerId: member.user.id,
          unit: '%',
          description: null,
          position: 2,
          values: [
            { metricId: delivery.id, revision: expect.any(Number), week: '2026-11-02', value: '98,5 %', onTrack: true, enteredById: member.user.id },
            { metricId: delivery.id, revision: expect.any(Number), week: '2026-11-09', value: '99,5 %', onTrack: false, enteredById: member.user.id },
            { metricId: delivery.id, revision: expect.any(Number), week: '2026-11-16', value: '90,5 %', onTrack: true, enteredById: member.user.id },
          ],
        },
      ],
    });
  });

  it('days inside a week stand for the whole week: the range runs from the Monday of from to the Monday of to', async () => {
    const { team, member } = await setup();

    const response = await scorecardOf(team.id, member.key, '?from=2026-11-04&to=2026-11-22');

    expect([response.body.from, response.body.to, response.body.weeks]).toEqual(['2026-11-02', '2026-11-16', ['2026-11-02', '2026-11-09', '2026-11-16']]);
    expect(response.body.metrics[0].values.map((value: { week: string }) => value.week)).toEqual(['2026-11-02', '2026-11-09', '2026-11-16']);
  });

  it('a week without a value is absent from the values, but present in weeks', async () => {
    const { team, member, leads } = await setup();
    await app.db.deleteFrom('metric_values').where('metric_id', '=', leads.id).where('week', '=', '2026-11-09').execute();

    const response = await scorecardOf(team.id, member.key, '?from=2026-11-02&to=2026-11-16');

    expect(response.body.weeks).toHaveLength(3);
    expect(response.body.metrics[0].values.map((value: { week: string }) => value.week)).toEqual(['2026-11-02', '2026-11-16']);
  });

  it('with only from, it shows the 13 weeks that start with from', async () => {
    const { team, member } = await setup();

    const response = await scorecardOf(team.id, member.key, '?from=2026-09-09');

    expect([response.body.from, response.body.to, response.body.weeks.length]).toEqual(['2026-09-07', '2026-11-30', 13]);
    expect(response.body.metrics[0].values).toHaveLength(12);
  });

  it('with only to, it shows the 13 weeks that end with to', async () => {
    const { team, member } = await setup();

    const response = await scorecardOf(team.id, member.key, '?to=2026-10-04');

    expect([response.body.from, response.body.to, response.body.weeks.length]).toEqual(['2026-07-06', '2026-09-28', 13]);
    expect(response.body.metrics[0].values.map((value: { week: string }) => value.week)).toEqual(['2026-09-07', '2026-09-14', '2026-09-21', '2026-09-28']);
  });

  /** Sunday 23:30 UTC: already Monday 2026-11-23 in Bratislava, still Sunday of the week of 2026-11-16 in New York. */
  const sundayNight = new Date('2026-11-22T23:30:00Z');

  /** A team Member whose profile has `profileZone`, in an organization whose zone is `organizationZone`. */
  async function memberWithZones(profileZone: string | null, organizationZone: string) {
    const org = await createOrganization(app.db, { timezone: organizationZone });
    const team = await createTeam(app.db, org.id);
    const member = await createCaller(app.db, { timezone: profileZone });
    await addOrganizationMember(app.db, org.id, member.user.id, 'MEMBER');
    await addTeamMember(app.db, team.id, member.user.id, 'MEMBER');
    return { team, member };
  }

  it.each([
    ['the profile zone when the caller has one', 'Europe/Bratislava', 'America/New_York', '2026-11-23'],
    ['the profile zone over the organization zone', 'America/New_York', 'Europe/Bratislava', '2026-11-16'],
    ["the organization's zone when the profile has none", null, 'America/New_York', '2026-11-16'],
    ["the organization's zone, a day ahead of UTC", null, 'Europe/Bratislava', '2026-11-23'],
  ])('without a range it shows the 13 weeks up to the current week in %s', async (_case, profileZone, organizationZone, currentWeek) => {
    const { team, member } = await memberWithZones(profileZone, organizationZone);
    clock = sundayNight;
    try {
      const response = await scorecardOf(team.id, member.key);

      expect(response.status).toBe(200);
      expect([response.body.to, response.body.weeks.length, response.body.weeks.at(-1)]).toEqual([currentWeek, 13, currentWeek]);
    } finally {
      clock = undefined;
    }
  });

  it("a caller without a profile zone in organizations of different zones gets the current week in the team's organization", async () => {
    const { team, member } = await memberWithZones(null, 'Europe/Bratislava');
    const elsewhere = await createOrganization(app.db, { timezone: 'America/New_York' });
    await addOrganizationMember(app.db, elsewhere.id, member.user.id, 'MEMBER');
    clock = sundayNight;
    try {
      const response = await scorecardOf(team.id, member.key);

      expect([response.status, response.body.to]).toEqual([200, '2026-11-23']);
    } finally {
      clock = undefined;
    }
  });

  it('a team without metrics has an empty Scorecard over its weeks', async () => {
    const { team, person } = await createTeamWorld(app.db);
    const member = await person('MEMBER', 'VIEWER');

    const response = await scorecardOf(team.id, member.key, '?from=2026-11-02&to=2026-11-08');

    expect(response.body).toEqual({ teamId: team.id, from: '2026-11-02', to: '2026-11-02', weeks: ['2026-11-02'], metrics: [] });
  });

  it('104 weeks are allowed; 105 weeks, or from after to, are rule violations', async () => {
    const { team, member } = await setup();

    const longest = await scorecardOf(team.id, member.key, '?from=2024-12-02&to=2026-11-23');
    const tooLong = await scorecardOf(team.id, member.key, '?from=2024-11-25&to=2026-11-23');
    const backwards = await scorecardOf(team.id, member.key, '?from=2026-11-16&to=2026-11-09');

    expect([longest.status, longest.body.weeks?.length]).toEqual([200, 104]);
    for (const refused of [tooLong, backwards]) {
      expect([refused.status, refused.body.error.code, refused.body.error.issues]).toEqual([422, 'invalid', undefined]);
    }
  });

  it('a range reaching outside the years 2000-2100 is a rule violation', async () => {
    const { team, member } = await setup();

    const response = await scorecardOf(team.id, member.key, '?from=2100-12-20');

    expect([response.status, response.body.error.code]).toEqual([422, 'invalid']);
  });

  it.each([['from=2026-02-30'], ['to=2026-11-16T00:00:00Z'], ['weeks=13']])('%s is a format error', async (query) => {
    const { team, member } = await setup();

    const response = await scorecardOf(team.id, member.key, `?${query}`);

    expect(response.status).toBe(422);
    expect(response.body.error.issues[0]).toMatchObject({ origin: 'query' });
  });

  it('an unknown team gives 404', async () => {
    const { member } = await setup();

    const response = await scorecardOf('00000000-0000-4000-8000-000000000000', member.key);

    expect([response.status, response.body.error.code]).toEqual([404, 'notFound']);
  });

  it('GET /teams/{teamId}/scorecard answers byte for byte what toMetric and toMetricValue write', async () => {
    const { team, person } = await createTeamWorld(app.db);
    const member = await person('MEMBER', 'MEMBER');
    const other = await person('MEMBER', 'MEMBER');
    for (const [index, text] of trickyTexts.entries()) {
      const metric = await createMetric(app.db, team.id, (index % 2 ? other : member).user.id, {
        title: text,
        goal: `>=${text}`,
        unit: index % 2 ? null : text,
        description: index % 3 ? text : null,
      });
      // Weeks with and without a value, some before and after the range asked for.
      await createMetricValues(app.db, metric.id, member.user.id, addWeeks('2026-09-07', index), 8 - index, (week) => trickyTexts[(index + week) % trickyTexts.length]!);
    }
    await createMetric(app.db, team.id, member.user.id, { title: 'No values yet' });
    const range = { from: '2026-09-14', to: '2026-11-02' };
    const metrics = await app.db.selectFrom('metrics').selectAll().where('team_id', '=', team.id).orderBy('position').execute();
    const values = await app.db.selectFrom('metric_values').selectAll().where('metric_id', 'in', metrics.map((metric) => metric.id)).where('week', '>=', range.from).where('week', '<=', range.to).orderBy('week').execute();
    const weeks = Array.from({ length: 8 }, (_, index) => addWeeks(range.from, index));

    const response = await scorecardOf(team.id, member.key, `?from=${range.from}&to=${range.to}`);

    expect(response.status).toBe(200);
    const metricsOf = metrics.map((metric) => ({ ...toMetric(metric), values: values.filter((value) => value.metric_id === metric.id).map(toMetricValue) }));
    expect(response.text).toBe(JSON.stringify({ teamId: team.id, ...range, weeks, metrics: metricsOf }));
    expect(metricsOf.filter((metric) => metric.values.length > 0).length).toBeGreaterThan(4);
  });
});


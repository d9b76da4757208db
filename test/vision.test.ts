import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVision } from './support/areaFactories.js';
import { databaseLabel } from './support/database.js';
import { expectNow } from './support/expectations.js';
import { createCaller, createTeamWorld } from './support/factories.js';
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

const visionsOf = (teamId: string) => app.db.selectFrom('visions').selectAll().where('team_id', '=', teamId).execute();

const listFields = ['coreValues', 'quarterlyRocks', 'issuesList'] as const;
const objectFields = ['coreFocus', 'marketingStrategy'] as const;
const textFields = ['tenYearTarget', 'threeYearPicture', 'oneYearPlan'] as const;
const allFields = [...listFields, ...objectFields, ...textFields];

const emptyVision = Object.fromEntries(allFields.map((field) => [field, null]));

async function patch(teamId: string, key: string, body: unknown) {
  return app.request('PATCH', `/v1/teams/${teamId}/vision`, { key, body });
}

/** A 422 without changes: a rule violation has no issues, a format error lists them. */
function expectRefused(response: { status: number; body: any }, kind: 'rule' | 'format', label: string) {
  expect(response.status, label).toBe(422);
  expect(response.body.error.code, label).toBe('invalid');
  if (kind === 'rule') expect(response.body.error.issues, label).toBeUndefined();
  else expect(response.body.error.issues?.length, label).toBeGreaterThan(0);
}

describe(`creating and reading the vision (${databaseLabel})`, () => {
  it('GET /teams/{teamId}/vision is 404 while the team has none', async () => {
    const { team, member } = await setup();

    const response = await app.request('GET', `/v1/teams/${team.id}/vision`, { key: member.key });

    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('notFound');
  });

  it('POST /teams/{teamId}/vision creates the vision with every field null (201), and team members read it', async () => {
    const { team, admin, member } = await setup();

    const before = Date.now();
    const created = await app.request('POST', `/v1/teams/${team.id}/vision`, { key: admin.key });
    const after = Date.now();

    expect(created.status).toBe(201);
    const [stored] = await visionsOf(team.id);
    expect(created.body).toEqual({ id: stored!.id, revision: expect.any(Number), teamId: team.id, ...emptyVision, updatedAt: stored!.updated_at.toISOString() });
    expectNow(created.body.updatedAt, before, after);
    const read = await app.request('GET', `/v1/teams/${team.id}/vision`, { key: member.key });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
  });

  it('POST on a team that has a vision returns it unchanged, also with 201, and creates no second one', async () => {
    const { team, admin } = await setup();
    const existing = await createVision(app.db, team.id, { core_values: '["Help first"]', ten_year_target: '€50M' });

    const response = await app.request('POST', `/v1/teams/${team.id}/vision`, { key: admin.key });

    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      ...emptyVision,
      id: existing.id,
      revision: expect.any(Number),
      teamId: team.id,
      coreValues: ['Help first'],
      tenYearTarget: '€50M',
      updatedAt: existing.updated_at.toISOString(),
    });
    expect(await visionsOf(team.id)).toEqual([existing]);
  });

  it('reads return lists and objects parsed and text fields as text, even text that looks like JSON', async () => {
    const { team, member } = await setup();
    await createVision(app.db, team.id, {
      core_values: '["Deliver on our promises","Help first"]',
      core_focus: '{"purpose":"Move goods","uniques":["Same day","Tracking"]}',
      ten_year_target: '["not","a","list"]',
      three_year_picture: '{"not":"an object"}',
      one_year_plan: '42',
    });

    const response = await app.request('GET', `/v1/teams/${team.id}/vision`, { key: member.key });

    expect(response.body).toMatchObject({
      coreValues: ['Deliver on our promises', 'Help first'],
      coreFocus: { purpose: 'Move goods', uniques: ['Same day', 'Tracking'] },
      tenYearTarget: '["not","a","list"]',
      threeYearPicture: '{"not":"an object"}',
      oneYearPlan: '42',
      marketingStrategy: null,
    });
  });

  it('a list or object field still holding older free text is returned as that text', async () => {
    const { team, member } = await setup();
    await createVision(app.db, team.id, {
      core_values: 'Deliver on our promises; do the right thing; help first',
      quarterly_rocks: '{"a":"not a list"}',
      issues_list: '[1, 2]',
      core_focus: 'Purpose: move goods so that nobody waits',
      marketing_strategy: '["not an object"]',
    });

    const response = await app.request('GET', `/v1/teams/${team.id}/vision`, { key: member.key });

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      coreValues: 'Deliver on our promises; do the right thing; help first',
      quarterlyRocks: '{"a":"not a list"}',
      issuesList: '[1, 2]',
      coreFocus: 'Purpose: move goods so that nobody waits',
      marketingStrategy: '["not an object"]',
    });
  });

  it('team Members and Viewers read but cannot create (403); callers who cannot see the team get 403; an unknown team 404', async () => {
    const { team, member, person } = await setup();
    const viewer = await person('MEMBER', 'VIEWER');
    const orgMember = await person('MEMBER');
    const outsider = await createCaller(app.db);
    await createVision(app.db, team.id);

    for (const caller of [member, viewer]) {
      expect((await app.request('GET', `/v1/teams/${team.id}/vision`, { key: caller.key })).status).toBe(200);
      expect((await app.request('POST', `/v1/teams/${team.id}/vision`, { key: caller.key })).status).toBe(403);
    }
    for (const caller of [orgMember, outsider]) {
      expect((await app.request('GET', `/v1/teams/${team.id}/vision`, { key: caller.key })).status).toBe(403);
      expect((await app.request('POST', `/v1/teams/${team.id}/vision`, { key: caller.key })).status).toBe(403);
    }
    expect((await app.request('GET', `/v1/teams/${unknownId}/vision`, { key: member.key })).status).toBe(404);
    expect((await app.request('POST', `/v1/teams/${unknownId}/vision`, { key: member.key })).status).toBe(404);
  });

  it('in a suspended organization creating gives 409 orgSuspended and reading still works', async () => {
    const { team, admin } = await setup({ suspended: true });

    expect((await app.request('POST', `/v1/teams/${team.id}/vision`, { key: admin.key })).status).toBe(409);
    expect(await visionsOf(team.id)).toEqual([]);
    await createVision(app.db, team.id);
    expect((await app.request('GET', `/v1/teams/${team.id}/vision`, { key: admin.key })).status).toBe(200);
  });
});

describe(`setting vision fields (${databaseLabel})`, () => {
  it('PATCH /teams/{teamId}/vision creates a missing vision, sets the field and returns the whole vision', async () => {
    const { team, admin } = await setup();

    const before = Date.now();
    const response = await patch(team.id, admin.key, { field: 'coreValues', value: [' Deliver on our promises ', 'Help first'] });
    const after = Date.now();

    expect(response.status).toBe(200);
    const [stored] = await visionsOf(team.id);
    expect(response.body).toEqual({
      ...emptyVision,
      id: stored!.id,
      revision: expect.any(Number),
      teamId: team.id,
      coreValues: ['Deliver on our promises', 'Help first'],
      updatedAt: stored!.updated_at.toISOString(),
    });
    expectNow(response.body.updatedAt, before, after);
    expect(stored!.core_values).toBe('["Deliver on our promises","Help first"]');
  });

  it('setting one field keeps the others and moves updatedAt', async () => {
    const { team, admin } = await setup();
    const existing = await createVision(app.db, team.id, { core_values: '["Help first"]', one_year_plan: 'Revenue €12M', updated_at: new Date('2026-10-02T13:40:05.870Z') });

    const response = await patch(team.id, admin.key, { field: 'coreFocus', value: { purpose: ' Move goods ', uniques: [' Same day ', 'Tracking'] } });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      ...emptyVision,
      id: existing.id,
      revision: expect.any(Number),
      teamId: team.id,
      coreValues: ['Help first'],
      coreFocus: { purpose: 'Move goods', uniques: ['Same day', 'Tracking'] },
      oneYearPlan: 'Revenue €12M',
      updatedAt: response.body.updatedAt,
    });
    expect(Date.parse(response.body.updatedAt)).toBeGreaterThan(Date.parse('2026-10-02T13:40:05.870Z'));
    expect(await visionsOf(team.id)).toHaveLength(1);
  });

  it('every list field takes a list of texts, trimmed; empty lists too', async () => {
    const { team, admin } = await setup();

    for (const field of listFields) {
      const response = await patch(team.id, admin.key, { field, value: ['  Sign 5 new customers  ', 'Open Žilina'] });
      expect(response.status, field).toBe(200);
      expect(response.body[field]).toEqual(['Sign 5 new customers', 'Open Žilina']);
      expect((await patch(team.id, admin.key, { field, value: [] })).body[field]).toEqual([]);
    }
  });

  it('every object field takes texts and lists of texts as values, trimmed, keys as sent; empty objects too', async () => {
    const { team, admin } = await setup();

    for (const field of objectFields) {
      const value = { ' target Market': ' Manufacturers ', uniques: [' Same day ', 'Tracking'], guarantee: '' };
      const response = await patch(team.id, admin.key, { field, value });
      expect(response.status, field).toBe(200);
      expect(response.body[field]).toEqual({ ' target Market': 'Manufacturers', uniques: ['Same day', 'Tracking'], guarantee: '' });
      expect((await patch(team.id, admin.key, { field, value: {} })).body[field]).toEqual({});
    }
  });

  it('every text field is stored exactly as sent, spaces and line breaks included, and text that looks like JSON stays text', async () => {
    const { team, admin, member } = await setup();

    for (const field of textFields) {
      for (const value of ['  €50M annual revenue\n  and 300 customers  ', '["a","b"]', '{"a":1}', 'null', '']) {
        const response = await patch(team.id, admin.key, { field, value });
        expect(response.status, `${field} ${value}`).toBe(200);
        expect(response.body[field]).toBe(value);
        expect((await app.request('GET', `/v1/teams/${team.id}/vision`, { key: member.key })).body[field]).toBe(value);
      }
    }
  });

  it('a field name sent with spaces around it still keeps a text value as sent', async () => {
    const { team, admin } = await setup();

    const response = await patch(team.id, admin.key, { field: ' tenYearTarget ', value: '  €50M  ' });

    expect(response.status).toBe(200);
    expect(response.body.tenYearTarget).toBe('  €50M  ');
  });

  it('a list field refuses a text, an object, a number, a boolean and null as format errors, and nothing changes', async () => {
    const { team, admin } = await setup();
    await createVision(app.db, team.id, { core_values: '["Help first"]' });

    for (const field of listFields) {
      for (const value of ['Help first', { a: 'b' }, 42, true, null, [42], [null], [['nested']]]) {
        expectRefused(await patch(team.id, admin.key, { field, value }), 'format', `${field} ${JSON.stringify(value)}`);
      }
    }
    const [stored] = await visionsOf(team.id);
    expect([stored!.core_values, stored!.quarterly_rocks, stored!.issues_list]).toEqual(['["Help first"]', null, null]);
  });

  it('an object field refuses a text, a list, a number, a boolean and null, and values that are not texts or lists of texts', async () => {
    const { team, admin } = await setup();

    for (const field of objectFields) {
      for (const value of ['Move goods', ['Move goods'], 42, false, null, { purpose: 42 }, { purpose: null }, { purpose: { nested: 'x' } }, { purpose: [1] }]) {
        expectRefused(await patch(team.id, admin.key, { field, value }), 'format', `${field} ${JSON.stringify(value)}`);
      }
    }
    expect(await visionsOf(team.id)).toEqual([]);
  });

  it('a text field refuses a list, an object, a number, a boolean and null', async () => {
    const { team, admin } = await setup();

    for (const field of textFields) {
      for (const value of [['€50M'], { a: '€50M' }, 50, true, null]) {
        expectRefused(await patch(team.id, admin.key, { field, value }), 'format', `${field} ${JSON.stringify(value)}`);
      }
    }
    expect(await visionsOf(team.id)).toEqual([]);
  });

  it('an unknown field, a missing value or field, or an empty body is a format error', async () => {
    const { team, admin } = await setup();

    for (const body of [{ field: 'mission', value: 'x' }, { field: 'coreValues' }, { value: ['x'] }, {}]) {
      expectRefused(await patch(team.id, admin.key, body), 'format', JSON.stringify(body));
    }
    const unknown = await patch(team.id, admin.key, { field: 'mission', value: 'x' });
    expect(unknown.body.error.issues.some((issue: { path: string[]; values?: string[] }) => issue.path[0] === 'field' && issue.values?.length === 8)).toBe(true);
    expect(await visionsOf(team.id)).toEqual([]);
  });

  it('lists hold at most 100 items of 1-1000 characters after trimming; beyond is a rule violation', async () => {
    const { team, admin } = await setup();

    for (const value of [Array.from({ length: 101 }, (_, index) => `Item ${index}`), ['x'.repeat(1001)], ['Help first', '   '], ['']]) {
      expectRefused(await patch(team.id, admin.key, { field: 'issuesList', value }), 'rule', `${value.length} items`);
    }
    expect(await visionsOf(team.id)).toEqual([]);
    const largest = await patch(team.id, admin.key, { field: 'issuesList', value: Array.from({ length: 100 }, (_, index) => `${index}`.padEnd(150, '.')) });
    expect(largest.status).toBe(200);
    expect(largest.body.issuesList).toHaveLength(100);
  });

  it('objects hold at most 30 keys of 1-100 characters, texts of at most 5000 and lists as above; beyond is a rule violation', async () => {
    const { team, admin } = await setup();
    const keys = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, index) => [`key ${index}`, 'x']));

    for (const value of [keys(31), { ['k'.repeat(101)]: 'x' }, { '': 'x' }, { purpose: 'x'.repeat(5001) }, { uniques: ['x'.repeat(1001)] }, { uniques: Array(101).fill('x') }]) {
      expectRefused(await patch(team.id, admin.key, { field: 'coreFocus', value }), 'rule', JSON.stringify(value).slice(0, 60));
    }
    expect(await visionsOf(team.id)).toEqual([]);
    const largest = await patch(team.id, admin.key, { field: 'coreFocus', value: { ...keys(29), ['k'.repeat(100)]: 'x'.repeat(5000) } });
    expect(largest.status).toBe(200);
  });

  it('a value of at most 20,000 characters in stored form is accepted; one more is a rule violation and changes nothing', async () => {
    const { team, admin } = await setup();
    // 19 items of 1000 characters and one of 939: exactly 20,000 characters as JSON text.
    const list = (last: number) => [...Array(19).fill('x'.repeat(1000)), 'y'.repeat(last)];
    expect(JSON.stringify(list(939))).toHaveLength(20_000);

    expect((await patch(team.id, admin.key, { field: 'quarterlyRocks', value: list(939) })).status).toBe(200);
    expectRefused(await patch(team.id, admin.key, { field: 'quarterlyRocks', value: list(940) }), 'rule', 'list of 20,001');
    // Five texts of 4000 characters under keys a-e: 20,031 characters as JSON text.
    const object = Object.fromEntries(['a', 'b', 'c', 'd', 'e'].map((key) => [key, 'z'.repeat(4000)]));
    expectRefused(await patch(team.id, admin.key, { field: 'marketingStrategy', value: object }), 'rule', 'object over 20,000');
    expect((await patch(team.id, admin.key, { field: 'oneYearPlan', value: ' '.repeat(20_000) })).status).toBe(200);
    expectRefused(await patch(team.id, admin.key, { field: 'oneYearPlan', value: ' '.repeat(20_001) }), 'rule', 'text of 20,001');

    const [stored] = await visionsOf(team.id);
    expect(stored!.quarterly_rocks).toHaveLength(20_000);
    expect(stored!.marketing_strategy).toBeNull();
    expect(stored!.one_year_plan).toHaveLength(20_000);
  });

  it('two fields set at the same time on a team without a vision make one vision holding both', async () => {
    const { team, admin } = await setup();

    const responses = await Promise.all([
      patch(team.id, admin.key, { field: 'coreValues', value: ['Help first'] }),
      patch(team.id, admin.key, { field: 'tenYearTarget', value: '€50M' }),
      patch(team.id, admin.key, { field: 'issuesList', value: ['Driver turnover'] }),
    ]);

    expect(responses.map((response) => response.status)).toEqual([200, 200, 200]);
    const stored = await visionsOf(team.id);
    expect(stored).toHaveLength(1);
    expect([stored[0]!.core_values, stored[0]!.ten_year_target, stored[0]!.issues_list]).toEqual(['["Help first"]', '€50M', '["Driver turnover"]']);
  });

  it('organization Implementers and team Owners set fields; team Members, Viewers and callers who cannot see the team get 403; an unknown team 404', async () => {
    const { team, member, person } = await setup();
    const viewer = await person('MEMBER', 'VIEWER');
    const orgMember = await person('MEMBER');
    const outsider = await createCaller(app.db);
    const body = { field: 'tenYearTarget', value: '€50M' };

    for (const caller of [member, viewer, orgMember, outsider]) {
      const response = await patch(team.id, caller.key, body);
      expect(response.status).toBe(403);
      expect(response.body.error.code).toBe('forbidden');
    }
    expect((await patch(unknownId, member.key, body)).status).toBe(404);
    expect(await visionsOf(team.id)).toEqual([]);
    for (const caller of [await person('IMPLEMENTER'), await person('MEMBER', 'OWNER')]) {
      expect((await patch(team.id, caller.key, body)).status).toBe(200);
    }
  });

  it('in a suspended organization setting a field gives 409 orgSuspended and creates nothing', async () => {
    const { team, admin } = await setup({ suspended: true });

    const response = await patch(team.id, admin.key, { field: 'tenYearTarget', value: '€50M' });

    expect(response.status).toBe(409);
    expect(response.body.error.code).toBe('orgSuspended');
    expect(await visionsOf(team.id)).toEqual([]);
  });
});

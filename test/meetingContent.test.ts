import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseLabel } from './support/database.js';
import { addOrganizationMember, createCaller, createOrganization, createTeam } from './support/factories.js';
import { acknowledgementsOf, createMeetingIn, createMeetingWorld, createMessage } from './support/meetingFactories.js';
import { startTestApp, type TestApp } from './support/testApp.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const unknownId = '00000000-0000-4000-8000-000000000000';

function expectRuleViolation(response: { status: number; body: any }) {
  expect(response.status, JSON.stringify(response.body)).toBe(422);
  expect(response.body.error.issues).toBeUndefined();
}

function expectFormatError(response: { status: number; body: any }) {
  expect(response.status, JSON.stringify(response.body)).toBe(422);
  expect(response.body.error.issues.length).toBeGreaterThan(0);
}

async function setup() {
  const world = await createMeetingWorld(app.db);
  const meeting = await createMeetingIn(app.db, world.team.id, world.admin.user.id, { status: 'IN_PROGRESS', startedAt: new Date() });
  return { ...world, meeting };
}

const acknowledged = async (userId: string) => (await acknowledgementsOf(app.db, userId)).map((row) => row.message_id).sort();

describe(`segues and headlines (${databaseLabel})`, () => {
  it('POST /meetings/{id}/segues adds the caller’s segue, trimmed, and the meeting lists segues in the order they were added', async () => {
    const { meeting, member, viewer } = await setup();

    const first = await app.request('POST', `/v1/meetings/${meeting.id}/segues`, { key: member.key, body: { content: '  I ran my first half marathon. ' } });
    const second = await app.request('POST', `/v1/meetings/${meeting.id}/segues`, { key: member.key, body: { content: 'Baltic Trade renewed.' } });

    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      id: first.body.id,
      revision: expect.any(Number),
      meetingId: meeting.id,
      userId: member.user.id,
      content: 'I ran my first half marathon.',
      createdAt: first.body.createdAt,
    });
    const detail = await app.request('GET', `/v1/meetings/${meeting.id}`, { key: viewer.key });
    expect(detail.body.segues).toEqual([first.body, second.body]);
  });

  it('POST /meetings/{id}/headlines adds a CUSTOMER or EMPLOYEE headline by the caller', async () => {
    const { meeting, admin } = await setup();

    const response = await app.request('POST', `/v1/meetings/${meeting.id}/headlines`, {
      key: admin.key,
      body: { type: 'EMPLOYEE', content: 'Eva passed her freight forwarding certification.' },
    });

    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ meetingId: meeting.id, userId: admin.user.id, type: 'EMPLOYEE', content: 'Eva passed her freight forwarding certification.' });
    expect((await app.request('GET', `/v1/meetings/${meeting.id}`, { key: admin.key })).body.headlines).toEqual([response.body]);
  });

  it('content empty after trimming or over 1000 characters is a rule violation; a missing or unknown type a format error; nothing is stored', async () => {
    const { meeting, member } = await setup();
    for (const content of ['   ', 'x'.repeat(1001)]) {
      expectRuleViolation(await app.request('POST', `/v1/meetings/${meeting.id}/segues`, { key: member.key, body: { content } }));
      expectRuleViolation(await app.request('POST', `/v1/meetings/${meeting.id}/headlines`, { key: member.key, body: { type: 'CUSTOMER', content } }));
    }
    for (const body of [{ content: 'News' }, { type: 'PARTNER', content: 'News' }]) {
      expectFormatError(await app.request('POST', `/v1/meetings/${meeting.id}/headlines`, { key: member.key, body }));
    }
    expectFormatError(await app.request('POST', `/v1/meetings/${meeting.id}/segues`, { key: member.key, body: {} }));
    const detail = await app.request('GET', `/v1/meetings/${meeting.id}`, { key: member.key });
    expect([detail.body.segues, detail.body.headlines]).toEqual([[], []]);
    const longest = await app.request('POST', `/v1/meetings/${meeting.id}/segues`, { key: member.key, body: { content: 'x'.repeat(1000) } });
    expect(longest.status).toBe(201);
  });

  it('these bodies are not strict: unknown fields are ignored', async () => {
    const { meeting, member } = await setup();
    const segue = await app.request('POST', `/v1/meetings/${meeting.id}/segues`, { key: member.key, body: { content: 'News', mood: 'happy' } });
    const headline = await app.request('POST', `/v1/meetings/${meeting.id}/headlines`, {
      key: member.key,
      body: { type: 'CUSTOMER', content: 'News', customerId: 'c-1' },
    });
    const message = await app.request('POST', `/v1/meetings/${meeting.id}/messages`, { key: member.key, body: { content: 'News', urgent: true } });
    const acknowledge = await app.request('POST', '/v1/messages/acknowledge', { key: member.key, body: { ids: [message.body.id], all: true } });
    expect([segue.status, headline.status, message.status, acknowledge.status]).toEqual([201, 201, 201, 204]);
  });

  it('segues, headlines and messages may be added in every status of the meeting', async () => {
    const { team, admin, member } = await setup();
    for (const status of ['SCHEDULED', 'COMPLETED'] as const) {
      const meeting = await createMeetingIn(app.db, team.id, admin.user.id, { status });
      expect((await app.request('POST', `/v1/meetings/${meeting.id}/segues`, { key: member.key, body: { content: 'News' } })).status).toBe(201);
      expect((await app.request('POST', `/v1/meetings/${meeting.id}/messages`, { key: member.key, body: { content: 'News' } })).status).toBe(201);
    }
  });

  it('Viewers get 403; a meeting the caller cannot see or that does not exist 404', async () => {
    const { meeting, viewer, person } = await setup();
    const orgMember = await person('MEMBER');
    expect((await app.request('POST', `/v1/meetings/${meeting.id}/segues`, { key: viewer.key, body: { content: 'News' } })).status).toBe(403);
    expect((await app.request('POST', `/v1/meetings/${meeting.id}/headlines`, { key: viewer.key, body: { type: 'CUSTOMER', content: 'News' } })).status).toBe(403);
    expect((await app.request('POST', `/v1/meetings/${meeting.id}/segues`, { key: orgMember.key, body: { content: 'News' } })).status).toBe(404);
    expect((await app.request('POST', `/v1/meetings/${unknownId}/headlines`, { key: viewer.key, body: { type: 'CUSTOMER', content: 'News' } })).status).toBe(404);
  });
});

describe(`cascading messages (${databaseLabel})`, () => {
  it('POST /meetings/{id}/messages adds a message of the meeting’s organization, not yet acknowledged by anyone', async () => {
    const { org, meeting, member } = await setup();

    const response = await app.request('POST', `/v1/meetings/${meeting.id}/messages`, {
      key: member.key,
      body: { content: ' From 1 December, Sales answers every quote request within one working day. ' },
    });

    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: response.body.id,
      revision: expect.any(Number),
      meetingId: meeting.id,
      userId: member.user.id,
      content: 'From 1 December, Sales answers every quote request within one working day.',
      createdAt: response.body.createdAt,
      acknowledged: false,
    });
    const stored = await app.db.selectFrom('cascading_messages').selectAll().where('id', '=', response.body.id).executeTakeFirstOrThrow();
    expect(stored.org_id).toBe(org.id);
  });

  it('DELETE /messages/{id} by a team Admin removes the message from the meeting; the author who is a Member gets 403', async () => {
    const { org, meeting, admin, member } = await setup();
    const message = await createMessage(app.db, { id: meeting.id, orgId: org.id }, member.user.id);

    expect((await app.request('DELETE', `/v1/messages/${message.id}`, { key: member.key })).status).toBe(403);
    const deleted = await app.request('DELETE', `/v1/messages/${message.id}`, { key: admin.key });
    expect([deleted.status, deleted.text]).toEqual([204, '']);
    expect((await app.request('GET', `/v1/meetings/${meeting.id}`, { key: admin.key })).body.messages).toEqual([]);
    expect((await app.request('DELETE', `/v1/messages/${message.id}`, { key: admin.key })).status).toBe(404);
  });

  it('a message of a team the caller cannot see is 404, like one that does not exist', async () => {
    const { org, meeting, member, person } = await setup();
    const orgMember = await person('MEMBER');
    const message = await createMessage(app.db, { id: meeting.id, orgId: org.id }, member.user.id);
    expect((await app.request('DELETE', `/v1/messages/${message.id}`, { key: orgMember.key })).status).toBe(404);
    expect((await app.request('DELETE', `/v1/messages/${unknownId}`, { key: orgMember.key })).status).toBe(404);
  });
});

describe(`acknowledging cascading messages (${databaseLabel})`, () => {
  it('POST /messages/acknowledge marks messages read by the caller (204); others are unaffected', async () => {
    const { org, meeting, admin, member } = await setup();
    const first = await createMessage(app.db, { id: meeting.id, orgId: org.id }, admin.user.id);
    const second = await createMessage(app.db, { id: meeting.id, orgId: org.id }, admin.user.id);

    const response = await app.request('POST', '/v1/messages/acknowledge', { key: member.key, body: { ids: [first.id, second.id] } });

    expect([response.status, response.text]).toEqual([204, '']);
    expect(await acknowledged(member.user.id)).toEqual([first.id, second.id].sort());
    const asMember = await app.request('GET', `/v1/meetings/${meeting.id}`, { key: member.key });
    const asAdmin = await app.request('GET', `/v1/meetings/${meeting.id}`, { key: admin.key });
    expect(asMember.body.messages.map((message: { acknowledged: boolean }) => message.acknowledged)).toEqual([true, true]);
    expect(asAdmin.body.messages.map((message: { acknowledged: boolean }) => message.acknowledged)).toEqual([false, false]);
  });

  it('repeating changes nothing, unknown ids are skipped, and repeated ids count once', async () => {
    const { org, meeting, admin, member } = await setup();
    const message = await createMessage(app.db, { id: meeting.id, orgId: org.id }, admin.user.id);
    await app.request('POST', '/v1/messages/acknowledge', { key: member.key, body: { ids: [message.id] } });
    const [firstTime] = await app.db.selectFrom('message_acknowledgements').select('acknowledged_at').where('user_id', '=', member.user.id).execute();

    const again = await app.request('POST', '/v1/messages/acknowledge', { key: member.key, body: { ids: [message.id, unknownId, message.id] } });
    const onlyUnknown = await app.request('POST', '/v1/messages/acknowledge', { key: member.key, body: { ids: [unknownId] } });

    expect([again.status, onlyUnknown.status]).toEqual([204, 204]);
    const rows = await app.db.selectFrom('message_acknowledgements').select('acknowledged_at').where('user_id', '=', member.user.id).execute();
    expect(rows).toEqual([firstTime]);
  });

  it('any member of the message’s organization may acknowledge it, in no team or as a Viewer', async () => {
    const { org, meeting, admin, viewer, person } = await setup();
    const orgMember = await person('MEMBER');
    const message = await createMessage(app.db, { id: meeting.id, orgId: org.id }, admin.user.id);
    for (const caller of [orgMember, viewer]) {
      expect((await app.request('POST', '/v1/messages/acknowledge', { key: caller.key, body: { ids: [message.id] } })).status).toBe(204);
      expect(await acknowledged(caller.user.id)).toEqual([message.id]);
    }
  });

  it('one message of an organization the caller is not a member of refuses the whole request (403) and acknowledges nothing', async () => {
    const { org, meeting, admin, member } = await setup();
    const own = await createMessage(app.db, { id: meeting.id, orgId: org.id }, admin.user.id);
    const foreignOrg = await createOrganization(app.db);
    const foreignTeam = await createTeam(app.db, foreignOrg.id);
    const foreignAuthor = await createCaller(app.db);
    await addOrganizationMember(app.db, foreignOrg.id, foreignAuthor.user.id, 'OWNER');
    const foreignMeeting = await createMeetingIn(app.db, foreignTeam.id, foreignAuthor.user.id);
    const foreign = await createMessage(app.db, { id: foreignMeeting.id, orgId: foreignOrg.id }, foreignAuthor.user.id);

    const response = await app.request('POST', '/v1/messages/acknowledge', { key: member.key, body: { ids: [own.id, unknownId, foreign.id] } });

    expect([response.status, response.body.error.code]).toEqual([403, 'forbidden']);
    expect(await acknowledged(member.user.id)).toEqual([]);
  });

  it('a message of a suspended organization gives 409 orgSuspended and nothing is acknowledged', async () => {
    const suspended = await createMeetingWorld(app.db, { suspended: true });
    const meeting = await createMeetingIn(app.db, suspended.team.id, suspended.admin.user.id);
    const message = await createMessage(app.db, { id: meeting.id, orgId: suspended.org.id }, suspended.admin.user.id);

    const response = await app.request('POST', '/v1/messages/acknowledge', { key: suspended.member.key, body: { ids: [message.id] } });

    expect([response.status, response.body.error.code]).toEqual([409, 'orgSuspended']);
    expect(await acknowledged(suspended.member.user.id)).toEqual([]);
  });

  it('a body without ids is a format error; an empty list or more than 500 ids a rule violation (a bound); 500 are accepted', async () => {
    const { member } = await setup();
    expectFormatError(await app.request('POST', '/v1/messages/acknowledge', { key: member.key, body: {} }));
    expectRuleViolation(await app.request('POST', '/v1/messages/acknowledge', { key: member.key, body: { ids: [] } }));
    const many = (count: number) => Array.from({ length: count }, (_, index) => `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`);
    expectRuleViolation(await app.request('POST', '/v1/messages/acknowledge', { key: member.key, body: { ids: many(501) } }));
    expect((await app.request('POST', '/v1/messages/acknowledge', { key: member.key, body: { ids: many(500) } })).status).toBe(204);
  });
});

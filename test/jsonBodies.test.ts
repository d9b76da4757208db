import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toTask } from '../src/records/tasks.js';
import { databaseLabel } from './support/database.js';
import { createMeeting, createTasks } from './support/executionFactories.js';
import { createTeamWorld } from './support/factories.js';
import { expectPagesAsMapped, trickyInstants, trickyTexts } from './support/jsonBodies.js';
import { startTestApp, type TestApp } from './support/testApp.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

describe(`bodies written by PostgreSQL answer byte for byte what the mappers write (${databaseLabel})`, () => {
  it('GET /teams/{teamId}/tasks, unfiltered and filtered', async () => {
    const { team, person } = await createTeamWorld(app.db);
    const member = await person('MEMBER', 'MEMBER');
    const meeting = await createMeeting(app.db, team.id, member.user.id);
    await createTasks(app.db, team.id, member.user.id, 12, (index) => ({
      title: trickyTexts[index % trickyTexts.length],
      dueDate: index % 2 ? '2026-02-28' : '2100-12-31',
      completedAt: index % 3 ? null : trickyInstants[index % trickyInstants.length],
      meetingId: index % 4 ? null : meeting.id,
      createdAt: trickyInstants[index % trickyInstants.length]!,
    }));
    const rows = await app.db.selectFrom('tasks').selectAll().where('team_id', '=', team.id).orderBy('created_at').orderBy('id').execute();
    const list = { key: member.key, map: toTask, cursorOf: (row: (typeof rows)[number]) => [row.created_at, row.id] };
    await expectPagesAsMapped(app, { ...list, path: `/v1/teams/${team.id}/tasks`, rows }, 5);
    await expectPagesAsMapped(app, { ...list, path: `/v1/teams/${team.id}/tasks?completed=true`, rows: rows.filter((row) => row.completed) }, 2);
  });

  it('GET /tasks/{id}, written by PostgreSQL like the list, answers what the mapper writes', async () => {
    const { team, person } = await createTeamWorld(app.db);
    const member = await person('MEMBER', 'MEMBER');
    const meeting = await createMeeting(app.db, team.id, member.user.id);
    await createTasks(app.db, team.id, member.user.id, 7, (index) => ({
      title: trickyTexts[index % trickyTexts.length],
      dueDate: index % 2 ? '2026-02-28' : '2100-12-31',
      completedAt: index % 3 ? null : trickyInstants[(index + 3) % trickyInstants.length],
      meetingId: index % 4 ? null : meeting.id,
      createdAt: trickyInstants[index % trickyInstants.length]!,
    }));
    const rows = await app.db.selectFrom('tasks').selectAll().where('team_id', '=', team.id).execute();
    for (const row of rows) {
      const response = await app.request('GET', `/v1/tasks/${row.id}`, { key: member.key });
      expect(response.status).toBe(200);
      expect(response.text).toBe(JSON.stringify(toTask(row)));
    }
  });
});


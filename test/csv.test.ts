/**
 * CSV out and in (issue 45): a team's tasks, issues, goals and Scorecard exported as the caller may
 * read them, streamed in constant memory; formulas neutralised; and what goes out comes back in.
 */
import { parse } from 'csv-parse/sync';
import { get, type IncomingMessage } from 'node:http';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseLabel } from './support/database.js';
import { createGoal, createIssue, createMilestone, createTask } from './support/executionFactories.js';
import { addTeamMember, createTeam, createTeamWorld } from './support/factories.js';
import { createMetric, createMetricValues } from './support/scorecardFactories.js';
import { csvFile, startTestApp, type TestApp } from './support/testApp.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const BOM = '\uFEFF';

/** The export's bytes as sent, the byte-order mark included (`Response.text()` would drop it). */
async function download(path: string, key: string) {
  const response = await app.request('GET', path, { key });
  const raw = await fetch(`${app.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
  const bytes = Buffer.from(await raw.arrayBuffer());
  return { response, bytes, text: bytes.toString('utf8') };
}

/** The rows of a CSV file, its header first. */
const rowsOf = (text: string): string[][] => parse(text, { bom: true, relax_column_count: true });

async function setup() {
  const world = await createTeamWorld(app.db);
  const member = await world.person('MEMBER', 'MEMBER');
  const owner = await world.person('MEMBER', 'ADMIN');
  return { ...world, member, owner };
}

describe(`CSV export (${databaseLabel})`, () => {
  it('answers the tasks as UTF-8 with a byte-order mark, comma separated, CRLF line ends, a header row, oldest first', async () => {
    const { team, member } = await setup();
    const first = await createTask(app.db, team.id, member.user.id, { title: 'Book the venue', dueDate: '2026-11-27', createdAt: new Date('2026-11-16T09:00:00.000Z') });
    const second = await createTask(app.db, team.id, member.user.id, {
      title: 'Send the quote',
      dueDate: '2026-11-20',
      completedAt: new Date('2026-11-18T15:03:44.001Z'),
      createdAt: new Date('2026-11-16T10:00:00.000Z'),
    });

    const { response, bytes, text } = await download(`/v1/teams/${team.id}/tasks/csv`, member.key);

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="tasks.csv"');
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(text).toBe(
      `${BOM}id,title,ownerEmail,dueDate,completed,completedAt,createdAt\r\n` +
        `${first.id},Book the venue,${member.user.email},2026-11-27,false,,2026-11-16T09:00:00.000Z\r\n` +
        `${second.id},Send the quote,${member.user.email},2026-11-20,true,2026-11-18T15:03:44.001Z,2026-11-16T10:00:00.000Z\r\n`,
    );
  });

  it('quotes only the cells that hold a comma, a quote or a line break, a quote doubled', async () => {
    const { team, member } = await setup();
    await createTask(app.db, team.id, member.user.id, { title: 'Call "Jonas", then\nwrite it up' });

    const { text } = await download(`/v1/teams/${team.id}/tasks/csv`, member.key);

    expect(text).toContain(',"Call ""Jonas"", then\nwrite it up",');
    expect(rowsOf(text)[1]![1]).toBe('Call "Jonas", then\nwrite it up');
  });

  it('neutralises every cell a spreadsheet would run as a formula with a leading single quote, and leaves plain numbers', async () => {
    const { team, member } = await setup();
    const metric = await createMetric(app.db, team.id, member.user.id, { title: '=1+1' });
    await createMetricValues(app.db, metric.id, member.user.id, '2026-11-16', 1, () => '-5');
    const formulas = ['=HYPERLINK("http://x.example","click")', '+1+1', '-2+3', '@SUM(A1)', '\tx', '\rx', "'=already quoted"];
    for (const [index, title] of formulas.entries()) await createTask(app.db, team.id, member.user.id, { title, createdAt: new Date(Date.UTC(2026, 10, 16, 9, index)) });

    const tasks = rowsOf((await download(`/v1/teams/${team.id}/tasks/csv`, member.key)).text);
    const scorecard = rowsOf((await download(`/v1/teams/${team.id}/scorecard/csv`, member.key)).text);

    expect(tasks.slice(1).map((row) => row[1])).toEqual(formulas.map((title) => `'${title}`));
    expect(scorecard).toEqual([
      ['week', "'=1+1"],
      ['2026-11-16', '-5'],
    ]);
  });

  it('answers the issues with their columns', async () => {
    const { team, member } = await setup();
    const issue = await createIssue(app.db, team.id, member.user.id, {
      title: 'Carrier misses the Friday pickup',
      description: 'Third time',
      priority: 'HIGH',
      status: 'SOLVED',
      resolvedAt: new Date('2026-11-18T10:00:00.000Z'),
      createdAt: new Date('2026-11-16T09:50:00.000Z'),
    });

    const { response, text } = await download(`/v1/teams/${team.id}/issues/csv`, member.key);

    expect(response.headers.get('content-disposition')).toBe('attachment; filename="issues.csv"');
    expect(rowsOf(text)).toEqual([
      ['id', 'title', 'description', 'priority', 'status', 'createdByEmail', 'resolvedAt', 'createdAt'],
      [issue.id, 'Carrier misses the Friday pickup', 'Third time', 'HIGH', 'SOLVED', member.user.email, '2026-11-18T10:00:00.000Z', '2026-11-16T09:50:00.000Z'],
    ]);
  });

  it('answers a goal once per milestone, and a goal without milestones once with the milestone cells empty', async () => {
    const { team, member } = await setup();
    const goal = await createGoal(app.db, team, member.user.id, { title: 'Open the depot', createdAt: new Date('2026-10-01T08:00:00.000Z') });
    const lease = await createMilestone(app.db, goal.id, { title: 'Sign the lease', dueDate: '2026-10-30', completed: true, createdAt: new Date('2026-10-01T08:01:00.000Z') });
    const hire = await createMilestone(app.db, goal.id, { title: 'Hire the lead', dueDate: null, createdAt: new Date('2026-10-01T08:02:00.000Z') });
    const bare = await createGoal(app.db, team, member.user.id, { title: 'Cut late deliveries', description: 'Weekly', level: 'COMPANY', status: 'OFF_TRACK', createdAt: new Date('2026-10-02T08:00:00.000Z') });

    const { text } = await download(`/v1/teams/${team.id}/goals/csv`, member.key);

    const email = member.user.email;
    expect(rowsOf(text)).toEqual([
      ['goalId', 'title', 'description', 'ownerEmail', 'quarter', 'level', 'status', 'milestoneId', 'milestoneTitle', 'milestoneDueDate', 'milestoneCompleted'],
      [goal.id, 'Open the depot', '', email, '2026-Q4', 'DEPARTMENT', 'ON_TRACK', lease.id, 'Sign the lease', '2026-10-30', 'true'],
      [goal.id, 'Open the depot', '', email, '2026-Q4', 'DEPARTMENT', 'ON_TRACK', hire.id, 'Hire the lead', '', 'false'],
      [bare.id, 'Cut late deliveries', 'Weekly', email, '2026-Q4', 'COMPANY', 'OFF_TRACK', '', '', '', ''],
    ]);
  });

  it('answers the Scorecard as weeks by metrics in Scorecard order, a week per row that has any value', async () => {
    const { team, member } = await setup();
    const revenue = await createMetric(app.db, team.id, member.user.id, { title: 'Revenue, EUR' });
    const delivery = await createMetric(app.db, team.id, member.user.id, { title: 'On-time delivery' });
    await createMetricValues(app.db, revenue.id, member.user.id, '2026-11-02', 3, (index) => String(241000 + index));
    await createMetricValues(app.db, delivery.id, member.user.id, '2026-11-09', 2, (index) => (index === 0 ? '96' : '94,5'));

    const { response, text } = await download(`/v1/teams/${team.id}/scorecard/csv`, member.key);

    expect(response.headers.get('content-disposition')).toBe('attachment; filename="scorecard.csv"');
    expect(text).toBe(`${BOM}week,"Revenue, EUR",On-time delivery\r\n2026-11-02,241000,\r\n2026-11-09,241001,96\r\n2026-11-16,241002,"94,5"\r\n`);
  });

  it("answers only the team's own records, and refuses a caller who cannot see the team", async () => {
    const { org, team, member, person } = await setup();
    const other = await createTeam(app.db, org.id);
    await createTask(app.db, other.id, member.user.id, { title: 'Not this team' });
    await createTask(app.db, team.id, member.user.id, { title: 'This team' });
    const outsider = await person('MEMBER');

    const { text } = await download(`/v1/teams/${team.id}/tasks/csv`, member.key);
    const refused = await app.request('GET', `/v1/teams/${team.id}/tasks/csv`, { key: outsider.key });

    expect(rowsOf(text).map((row) => row[1])).toEqual(['title', 'This team']);
    expect(refused.status).toBe(403);
  });

  it('answers an empty team with the header row alone', async () => {
    const { team, member } = await setup();

    expect((await download(`/v1/teams/${team.id}/issues/csv`, member.key)).text).toBe(
      `${BOM}id,title,description,priority,status,createdByEmail,resolvedAt,createdAt\r\n`,
    );
    expect((await download(`/v1/teams/${team.id}/scorecard/csv`, member.key)).text).toBe(`${BOM}week\r\n`);
  });

  it('answers the next request as ever when a client goes away in the middle of an export', async () => {
    const { team, member } = await setup();
    await sql`
      insert into tasks (team_id, owner_id, title, due_date, created_at)
      select ${team.id}, ${member.user.id}, 'Task number ' || n, '2026-11-27', to_timestamp(1700000000 + n)
      from generate_series(1, 5000) n
    `.execute(app.db);

    const firstBytes = await new Promise<number>((received, failed) => {
      const request = get(`${app.url}/v1/teams/${team.id}/tasks/csv`, { agent: false, headers: { authorization: `Bearer ${member.key}` } }, (response) => {
        response.once('data', (chunk: Buffer) => {
          request.destroy();
          received(chunk.length);
        });
      });
      request.on('error', () => undefined);
      request.on('timeout', failed);
    });
    const next = await app.request('GET', `/v1/teams/${team.id}/tasks?limit=1`, { key: member.key });

    expect(firstBytes).toBeGreaterThan(0);
    expect(next.status).toBe(200);
  });

  it(
    'streams 50,000 tasks in batches, each once and in order, while the heap stays within a bound',
    async () => {
      const { team, member } = await setup();
      const count = 50_000;
      // Many tasks share an instant (seven a second), so that the walk relies on the id as well.
      await sql`
        insert into tasks (team_id, owner_id, title, due_date, created_at)
        select ${team.id}, ${member.user.id}, 'Task number ' || n, '2026-11-27', to_timestamp(1700000000 + n / 7)
        from generate_series(1, ${count}::int) n
      `.execute(app.db);
      global.gc?.();
      const before = process.memoryUsage().heapUsed;
      let peak = before;
      // A connection of its own: the pool's idle one may have been closed by the server during the seeding.
      const response = await new Promise<IncomingMessage>((answered, failed) =>
        get(`${app.url}/v1/teams/${team.id}/tasks/csv`, { agent: false, headers: { authorization: `Bearer ${member.key}` } }, answered).on('error', failed),
      );
      const decoder = new TextDecoder();
      let lines = 0;
      let rest = '';
      const seen = new Uint8Array(count + 1);
      for await (const chunk of response) {
        const text = rest + decoder.decode(chunk as Buffer, { stream: true });
        const parts = text.split('\r\n');
        rest = parts.pop()!;
        for (const line of parts) {
          lines++;
          if (lines > 1) seen[Number(/,Task number (\d+),/.exec(line)![1])]! += 1;
        }
        peak = Math.max(peak, process.memoryUsage().heapUsed);
      }

      expect(response.statusCode).toBe(200);
      expect(lines).toBe(count + 1);
      expect(seen.subarray(1).every((times) => times === 1)).toBe(true);
      // About 4 MB of CSV went through: a server that held it all, as rows and text, would hold several times that.
      expect(peak - before).toBeLessThan(64 * 1024 * 1024);
    },
    180_000,
  );
});

const importCsv = (teamId: string, kind: 'tasks' | 'issues' | 'scorecard', key: string, file: string | Uint8Array, options: { dryRun?: boolean; headers?: Record<string, string>; contentType?: string } = {}) =>
  app.request('POST', `/v1/teams/${teamId}/${kind}/csv${options.dryRun ? '?dryRun=true' : ''}`, { key, body: csvFile(file, options.contentType), headers: options.headers });

/** What a list shows of its records, ids and revisions aside. */
const withoutIds = (records: Record<string, unknown>[]) => records.map(({ id: _id, revision: _revision, teamId: _teamId, ...rest }) => rest);

const listOf = async (teamId: string, kind: 'tasks' | 'issues', key: string) => (await app.request('GET', `/v1/teams/${teamId}/${kind}?limit=200`, { key })).body.data as Record<string, unknown>[];

const countOf = async (table: 'tasks' | 'issues' | 'metric_values', teamId: string) =>
  table === 'metric_values'
    ? Number((await sql<{ n: string }>`select count(*) as n from metric_values v join metrics m on m.id = v.metric_id where m.team_id = ${teamId}`.execute(app.db)).rows[0]!.n)
    : Number((await app.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).where('team_id', '=', teamId).executeTakeFirstOrThrow()).n);

const eventsOf = async (orgId: string, key: string, type: string) =>
  ((await app.request('GET', `/v1/orgs/${orgId}/events?types=${type}&limit=200`, { key })).body.data as { data: { object: unknown } }[]).map((event) => event.data.object);

/** Two teams of one organization with the same people, the second empty. */
async function twoTeams() {
  const world = await setup();
  const target = await createTeam(app.db, world.org.id);
  for (const person of [world.member, world.owner]) await addTeamMember(app.db, target.id, person.user.id, 'MEMBER');
  const orgOwner = await world.person('OWNER');
  return { ...world, target, orgOwner };
}

describe(`CSV import (${databaseLabel})`, () => {
  it("brings a team's exported tasks into another team: the lists are equal, ids aside", async () => {
    const { team, target, member, owner } = await twoTeams();
    await createTask(app.db, team.id, member.user.id, { title: '=HYPERLINK("x")', dueDate: '2026-11-27', createdAt: new Date('2026-11-16T09:00:00.000Z') });
    await createTask(app.db, team.id, owner.user.id, { title: 'Call "Jonas", then\nwrite', completedAt: new Date('2026-11-18T15:03:44.001Z'), createdAt: new Date('2026-11-16T10:00:00.000Z') });
    await createTask(app.db, team.id, member.user.id, { title: '-5', createdAt: new Date('2026-11-16T11:00:00.000Z') });

    const exported = (await download(`/v1/teams/${team.id}/tasks/csv`, member.key)).bytes;
    const imported = await importCsv(target.id, 'tasks', member.key, exported);

    expect(imported.status).toBe(200);
    expect(imported.body).toEqual({ teamId: target.id, kind: 'tasks', dryRun: false, rows: 3, written: 3 });
    expect(withoutIds(await listOf(target.id, 'tasks', member.key))).toEqual(withoutIds(await listOf(team.id, 'tasks', member.key)));
  });

  it("brings a team's exported issues into another team: the lists are equal, ids aside", async () => {
    const { team, target, member, owner } = await twoTeams();
    await createIssue(app.db, team.id, member.user.id, { title: 'Carrier late', description: '@once, "twice"', priority: 'HIGH', createdAt: new Date('2026-11-16T09:00:00.000Z') });
    await createIssue(app.db, team.id, owner.user.id, { title: 'Forecast', status: 'SOLVED', createdAt: new Date('2026-11-16T10:00:00.000Z') });

    const exported = (await download(`/v1/teams/${team.id}/issues/csv`, member.key)).bytes;
    const imported = await importCsv(target.id, 'issues', owner.key, exported);

    expect(imported.body).toMatchObject({ kind: 'issues', rows: 2, written: 2 });
    expect(withoutIds(await listOf(target.id, 'issues', member.key))).toEqual(withoutIds(await listOf(team.id, 'issues', member.key)));
  });

  it("brings a team's exported Scorecard into another team with the same metrics: the Scorecards are equal, ids aside", async () => {
    const { team, target, member } = await twoTeams();
    for (const teamId of [team.id, target.id]) {
      await createMetric(app.db, teamId, member.user.id, { title: 'Revenue, EUR', goal: '>=250000' });
      await createMetric(app.db, teamId, member.user.id, { title: '=Delta', goal: '<=0' });
    }
    const [revenue, delta] = await app.db.selectFrom('metrics').selectAll().where('team_id', '=', team.id).orderBy('position').execute();
    await createMetricValues(app.db, revenue!.id, member.user.id, '2026-11-02', 3, (index) => String(249999 + index));
    await createMetricValues(app.db, delta!.id, member.user.id, '2026-11-09', 2, (index) => (index === 0 ? '-5' : '+1'));
    // The on-track marks as the goal judges them, which an import computes.
    await sql`update metric_values set on_track = (metric_id = ${revenue!.id} and value::int >= 250000) or (metric_id = ${delta!.id} and value::int <= 0)`.execute(app.db);

    const exported = (await download(`/v1/teams/${team.id}/scorecard/csv`, member.key)).bytes;
    const imported = await importCsv(target.id, 'scorecard', member.key, exported);

    const view = async (teamId: string) =>
      ((await app.request('GET', `/v1/teams/${teamId}/scorecard?from=2026-11-02&to=2026-11-16`, { key: member.key })).body.metrics as { title: string; values: { week: string; value: string; onTrack: boolean }[] }[]).map(
        (metric) => ({ title: metric.title, values: metric.values.map(({ week, value, onTrack }) => ({ week, value, onTrack })) }),
      );
    expect(imported.body).toMatchObject({ kind: 'scorecard', rows: 3, written: 5 });
    expect(await view(target.id)).toEqual(await view(team.id));
  });

  it('answers what a dry run would write, and writes nothing and sends no event', async () => {
    const { org, target, member, orgOwner } = await twoTeams();

    const answer = await importCsv(target.id, 'tasks', member.key, `title,ownerEmail,dueDate\r\nBook the venue,${member.user.email.toUpperCase()},2026-11-27\r\n`, { dryRun: true });

    expect(answer.body).toEqual({ teamId: target.id, kind: 'tasks', dryRun: true, rows: 1, written: 1 });
    expect(await countOf('tasks', target.id)).toBe(0);
    expect(await eventsOf(org.id, orgOwner.key, 'csv_import.completed')).toEqual([]);
  });

  it("answers every row's errors in a dry run, naming each row and column", async () => {
    const { target, member } = await twoTeams();
    const file = [
      'title,ownerEmail,dueDate,completed',
      `Fine,${member.user.email},2026-11-27,false`,
      'Nobody,nobody@example.com,2026-11-27,',
      `Bad day,${member.user.email},2026-02-30,maybe`,
    ].join('\r\n');

    const answer = await importCsv(target.id, 'tasks', member.key, file, { dryRun: true });

    expect(answer.status).toBe(422);
    expect(answer.body.error.issues).toEqual([
      expect.objectContaining({ code: 'invalid_value', path: ['rows', '3', 'ownerEmail'], message: 'Row 3, column ownerEmail: no member of the team has the e-mail address nobody@example.com.' }),
      expect.objectContaining({ code: 'invalid_value', path: ['rows', '4', 'completed'] }),
      expect.objectContaining({ code: 'invalid_format', path: ['rows', '4', 'dueDate'], format: 'date' }),
    ]);
    expect(await countOf('tasks', target.id)).toBe(0);
  });

  it('writes all rows in one transaction and sends one csv_import.completed event with the answer', async () => {
    const { org, target, member, orgOwner } = await twoTeams();
    const rows = Array.from({ length: 300 }, (_, index) => `Task ${index},${member.user.email},2026-11-27`);

    const answer = await importCsv(target.id, 'tasks', member.key, ['title,ownerEmail,dueDate', ...rows].join('\r\n'));

    expect(answer.body.written).toBe(300);
    expect((await listOf(target.id, 'tasks', member.key)).slice(0, 3).map((task) => task.title)).toEqual(['Task 0', 'Task 1', 'Task 2']);
    expect(await eventsOf(org.id, orgOwner.key, 'csv_import.completed')).toEqual([answer.body]);
    expect(await eventsOf(org.id, orgOwner.key, 'task.created')).toEqual([]);
  });

  it('answers a retry with the same Idempotency-Key with the first answer, writing once', async () => {
    const { target, member } = await twoTeams();
    const file = `title,ownerEmail,dueDate\r\nOnce,${member.user.email},2026-11-27\r\n`;
    const headers = { 'Idempotency-Key': `csv-${target.id}` };

    const first = await importCsv(target.id, 'tasks', member.key, file, { headers });
    const again = await importCsv(target.id, 'tasks', member.key, file, { headers });

    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
    expect(await countOf('tasks', target.id)).toBe(1);
  });

  it('writes nothing when one row of many is bad', async () => {
    const { target, member } = await twoTeams();
    const rows = Array.from({ length: 50 }, (_, index) => `Task ${index},${member.user.email},${index === 49 ? 'soon' : '2026-11-27'}`);

    const answer = await importCsv(target.id, 'tasks', member.key, ['title,ownerEmail,dueDate', ...rows].join('\r\n'));

    expect(answer.status).toBe(422);
    expect(answer.body.error.issues).toEqual([expect.objectContaining({ path: ['rows', '51', 'dueDate'] })]);
    expect(await countOf('tasks', target.id)).toBe(0);
  });

  it('refuses a formula in every cell, naming each, and writes nothing', async () => {
    const { target, member } = await twoTeams();

    const answer = await importCsv(target.id, 'issues', member.key, 'title,description\r\n=1+1,@SUM(A1)\r\n+cmd,-2+3\r\n');

    expect(answer.status).toBe(422);
    expect(answer.body.error.issueCount).toBe(4);
    expect(answer.body.error.issues.map((issue: { code: string; path: string[] }) => [issue.code, ...issue.path])).toEqual([
      ['formula', 'rows', '2', 'title'],
      ['formula', 'rows', '2', 'description'],
      ['formula', 'rows', '3', 'title'],
      ['formula', 'rows', '3', 'description'],
    ]);
    expect(await countOf('issues', target.id)).toBe(0);
  });

  it('refuses duplicate rows, unknown columns and a week that is not a Monday, each named', async () => {
    const { target, member } = await twoTeams();
    await createMetric(app.db, target.id, member.user.id, { title: 'Leads', goal: '>=25' });

    const tasks = await importCsv(target.id, 'tasks', member.key, `id,title,ownerEmail,dueDate\r\nt1,A,${member.user.email},2026-11-27\r\nt1,B,${member.user.email},2026-11-27\r\n`);
    const columns = await importCsv(target.id, 'issues', member.key, 'title,colour\r\nA,red\r\n');
    const scorecard = await importCsv(target.id, 'scorecard', member.key, 'week,Leads\r\n2026-11-17,30\r\n2026-11-16,31\r\n2026-11-16,32\r\n');

    expect(tasks.body.error.issues).toEqual([expect.objectContaining({ code: 'duplicate', path: ['rows', '3', 'id'], message: 'Row 3, column id: repeats row 2; each id at most once.' })]);
    expect(columns.body.error.issues).toEqual([expect.objectContaining({ code: 'unrecognized_keys', path: ['rows', '1', 'colour'], keys: ['colour'] })]);
    expect(scorecard.body.error.issues).toEqual([
      expect.objectContaining({ code: 'invalid_value', path: ['rows', '2', 'week'], message: 'Row 2, column week: 2026-11-17 is not a Monday; a week is given by its Monday.' }),
      expect.objectContaining({ code: 'duplicate', path: ['rows', '4', 'week'] }),
    ]);
    expect(await countOf('metric_values', target.id)).toBe(0);
  });

  it('refuses malformed CSV, a quote that never closes and a header row alone, each with a clear 422', async () => {
    const { target, member } = await twoTeams();
    const header = 'title,ownerEmail,dueDate';

    const unclosed = await importCsv(target.id, 'tasks', member.key, `${header}\r\n"Never closed,${member.user.email},2026-11-27\r\n`);
    const ragged = await importCsv(target.id, 'tasks', member.key, `${header}\r\nA,${member.user.email}\r\n`);
    const headerOnly = await importCsv(target.id, 'tasks', member.key, `${header}\r\n`);
    const empty = await importCsv(target.id, 'tasks', member.key, '');

    expect(unclosed.body.error.issues).toEqual([expect.objectContaining({ code: 'invalid_csv', path: ['rows', '2'] })]);
    expect(unclosed.body.error.issues[0].message).toMatch(/^Row 2: Quote Not Closed/);
    expect(ragged.body.error.issues).toEqual([expect.objectContaining({ code: 'invalid_csv', path: ['rows', '2'], message: 'Row 2: Invalid Record Length: expect 3, got 2.' })]);
    expect(headerOnly.body.error.issues).toEqual([expect.objectContaining({ code: 'too_small', path: ['rows'] })]);
    expect(empty.status).toBe(422);
    expect(await countOf('tasks', target.id)).toBe(0);
  });

  it('refuses a UTF-16 file, bytes that are no UTF-8 and another media type with 415', async () => {
    const { target, member } = await twoTeams();
    const text = `title,ownerEmail,dueDate\r\nA,${member.user.email},2026-11-27\r\n`;
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);

    const asUtf16 = await importCsv(target.id, 'tasks', member.key, utf16);
    const asLatin1 = await importCsv(target.id, 'tasks', member.key, Buffer.from('title\r\nCaf\xe9\r\n', 'latin1'));
    const asJson = await importCsv(target.id, 'tasks', member.key, text, { contentType: 'application/json' });

    expect([asUtf16.status, asLatin1.status, asJson.status]).toEqual([415, 415, 415]);
    expect(asUtf16.body.error.message).toContain('UTF-16');
    expect(await countOf('tasks', target.id)).toBe(0);
  });

  it('refuses a 10 MB file and a file of 100,000 rows with 413', async () => {
    const { target, member } = await twoTeams();
    const big = `title,ownerEmail,dueDate\r\n${`A,${member.user.email},2026-11-27\r\n`.repeat(Math.ceil((10 * 1024 * 1024) / 40))}`;
    const many = `title\r\n${'A\r\n'.repeat(100_000)}`;

    const tooBig = await importCsv(target.id, 'tasks', member.key, big);
    const tooMany = await importCsv(target.id, 'issues', member.key, many);

    expect(tooBig.status).toBe(413);
    expect(tooMany.status).toBe(413);
    expect(tooMany.body.error.message).toBe('The CSV holds more than 10,000 rows; split it into several imports.');
    expect(await countOf('issues', target.id)).toBe(0);
  });

  it('refuses a Viewer of the team and lets the Scorecard value rules decide each cell', async () => {
    const { target, member, person } = await twoTeams();
    const viewer = await person('MEMBER');
    await addTeamMember(app.db, target.id, viewer.user.id, 'VIEWER');
    await createMetric(app.db, target.id, member.user.id, { title: 'Mood', goal: 'Good' });

    const refused = await importCsv(target.id, 'scorecard', viewer.key, 'week,Mood\r\n2026-11-16,Good\r\n');
    const unjudgeable = await importCsv(target.id, 'scorecard', member.key, 'week,Mood\r\n2026-11-16,Tired\r\n');

    expect(refused.status).toBe(403);
    expect(unjudgeable.body.error.issues).toEqual([expect.objectContaining({ code: 'invalid_value', path: ['rows', '2', 'Mood'] })]);
  });
});

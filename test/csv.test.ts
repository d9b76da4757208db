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
import { createTeam, createTeamWorld } from './support/factories.js';
import { createMetric, createMetricValues } from './support/scorecardFactories.js';
import { startTestApp, type TestApp } from './support/testApp.js';

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

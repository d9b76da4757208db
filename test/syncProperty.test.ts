/**
 * The property of `client.sync` (issue 44, Proof): whatever happens, in whatever order, a reader's
 * local copy ends equal to what fresh reads answer that reader. fast-check draws, for a reader of each
 * role, an interleaving of: writers in different roles changing tasks, issues, a running meeting
 * (ratings hidden, then revealed; messages) and people reviews; the reader's own changes made through
 * the client that holds the copy; the reader's load at any point; their streams cut and reconnecting;
 * their removal from the team and their return; their organization role changed (Admin or Member,
 * which decides what they may see); and the log's expiry, which forces a reload (410).
 * After the last step the copy must converge to the team, members, open tasks and open issues as the
 * lists answer, each record it holds as its GET answers, the meetings and the people reviews as their
 * lists answer (a meeting's `ratingWindow` left out: it follows the clock, not the log) — or, when the
 * reader may no longer read the team, to nothing.
 *
 * A fixed seed and one run per role in `make test`; SYNC_PROPERTY_RUNS and SYNC_PROPERTY_SEED run more
 * (docs/testing.md). A failure prints the seed, the replay path and the shrunk steps.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTeamOsClient, type SyncStore } from '../client/src/index.js';
import { databaseLabel } from './support/database.js';
import { createTeamWorld } from './support/factories.js';
import { createMeetingIn } from './support/meetingFactories.js';
import { startProxy, type Proxy } from './support/proxy.js';
import { cuttableFetch, expectConverged } from './support/sync.js';
import { startTestApp, type TestApp } from './support/testApp.js';

const runs = Number(process.env.SYNC_PROPERTY_RUNS ?? 1);
/** SYNC_DEBUG=1 prints each step, the copy's states and the failures it retried, with the time since the run began. */
const debug = process.env.SYNC_DEBUG ? (started: number, ...what: unknown[]) => console.log(`${Date.now() - started} ms`, ...what) : () => undefined;
const seed = Number(process.env.SYNC_PROPERTY_SEED ?? 44);

let app: TestApp;
let proxy: Proxy;
beforeAll(async () => {
  app = await startTestApp();
  proxy = await startProxy(app.url);
});
afterAll(async () => {
  await proxy.close();
  await app.close();
});

/** The reader's standing: an Owner of the organization outside the team, or a member of the team in a team role. */
const roles = ['OWNER', 'ADMIN', 'MEMBER', 'VIEWER'] as const;
type Role = (typeof roles)[number];
type Writer = 'owner' | 'admin' | 'member';

const writer = fc.constantFrom<Writer>('owner', 'admin', 'member');
const step = fc.oneof(
  fc.record({ do: fc.constant('createTask' as const), by: writer }),
  fc.record({ do: fc.constant('completeTask' as const), by: writer, pick: fc.nat(), completed: fc.boolean() }),
  fc.record({ do: fc.constant('deleteTask' as const), by: writer, pick: fc.nat() }),
  fc.record({ do: fc.constant('createIssue' as const), by: writer }),
  fc.record({ do: fc.constant('moveIssue' as const), by: writer, pick: fc.nat(), status: fc.constantFrom('OPEN', 'SOLVING', 'SOLVED') }),
  fc.record({ do: fc.constant('rate' as const), by: fc.constantFrom('admin', 'member', 'reader'), rating: fc.integer({ min: 1, max: 10 }) }),
  fc.record({ do: fc.constant('reveal' as const) }),
  fc.record({ do: fc.constant('message' as const), by: writer }),
  fc.record({ do: fc.constant('acknowledge' as const) }),
  fc.record({ do: fc.constant('review' as const), about: fc.constantFrom('member', 'reader') }),
  fc.record({ do: fc.constant('readerTask' as const) }),
  fc.record({ do: fc.constant('cut' as const) }),
  fc.record({ do: fc.constant('remove' as const) }),
  fc.record({ do: fc.constant('readd' as const) }),
  fc.record({ do: fc.constant('orgRole' as const), role: fc.constantFrom('ADMIN', 'MEMBER') }),
  fc.record({ do: fc.constant('expire' as const) }),
);
type Step = typeof step extends fc.Arbitrary<infer S> ? S : never;

const scores = { 'Deliver on our promises': true, 'Do the right thing': true, 'Help first': true, 'Grow or die': false };

async function play(role: Role, steps: Step[], loadAt: number): Promise<void> {
  const { org, team, person } = await createTeamWorld(app.db);
  const people = {
    owner: await person('OWNER'),
    admin: await person('MEMBER', 'ADMIN'),
    member: await person('MEMBER', 'MEMBER'),
    reader: role === 'OWNER' ? await person('OWNER') : await person('MEMBER', role),
  };
  const meeting = await createMeetingIn(app.db, team.id, people.admin.user.id, { status: 'IN_PROGRESS', startedAt: new Date() });
  const started = Date.now();
  const network = cuttableFetch();
  const client = createTeamOsClient({ baseUrl: `${proxy.url}/v1`, apiKey: people.reader.key, fetch: network.fetch, retry: { baseDelayMs: 20 } });
  const tasks: string[] = [];
  const issues: string[] = [];
  const messages: string[] = [];
  let store: SyncStore | undefined;
  const open = () =>
    client.sync({
      teamIds: [team.id],
      baseDelayMs: 20,
      maxDelayMs: 200,
      reconnect: { baseDelayMs: 20, maxDelayMs: 200 },
      onState: (_teamId, state) => debug(started, 'state', state),
      onError: (error) => debug(started, 'retried', String(error)),
    });
  const pick = <T>(list: T[], index: number) => (list.length === 0 ? undefined : list[index % list.length]);
  const key = (who: Writer) => people[who].key;
  const send = async (method: string, path: string, by: string, body?: unknown) => {
    const response = await app.request(method, `/v1${path}`, { key: by, body });
    // A step a role may not take is refused and changes nothing; nothing may fail on the server.
    expect(response.status, `${method} ${path}`).toBeLessThan(500);
    return response;
  };

  try {
    for (const [index, each] of steps.entries()) {
      if (index === loadAt) store = open();
      debug(started, 'step', index, each);
      switch (each.do) {
        case 'createTask': {
          const response = await send('POST', `/teams/${team.id}/tasks`, key(each.by), { title: `Task ${index}`, ownerId: people.admin.user.id, dueDate: '2026-12-18' });
          if (response.status === 201) tasks.push(response.body.id);
          break;
        }
        case 'completeTask': {
          const id = pick(tasks, each.pick);
          if (id) await send('PATCH', `/tasks/${id}`, key(each.by), { completed: each.completed });
          break;
        }
        case 'deleteTask': {
          const id = pick(tasks, each.pick);
          if (id && (await send('DELETE', `/tasks/${id}`, key(each.by))).status === 204) tasks.splice(tasks.indexOf(id), 1);
          break;
        }
        case 'createIssue': {
          const response = await send('POST', `/teams/${team.id}/issues`, key(each.by), { title: `Issue ${index}` });
          if (response.status === 201) issues.push(response.body.id);
          break;
        }
        case 'moveIssue': {
          const id = pick(issues, each.pick);
          if (id) await send('PATCH', `/issues/${id}`, key(each.by), { status: each.status });
          break;
        }
        case 'rate':
          // The reader rates through the client that holds the copy: its answer is applied at once.
          if (each.by === 'reader') await client.PUT('/meetings/{id}/ratings/me', { params: { path: { id: meeting.id } }, body: { rating: each.rating } });
          else await send('PUT', `/meetings/${meeting.id}/ratings/me`, people[each.by].key, { rating: each.rating });
          break;
        case 'reveal':
          await send('POST', `/meetings/${meeting.id}/reveal-ratings`, people.admin.key);
          break;
        case 'message': {
          const response = await send('POST', `/meetings/${meeting.id}/messages`, key(each.by), { content: `Message ${index}` });
          if (response.status === 201) messages.push(response.body.id);
          break;
        }
        case 'acknowledge':
          if (messages.length > 0) await client.POST('/messages/acknowledge', { body: { ids: [...messages] } });
          break;
        case 'review':
          await send('PUT', `/teams/${team.id}/people-reviews`, people.admin.key, { userId: people[each.about].user.id, quarter: '2026-Q4', coreValuesScores: scores, gwc: { getsIt: true, wantsIt: index % 2 === 0, capacityToDoIt: true } });
          break;
        case 'readerTask': {
          const { data } = await client.POST('/teams/{teamId}/tasks', { params: { path: { teamId: team.id } }, body: { title: `The reader's ${index}`, ownerId: people.admin.user.id, dueDate: '2026-12-18' } });
          if (data) tasks.push(data.id);
          break;
        }
        case 'cut':
          network.cut();
          break;
        case 'remove':
          await send('DELETE', `/teams/${team.id}/members/${people.reader.user.id}`, people.owner.key);
          break;
        case 'readd':
          await send('POST', `/teams/${team.id}/members`, people.owner.key, { userId: people.reader.user.id, role: role === 'OWNER' ? 'MEMBER' : role });
          break;
        case 'orgRole':
          // The reader's organization role: an Admin reads every team and every people review of it.
          await send('PATCH', `/orgs/${org.id}/members/${people.reader.user.id}`, people.owner.key, { role: each.role });
          break;
        case 'expire':
          // The retention deletes the whole log while the reader is away: their next connection gets 410.
          await network.offline();
          await app.db.deleteFrom('webhook_events').where('org_id', '=', org.id).execute();
          network.online();
          break;
      }
    }
    store ??= open();
    debug(started, 'waiting for', role);
    await store.ready;
    await expectConverged(app, store, team.id, people.reader.key, 60_000);
    debug(started, 'converged');
  } finally {
    await store?.close();
  }
}

describe(`client.sync's copy ends as the reader's own reads answer, whatever happens (${databaseLabel})`, () => {
  for (const role of roles) {
    it(`for a reader who is ${role === 'OWNER' ? 'an Owner of the organization outside the team' : `a team ${role}`}`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 6, maxLength: 14 }), fc.nat({ max: 14 }), async (steps, loadAt) => play(role, steps, loadAt % (steps.length + 1))),
        { seed: seed + roles.indexOf(role), numRuns: runs, endOnFailure: true },
      );
    });
  }

  it('got only answers the contract allows', () => {
    expect(proxy.violations).toEqual([]);
  });
});

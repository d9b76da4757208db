/**
 * `client.sync`'s engine over a scripted transport: what it does on each answer of a load and a
 * stream (a cut snapshot, a 410, a lost team, a reload from storage), without a server.
 */
import { describe, expect, it, vi } from 'vitest';
import type { components } from '../../generated/api.js';
import type { FeedEvent } from '../../client/src/events.js';
import type { LiveOptions, LiveStream } from '../../client/src/live.js';
import type { SnapshotRecords } from '../../client/src/localCopy.js';
import type { OwnAnswer } from '../../client/src/ownWrites.js';
import { memoryStorage } from '../../client/src/storage.js';
import { openSync, type SyncTransport } from '../../client/src/sync.js';

type Schemas = components['schemas'];

const orgId = 'org1';
const teamId = 'team1';
const me = 'user1';

const task = (id: string, revision: number, fields: Partial<Schemas['Task']> = {}): Schemas['Task'] => ({
  id,
  revision,
  teamId,
  title: `${id} at ${revision}`,
  ownerId: me,
  dueDate: '2026-11-30',
  completed: false,
  completedAt: null,
  meetingId: null,
  createdAt: '2026-11-16T09:00:00.000Z',
  ...fields,
});
const snapshot = (position: string, tasks: Schemas['Task'][]): SnapshotRecords => ({
  position,
  team: { id: teamId, revision: 1, orgId, name: 'Sales', slug: 'sales', isLeadership: false, meetingDurationMin: 90, meetingWarningMin: 80 },
  members: [],
  vision: null,
  seats: [],
  documents: [],
  peopleReviews: [],
  goals: [],
  scorecard: { metrics: [] },
  meetings: [],
  issues: [],
  tasks,
});
const event = (id: string, type: string, object: unknown): FeedEvent => ({ id, type, timestamp: '2026-11-23T08:00:00.000Z', data: { orgId, teamId, object } }) as unknown as FeedEvent;
const refusal = (status: number) => Object.assign(new Error(`${status}`), { status });

/** A transport whose snapshots come from a script and whose streams the test drives. */
function scripted(snapshots: (SnapshotRecords | Error)[]) {
  const streams: { options: LiveOptions; closed: boolean }[] = [];
  const answers = new Set<(answer: OwnAnswer) => void>();
  let teamStatus = 200;
  const transport: SyncTransport = {
    userId: vi.fn(async () => me),
    authorization: 'Bearer ak_test',
    snapshot: vi.fn(async () => {
      const next = snapshots.shift();
      if (next === undefined) throw new Error('no snapshot scripted');
      if (next instanceof Error) throw next;
      return structuredClone(next);
    }),
    record: async () => 404,
    teamStatus: async () => teamStatus,
    live(options) {
      const stream = { options, closed: false };
      streams.push(stream);
      return { lastEventId: options.after, state: 'open', close: () => void (stream.closed = true) } satisfies LiveStream;
    },
    onAnswer(listener) {
      answers.add(listener);
      return () => void answers.delete(listener);
    },
  };
  const open = () => streams.filter((stream) => !stream.closed && stream.options.teamIds);
  /** The server ends a stream for good, as `client.live` tells it. */
  const end = (stream: { options: LiveOptions; closed: boolean }, status: number) => {
    stream.closed = true;
    stream.options.onEnd!({ status, code: undefined, message: `${status}`, requestId: null });
  };
  return {
    transport,
    streams,
    open,
    end,
    answer: (answer: Partial<OwnAnswer>) => answers.forEach((listener) => listener({ method: 'PATCH', schemaPath: '/tasks/{id}', path: {}, status: 200, body: undefined, requestBody: undefined, ...answer })),
    setTeamStatus: (status: number) => void (teamStatus = status),
  };
}

const until = async (condition: () => boolean) => vi.waitFor(() => expect(condition()).toBe(true), { timeout: 10_000, interval: 5 });
const fast = { baseDelayMs: 1, maxDelayMs: 5 };

describe('client.sync over a scripted transport', () => {
  it('loads a team, then follows its stream from the snapshot’s position', async () => {
    const script = scripted([snapshot('lp_1', [task('t1', 10)])]);
    const store = openSync(script.transport, { teamIds: [teamId], ...fast });
    await store.ready;
    expect(store.openTasks(teamId).map((each) => each.id)).toEqual(['t1']);
    await until(() => script.open().length === 1);
    expect(script.open()[0]!.options).toMatchObject({ teamIds: [teamId], after: 'lp_1' });
    script.open()[0]!.options.onEvent(event('ev_2', 'task.created', task('t2', 11)));
    expect(store.openTasks(teamId).map((each) => each.id)).toEqual(['t1', 't2']);
    await store.close();
  });

  it('loads again when a snapshot is cut mid-way, and never shows a half', async () => {
    const onError = vi.fn();
    const script = scripted([new SyntaxError('Unexpected end of JSON input'), refusal(503), snapshot('lp_1', [task('t1', 10)])]);
    const store = openSync(script.transport, { teamIds: [teamId], onError, ...fast });
    await store.ready;
    expect(store.openTasks(teamId).map((each) => each.id)).toEqual(['t1']);
    expect(onError).toHaveBeenCalledTimes(2);
    await store.close();
  });

  it('tries a failed load again at once when the browser says it is online, instead of waiting out its backoff', async () => {
    // A browser's window, where `online` is told: Node has none of its own.
    const window = new EventTarget();
    const global = globalThis as unknown as Record<string, unknown>;
    Object.assign(global, { addEventListener: window.addEventListener.bind(window), removeEventListener: window.removeEventListener.bind(window) });
    try {
      const script = scripted([refusal(503), snapshot('lp_1', [task('t1', 10)])]);
      // A backoff far longer than the test may wait (its random share held near its most): only
      // `online` can bring the load back in time.
      vi.spyOn(Math, 'random').mockReturnValue(0.99);
      const store = openSync(script.transport, { teamIds: [teamId], baseDelayMs: 600_000, maxDelayMs: 600_000 });
      await until(() => vi.mocked(script.transport.snapshot).mock.settledResults.length === 1);
      window.dispatchEvent(new Event('online'));
      await store.ready;
      expect(store.openTasks(teamId).map((each) => each.id)).toEqual(['t1']);
      await store.close();
    } finally {
      vi.restoreAllMocks();
      delete global.addEventListener;
      delete global.removeEventListener;
    }
  });

  it('loads again on 410 and follows from the new position', async () => {
    const script = scripted([snapshot('lp_1', [task('t1', 10)]), snapshot('lp_9', [task('t1', 15)])]);
    const store = openSync(script.transport, { teamIds: [teamId], ...fast });
    await until(() => script.open().length === 1);
    script.end(script.open()[0]!, 410);
    await until(() => store.get('task', 't1')?.revision === 15 && script.open().length === 1);
    expect(script.open()[0]!.options.after).toBe('lp_9');
    await store.close();
  });

  it('drops a team the reader may no longer read, and loads it again when they are added back', async () => {
    const script = scripted([snapshot('lp_1', [task('t1', 10)]), snapshot('lp_5', [task('t1', 12)])]);
    const store = openSync(script.transport, { teamIds: [teamId], ...fast });
    await until(() => script.open().length === 1);
    script.setTeamStatus(403);
    script.end(script.open()[0]!, 403);
    await until(() => store.state(teamId) === 'noAccess');
    expect(store.get('task', 't1')).toBeUndefined();
    const watch = script.streams.find((stream) => !stream.closed && stream.options.types?.includes('team_member.added'))!;
    script.setTeamStatus(200);
    watch.options.onEvent({ id: 'ev_5', type: 'team_member.added', timestamp: '2026-11-23T08:00:00.000Z', data: { orgId, teamId, object: { userId: me, email: 'me@example.com', name: 'Me', role: 'MEMBER' } } } as FeedEvent);
    await until(() => store.get('task', 't1')?.revision === 12);
    await until(() => watch.closed);
    await store.close();
  });

  it('applies the answer of an own change at once, so that its event changes nothing', async () => {
    const script = scripted([snapshot('lp_1', [task('t1', 10)])]);
    const store = openSync(script.transport, { teamIds: [teamId], ...fast });
    await store.ready;
    script.answer({ method: 'PATCH', schemaPath: '/tasks/{id}', path: { id: 't1' }, body: task('t1', 11, { completed: true, completedAt: '2026-11-23T09:00:00.000Z' }) });
    expect(store.openTasks(teamId)).toEqual([]);
    script.answer({ method: 'DELETE', schemaPath: '/tasks/{id}', path: { id: 't1' }, status: 204 });
    expect(store.get('task', 't1')).toBeUndefined();
    await store.close();
  });

  it('starts from storage and catches up with its stream alone, without a load', async () => {
    const storage = memoryStorage();
    const first = scripted([snapshot('lp_1', [task('t1', 10)])]);
    const before = openSync(first.transport, { teamIds: [teamId], storage, ...fast });
    await until(() => first.open().length === 1);
    first.open()[0]!.options.onEvent(event('ev_3', 'task.created', task('t2', 11)));
    await before.close();

    const second = scripted([]);
    const after = openSync(second.transport, { teamIds: [teamId], storage, ...fast });
    await after.ready;
    expect(after.openTasks(teamId).map((each) => each.id)).toEqual(['t1', 't2']);
    await until(() => second.open().length === 1);
    expect(second.open()[0]!.options.after).toBe('ev_3');
    expect(second.transport.snapshot).not.toHaveBeenCalled();
    expect(second.transport.userId).not.toHaveBeenCalled();
    await after.close();
  });
});

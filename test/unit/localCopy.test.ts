import 'fake-indexeddb/auto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { components } from '../../generated/api.js';
import { LocalCopy, type SnapshotRecords } from '../../client/src/localCopy.js';
import type { FeedEvent } from '../../client/src/events.js';
import { indexedDbStorage, keyOfTeam, memoryStorage, storedTeamOf } from '../../client/src/storage.js';

type Schemas = components['schemas'];

const orgId = '0a0a0000-0000-4000-8000-000000000001';
const teamId = '0c0c0000-0000-4000-8000-000000000001';
const me = '0b0b0000-0000-4000-8000-000000000004';
const other = '0b0b0000-0000-4000-8000-000000000003';

const team = (revision = 1): Schemas['Team'] => ({ id: teamId, revision, orgId, name: 'Sales', slug: 'sales', isLeadership: false, meetingDurationMin: 90, meetingWarningMin: 80 });
const task = (id: string, revision: number, fields: Partial<Schemas['Task']> = {}): Schemas['Task'] => ({
  id,
  revision,
  teamId,
  title: `Task ${id} at ${revision}`,
  ownerId: me,
  dueDate: '2026-11-30',
  completed: false,
  completedAt: null,
  meetingId: null,
  createdAt: `2026-11-16T09:00:0${id.length % 10}.000Z`,
  ...fields,
});
const meeting = (id: string, revision: number, fields: Partial<Schemas['MeetingDetail']> = {}): Schemas['MeetingDetail'] => ({
  id,
  revision,
  teamId,
  date: '2026-11-23',
  status: 'IN_PROGRESS',
  startedAt: '2026-11-23T08:00:00.000Z',
  endedAt: null,
  durationMin: null,
  createdById: other,
  rating: { average: null, ratedCount: 0, absentCount: 0 },
  notes: null,
  ratings: [],
  segues: [],
  headlines: [],
  messages: [],
  ratingWindow: { open: true, closesAt: null },
  ratingsHidden: true,
  ...fields,
});
const message = (id: string, revision: number, acknowledged = false): Schemas['CascadingMessage'] => ({
  id,
  revision,
  meetingId: 'm1',
  userId: other,
  content: 'The Žilina cross-dock opens on Monday',
  createdAt: '2026-11-23T08:10:00.000Z',
  acknowledged,
});

const snapshot = (fields: Partial<SnapshotRecords> = {}): SnapshotRecords => ({
  position: 'lp_start',
  team: team(),
  members: [],
  vision: null,
  seats: [],
  documents: [],
  peopleReviews: [],
  goals: [],
  scorecard: { metrics: [] },
  meetings: [],
  issues: [],
  tasks: [],
  ...fields,
});

const event = (type: string, object: unknown): FeedEvent => ({ id: `ev_${type}`, type, timestamp: '2026-11-23T08:00:00.000Z', data: { orgId, teamId, object } }) as unknown as FeedEvent;

const loaded = (fields: Partial<SnapshotRecords> = {}) => {
  const copy = new LocalCopy({ userId: me });
  copy.load(teamId, snapshot(fields));
  return copy;
};

describe('the local copy applies a change only when it is newer', () => {
  it('replaces a task by an event of a greater revision', () => {
    const copy = loaded({ tasks: [task('t1', 10)] });
    copy.applyEvent(event('task.updated', task('t1', 12, { title: 'Renamed' })));
    expect(copy.get('task', 't1')).toMatchObject({ revision: 12, title: 'Renamed' });
  });

  it('ignores an event of the revision held or older, and tells no one', () => {
    const copy = loaded({ tasks: [task('t1', 10, { title: 'Held' })] });
    const told: unknown[] = [];
    copy.subscribe((change) => told.push(change));
    copy.applyEvent(event('task.updated', task('t1', 10, { title: 'Same revision' })));
    copy.applyEvent(event('task.updated', task('t1', 9, { title: 'Older' })));
    expect(copy.get('task', 't1')?.title).toBe('Held');
    expect(told).toEqual([]);
  });

  it('keeps a deleted task deleted when its older creation arrives after the deletion', () => {
    const copy = loaded();
    copy.applyEvent(event('task.deleted', { id: 't1' }));
    copy.applyEvent(event('task.created', task('t1', 5)));
    expect(copy.get('task', 't1')).toBeUndefined();
  });

  it('applies the answer of the reader’s own change at once, so that its event changes nothing', () => {
    const copy = loaded({ tasks: [task('t1', 10)] });
    copy.applyRecord('task', task('t1', 11, { completed: true, completedAt: '2026-11-23T09:00:00.000Z' }), teamId);
    expect(copy.openTasks(teamId)).toEqual([]);
    const told: unknown[] = [];
    copy.subscribe((change) => told.push(change));
    copy.applyEvent(event('task.updated', task('t1', 11, { completed: true, completedAt: '2026-11-23T09:00:00.000Z' })));
    expect(told).toEqual([]);
  });

  it('follows the team’s position to the last event applied', () => {
    const copy = loaded();
    copy.applyEvent(event('task.created', task('t1', 5)), 'ev_42');
    expect(copy.positionOf(teamId)).toBe('ev_42');
  });

  it('ignores events of teams it does not hold', () => {
    const copy = loaded();
    const elsewhere = { ...event('task.created', task('t9', 5)), data: { orgId, teamId: 'another', object: task('t9', 5) } } as unknown as FeedEvent;
    expect(copy.applyEvent(elsewhere)).toEqual([]);
    expect(copy.get('task', 't9')).toBeUndefined();
  });
});

describe('a load', () => {
  it('replaces the team’s records whole and tells once', () => {
    const copy = loaded({ tasks: [task('t1', 10), task('t2', 11)] });
    const told: unknown[] = [];
    copy.subscribe((change) => told.push(change));
    copy.load(teamId, snapshot({ position: 'lp_later', tasks: [task('t2', 14)] }));
    expect(copy.list('task', teamId).map((each) => [each.id, each.revision])).toEqual([['t2', 14]]);
    expect(copy.positionOf(teamId)).toBe('lp_later');
    expect(told).toHaveLength(1);
  });

  it('keeps out a record whose deletion was already applied', () => {
    const copy = loaded({ tasks: [task('t1', 10)] });
    copy.applyEvent(event('task.deleted', { id: 't1' }));
    copy.load(teamId, snapshot({ tasks: [task('t1', 10)] }));
    expect(copy.get('task', 't1')).toBeUndefined();
  });

  it('splits the Scorecard into metrics and their weekly values', () => {
    const metric: Schemas['Metric'] = { id: 'k1', revision: 3, teamId, title: 'Leads', goal: '>=25', ownerId: me, unit: null, description: null, position: 1 };
    const value: Schemas['MetricValue'] = { metricId: 'k1', week: '2026-11-16', revision: 4, value: '27', onTrack: true, enteredById: me };
    const copy = loaded({ scorecard: { metrics: [{ ...metric, values: [value] }] } });
    expect(copy.get('metric', 'k1')).toEqual(metric);
    expect(copy.get('metricValue', 'k1/2026-11-16')).toEqual(value);
    copy.applyEvent(event('metric_value.set', { ...value, revision: 9, value: '30' }));
    expect(copy.scorecard(teamId)).toEqual([{ ...metric, values: [{ ...value, revision: 9, value: '30' }] }]);
  });
});

describe('what the reader alone sees of a meeting', () => {
  it('keeps the reader’s own hidden rating when an event brings the meeting as everyone sees it', () => {
    const mine = { userId: me, rating: 9, absent: false };
    const copy = loaded({ meetings: [meeting('m1', 10, { ratings: [mine] })] });
    copy.applyEvent(event('meeting.updated', meeting('m1', 12, { notes: 'Agenda changed' })));
    expect(copy.get('meeting', 'm1')).toMatchObject({ revision: 12, notes: 'Agenda changed', ratings: [mine] });
  });

  it('takes every rating from the event once they are revealed', () => {
    const ratings = [
      { userId: other, rating: 7, absent: false },
      { userId: me, rating: 9, absent: false },
    ];
    const copy = loaded({ meetings: [meeting('m1', 10, { ratings: [ratings[1]!] })] });
    copy.applyEvent(event('meeting.ratings_revealed', meeting('m1', 13, { ratingsHidden: false, ratings })));
    expect(copy.get('meeting', 'm1')?.ratings).toEqual(ratings);
  });

  it('keeps the reader’s own acknowledgements, which an event never tells', () => {
    const copy = loaded({ meetings: [meeting('m1', 10, { messages: [message('c1', 8, true)] })] });
    copy.applyEvent(event('meeting.updated', meeting('m1', 12, { messages: [message('c1', 8), message('c2', 11)] })));
    expect(copy.get('meeting', 'm1')?.messages.map((each) => [each.id, each.acknowledged])).toEqual([
      ['c1', true],
      ['c2', false],
    ]);
  });

  it('asks to read the meeting again after the reader’s own rating from elsewhere, and not after another’s', () => {
    const copy = loaded({ meetings: [meeting('m1', 10)] });
    expect(copy.applyEvent(event('meeting_rating.set', { meetingId: 'm1', userId: other }))).toEqual([]);
    expect(copy.applyEvent(event('meeting_rating.set', { meetingId: 'm1', userId: me }))).toEqual([{ action: 'refetch', kind: 'meeting', id: 'm1', teamId }]);
  });

  it('marks the reader’s own acknowledgement at once, and not another’s', () => {
    const copy = loaded({ meetings: [meeting('m1', 10, { messages: [message('c1', 8)] })] });
    copy.applyEvent(event('cascading_message.acknowledged', { id: 'c1', userId: other }));
    expect(copy.get('meeting', 'm1')?.messages[0]?.acknowledged).toBe(false);
    expect(copy.applyEvent(event('cascading_message.acknowledged', { id: 'c1', userId: me }))).toEqual([]);
    expect(copy.get('meeting', 'm1')?.messages[0]?.acknowledged).toBe(true);
  });

  it('takes the reader’s own read of a meeting over an event of the same revision, which lacks their rating', () => {
    const mine = { userId: me, rating: 8, absent: false };
    const copy = loaded({ meetings: [meeting('m1', 10)] });
    copy.applyEvent(event('meeting.updated', meeting('m1', 12)));
    copy.applyRecord('meeting', meeting('m1', 12, { ratings: [mine] }), teamId, true);
    copy.applyEvent(event('meeting.updated', meeting('m1', 12)));
    expect(copy.get('meeting', 'm1')?.ratings).toEqual([mine]);
    copy.applyRecord('meeting', meeting('m1', 11), teamId, true);
    expect(copy.get('meeting', 'm1')?.revision).toBe(12);
  });

  it('adds a segue to its meeting, and a repeated one changes nothing', () => {
    const segue: Schemas['Segue'] = { id: 's1', revision: 11, meetingId: 'm1', userId: other, content: 'A good weekend', createdAt: '2026-11-23T08:05:00.000Z' };
    const copy = loaded({ meetings: [meeting('m1', 10)] });
    copy.applyEvent(event('segue.created', segue));
    copy.applyEvent(event('segue.created', segue));
    expect(copy.get('meeting', 'm1')?.segues).toEqual([segue]);
  });
});

describe('a record an event carries reduced', () => {
  it('is read again when newer, and never replaces the record held', () => {
    const copy = loaded({ meetings: [meeting('m1', 10)] });
    const reduced = { id: 'm1', revision: 14, reduced: true, kind: 'MeetingDetail', teamId, notes: null };
    expect(copy.applyEvent(event('meeting.updated', reduced))).toEqual([{ action: 'refetch', kind: 'meeting', id: 'm1', teamId }]);
    expect(copy.get('meeting', 'm1')?.revision).toBe(10);
    expect(copy.applyEvent(event('meeting.updated', { ...reduced, revision: 9 }))).toEqual([]);
  });

  it('loads the team again for a people review, which has no GET of its own', () => {
    const reduced = { id: 'r1', revision: 14, reduced: true, kind: 'PeopleReview', teamId };
    expect(loaded().applyEvent(event('people_review.set', reduced))).toEqual([{ action: 'reload', teamId }]);
  });
});

describe('the reader’s access', () => {
  it('asks whether the reader may still read the team when they are removed from it', () => {
    const copy = loaded({ members: [{ userId: me, revision: 3, email: 'lucia@northwind.example', name: 'Lucia', role: 'MEMBER' }] });
    expect(copy.applyEvent(event('team_member.removed', { userId: me }))).toEqual([{ action: 'checkAccess', teamId }]);
    expect(copy.members(teamId)).toEqual([]);
  });

  it('loads the team again when the reader’s own role in it changes', () => {
    const copy = loaded({ members: [{ userId: me, revision: 3, email: 'lucia@northwind.example', name: 'Lucia', role: 'MEMBER' }] });
    expect(copy.applyEvent(event('team_member.updated', { userId: me, revision: 5, email: 'lucia@northwind.example', name: 'Lucia', role: 'ADMIN' }))).toEqual([{ action: 'reload', teamId }]);
  });

  it('takes back a member removed and added again', () => {
    const member = { userId: other, revision: 3, email: 'martin@northwind.example', name: 'Martin', role: 'MEMBER' as const };
    const copy = loaded({ members: [member] });
    copy.applyEvent(event('team_member.removed', { userId: other }));
    expect(copy.members(teamId)).toEqual([]);
    copy.applyEvent(event('team_member.added', { ...member, revision: 8 }));
    expect(copy.members(teamId)).toEqual([{ ...member, revision: 8 }]);
  });

  it('judges a removal by its revision, so a removal and a return delivered out of order leave the member as the later one', () => {
    const member = { userId: other, revision: 3, email: 'martin@northwind.example', name: 'Martin', role: 'MEMBER' as const };
    // The return (revision 8) comes before the removal it follows (revision 5): the removal is older news.
    const returned = loaded({ members: [member] });
    returned.applyEvent(event('team_member.added', { ...member, revision: 8 }));
    expect(returned.applyEvent(event('team_member.removed', { userId: other, revision: 5 }))).toEqual([]);
    expect(returned.members(teamId)).toEqual([{ ...member, revision: 8 }]);

    // The removal (revision 5) comes before a change it ended (revision 4): the member stays removed, until they return.
    const removed = loaded({ members: [member] });
    removed.applyEvent(event('team_member.removed', { userId: other, revision: 5 }));
    removed.applyEvent(event('team_member.updated', { ...member, revision: 4, role: 'ADMIN' }));
    expect(removed.members(teamId)).toEqual([]);
    removed.applyEvent(event('team_member.added', { ...member, revision: 8 }));
    expect(removed.members(teamId)).toEqual([{ ...member, revision: 8 }]);
  });

  it('keeps a record newer than a deletion delivered late, and ignores older news of one deleted', () => {
    const copy = loaded({ tasks: [task('t1', 10)] });
    copy.applyEvent(event('task.deleted', { id: 't1', revision: 12 }));
    expect(copy.get('task', 't1')).toBeUndefined();
    copy.applyEvent(event('task.updated', task('t1', 11)));
    expect(copy.get('task', 't1')).toBeUndefined();
  });

  it('drops every record of a team at once', () => {
    const copy = loaded({ tasks: [task('t1', 10)] });
    copy.dropTeam(teamId);
    expect(copy.get('task', 't1')).toBeUndefined();
    expect(copy.teamIds()).toEqual([]);
  });

  it('answers forget when the team is deleted', () => {
    expect(loaded().applyEvent(event('team.deleted', { id: teamId }))).toEqual([{ action: 'forget', teamId }]);
  });
});

describe('queries', () => {
  it('lists a team’s open tasks oldest first and its open issues OPEN before SOLVING', () => {
    const issue = (id: string, status: Schemas['Issue']['status'], createdAt: string): Schemas['Issue'] => ({
      id,
      revision: 1,
      teamId,
      title: id,
      description: null,
      priority: 'MEDIUM',
      status,
      meetingId: null,
      createdById: me,
      resolvedAt: null,
      createdAt,
    });
    const copy = loaded({
      tasks: [task('t2', 1, { createdAt: '2026-11-17T00:00:00.000Z' }), task('t1', 1, { createdAt: '2026-11-16T00:00:00.000Z' }), task('t3', 1, { completed: true })],
      issues: [issue('i1', 'SOLVING', '2026-11-01T00:00:00.000Z'), issue('i2', 'OPEN', '2026-11-02T00:00:00.000Z'), issue('i3', 'SOLVED', '2026-11-03T00:00:00.000Z')],
    });
    expect(copy.openTasks(teamId).map((each) => each.id)).toEqual(['t1', 't2']);
    expect(copy.openIssues(teamId).map((each) => each.id)).toEqual(['i2', 'i1']);
  });
});

describe('storing', () => {
  it('restores a team exactly as it was exported, tombstones included', async () => {
    const copy = loaded({ tasks: [task('t1', 10)] });
    copy.applyEvent(event('task.deleted', { id: 't2' }), 'ev_7');
    const storage = memoryStorage();
    await storage.set('key', copy.exportTeam(teamId));
    const restored = new LocalCopy({ userId: me });
    restored.importTeam(storedTeamOf(await storage.get('key'), teamId)!);
    expect(restored.exportTeam(teamId)).toEqual(copy.exportTeam(teamId));
    restored.applyEvent(event('task.created', task('t2', 3)));
    expect(restored.get('task', 't2')).toBeUndefined();
  });

  it('keeps a team in IndexedDB through idb-keyval, per reader', async () => {
    const copy = loaded({ tasks: [task('t1', 10)] });
    const storage = indexedDbStorage('team-os-sync-test');
    await storage.set(keyOfTeam(me, teamId), copy.exportTeam(teamId));
    expect(storedTeamOf(await indexedDbStorage('team-os-sync-test').get(keyOfTeam(me, teamId)), teamId)).toEqual(copy.exportTeam(teamId));
    expect(await storage.get(keyOfTeam(other, teamId))).toBeUndefined();
    await storage.delete(keyOfTeam(me, teamId));
    expect(await storage.get(keyOfTeam(me, teamId))).toBeUndefined();
  });

  it('does not take a stored entry of another form', () => {
    expect(storedTeamOf({ version: 2, teamId }, teamId)).toBeUndefined();
    expect(storedTeamOf(undefined, teamId)).toBeUndefined();
  });
});

describe('convergence (property)', () => {
  /**
   * A history of tasks: each id has versions of rising revision and may be deleted at the end. The
   * events of it reach the copy in any order, some twice, after a load taken at any point: the copy
   * always ends with the newest version of each task not deleted, and nothing of a deleted one.
   */
  const history = fc
    .array(fc.record({ versions: fc.integer({ min: 1, max: 4 }), deleted: fc.boolean() }), { minLength: 1, maxLength: 6 })
    .map((tasks) => {
      let revision = 0;
      const events: FeedEvent[] = [];
      const newest = new Map<string, Schemas['Task'] | undefined>();
      tasks.forEach(({ versions, deleted }, index) => {
        const id = `t${index}`;
        for (let version = 0; version < versions; version += 1) {
          revision += 1;
          const record = task(id, revision, { title: `${id} v${version}` });
          events.push(event(version === 0 ? 'task.created' : 'task.updated', record));
          newest.set(id, record);
        }
        if (deleted) {
          events.push(event('task.deleted', { id }));
          newest.set(id, undefined);
        }
      });
      return { events, newest };
    });

  it('converges to the newest revisions whatever the order and repetition of events', () => {
    fc.assert(
      fc.property(
        history.chain(({ events, newest }) =>
          fc.record({
            newest: fc.constant(newest),
            // Every event once, some twice, in any order.
            delivered: fc.subarray(events).chain((twice) => fc.shuffledSubarray([...events, ...twice], { minLength: events.length + twice.length })),
            loadedAt: fc.integer({ min: 0, max: events.length }),
          }).map((run) => ({ ...run, events })),
        ),
        ({ events, newest, delivered, loadedAt }) => {
          // The load holds the state after the first `loadedAt` events, as the server would answer it.
          const state = new Map<string, Schemas['Task']>();
          for (const each of events.slice(0, loadedAt)) {
            const object = (each as { data: { object: Schemas['Task'] } }).data.object;
            if (each.type === 'task.deleted') state.delete(object.id);
            else state.set(object.id, object);
          }
          const copy = new LocalCopy({ userId: me });
          copy.load(teamId, snapshot({ tasks: [...state.values()] }));
          for (const each of delivered) copy.applyEvent(each);
          const expected = [...newest.values()].filter((each) => each !== undefined).sort((a, b) => a.id.localeCompare(b.id));
          expect(copy.list('task', teamId).sort((a, b) => a.id.localeCompare(b.id))).toEqual(expected);
        },
      ),
      { seed: Number(process.env.SYNC_PROPERTY_SEED ?? 44), numRuns: Math.max(200, Number(process.env.SYNC_PROPERTY_RUNS ?? 0) * 10) },
    );
  });
});

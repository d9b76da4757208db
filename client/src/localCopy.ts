/**
 * The local copy of `client.sync`, without any I/O: the reader's records of each team by kind, each
 * exactly as the reader's own `GET` of it answers, and the rules that keep it so.
 *
 * - **A record is replaced only by a newer one.** Every record carries `revision`, the log position
 *   of its last change; an event, an answer or a read is applied only when its `revision` is greater
 *   than the one held. An event repeated, or delivered after a newer state, changes nothing.
 * - **A deletion is final.** Ids are never reused, so a deleted id is remembered (a tombstone) and an
 *   older event of it arriving later (the log orders events by transaction, not by commit) is ignored.
 *   A member removed from a team may come back: a removal is final only up to its own revision. Every
 *   deletion and removal carries as `revision` the log position of its change, greater than the
 *   revision of what it ends and smaller than that of a return, so a removal and a return delivered
 *   out of order leave the later one, and a removal older than what is held changes nothing.
 * - **A load replaces a team whole, at once.** A snapshot is applied in one step and told once, so no
 *   one ever sees half of it.
 * - **What the reader alone sees is kept.** An event carries a meeting as every reader may see it:
 *   without the reader's own rating while ratings are hidden, and with every message unacknowledged.
 *   Applying it keeps those two from the meeting held; an event that changes them for this reader
 *   asks for the meeting to be read again when it is the reader's own rating, and marks the message
 *   when it is their own acknowledgement (which moves no revision).
 * - **Nested records** (a goal's milestones, a meeting's segues, headlines and messages) are applied to
 *   their parent as their own events come; the parent's own event, which follows with the parent's
 *   new revision, replaces the whole parent.
 */
import type { components } from '../../generated/api.js';
import type { FeedEvent, FeedEventOf } from './events.js';

type Schemas = components['schemas'];

/** The records the copy holds, by kind, each as its own `GET` answers it. */
export interface SyncRecords {
  team: Schemas['Team'];
  /** A member of a team (`GET /teams/{teamId}/members`), keyed `teamId/userId`. */
  member: Schemas['TeamMember'];
  vision: Schemas['Vision'];
  seat: Schemas['Seat'];
  document: Schemas['Document'];
  peopleReview: Schemas['PeopleReview'];
  /** With its milestones, as `GET /goals/{id}`. */
  goal: Schemas['Goal'];
  /** As `GET /metrics/{id}`; its weekly values are the kind `metricValue`. */
  metric: Schemas['Metric'];
  /** A metric's value of one week, keyed `metricId/week`. */
  metricValue: Schemas['MetricValue'];
  /** With its ratings, segues, headlines and messages, as `GET /meetings/{id}` answers the reader. */
  meeting: Schemas['MeetingDetail'];
  issue: Schemas['Issue'];
  task: Schemas['Task'];
}

export type RecordKind = keyof SyncRecords;
/** The kinds an event may carry reduced, or without what this reader alone sees: each has a `GET` of its own. */
export type RefetchedKind = 'meeting' | 'goal' | 'vision';
export const recordKinds = ['team', 'member', 'vision', 'seat', 'document', 'peopleReview', 'goal', 'metric', 'metricValue', 'meeting', 'issue', 'task'] as const satisfies readonly RecordKind[];

/**
 * What a load holds: the contract's `TeamSnapshot` (`GET /teams/{teamId}/snapshot`), of which the copy
 * reads only the records and the position (`client.sync` gives it the whole, which `tsc` checks
 * against this).
 */
export interface SnapshotRecords {
  position: string;
  team: Schemas['Team'];
  members: Schemas['TeamMember'][];
  vision: Schemas['Vision'] | null;
  seats: Schemas['Seat'][];
  documents: Schemas['Document'][];
  peopleReviews: Schemas['PeopleReview'][];
  goals: Schemas['Goal'][];
  scorecard: { metrics: (Schemas['Metric'] & { values: Schemas['MetricValue'][] })[] };
  meetings: Schemas['MeetingDetail'][];
  issues: Schemas['Issue'][];
  tasks: Schemas['Task'][];
}

/** The key of a record in its kind: its id, or what names it where it has none. */
export function keyOf<Kind extends RecordKind>(kind: Kind, record: SyncRecords[Kind], teamId: string): string {
  if (kind === 'member') return `${teamId}/${(record as SyncRecords['member']).userId}`;
  if (kind === 'metricValue') return `${(record as SyncRecords['metricValue']).metricId}/${(record as SyncRecords['metricValue']).week}`;
  return (record as { id: string }).id;
}

/** What the copy cannot do alone after an event or an answer: the sync does it. */
export type FollowUp =
  /**
   * Read the record again with its `GET`: something of a meeting only this reader sees changed, or an
   * event carried the record reduced (`reduced: true`, over the events' 64 KB).
   */
  | { action: 'refetch'; kind: RefetchedKind; id: string; teamId: string }
  /** Load the team again: the reader's own membership changed, so what they may see of it may have. */
  | { action: 'reload'; teamId: string }
  /** The reader left the team: ask whether they may still read it, and drop it if not. */
  | { action: 'checkAccess'; teamId: string }
  /** The team is gone. */
  | { action: 'forget'; teamId: string };

/** Told after each change of the copy, once per event, answer or load. */
export interface CopyChange {
  teamIds: string[];
  kinds: RecordKind[];
}

type Held = { [Kind in RecordKind]: Map<string, SyncRecords[Kind]> };

/** One team's part of the copy, as it is stored and restored. */
export interface StoredTeam {
  version: 1;
  teamId: string;
  /** The reader whose copy it is. */
  userId: string;
  /** Where its log was followed to: an event's id, or the load's `lp_` position. */
  position: string;
  records: { [Kind in RecordKind]: SyncRecords[Kind][] };
  /** Deleted ids (`kind/key`) and the revision up to which each is deleted; `null` for good. */
  tombstones: [string, number | null][];
}

interface TeamPart {
  position: string;
  held: Held;
}

const emptyHeld = (): Held => Object.fromEntries(recordKinds.map((kind) => [kind, new Map()])) as unknown as Held;

/** A revision that no change can pass: a deletion of an id never reused. */
const FINAL = Number.POSITIVE_INFINITY;

const revisionOf = (record: unknown): number | undefined => {
  const revision = (record as { revision?: unknown }).revision;
  return typeof revision === 'number' ? revision : undefined;
};

/** Whether `incoming` may replace `held`: newer, or either without a revision (applied in log order). */
const isNewer = (incoming: unknown, held: unknown): boolean => {
  if (held === undefined) return true;
  const next = revisionOf(incoming);
  const current = revisionOf(held);
  return next === undefined || current === undefined || next > current;
};

type WithId = { id: string; revision?: number };

const oldestFirst = (a: { createdAt: string; id: string }, b: { createdAt: string; id: string }) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id);

/** `list` with `item` in place of the one of its id when newer, or added at the end. */
function withNested<Item extends WithId>(list: readonly Item[], item: Item): Item[] | undefined {
  const at = list.findIndex((each) => each.id === item.id);
  if (at === -1) return [...list, item];
  if (!isNewer(item, list[at])) return undefined;
  return list.map((each, index) => (index === at ? item : each));
}

export interface LocalCopyOptions {
  /** The reader's user id: their own rating and acknowledgements are theirs alone. */
  userId: string;
}

export class LocalCopy {
  readonly userId: string;
  private readonly teams = new Map<string, TeamPart>();
  private readonly tombstones = new Map<string, number>();
  /** The team of each tombstone, so that it is stored with its team. */
  private readonly tombstoneTeams = new Map<string, string>();
  private readonly listeners = new Set<(change: CopyChange) => void>();

  constructor(options: LocalCopyOptions) {
    this.userId = options.userId;
  }

  // ---------------------------------------------------------------------------------------------
  // Reading

  /** The teams held. */
  teamIds(): string[] {
    return [...this.teams.keys()];
  }

  /** Where a team's log was followed to, or undefined when it is not held. */
  positionOf(teamId: string): string | undefined {
    return this.teams.get(teamId)?.position;
  }

  /** A record by kind and key (its id; `teamId/userId` for a member, `metricId/week` for a value). */
  get<Kind extends RecordKind>(kind: Kind, key: string): SyncRecords[Kind] | undefined {
    for (const part of this.teams.values()) {
      const record = part.held[kind].get(key);
      if (record !== undefined) return record as SyncRecords[Kind];
    }
    return undefined;
  }

  /** The team holding a record, or undefined when none does. */
  teamOf(kind: RecordKind, key: string): string | undefined {
    for (const [teamId, part] of this.teams) if (part.held[kind].has(key)) return teamId;
    return undefined;
  }

  /** Every record of a kind, of one team or of all. */
  list<Kind extends RecordKind>(kind: Kind, teamId?: string): SyncRecords[Kind][] {
    const parts = teamId === undefined ? [...this.teams.values()] : [this.teams.get(teamId)].filter((part) => part !== undefined);
    return parts.flatMap((part) => [...part.held[kind].values()] as SyncRecords[Kind][]);
  }

  /** A team, as `GET /teams/{teamId}`. */
  team(teamId: string): SyncRecords['team'] | undefined {
    return this.teams.get(teamId)?.held.team.get(teamId);
  }

  /** A team's members, by name. */
  members(teamId: string): SyncRecords['member'][] {
    return this.list('member', teamId).sort((a, b) => a.name.localeCompare(b.name) || a.userId.localeCompare(b.userId));
  }

  /** A team's open tasks, oldest first, as `GET /teams/{teamId}/tasks?completed=false`. */
  openTasks(teamId: string): SyncRecords['task'][] {
    return this.list('task', teamId).filter((task) => !task.completed).sort(oldestFirst);
  }

  /** A team's open issues: those OPEN, then those SOLVING, each oldest first. */
  openIssues(teamId: string): SyncRecords['issue'][] {
    const rank = (issue: SyncRecords['issue']) => (issue.status === 'OPEN' ? 0 : 1);
    return this.list('issue', teamId).filter((issue) => issue.status !== 'SOLVED').sort((a, b) => rank(a) - rank(b) || oldestFirst(a, b));
  }

  /** A team's goals, of one quarter (`2026-Q4`) or of every quarter held, oldest first. */
  goals(teamId: string, quarter?: string): SyncRecords['goal'][] {
    return this.list('goal', teamId).filter((goal) => quarter === undefined || goal.quarter === quarter).sort(oldestFirst);
  }

  /** A team's metrics in their Scorecard order, each with the values held of it, oldest week first. */
  scorecard(teamId: string): (SyncRecords['metric'] & { values: SyncRecords['metricValue'][] })[] {
    const values = this.list('metricValue', teamId).sort((a, b) => a.week.localeCompare(b.week));
    return this.list('metric', teamId)
      .sort((a, b) => a.position - b.position || a.id.localeCompare(b.id))
      .map((metric) => ({ ...metric, values: values.filter((value) => value.metricId === metric.id) }));
  }

  /** A team's meetings held, newest first. */
  meetings(teamId: string): SyncRecords['meeting'][] {
    return this.list('meeting', teamId).sort((a, b) => b.date.localeCompare(a.date) || b.id.localeCompare(a.id));
  }

  /** A team's vision, when it has one. */
  vision(teamId: string): SyncRecords['vision'] | undefined {
    return this.list('vision', teamId)[0];
  }

  // ---------------------------------------------------------------------------------------------
  // Changing

  /** Calls `listener` after every change; returns the function that stops it. */
  subscribe(listener: (change: CopyChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Replaces a team's records by a load, in one step: records held that the load lacks are gone
   * (deleted, or outside what a load holds), and changes after it follow from `snapshot.position`.
   */
  load(teamId: string, snapshot: SnapshotRecords): void {
    const held = emptyHeld();
    const put = <Kind extends RecordKind>(kind: Kind, record: SyncRecords[Kind]) => {
      const key = keyOf(kind, record, teamId);
      // A record deleted after the load was taken, whose deletion was already applied, stays deleted.
      const dead = this.tombstones.get(`${kind}/${key}`);
      if (dead !== undefined && dead >= (revisionOf(record) ?? FINAL)) return;
      held[kind].set(key, record);
    };
    put('team', snapshot.team);
    for (const member of snapshot.members) put('member', member);
    if (snapshot.vision) put('vision', snapshot.vision);
    for (const seat of snapshot.seats) put('seat', seat);
    for (const document of snapshot.documents) put('document', document);
    for (const review of snapshot.peopleReviews) put('peopleReview', review);
    for (const goal of snapshot.goals) put('goal', goal);
    for (const { values, ...metric } of snapshot.scorecard.metrics) {
      put('metric', metric as SyncRecords['metric']);
      for (const value of values) put('metricValue', value);
    }
    for (const meeting of snapshot.meetings) put('meeting', meeting);
    for (const issue of snapshot.issues) put('issue', issue);
    for (const task of snapshot.tasks) put('task', task);
    this.teams.set(teamId, { position: snapshot.position, held });
    this.tell([teamId], [...recordKinds]);
  }

  /** Forgets a team: the reader may no longer read it, or it is gone. */
  dropTeam(teamId: string): void {
    if (!this.teams.delete(teamId)) return;
    this.tell([teamId], [...recordKinds]);
  }

  /**
   * Applies a record read by or answered to this reader (a `GET`, or the answer of their own change):
   * kept when newer than the one held, or of the same revision when it is the reader's own view
   * (`exact`), which an event of that revision (everyone's view) may lack. A record of a team not
   * held is ignored.
   */
  applyRecord<Kind extends RecordKind>(kind: Kind, record: SyncRecords[Kind], teamId: string, exact = false): void {
    if (this.put(kind, record, teamId, exact)) this.tell([teamId], [kind]);
  }

  /** Applies a deletion answered to this reader's own change (`DELETE …` answered 204). */
  applyDeletion(kind: RecordKind, key: string, teamId: string, revision?: number): void {
    if (this.remove(kind, key, teamId, revision)) this.tell([teamId], [kind]);
  }

  /**
   * Applies one event of a team's log, as the stream gave it to this reader. `eventId` is where the
   * team's log is then followed to. Answers what the copy could not do alone.
   */
  applyEvent(event: FeedEvent, eventId?: string): FollowUp[] {
    const teamId = event.data.teamId;
    const part = teamId === null ? undefined : this.teams.get(teamId);
    if (teamId === null || part === undefined) return [];
    if (eventId !== undefined) part.position = eventId;
    const { changed, followUps } = this.changeOf(event, teamId);
    if (changed.length > 0) this.tell([teamId], changed);
    return followUps;
  }

  // ---------------------------------------------------------------------------------------------
  // Storing

  /** A team's part as plain JSON, for storage. */
  exportTeam(teamId: string): StoredTeam | undefined {
    const part = this.teams.get(teamId);
    if (!part) return undefined;
    const records = Object.fromEntries(recordKinds.map((kind) => [kind, [...part.held[kind].values()]])) as StoredTeam['records'];
    const tombstones = [...this.tombstones].filter(([key]) => this.tombstoneTeams.get(key) === teamId);
    return { version: 1, teamId, userId: this.userId, position: part.position, records, tombstones: tombstones.map(([key, revision]) => [key, Number.isFinite(revision) ? revision : null]) };
  }

  /** Restores a team's part stored by `exportTeam`, in one step. */
  importTeam(stored: StoredTeam): void {
    const held = emptyHeld();
    for (const kind of recordKinds) {
      for (const record of stored.records[kind] ?? []) held[kind].set(keyOf(kind, record as never, stored.teamId), record as never);
    }
    for (const [key, revision] of stored.tombstones) {
      this.tombstones.set(key, revision ?? FINAL);
      this.tombstoneTeams.set(key, stored.teamId);
    }
    this.teams.set(stored.teamId, { position: stored.position, held });
    this.tell([stored.teamId], [...recordKinds]);
  }

  // ---------------------------------------------------------------------------------------------
  // The rules

  private put<Kind extends RecordKind>(kind: Kind, record: SyncRecords[Kind], teamId: string, exact = false): boolean {
    const part = this.teams.get(teamId);
    if (!part) return false;
    const key = keyOf(kind, record, teamId);
    const dead = this.tombstones.get(`${kind}/${key}`);
    if (dead !== undefined && dead >= (revisionOf(record) ?? FINAL)) return false;
    const map = part.held[kind] as Map<string, SyncRecords[Kind]>;
    const held = map.get(key);
    const same = exact && held !== undefined && revisionOf(held) === revisionOf(record);
    if (!same && !isNewer(record, held)) return false;
    if (same && JSON.stringify(held) === JSON.stringify(record)) return false;
    map.set(key, record);
    return true;
  }

  /**
   * Deletes a record up to `revision` (a newer state of it stays), and remembers it so that older
   * news of it is ignored. A deletion without a revision (from a server older than deletions with
   * one) is final, but for a member's removal, which is then applied in log order and remembered not
   * at all: the member may come back.
   */
  private remove(kind: RecordKind, key: string, teamId: string, revision: number | undefined): boolean {
    const part = this.teams.get(teamId);
    if (!part) return false;
    const upTo = revision ?? (kind === 'member' ? undefined : FINAL);
    if (upTo !== undefined) {
      const tomb = `${kind}/${key}`;
      this.tombstones.set(tomb, Math.max(upTo, this.tombstones.get(tomb) ?? -1));
      this.tombstoneTeams.set(tomb, teamId);
    }
    const held = part.held[kind].get(key);
    if (held === undefined) return false;
    if (upTo !== undefined && !(upTo >= (revisionOf(held) ?? -1))) return false;
    part.held[kind].delete(key);
    return true;
  }

  /** A meeting of an event, as this reader sees it: with their own rating and acknowledgements from the one held. */
  private meetingForReader(incoming: SyncRecords['meeting'], held: SyncRecords['meeting'] | undefined): SyncRecords['meeting'] {
    const ratings = incoming.ratingsHidden ? (held?.ratings ?? []).filter((rating) => rating.userId === this.userId) : incoming.ratings;
    const acknowledged = new Set((held?.messages ?? []).filter((message) => message.acknowledged).map((message) => message.id));
    return { ...incoming, ratings, messages: incoming.messages.map((message) => ({ ...message, acknowledged: acknowledged.has(message.id) })) };
  }

  /** The record holding a nested one: the goal of a milestone, the meeting of a segue. */
  private parentOf<Kind extends 'goal' | 'meeting'>(kind: Kind, teamId: string, contains: (record: SyncRecords[Kind]) => boolean): SyncRecords[Kind] | undefined {
    for (const record of this.teams.get(teamId)?.held[kind].values() ?? []) if (contains(record as SyncRecords[Kind])) return record as SyncRecords[Kind];
    return undefined;
  }

  /** Replaces a parent by itself with a nested list changed: its own revision stays until its own event. */
  private replaceParent<Kind extends 'goal' | 'meeting'>(kind: Kind, teamId: string, parent: SyncRecords[Kind]): void {
    (this.teams.get(teamId)!.held[kind] as Map<string, SyncRecords[Kind]>).set((parent as WithId).id, parent);
  }

  private changeOf(event: FeedEvent, teamId: string): { changed: RecordKind[]; followUps: FollowUp[] } {
    const none = { changed: [] as RecordKind[], followUps: [] as FollowUp[] };
    const did = (kind: RecordKind, changed: boolean) => ({ changed: changed ? [kind] : [], followUps: [] as FollowUp[] });
    const object = (event as { data: { object: unknown } }).data.object;
    const idOf = () => (object as { id: string }).id;
    const deletionRevision = () => revisionOf(object);
    if ((object as { reduced?: unknown } | null)?.reduced === true) return this.reducedChange(event.type, object as WithId, teamId);
    switch (event.type) {
      case 'team.updated':
        return did('team', this.put('team', object as SyncRecords['team'], teamId));
      case 'team.deleted':
        return { changed: [], followUps: [{ action: 'forget', teamId }] };
      case 'team_member.added':
      case 'team_member.updated': {
        const member = object as SyncRecords['member'];
        const changed = this.put('member', member, teamId);
        // What the reader may see of the team follows their role in it (people reviews).
        return { changed: changed ? ['member'] : [], followUps: member.userId === this.userId && changed ? [{ action: 'reload', teamId }] : [] };
      }
      case 'team_member.removed': {
        const { userId } = object as FeedEventOf<'team_member.removed'>['data']['object'];
        const changed = this.remove('member', `${teamId}/${userId}`, teamId, deletionRevision());
        return { changed: changed ? ['member'] : [], followUps: userId === this.userId ? [{ action: 'checkAccess', teamId }] : [] };
      }
      case 'task.created':
      case 'task.updated':
        return did('task', this.put('task', object as SyncRecords['task'], teamId));
      case 'task.deleted':
        return did('task', this.remove('task', idOf(), teamId, deletionRevision()));
      case 'issue.created':
      case 'issue.updated':
        return did('issue', this.put('issue', object as SyncRecords['issue'], teamId));
      case 'issue.deleted':
        return did('issue', this.remove('issue', idOf(), teamId, deletionRevision()));
      case 'goal.created':
      case 'goal.updated':
        return did('goal', this.put('goal', object as SyncRecords['goal'], teamId));
      case 'goal.deleted':
        return did('goal', this.remove('goal', idOf(), teamId, deletionRevision()));
      case 'milestone.created':
      case 'milestone.updated': {
        const milestone = object as Schemas['Milestone'];
        const goal = this.parentOf('goal', teamId, (each) => each.id === milestone.goalId);
        const milestones = goal && withNested(goal.milestones, milestone);
        if (!goal || !milestones) return none;
        this.replaceParent('goal', teamId, { ...goal, milestones });
        return did('goal', true);
      }
      case 'milestone.deleted': {
        const id = idOf();
        const goal = this.parentOf('goal', teamId, (each) => each.milestones.some((milestone) => milestone.id === id));
        if (!goal) return none;
        this.replaceParent('goal', teamId, { ...goal, milestones: goal.milestones.filter((milestone) => milestone.id !== id) });
        return did('goal', true);
      }
      case 'metric.created':
      case 'metric.updated':
        return did('metric', this.put('metric', object as SyncRecords['metric'], teamId));
      case 'metric.deleted': {
        const id = idOf();
        const values = [...(this.teams.get(teamId)?.held.metricValue.values() ?? [])].filter((value) => value.metricId === id);
        for (const value of values) this.teams.get(teamId)!.held.metricValue.delete(keyOf('metricValue', value, teamId));
        const removed = this.remove('metric', id, teamId, deletionRevision());
        return { changed: [...(removed ? (['metric'] as const) : []), ...(values.length > 0 ? (['metricValue'] as const) : [])], followUps: [] };
      }
      case 'metric_value.set':
        return did('metricValue', this.put('metricValue', object as SyncRecords['metricValue'], teamId));
      case 'meeting.created':
      case 'meeting.updated':
      case 'meeting.status_changed':
      case 'meeting.ratings_revealed': {
        const incoming = object as SyncRecords['meeting'];
        const held = this.teams.get(teamId)?.held.meeting.get(incoming.id);
        return did('meeting', this.put('meeting', this.meetingForReader(incoming, held), teamId));
      }
      case 'meeting_rating.set':
      case 'meeting_rating.deleted': {
        const { meetingId, userId } = object as FeedEventOf<'meeting_rating.set'>['data']['object'];
        // Another's rating reaches this reader with the meeting's `meeting.updated` that follows; their own, while hidden, only by a read.
        const mine = userId === this.userId && this.teams.get(teamId)?.held.meeting.has(meetingId);
        return { changed: [], followUps: mine ? [{ action: 'refetch', kind: 'meeting', id: meetingId, teamId }] : [] };
      }
      case 'segue.created':
      case 'headline.created':
      case 'cascading_message.created': {
        const nested = object as Schemas['Segue'] | Schemas['Headline'] | Schemas['CascadingMessage'];
        const meeting = this.parentOf('meeting', teamId, (each) => each.id === nested.meetingId);
        if (!meeting) return none;
        const list = event.type === 'segue.created' ? 'segues' : event.type === 'headline.created' ? 'headlines' : 'messages';
        const changed = withNested(meeting[list] as WithId[], nested as WithId);
        if (!changed) return none;
        this.replaceParent('meeting', teamId, { ...meeting, [list]: changed });
        return did('meeting', true);
      }
      case 'cascading_message.deleted': {
        const id = idOf();
        const meeting = this.parentOf('meeting', teamId, (each) => each.messages.some((message) => message.id === id));
        if (!meeting) return none;
        this.replaceParent('meeting', teamId, { ...meeting, messages: meeting.messages.filter((message) => message.id !== id) });
        return did('meeting', true);
      }
      case 'cascading_message.acknowledged': {
        const { id, userId } = object as FeedEventOf<'cascading_message.acknowledged'>['data']['object'];
        if (userId !== this.userId) return none;
        const meeting = this.parentOf('meeting', teamId, (each) => each.messages.some((message) => message.id === id));
        if (!meeting) return none;
        // The reader's own state: it moves no revision, and no other event tells it.
        this.replaceParent('meeting', teamId, { ...meeting, messages: meeting.messages.map((message) => (message.id === id ? { ...message, acknowledged: true } : message)) });
        return did('meeting', true);
      }
      case 'vision.created':
      case 'vision.updated':
        return did('vision', this.put('vision', object as SyncRecords['vision'], teamId));
      case 'seat.created':
      case 'seat.updated':
        return did('seat', this.put('seat', object as SyncRecords['seat'], teamId));
      case 'seat.deleted':
        return did('seat', this.remove('seat', idOf(), teamId, deletionRevision()));
      case 'people_review.set':
        return did('peopleReview', this.put('peopleReview', object as SyncRecords['peopleReview'], teamId));
      case 'document.created':
        return did('document', this.put('document', object as SyncRecords['document'], teamId));
      case 'document.deleted':
        return did('document', this.remove('document', idOf(), teamId, deletionRevision()));
      default:
        // The organization's own events and a team's creation hold no record of a team's screen.
        return none;
    }
  }

  /**
   * An event whose record was too large to carry whole: its short fields only. When it is newer than
   * the record held, the record is read again (a people review, which has no `GET` of its own, with
   * the team's load).
   */
  private reducedChange(type: string, reduced: WithId, teamId: string): { changed: RecordKind[]; followUps: FollowUp[] } {
    const kind = type.startsWith('goal.') ? 'goal' : type.startsWith('meeting') ? 'meeting' : type.startsWith('vision.') ? 'vision' : type === 'people_review.set' ? 'peopleReview' : undefined;
    if (kind === undefined) return { changed: [], followUps: [] };
    const held = this.teams.get(teamId)?.held[kind].get(reduced.id);
    const dead = this.tombstones.get(`${kind}/${reduced.id}`);
    if (!isNewer(reduced, held) || (dead !== undefined && dead >= (revisionOf(reduced) ?? FINAL))) return { changed: [], followUps: [] };
    return { changed: [], followUps: [kind === 'peopleReview' ? { action: 'reload', teamId } : { action: 'refetch', kind, id: reduced.id, teamId }] };
  }

  private tell(teamIds: string[], kinds: RecordKind[]): void {
    const change = { teamIds, kinds };
    for (const listener of this.listeners) listener(change);
  }
}

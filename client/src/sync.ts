/**
 * `client.sync`: a local copy of the caller's teams that stays exactly what their own reads would
 * answer. Each team is loaded from its snapshot (`GET /teams/{teamId}/snapshot`), or restored from
 * `storage`, and then follows its own live stream from the snapshot's position: one stream per team,
 * so that a team the reader loses ends its own stream (403 at its next connection) and only that
 * team's records are dropped, while the others carry on.
 *
 * The rules of the copy are the pure `LocalCopy` (src/localCopy.ts); here is what needs the network:
 * - a 410 (the log no longer reaches back to the copy's position) loads the team again;
 * - a load that fails (a cut answer, a server restarting, PostgreSQL restarting under it) is retried
 *   with backoff and never shows a half: the copy takes a load only whole;
 * - the answers of the caller's own changes made with this client are applied as they arrive, before
 *   the caller's `await` returns (src/ownWrites.ts);
 * - what the copy cannot learn from an event (the reader's own hidden rating) is read again;
 * - a team the reader may no longer read is dropped and watched for: an addition of the reader to it,
 *   a change of their organization role after which it answers (an Admin reads every team), or the
 *   team answering when the watch opens, loads it again;
 * - a change of the reader's own organization role (which their team's stream sends them) loads the
 *   team again: what they may see of it changed with it.
 */
import type { FeedEvent, FeedEventOf } from './events.js';
import type { LiveEnd, LiveOptions, LiveReconnectOptions, LiveStream } from './live.js';
import { LocalCopy, type CopyChange, type FollowUp, type RecordKind, type RefetchedKind, type SnapshotRecords, type StoredTeam, type SyncRecords } from './localCopy.js';
import type { OwnAnswer } from './ownWrites.js';
import { changesOfAnswer } from './ownWrites.js';
import { keyOfTeam, readerOf, storedTeamOf, type SyncStorage } from './storage.js';

export interface SyncOptions {
  /** The teams to hold: each is loaded and then followed. */
  teamIds: readonly string[];
  /** Stops every stream and load, and writes what is not yet stored. */
  signal?: AbortSignal;
  /** Told after every change of the copy: which teams and which kinds of records changed. */
  onChange?: (change: CopyChange) => void;
  /** Where the copy is kept between runs (`indexedDbStorage()` in browsers): a run then starts from it and catches up with one request per team. */
  storage?: SyncStorage;
  /** Told of each team's state as it changes. */
  onState?: (teamId: string, state: TeamSyncState) => void;
  /** Told of a failure that is retried (a load, a read), for logs. */
  onError?: (error: unknown, teamId: string) => void;
  /** The streams' reconnections (as for `client.live`). */
  reconnect?: LiveReconnectOptions;
  /** The first wait before a failed load or stream is tried again, doubled up to `maxDelayMs`. Default 1 s. */
  baseDelayMs?: number;
  /** Default 30 s. */
  maxDelayMs?: number;
}

/**
 * `loading`: being loaded (records shown are the ones held before, if any); `following`: loaded and
 * following its stream; `reconnecting`: its stream is away and coming back; `noAccess`: the reader may
 * not read it (its records dropped; watched for their return); `gone`: the team was deleted;
 * `closed`: the sync was stopped, or the key no longer works.
 */
export type TeamSyncState = 'loading' | 'following' | 'reconnecting' | 'noAccess' | 'gone' | 'closed';

/** The caller's records of the teams followed, kept true; read it as often as you like, it never asks the server. */
export interface SyncStore {
  /** A record by kind and key (its id; `teamId/userId` for a member, `metricId/week` for a metric's value). */
  get<Kind extends RecordKind>(kind: Kind, key: string): SyncRecords[Kind] | undefined;
  /** Every record of a kind, of one team or of all. */
  list<Kind extends RecordKind>(kind: Kind, teamId?: string): SyncRecords[Kind][];
  team(teamId: string): SyncRecords['team'] | undefined;
  members(teamId: string): SyncRecords['member'][];
  openTasks(teamId: string): SyncRecords['task'][];
  openIssues(teamId: string): SyncRecords['issue'][];
  goals(teamId: string, quarter?: string): SyncRecords['goal'][];
  scorecard(teamId: string): (SyncRecords['metric'] & { values: SyncRecords['metricValue'][] })[];
  meetings(teamId: string): SyncRecords['meeting'][];
  vision(teamId: string): SyncRecords['vision'] | undefined;
  /** Calls `listener` after every change; returns the function that stops it. */
  subscribe(listener: (change: CopyChange) => void): () => void;
  /** A team's state. */
  state(teamId: string): TeamSyncState;
  /** Settles when every team is shown (loaded, or restored from storage) or known unreadable. */
  readonly ready: Promise<void>;
  /** Stops every stream and load and writes the copy to storage. */
  close(): Promise<void>;
}

/** What the sync needs of the client: its reads, its streams and its own answers. */
export interface SyncTransport {
  /** `GET /me`'s user id. */
  userId(signal: AbortSignal): Promise<string>;
  /** The `Authorization` the client sends, whose digest names the reader's copy in storage. */
  authorization: string | undefined;
  /** `GET /teams/{teamId}/snapshot`: the whole answer, or a throw (`TeamOsError` for a status). */
  snapshot(teamId: string, signal: AbortSignal): Promise<SnapshotRecords>;
  /** The record's `GET` (`/meetings/{id}`, `/goals/{id}`, `/teams/{teamId}/vision`): the record, or the status it was refused with. */
  record<Kind extends RefetchedKind>(kind: Kind, id: string, teamId: string, signal: AbortSignal): Promise<SyncRecords[Kind] | number>;
  /** `GET /teams/{teamId}`: 200, or the status it was refused with. */
  teamStatus(teamId: string, signal: AbortSignal): Promise<number>;
  /** `client.live`. */
  live(options: LiveOptions): LiveStream;
  /** Calls `listener` with the answer of each change the caller makes through this client; returns the function that stops it. */
  onAnswer(listener: (answer: OwnAnswer) => void): () => void;
}

const refused = (error: unknown): number | undefined => {
  const status = (error as { status?: unknown } | undefined)?.status;
  return typeof status === 'number' && status >= 400 && status < 500 && status !== 408 && status !== 429 ? status : undefined;
};

export function openSync(transport: SyncTransport, options: SyncOptions): SyncStore {
  const { storage, baseDelayMs = 1_000, maxDelayMs = 30_000 } = options;
  const stop = new AbortController();
  const signal = stop.signal;
  options.signal?.addEventListener('abort', () => void store.close(), { once: true });
  const states = new Map<string, TeamSyncState>(options.teamIds.map((teamId) => [teamId, 'loading']));
  const streams = new Map<string, LiveStream>();
  /** Each team's current turn: a callback of an older load or stream checks it and does nothing. */
  const turns = new Map<string, number>();
  // A browser that says it is back online cuts a wait short, as it does the live stream's: after a
  // long time offline the wait may have grown to `maxDelayMs` for a network that is there again now.
  const events = globalThis as { addEventListener?: (type: string, listener: () => void) => void; removeEventListener?: (type: string, listener: () => void) => void };
  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        events.removeEventListener?.('online', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      events.addEventListener?.('online', done);
    });
  const backoff = (attempt: number) => Math.floor(Math.random() * Math.min(maxDelayMs, baseDelayMs * 2 ** attempt));

  let copy: LocalCopy | undefined;
  /** Whose copy it is in storage: the key's digest. */
  let reader = '';

  const setState = (teamId: string, state: TeamSyncState) => {
    if (states.get(teamId) === state || states.get(teamId) === 'closed') return;
    states.set(teamId, state);
    options.onState?.(teamId, state);
    settle();
  };

  // -------------------------------------------------------------------------------------------
  // Storage: each team's part written after its changes, a batch at a time.

  const dirty = new Set<string>();
  let writing: Promise<void> | undefined;
  const write = async (): Promise<void> => {
    if (!storage || !copy) return;
    while (dirty.size > 0) {
      const teamIds = [...dirty];
      dirty.clear();
      for (const teamId of teamIds) {
        const part = copy.exportTeam(teamId);
        await (part ? storage.set(keyOfTeam(reader, teamId), part) : storage.delete(keyOfTeam(reader, teamId))).catch((error: unknown) => options.onError?.(error, teamId));
      }
    }
  };
  const store_ = (teamId: string) => {
    if (!storage) return;
    dirty.add(teamId);
    writing ??= Promise.resolve()
      .then(write)
      .finally(() => (writing = undefined));
  };

  // -------------------------------------------------------------------------------------------
  // Each team: load, follow, lose.

  const turnOf = (teamId: string) => {
    const turn = (turns.get(teamId) ?? 0) + 1;
    turns.set(teamId, turn);
    streams.get(teamId)?.close();
    streams.delete(teamId);
    return turn;
  };
  const current = (teamId: string, turn: number) => !signal.aborted && turns.get(teamId) === turn;

  async function load(teamId: string): Promise<void> {
    const turn = turnOf(teamId);
    setState(teamId, 'loading');
    for (let attempt = 0; current(teamId, turn); attempt += 1) {
      try {
        const snapshot = await transport.snapshot(teamId, signal);
        if (!current(teamId, turn)) return;
        copy!.load(teamId, snapshot);
        store_(teamId);
        settle();
        return follow(teamId, snapshot.position, turn);
      } catch (error) {
        if (!current(teamId, turn)) return;
        const status = refused(error);
        if (status === 403 || status === 404) return lose(teamId, turn);
        if (status !== undefined) return end(teamId, error);
        // A cut answer, a server or its database restarting: the copy shows what it held, and tries again.
        options.onError?.(error, teamId);
        await wait(backoff(attempt));
      }
    }
  }

  function follow(teamId: string, position: string, turn: number, attempt = 0): void {
    if (!current(teamId, turn)) return;
    setState(teamId, states.get(teamId) === 'loading' ? 'loading' : 'reconnecting');
    const stream = transport.live({
      teamIds: [teamId],
      after: position,
      reconnect: options.reconnect,
      signal,
      onOpen: () => current(teamId, turn) && setState(teamId, 'following'),
      onReconnecting: () => current(teamId, turn) && setState(teamId, 'reconnecting'),
      onEvent: (event) => {
        if (!current(teamId, turn)) return;
        // The reader's own organization role decides what they may see of the team (an Admin reads
        // every people review): the team is loaded again, as the reader now sees it.
        if (event.type === 'organization_member.updated' && event.data.object.userId === copy!.userId) return void load(teamId);
        const followUps = copy!.applyEvent(event, (event as { id?: string }).id);
        store_(teamId);
        for (const followUp of followUps) void act(followUp);
      },
      onEnd: (ended) => void ended_(teamId, turn, ended, attempt),
    });
    streams.set(teamId, stream);
  }

  async function ended_(teamId: string, turn: number, ended: LiveEnd, attempt: number): Promise<void> {
    if (!current(teamId, turn)) return;
    streams.delete(teamId);
    // The log no longer reaches back to the copy's position: everything since is read anew.
    if (ended.status === 410) return void load(teamId);
    if (ended.status === 403 || ended.status === 404) return lose(teamId, turn);
    if (ended.status === 401) return end(teamId, ended);
    // Too many streams, or a balancer that kept answering 503: tried again from where the copy is.
    options.onError?.(ended, teamId);
    await wait(backoff(attempt));
    follow(teamId, copy!.positionOf(teamId) ?? '', turn, attempt + 1);
  }

  function lose(teamId: string, turn: number): void {
    if (!current(teamId, turn)) return;
    turnOf(teamId);
    copy!.dropTeam(teamId);
    store_(teamId);
    setState(teamId, 'noAccess');
    watch();
  }

  function end(teamId: string, error: unknown): void {
    options.onError?.(error, teamId);
    turnOf(teamId);
    setState(teamId, 'closed');
  }

  /** Reads again what the copy could not learn from an event. */
  const reading = new Map<string, Promise<void>>();
  async function act(followUp: FollowUp): Promise<void> {
    if (signal.aborted) return;
    const teamId = followUp.teamId;
    if (followUp.action === 'reload') return void load(teamId);
    if (followUp.action === 'forget') {
      turnOf(teamId);
      copy!.dropTeam(teamId);
      store_(teamId);
      return setState(teamId, 'gone');
    }
    if (followUp.action === 'checkAccess') {
      const turn = turns.get(teamId)!;
      const status = await transport.teamStatus(teamId, signal).catch(() => 0);
      if (status === 403 || status === 404) lose(teamId, turn);
      return;
    }
    // One read of a record at a time, and one more after it when asked again meanwhile.
    const key = `${followUp.kind}/${followUp.id}`;
    const before = reading.get(key);
    const next = (before ?? Promise.resolve()).then(async () => {
      const record = await transport.record(followUp.kind, followUp.id, teamId, signal).catch((error: unknown) => (options.onError?.(error, teamId), undefined));
      if (typeof record === 'object') copy!.applyRecord(followUp.kind, record, teamId, true);
      else if (record === 403 || record === 404) await act({ action: 'checkAccess', teamId });
    });
    reading.set(key, next);
    await next.finally(() => reading.get(key) === next && reading.delete(key));
  }

  // -------------------------------------------------------------------------------------------
  // Teams lost: watched for the reader's return.

  let watcher: LiveStream | undefined;
  function watch(): void {
    if (watcher || signal.aborted) return;
    // Each team lost answers again once the reader may read it.
    const recheck = () => {
      for (const [teamId, state] of states) {
        if (state !== 'noAccess') continue;
        void transport.teamStatus(teamId, signal).then((status) => status === 200 && states.get(teamId) === 'noAccess' && void load(teamId), () => undefined);
      }
    };
    watcher = transport.live({
      // An organization role may give back what a team removal took: an Admin reads every team.
      types: ['team_member.added', 'organization_member.updated'],
      reconnect: options.reconnect,
      signal,
      // An addition made before the watch opened is told by the team answering again.
      onOpen: recheck,
      onEvent: (event) => {
        if (event.type === 'organization_member.updated') {
          if ((event as FeedEventOf<'organization_member.updated'>).data.object.userId === copy?.userId) recheck();
          return;
        }
        const added = event as FeedEventOf<'team_member.added'>;
        const teamId = added.data.teamId;
        if (teamId !== null && states.get(teamId) === 'noAccess' && added.data.object.userId === copy?.userId) void load(teamId);
      },
      onEnd: () => {
        watcher = undefined;
      },
    });
  }
  const unwatch = () => {
    if ([...states.values()].some((state) => state === 'noAccess')) return;
    watcher?.close();
    watcher = undefined;
  };

  // -------------------------------------------------------------------------------------------
  // Own changes: their answers applied as they arrive.

  const stopAnswers = transport.onAnswer((answer) => {
    if (!copy) return;
    for (const change of changesOfAnswer(answer, copy)) {
      if ('event' in change) for (const followUp of copy.applyEvent(change.event)) void act(followUp);
      else if ('record' in change) copy.applyRecord(change.kind, change.record as never, change.teamId, true);
      else void act(change.followUp);
      store_(change.teamId);
    }
  });

  // -------------------------------------------------------------------------------------------
  // Start, readiness and the end.

  let resolveReady!: () => void;
  const ready = new Promise<void>((resolve) => (resolveReady = resolve));
  /** Shown: a team whose records are in the copy, or that is known unreadable or gone. */
  const shown = new Set<string>();
  function settle(): void {
    for (const [teamId, state] of states) if (state !== 'loading' || copy?.positionOf(teamId) !== undefined) shown.add(teamId);
    if (shown.size === states.size) resolveReady();
    unwatch();
  }

  const start = async () => {
    // A copy kept in storage names its reader: a reload then asks nothing before its streams.
    reader = storage ? await readerOf(transport.authorization ?? '') : '';
    const stored = new Map<string, StoredTeam>();
    for (const teamId of storage ? options.teamIds : []) {
      const entry = storedTeamOf(await storage!.get(keyOfTeam(reader, teamId)).catch(() => undefined), teamId);
      if (entry) stored.set(teamId, entry);
    }
    const userId = [...stored.values()][0]?.userId ?? (await transport.userId(signal));
    copy = new LocalCopy({ userId });
    copy.subscribe((change) => {
      options.onChange?.(change);
      for (const listener of listeners) listener(change);
    });
    for (const teamId of options.teamIds) {
      const entry = stored.get(teamId);
      if (entry && entry.userId === userId) {
        copy.importTeam(entry);
        settle();
        follow(teamId, entry.position, turnOf(teamId));
      } else {
        void load(teamId);
      }
    }
  };
  const listeners = new Set<(change: CopyChange) => void>();
  const started = start().catch((error: unknown) => {
    for (const teamId of options.teamIds) end(teamId, error);
    resolveReady();
  });

  const store: SyncStore = {
    get: (kind, key) => copy?.get(kind, key),
    list: (kind, teamId) => copy?.list(kind, teamId) ?? [],
    team: (teamId) => copy?.team(teamId),
    members: (teamId) => copy?.members(teamId) ?? [],
    openTasks: (teamId) => copy?.openTasks(teamId) ?? [],
    openIssues: (teamId) => copy?.openIssues(teamId) ?? [],
    goals: (teamId, quarter) => copy?.goals(teamId, quarter) ?? [],
    scorecard: (teamId) => copy?.scorecard(teamId) ?? [],
    meetings: (teamId) => copy?.meetings(teamId) ?? [],
    vision: (teamId) => copy?.vision(teamId),
    subscribe(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    state: (teamId) => states.get(teamId) ?? 'closed',
    ready,
    async close() {
      if (!signal.aborted) {
        stop.abort();
        stopAnswers();
        for (const stream of streams.values()) stream.close();
        watcher?.close();
        for (const teamId of states.keys()) states.set(teamId, 'closed');
      }
      await started;
      await writing;
      await write();
    },
  };
  return store;
}

export type { CopyChange, FeedEvent, RecordKind, SyncRecords };

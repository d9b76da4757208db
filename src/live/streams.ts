/**
 * The live event streams of one process (`GET /events/stream`, server-sent events written by
 * better-sse). Each stream follows the same gap-free log as the organization feed
 * (src/db/queries/events.ts): its own place in the log, each event once, in log order.
 *
 * One read for all streams. The process reads the log below the horizon once per wake-up and hands
 * every new event to every live stream, which judges it in memory against its reader's access
 * (`eventView`, src/events/views.ts, with the reader `src/auth/permissions.ts` decided): no statement
 * per event or per stream. It wakes when the
 * webhook fan-out, which passes every event once for all processes, tells through PostgreSQL's NOTIFY
 * that the log grew (the fan-out's transaction pays the notification lock, never a change's), and at
 * most once a second otherwise, while streams are open: a lost notification delays, never loses.
 * After a read that brought events, the next waits in proportion to what handing them out cost, at
 * most 100 ms (`readPauseMs`): under load the reads space out and each serves more changes.
 *
 * A stream catches up alone: when it opens (after `Last-Event-ID` or from the log's end), and
 * whenever it is not live (its access being decided anew, a read that failed, a PostgreSQL
 * restart), it reads the log from its own place, its readers' organizations only, until it is no
 * longer behind the shared read; only then does it take the shared reads again. So it resumes after the
 * last event it sent, with nothing lost or repeated.
 *
 * Access for the stream's life. A stream's access is decided when it opens and again when the
 * database tells that its caller's key, account or memberships changed (the caller cache's
 * notifications, migrations 0007 and 0010), before its next event; while the listening connection is
 * down nothing is trusted, and every stream decides anew before each read that brings events. A
 * stream whose key stopped working, or whose reader has nothing left to read, ends.
 *
 * Limits: at most `maxPerKey` streams per key in this process (the sixth gets 429); a reader more
 * than `bufferBytes` behind is dropped, so memory does not grow with a reader that stopped reading.
 * The buffer holds many of the largest events the log keeps (`EVENT_MAX_BYTES`; a start with a smaller
 * one is refused), so no single event can be what drops a reader, again at every resume.
 *
 * A HEAD request gets the answer a GET would (its refusal, or the stream's head) at once, and opens
 * nothing: it holds none of the key's streams.
 *
 * Each opening is logged with this instance's id (src/observability/instance.ts), the key, the teams
 * and the place it resumes after, so an operator can tell which instance serves whose stream; and
 * each end, with the same request id, why it ended, how long it lasted and how many events it sent
 * (the request's own log line is written only for a response that finishes, which a stream whose
 * client went away never does).
 * `close` ends every stream with a short `retry:` so that clients reconnect to another instance.
 *
 * Memory. An idle stream holds its socket, Node's request and response, better-sse's session and the
 * stream below. The session (its fetch `Request`/`Response` pair, headers, URL, abort signal and
 * closures) costs about 10 KB of heap a stream and is kept: the protocol comes from a maintained
 * library, not from framing written here (docs/performance.md, "Live streams"). Its per-stream
 * keep-alive timer is not: one timer sends every stream the same comment line.
 */
import type { Request, Response } from 'express';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { Connection, createEventBuffer, createSession, type Session } from 'better-sse';
import { callerOfKey } from '../auth/authenticate.js';
import type { Caller } from '../auth/caller.js';
import { keyStatus } from '../auth/apiKeys.js';
import { callersChannel } from '../auth/callerCache.js';
import { currentStreamAccess, learnsOfNewTeam, openingStreamAccess, organizationsWithEveryTeam, type StreamAccess } from '../auth/permissions.js';
import type { Database } from '../db/database.js';
import type { Listen } from '../db/listen.js';
import { standingsOf } from '../db/queries/access.js';
import { compareLogPositions, EVENT_MAX_BYTES, eventPosition, keptAfter, logAfter, logChannel, logEnd, type LogEvent, type LogPosition } from '../db/queries/events.js';
import { EventsExpired, Forbidden, RateLimited } from '../errors.js';
import type { LogPositions, PositionSource } from '../events/positions.js';
import { loggableError } from '../logger.js';
import { eventView, type LoggedEvent } from '../events/views.js';
import { instanceId } from '../observability/instance.js';
import type { Metrics } from '../observability/metrics.js';

/**
 * What a stream's buffer must hold beyond the event itself: better-sse's framing of one message
 * (`id:`, `event:`, `data:` and their line ends; an event's JSON has no line break of its own).
 */
const framingBytes = 1024;

export const liveDefaults = {
  maxPerKey: 5,
  /**
   * Sixteen of the largest events the log keeps, and twice what one read of the log brings
   * (`LOG_READ_BYTES`, which leaves room for the framing of up to 1,000 events): a reader is dropped for
   * being slow, never for one event's size or one read's.
   */
  bufferBytes: 16 * EVENT_MAX_BYTES,
  /** The slowest wake-up without a notification. */
  pollMs: 1_000,
  /** The pause after a shared read, as a multiple of its hand-out's time (`readPauseMs`), and its most. */
  readPausePerHandOut: 20,
  maxReadPauseMs: 100,
  /** A comment line this often keeps proxies from closing an idle stream (the contract promises at least every 15 s). */
  keepAliveMs: 10_000,
  retryMs: 2_000,
  /** The `retry:` a stream gets when the server stops: reconnect soon, to another instance. */
  stopRetryMs: 1_000,
};

/**
 * How long the shared reads pause after one whose hand-out (judging what it brought, framing it and
 * writing it to every stream) took `handOutMs`: twenty times as long, at most 100 ms. Under light
 * load a hand-out takes well under a millisecond and the next read follows its wake-up almost at
 * once. When many events reach many streams, the reads space out and each brings more, so that
 * one write to a stream carries several events and one read of the log serves more changes: the
 * streams then take at most a twenty-first of the process's time until the pause reaches 100 ms,
 * and an event waits at most that long for its read. With 500 streams receiving each change, a
 * change kept 0.63–0.64 of its rate without the pause and 0.81–0.85 with it (docs/performance.md, "Live
 * streams").
 */
export function readPauseMs(handOutMs: number): number {
  return Math.min(liveDefaults.maxReadPauseMs, handOutMs * liveDefaults.readPausePerHandOut);
}

/** The keep-alive comment, framed once by better-sse for every stream. */
const keepAliveComment = createEventBuffer().comment().dispatch();

const sharedReadLimit = 1_000;
const catchUpLimit = 500;

export interface StreamRequest {
  caller: Caller;
  teamIds: readonly string[] | undefined;
  types: readonly string[] | undefined;
  /** The event or log position to resume after (`after`); `Last-Event-ID` wins over it. */
  after: string | undefined;
}

export interface LiveStreams {
  /** Opens a stream on `res`, or throws the refusal (429, 403, 404, 410) before anything is sent. */
  open(req: Request, res: Response, request: StreamRequest): Promise<void>;
  /** Streams open now. */
  readonly size: number;
  /** Ends every stream with `retry:` and stops reading the log. */
  close(): Promise<void>;
}

export interface LiveOptions {
  db: Kysely<Database>;
  logger: Logger;
  metrics: Pick<Metrics, 'live'>;
  now: () => Date;
  /** The database's notifications (`OpenDatabase.subscribe`); without them every stream decides its access before each read that brings events. */
  subscribe?: Listen | undefined;
  /** Opens the log positions a stream may start after (src/events/positions.ts). */
  positions: LogPositions;
  maxPerKey?: number;
  bufferBytes?: number;
  pollMs?: number;
  keepAliveMs?: number;
  retryMs?: number;
}

const later = (a: LogPosition, b: LogPosition | undefined): LogPosition => (b === undefined || compareLogPositions(a, b) >= 0 ? a : b);

/** Each event parsed once per read, however many streams judge it. */
const parsedEvents = new WeakMap<LogEvent, LoggedEvent>();
const parsed = (event: LogEvent): LoggedEvent => {
  let value = parsedEvents.get(event);
  if (!value) parsedEvents.set(event, (value = JSON.parse(event.event) as LoggedEvent));
  return value;
};

/**
 * The message of each view of an event a read brought, as bytes: framed by better-sse (`id:`,
 * `event:`, `data:`, as `session.push` frames it) once per distinct view, not once per stream, and
 * the same bytes written to every stream that takes that view. With 500 streams taking every change,
 * framing and encoding each message per stream cost a change most of its rate (docs/performance.md,
 * "Live streams").
 */
const framedEvents = new WeakMap<LogEvent, Map<string, Buffer>>();
const framed = (event: LogEvent, text: string): Buffer => {
  let views = framedEvents.get(event);
  if (!views) framedEvents.set(event, (views = new Map()));
  let bytes = views.get(text);
  if (!bytes) views.set(text, (bytes = Buffer.from(createEventBuffer({ serializer: (data) => data as string }).push(text, event.type, event.id).read())));
  return bytes;
};

/**
 * Whether a stream follows the event: of its teams when it names some (`named`), including the
 * reader's own removal from one of them, which they may no longer read (the stream goes on with the
 * others). The organization's own events are then left out, but for those of the reader's own
 * membership in an organization of its teams: their role there decides what they may see of the
 * teams, so a local copy must learn it changed.
 */
const follows = (access: StreamAccess, named: readonly string[] | undefined, event: LogEvent): boolean => {
  if (access.teams === undefined) return true;
  if (event.teamId !== null) return access.teams.has(event.teamId) || (event.type === 'team_member.removed' && named!.includes(event.teamId));
  if (!event.type.startsWith('organization_member.') || (parsed(event).data.object as { userId?: unknown }).userId !== access.reader.userId) return false;
  for (const teamId of access.teams) if (access.reader.teams.get(teamId)?.orgId === event.orgId) return true;
  return false;
};

/**
 * What one read of the log brought, each team's events apart. A stream that names its teams judges
 * only theirs and the organizations' own (`follows` takes no other), not every event of the read:
 * with 500 streams following ten teams, each judged the whole read, 45 events for the 4 or 5 of its
 * team, and streams that follow no changed team still judged every event (docs/performance.md, "Live
 * streams").
 */
export interface Brought {
  events: readonly LogEvent[];
  byTeam: Map<string, LogEvent[]>;
  ofNoTeam: LogEvent[];
}

const none: readonly LogEvent[] = [];

export function brought(events: readonly LogEvent[]): Brought {
  const byTeam = new Map<string, LogEvent[]>();
  const ofNoTeam: LogEvent[] = [];
  for (const event of events) {
    if (event.teamId === null) ofNoTeam.push(event);
    else {
      const ofTeam = byTeam.get(event.teamId);
      if (ofTeam) ofTeam.push(event);
      else byTeam.set(event.teamId, [event]);
    }
  }
  return { events, byTeam, ofNoTeam };
}

/** The events of a read a stream judges, in log order: every one, unless it names its teams. */
export function judgedBy(named: readonly string[] | undefined, read: Brought): readonly LogEvent[] {
  if (named === undefined) return read.events;
  const lists = [read.ofNoTeam, ...named.map((teamId) => read.byTeam.get(teamId) ?? none)].filter((list) => list.length > 0);
  if (lists.length <= 1) return lists[0] ?? none;
  return lists.flat().sort(compareLogPositions);
}

const reached = (events: readonly LogEvent[], end: LogPosition | undefined, full: boolean, from: LogPosition): LogPosition => {
  const last = events.at(-1) ?? from;
  return !full && end ? later(later(last, end), from) : later(last, from);
};

interface Stream {
  session: Session;
  res: Response;
  keyId: string;
  userId: string;
  teamIds: readonly string[] | undefined;
  types: ReadonlySet<string> | undefined;
  access: StreamAccess;
  /** The last place in the log this stream has judged: every event up to it was sent or not for it. */
  position: LogPosition;
  /** Taking the shared reads; false while it catches up alone. */
  live: boolean;
  /** Its access must be decided anew before its next event. */
  stale: boolean;
  /** The last team creation its access was decided anew for (`learnsOfNewTeam`): a decision after reading it knows the team. */
  learnedAt: LogPosition | undefined;
  /** A shared read went past it while it caught up. */
  behind: boolean;
  catchingUp: boolean;
  /** Placed at the log's end as it opened: its first catch-up has nothing to read. */
  atEnd: boolean;
  ended: boolean;
  /** For the log line of its end: its request, when it opened, how many events it sent. */
  requestId: string;
  openedAt: number;
  sent: number;
}

export async function startLiveStreams(options: LiveOptions): Promise<LiveStreams> {
  const { db, logger, metrics, now } = options;
  const maxPerKey = options.maxPerKey ?? liveDefaults.maxPerKey;
  const bufferBytes = options.bufferBytes ?? liveDefaults.bufferBytes;
  if (bufferBytes < EVENT_MAX_BYTES + framingBytes) throw new RangeError(`A stream's buffer (${bufferBytes} bytes) must hold the largest event (${EVENT_MAX_BYTES} bytes) and its framing`);
  const pollMs = options.pollMs ?? liveDefaults.pollMs;
  const streams = new Set<Stream>();
  const perKey = new Map<string, number>();
  /** Where the shared read has reached; undefined while no stream is live. */
  let shared: LogPosition | undefined;
  let reading: Promise<void> | undefined;
  let readAgain = false;
  /** The earliest the next shared read may start (`readPauseMs`), and when the current one began handing out. */
  let nextReadAt = 0;
  let handOutFrom: number | undefined;
  /** A wake-up waiting for `nextReadAt`. */
  let waiting: NodeJS.Timeout | undefined;
  /** Whether the database's notifications of changed callers reach this process now. */
  let listening = false;
  let closed = false;

  const release = (keyId: string) => {
    const count = (perKey.get(keyId) ?? 1) - 1;
    if (count === 0) perKey.delete(keyId);
    else perKey.set(keyId, count);
  };

  /** Forgets an ended stream; the first reason given is the one logged. */
  const remove = (stream: Stream, reason: 'closed' | 'revoked' | 'slow' | 'stopping' | 'purged') => {
    if (stream.ended) return;
    stream.ended = true;
    const durationMs = Math.round(performance.now() - stream.openedAt);
    logger.info({ instance: instanceId, requestId: stream.requestId, keyId: stream.keyId, reason, durationMs, eventsSent: stream.sent }, 'event stream ended');
    streams.delete(stream);
    release(stream.keyId);
    metrics.live.streams.dec();
    if (streams.size === 0) shared = undefined;
  };

  /**
   * Ends a stream. `purged`: the log was purged past its place (the retention deleted events it had not
   * sent yet), so it ends rather than skip them; its reader resumes with Last-Event-ID, which then
   * answers 410 eventsExpired (`eventPosition`), and loads again.
   */
  const end = (stream: Stream, reason: 'revoked' | 'slow' | 'stopping' | 'purged') => {
    if (stream.ended) return;
    if (reason === 'slow') {
      // Whatever waits to be sent stays unsent: the reader resumes with Last-Event-ID.
      stream.res.destroy();
    } else {
      // Given a buffer, better-sse writes it before `batch` first awaits: before the end below.
      if (reason === 'stopping') void stream.session.batch(createEventBuffer().retry(liveDefaults.stopRetryMs).dispatch());
      stream.res.end();
    }
    if (reason !== 'stopping') metrics.live.dropped.inc({ reason });
    remove(stream, reason);
  };

  const expired = (caller: Caller, at = now()) => keyStatus({ revoked_at: null, expires_at: caller.keyExpiresAt }, at) !== 'active';

  /**
   * Sends the events after the stream's place that its reader may see; `to` is where the read that
   * brought them reached, `at` when (one reading of the clock for every stream a read reaches).
   */
  const take = (stream: Stream, read: Brought, to: LogPosition, at: Date) => {
    if (stream.ended) return;
    if (expired(stream.access.caller, at)) return end(stream, 'revoked');
    for (const event of judgedBy(stream.teamIds, read)) {
      if (compareLogPositions(event, stream.position) <= 0) continue;
      if (learnsOfNewTeam(stream.access, event) && (stream.learnedAt === undefined || compareLogPositions(event, stream.learnedAt) > 0)) {
        // The stream stays just before the team's creation, and reads on from there once its access knows the team.
        stream.learnedAt = event;
        return reconsider(stream);
      }
      stream.position = event;
      if ((stream.types && !stream.types.has(event.type)) || !follows(stream.access, stream.teamIds, event)) continue;
      const stored = parsed(event);
      const view = eventView(stream.access.reader, stored);
      if (view === undefined) continue;
      // An event seen as stored keeps its stored text, byte for byte. Written as better-sse's Node
      // connection writes a message (`res.write`), the bytes shared with the other streams.
      stream.res.write(framed(event, view === stored ? event.event : JSON.stringify(view)));
      metrics.live.eventsSent.inc();
      stream.sent += 1;
      if (stream.res.writableLength > bufferBytes) return end(stream, 'slow');
    }
    stream.position = later(to, stream.position);
  };

  const standings = (caller: Caller, teamIds: readonly string[] | undefined) => standingsOf(db, caller.userId, teamIds ?? [], organizationsWithEveryTeam(caller));

  const decide = async (stream: Stream): Promise<StreamAccess | undefined> => {
    const caller = await callerOfKey(db, stream.keyId);
    if (!caller || expired(caller)) return undefined;
    return currentStreamAccess(caller, await standings(caller, stream.teamIds), stream.teamIds);
  };

  /** Reads the log from the stream's own place until it has caught up with the shared read, deciding its access first when asked. */
  const catchUp = async (stream: Stream): Promise<void> => {
    if (stream.catchingUp || stream.ended) return;
    stream.catchingUp = true;
    stream.live = false;
    try {
      for (;;) {
        if (stream.stale) {
          stream.stale = false;
          // A failed decision is asked for again: the stream reads nothing under the access it had.
          const access = await decide(stream).catch((error: unknown) => {
            stream.stale = true;
            throw error;
          });
          if (stream.ended) return;
          if (!access) return end(stream, 'revoked');
          stream.access = access;
        }
        stream.behind = false;
        const from = stream.position;
        const { events, end: logEnd, full, cut } = stream.atEnd
          ? { events: [], end: undefined, full: false, cut: [] }
          : await logAfter(db, { after: from, orgIds: [...stream.access.reader.organizations.keys()], limit: catchUpLimit });
        stream.atEnd = false;
        if (stream.ended) return;
        if (cut.length > 0) return end(stream, 'purged');
        // Judged under an access that changed meanwhile: read again under the new one.
        if (stream.stale) continue;
        take(stream, brought(events), reached(events, logEnd, full, from), now());
        if (stream.ended) return;
        if (full || stream.behind || stream.stale || (shared && compareLogPositions(shared, stream.position) > 0)) continue;
        // Nothing awaited since the check: every shared read from now on reaches this stream.
        shared ??= stream.position;
        stream.live = listening;
        if (!stream.live) stream.stale = true;
        return;
      }
    } catch (error) {
      // The next wake-up tries again from the same place (the database restarting, a lost connection).
      if (!closed) logger.warn({ err: loggableError(error) }, 'an event stream could not read the log; trying again');
    } finally {
      stream.catchingUp = false;
    }
  };

  /** Marks a stream's access to be decided anew before its next event. */
  const reconsider = (stream: Stream) => {
    stream.stale = true;
    stream.live = false;
    void catchUp(stream);
  };

  const readShared = async () => {
    while (shared && streams.size > 0 && !closed) {
      const from = shared;
      const { events, end: logEnd, full, cut } = await logAfter(db, { after: from, limit: sharedReadLimit });
      if (!shared || compareLogPositions(shared, from) !== 0) break;
      const to = reached(events, logEnd, full, from);
      shared = to;
      const read = brought(events);
      const at = now();
      if (events.length > 0) handOutFrom ??= performance.now();
      for (const stream of streams) {
        // A live stream is at the shared place: what the log lost after it, it would never send.
        if (stream.live && cut.some((orgId) => stream.access.reader.organizations.has(orgId))) end(stream, 'purged');
        else if (stream.live && listening) take(stream, read, to, at);
        else if (stream.live) {
          if (events.length > 0) reconsider(stream);
        } else if (events.length > 0 || !stream.stale) {
          stream.behind = true;
          void catchUp(stream);
        }
      }
      if (!full) break;
    }
  };

  const wake = () => {
    if (closed || streams.size === 0) return;
    if (reading || waiting) {
      readAgain = true;
      return;
    }
    const wait = nextReadAt - performance.now();
    if (wait > 0) {
      waiting = setTimeout(() => {
        waiting = undefined;
        wake();
      }, wait);
      return;
    }
    readAgain = false;
    handOutFrom = undefined;
    reading = readShared()
      .catch((error: unknown) => logger.warn({ err: loggableError(error) }, 'could not read the event log for the live streams; trying again'))
      // In a tick queued after those in which Node writes what the read handed out (it corks a
      // response's writes until the next tick): the hand-out's time includes its writing.
      .finally(() =>
        process.nextTick(() => {
          reading = undefined;
          if (handOutFrom !== undefined) {
            const at = performance.now();
            nextReadAt = at + readPauseMs(at - handOutFrom);
          }
          if (readAgain) wake();
        }),
      );
  };

  const poll = setInterval(wake, pollMs);
  poll.unref();
  // One timer for every stream rather than better-sse's one per session.
  const keepAlive = setInterval(() => {
    for (const stream of streams) void stream.session.batch(keepAliveComment);
  }, options.keepAliveMs ?? liveDefaults.keepAliveMs);
  keepAlive.unref();

  const forget = (payload: string) => {
    const separator = payload.indexOf(':');
    const kind = payload.slice(0, separator);
    const id = payload.slice(separator + 1);
    for (const stream of streams) {
      const concerned = kind === 'user' ? stream.userId === id : kind === 'org' ? stream.access.reader.organizations.has(id) : true;
      if (concerned) reconsider(stream);
    }
  };

  const stops = options.subscribe
    ? await Promise.all([
        options.subscribe(logChannel, wake),
        options.subscribe(callersChannel, forget, {
          ownChanges: true,
          lost: () => {
            listening = false;
          },
          listening: () => {
            listening = true;
            for (const stream of streams) reconsider(stream);
          },
        }),
      ])
    : [];

  /**
   * The place after a log position (422 when it does not open): one of an organization the stream
   * follows (403 otherwise), after which the log deleted no event of the organizations it follows
   * (undefined otherwise: a start there would miss them).
   */
  const placeAfter = async (access: StreamAccess, text: string, from: PositionSource) => {
    const { orgId, at } = options.positions.read(text, from);
    const followed = access.teams ? new Set([...access.teams].map((teamId) => access.reader.teams.get(teamId)?.orgId)) : new Set(access.reader.organizations.keys());
    if (!followed.has(orgId)) throw new Forbidden('The log position belongs to an organization this stream does not follow.');
    return (await keptAfter(db, [...followed].filter((id) => id !== undefined), at)) ? at : undefined;
  };

  /** A stream's reader and place in the log, or the refusal (403, 404, 410, 422) GET and HEAD alike answer. */
  const opening = async (req: Request, request: StreamRequest) => {
    const access = openingStreamAccess(request.caller, await standings(request.caller, request.teamIds), request.teamIds);
    const lastEventId = req.get('last-event-id');
    const resumeAfter = lastEventId ?? request.after;
    const position =
      resumeAfter === undefined
        ? await logEnd(db)
        : options.positions.isPosition(resumeAfter)
          ? await placeAfter(access, resumeAfter, lastEventId === undefined ? { origin: 'query', name: 'after' } : { origin: 'header', name: 'Last-Event-ID' })
          : await eventPosition(db, resumeAfter, [...access.reader.organizations.keys()]);
    if (!position) throw new EventsExpired();
    return { access, position, resumeAfter };
  };

  return {
    get size() {
      return streams.size;
    },
    open: async (req, res, request) => {
      const { caller } = request;
      const open = perKey.get(caller.keyId) ?? 0;
      if (open >= maxPerKey) throw new RateLimited(10, `At most ${maxPerKey} event streams may be open at once per API key; close one first.`);
      if (req.method === 'HEAD') {
        // The answer GET would give, at once and without a stream: nothing counted or held.
        await opening(req, request);
        // The head better-sse writes for a stream, as it writes it (Express's `set` would add a charset).
        for (const [name, value] of Object.entries(Connection.constants.RESPONSE_HEADERS)) res.setHeader(name, value);
        return void res.status(200).end();
      }
      // Counted before anything is awaited, so that simultaneous openings cannot pass the limit together.
      perKey.set(caller.keyId, open + 1);
      let stream: Stream | undefined;
      try {
        const { access, position, resumeAfter } = await opening(req, request);
        const session = await createSession(req, res, {
          retry: options.retryMs ?? liveDefaults.retryMs,
          keepAlive: null,
          // The log keeps each event as its JSON text: sent as it is.
          serializer: (data) => data as string,
          // Last-Event-ID is read above, and validated by the contract; better-sse would also read it from the query.
          trustClientEventId: false,
        });
        stream = {
          session,
          res,
          keyId: caller.keyId,
          userId: caller.userId,
          teamIds: request.teamIds,
          types: request.types && new Set(request.types),
          access,
          position,
          live: false,
          stale: false,
          learnedAt: undefined,
          behind: false,
          catchingUp: false,
          atEnd: resumeAfter === undefined,
          ended: false,
          requestId: req.requestId,
          openedAt: performance.now(),
          sent: 0,
        };
        // Which instance serves whose stream; its end is logged with the same request id (`remove`).
        logger.info(
          { instance: instanceId, requestId: req.requestId, keyId: caller.keyId, userId: caller.userId, teams: request.teamIds ?? 'all', types: request.types ?? 'all', resumeAfter: resumeAfter ?? null },
          'event stream opened',
        );
      } catch (error) {
        release(caller.keyId);
        throw error;
      }
      const opened = stream;
      streams.add(opened);
      metrics.live.streams.inc();
      // A reader gone while its access was decided, or as its session started, brings no 'disconnected' to the listener below.
      if (res.destroyed) return remove(opened, 'closed');
      opened.session.once('disconnected', () => remove(opened, 'closed'));
      if (closed) return end(opened, 'stopping');
      await catchUp(opened);
    },
    close: async () => {
      if (closed) return;
      closed = true;
      clearInterval(poll);
      clearInterval(keepAlive);
      clearTimeout(waiting);
      for (const stream of [...streams]) end(stream, 'stopping');
      await Promise.all(stops.map((stop) => stop()));
      await reading;
    },
  };
}

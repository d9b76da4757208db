/**
 * PostgreSQL's LISTEN for the server's workers and caches: one connection of its own per process,
 * outside the pool (a pooled connection is lent to requests), shared by every channel; lost, it is
 * opened again after 100 ms, then twice as long each time up to 5 s, and every channel is listened
 * to again.
 *
 * A channel may ask for this process's own changes at commit (`ownChanges`): the pool's connections
 * then LISTEN to it too, once each, before their first loan. PostgreSQL sends a session the
 * notifications of its own transaction before it answers its COMMIT (or its single statement), so
 * whatever this process changes is told before the change returns to the request that made it —
 * while the listening connection would hear it a little later, on its own socket.
 *
 * A connection can also go quiet without any error: its server process stopped, a network path that
 * drops packets, until TCP keep-alive notices (minutes). So the listener proves it still hears:
 * every second it sends a NOTIFY on a channel of its own through the pool (a connection other than
 * the listening one, the way another instance's change comes) and tells its subscribers each time it
 * hears it (`alive`). PostgreSQL delivers a session's notifications in commit order, so a heartbeat
 * heard means every notification committed before it was heard too.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface ListenEvents {
  /** The listening connection was lost: a notification sent from now until `listening` may never come. */
  lost?(): void;
  /**
   * Listening, at first or again after a loss: from now on every notification on the channel comes.
   * `heartbeats`: whether the listener proves it is alive by `alive` every `heartbeatMs` (PostgreSQL);
   * false for one that cannot be cut off from the database (PGlite, inside the process).
   */
  listening?(heartbeats: boolean): void;
  /** The listening connection heard its own heartbeat: it still hears every notification committed before it. */
  alive?(): void;
  /** Tell of this process's own changes before their statement or COMMIT returns (see above). */
  ownChanges?: boolean;
}

/**
 * Calls `onNotify` with the payload of every NOTIFY on `channel`, from any process of the database;
 * resolves, once the first attempt to listen succeeded or failed, to a stop function.
 */
export type Listen = (channel: string, onNotify: (payload: string) => void, events?: ListenEvents) => Promise<() => Promise<void>>;

interface Subscription {
  channel: string;
  onNotify(payload: string): void;
  events: ListenEvents;
}

const firstRetryMs = 100;
const lastRetryMs = 5_000;
/** How often the listening connection notifies itself to prove it still hears. */
export const heartbeatMs = 1_000;

export interface PostgresNotifications {
  listen: Listen;
  /** The channels the pool's connections listen to (those that asked for `ownChanges`). */
  ownChannels(): readonly string[];
  /** A notification a pooled connection received. */
  deliverOwn(channel: string, payload: string): void;
  close(): Promise<void>;
}

const listenStatement = (channels: Iterable<string>) => [...new Set(channels)].map((channel) => `listen ${pg.escapeIdentifier(channel)}`).join('; ');

/** `notify` sends a NOTIFY with an empty payload on a channel through the pool (never the listening connection). */
export function postgresNotifications(
  databaseUrl: string,
  options: { connectionTimeoutMs: number; notify(channel: string): Promise<unknown> },
): PostgresNotifications {
  // Of this listener alone: no other process hears its heartbeats.
  const heartbeatChannel = `teamos_alive_${randomBytes(8).toString('hex')}`;
  const subscriptions = new Set<Subscription>();
  let own: string[] = [];
  /** Connected and listening to every subscribed channel. */
  let client: pg.Client | undefined;
  let connecting: Promise<void> | undefined;
  let retry: NodeJS.Timeout | undefined;
  let retryMs = firstRetryMs;
  let closed = false;
  let heartbeat: NodeJS.Timeout | undefined;

  const stopHeartbeat = () => {
    clearInterval(heartbeat);
    heartbeat = undefined;
  };

  const deliver = (channel: string, payload: string, own: boolean) => {
    if (channel === heartbeatChannel) {
      for (const subscription of subscriptions) subscription.events.alive?.();
      return;
    }
    for (const subscription of subscriptions) {
      if (subscription.channel === channel && (!own || subscription.events.ownChanges)) subscription.onNotify(payload);
    }
  };

  const scheduleRetry = () => {
    if (closed || subscriptions.size === 0 || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      void connect();
    }, retryMs);
    retryMs = Math.min(retryMs * 2, lastRetryMs);
  };

  const connect = (): Promise<void> =>
    (connecting ??= (async () => {
      if (client || closed) return;
      const next = new pg.Client({
        connectionString: databaseUrl,
        connectionTimeoutMillis: options.connectionTimeoutMs,
        keepAlive: true,
        // Named with the process id: an operator (or a test) can tell the listeners apart in pg_stat_activity.
        application_name: `teamos listen ${process.pid}`,
      });
      let lost = false;
      const lose = () => {
        if (lost) return;
        lost = true;
        void next.end().catch(() => undefined);
        if (client !== next) return;
        client = undefined;
        stopHeartbeat();
        for (const subscription of subscriptions) subscription.events.lost?.();
        scheduleRetry();
      };
      next.on('notification', (message) => deliver(message.channel, message.payload ?? '', false));
      next.on('error', lose);
      next.on('end', lose);
      try {
        await next.connect();
        if (subscriptions.size > 0) await next.query(listenStatement([heartbeatChannel, ...[...subscriptions].map((subscription) => subscription.channel)]));
      } catch {
        lost = true;
        await next.end().catch(() => undefined);
        scheduleRetry();
        return;
      }
      if (lost) return scheduleRetry();
      if (closed) return void (await next.end().catch(() => undefined));
      client = next;
      retryMs = firstRetryMs;
      // A heartbeat that cannot be sent (the pool cannot reach the server) is simply not heard.
      heartbeat = setInterval(() => void options.notify(heartbeatChannel).catch(() => undefined), heartbeatMs);
      heartbeat.unref();
      for (const subscription of subscriptions) subscription.events.listening?.(true);
    })().finally(() => (connecting = undefined)));

  return {
    listen: async (channel, onNotify, events = {}) => {
      const subscription: Subscription = { channel, onNotify, events };
      if (events.ownChanges && !own.includes(channel)) own = [...own, channel];
      subscriptions.add(subscription);
      await connecting;
      if (client) {
        try {
          await client.query(listenStatement([channel]));
          events.listening?.(true);
        } catch {
          // The connection went meanwhile: `lost` was told, and the next one listens to this channel too.
        }
      } else {
        await connect();
      }
      return async () => {
        subscriptions.delete(subscription);
        if (subscriptions.size > 0) return;
        clearTimeout(retry);
        retry = undefined;
        stopHeartbeat();
        const last = client;
        client = undefined;
        await last?.end().catch(() => undefined);
      };
    },
    ownChannels: () => own,
    deliverOwn: (channel, payload) => deliver(channel, payload, true),
    close: async () => {
      closed = true;
      clearTimeout(retry);
      await connecting;
      stopHeartbeat();
      const last = client;
      client = undefined;
      await last?.end().catch(() => undefined);
    },
  };
}

/** The statement a pooled connection runs once before its first loan, when `channels` is not empty. */
export function ownChannelsStatement(channels: readonly string[]): string {
  return listenStatement(channels);
}

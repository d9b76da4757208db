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
 */
import pg from 'pg';

export interface ListenEvents {
  /** The listening connection was lost: a notification sent from now until `listening` may never come. */
  lost?(): void;
  /** Listening, at first or again after a loss: from now on every notification on the channel comes. */
  listening?(): void;
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

export interface PostgresNotifications {
  listen: Listen;
  /** The channels the pool's connections listen to (those that asked for `ownChanges`). */
  ownChannels(): readonly string[];
  /** A notification a pooled connection received. */
  deliverOwn(channel: string, payload: string): void;
  close(): Promise<void>;
}

const listenStatement = (channels: Iterable<string>) => [...new Set(channels)].map((channel) => `listen ${pg.escapeIdentifier(channel)}`).join('; ');

export function postgresNotifications(databaseUrl: string, options: { connectionTimeoutMs: number }): PostgresNotifications {
  const subscriptions = new Set<Subscription>();
  let own: string[] = [];
  /** Connected and listening to every subscribed channel. */
  let client: pg.Client | undefined;
  let connecting: Promise<void> | undefined;
  let retry: NodeJS.Timeout | undefined;
  let retryMs = firstRetryMs;
  let closed = false;

  const deliver = (channel: string, payload: string, own: boolean) => {
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
        for (const subscription of subscriptions) subscription.events.lost?.();
        scheduleRetry();
      };
      next.on('notification', (message) => deliver(message.channel, message.payload ?? '', false));
      next.on('error', lose);
      next.on('end', lose);
      try {
        await next.connect();
        if (subscriptions.size > 0) await next.query(listenStatement([...subscriptions].map((subscription) => subscription.channel)));
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
      for (const subscription of subscriptions) subscription.events.listening?.();
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
          events.listening?.();
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

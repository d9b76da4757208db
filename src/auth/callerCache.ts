/**
 * Callers kept in memory by the hash of their key, so that a request whose caller is known sends no
 * statement to authenticate. Correctness first: a change is forgotten on every instance as it
 * commits, by notifications PostgreSQL itself sends (migration 0007: triggers on `api_keys`,
 * `users`, `organization_members` and `organizations`, whoever changes them — the API, the operator
 * command line, direct SQL):
 *
 * - `user:<id>` forgets that account's keys, `org:<id>` every caller who belongs to that
 *   organization, `flush` everything;
 * - the process that made a change hears of it before its COMMIT returns (src/db/listen.ts,
 *   `ownChanges`; PGlite tells its listeners at commit), so its own next request already reads anew;
 * - while the listening connection is down (and before it first listens) nothing is kept: every
 *   request reads from the database, as with the cache off, until it listens again;
 * - the same while it is silent: a listener that proves itself by heartbeats (PostgreSQL, every
 *   second: src/db/listen.ts) and has not been heard for `silenceMs` (2 s) may have been cut off
 *   without an error (its server process stopped, packets dropped), so everything kept is dropped
 *   and nothing is kept until a heartbeat is heard again. A change is thus refused on an instance
 *   cut off this way at most about 2 s after its commit, instead of the lifetime;
 * - a caller read while a notification came is not kept (it may have been read before the change
 *   committed): a mark taken before the read tells;
 * - only keys that were active when read are kept; an unknown or revoked key never is, so a stranger
 *   cannot fill the memory with made-up keys, and a new key needs no notification. Expiry is judged
 *   on every request against the app's clock, never kept as "valid";
 * - each caller is kept at most `ttlMs` (10 s by default): a last bound on what a notification that
 *   never came, while heartbeats did, could leave stale, at the cost of one statement per active key
 *   and process every 10 s;
 * - at most `maxEntries` callers (10,000 by default, a few MB): the oldest kept is dropped first.
 *   With the short lifetime, a key in use is kept afresh every 10 s, so the oldest kept is close to
 *   the least recently used.
 */
import type { Logger } from 'pino';
import type { Listen } from '../db/listen.js';
import type { Caller } from './caller.js';

/** PostgreSQL's channel of the notifications of migration 0007 (named there too: migrations are frozen). */
export const callersChannel = 'auth_callers';

export interface KeptCaller {
  caller: Caller;
  /** When this process last knew the key's use recorded, in ms since the epoch (src/auth/authenticate.ts). */
  usedAt: number | undefined;
}

interface Entry extends KeptCaller {
  keptUntil: number;
}

export interface CallerCache {
  /** The caller of the key with this hash, when kept and younger than the lifetime. */
  get(keyHash: string): KeptCaller | undefined;
  /** Taken before reading a caller from the database, and given to `keep`. */
  mark(): number;
  /** Keeps a caller of an active key read after `mark`, unless a notification came since (or nothing is kept now). */
  keep(keyHash: string, kept: KeptCaller, mark: number): void;
  /** How many callers are kept now. */
  readonly size: number;
  stop(): Promise<void>;
}

export const callerCacheDefaults = { ttlMs: 10_000, maxEntries: 10_000, silenceMs: 2_000 };

/** Freezes the caller, which every request of its key shares: a handler that changed it would change it for all of them. */
function frozen(caller: Caller): Caller {
  for (const membership of caller.organizations) Object.freeze(membership);
  Object.freeze(caller.organizations);
  Object.freeze(caller.scopes);
  return Object.freeze(caller);
}

export async function startCallerCache(options: {
  subscribe: Listen;
  logger: Logger;
  ttlMs?: number;
  maxEntries?: number;
  /** How long a listener with heartbeats may stay unheard before nothing is kept. */
  silenceMs?: number;
  /** A monotonic clock in ms; `performance.now` unless given. */
  clock?: () => number;
}): Promise<CallerCache> {
  const { logger } = options;
  const ttlMs = options.ttlMs ?? callerCacheDefaults.ttlMs;
  const maxEntries = options.maxEntries ?? callerCacheDefaults.maxEntries;
  const silenceMs = options.silenceMs ?? callerCacheDefaults.silenceMs;
  const clock = options.clock ?? (() => performance.now());
  const entries = new Map<string, Entry>();
  const byUser = new Map<string, Set<string>>();
  const byOrganization = new Map<string, Set<string>>();
  /** Moves on with every notification, loss and return of the listener. */
  let generation = 0;
  let listening = false;
  let everListened = false;
  /** Whether the listener proves itself by heartbeats, and when one (or the start of listening) was last heard. */
  let heartbeats = false;
  let heardAt = 0;
  let silent = false;

  const index = (map: Map<string, Set<string>>, id: string, keyHash: string) => {
    let hashes = map.get(id);
    if (!hashes) map.set(id, (hashes = new Set()));
    hashes.add(keyHash);
  };
  const unindex = (map: Map<string, Set<string>>, id: string, keyHash: string) => {
    const hashes = map.get(id);
    if (!hashes) return;
    hashes.delete(keyHash);
    if (hashes.size === 0) map.delete(id);
  };
  const drop = (keyHash: string) => {
    const entry = entries.get(keyHash);
    if (!entry) return;
    entries.delete(keyHash);
    unindex(byUser, entry.caller.userId, keyHash);
    for (const membership of entry.caller.organizations) unindex(byOrganization, membership.id, keyHash);
  };
  const dropAll = () => {
    entries.clear();
    byUser.clear();
    byOrganization.clear();
  };

  /** Whether the listener has been silent too long; on the first call that finds it so, everything kept is dropped. */
  const deaf = () => {
    if (!heartbeats || clock() - heardAt <= silenceMs) return false;
    if (!silent) {
      silent = true;
      generation += 1;
      dropAll();
      logger.warn(
        `heard nothing from the connection that listens for changes of API keys, accounts and memberships for ${silenceMs / 1000} s: every request reads its caller from the database until it is heard again`,
      );
    }
    return true;
  };

  const forget = (payload: string) => {
    generation += 1;
    const separator = payload.indexOf(':');
    const kind = payload.slice(0, separator);
    const id = payload.slice(separator + 1);
    const hashes = kind === 'user' ? byUser.get(id) : kind === 'org' ? byOrganization.get(id) : undefined;
    if (hashes) {
      for (const keyHash of [...hashes]) drop(keyHash);
    } else if (kind !== 'user' && kind !== 'org') {
      dropAll();
    }
  };

  const stop = await options.subscribe(callersChannel, forget, {
    ownChanges: true,
    lost: () => {
      listening = false;
      generation += 1;
      dropAll();
      logger.warn('lost the connection that listens for changes of API keys, accounts and memberships: every request reads its caller from the database until it is back');
    },
    listening: (proven) => {
      generation += 1;
      dropAll();
      heartbeats = proven;
      heardAt = clock();
      silent = false;
      if (everListened && !listening) logger.info('listening again for changes of API keys, accounts and memberships: callers are kept in memory again');
      listening = true;
      everListened = true;
    },
    alive: () => {
      heardAt = clock();
      if (!silent) return;
      silent = false;
      logger.info('heard the connection that listens for changes of API keys, accounts and memberships again: callers are kept in memory again');
    },
  });

  return {
    get: (keyHash) => {
      if (deaf()) return undefined;
      const entry = entries.get(keyHash);
      if (!entry) return undefined;
      if (entry.keptUntil <= clock()) {
        drop(keyHash);
        return undefined;
      }
      return entry;
    },
    mark: () => generation,
    keep: (keyHash, kept, mark) => {
      if (!listening || deaf() || mark !== generation) return;
      drop(keyHash);
      if (entries.size >= maxEntries) drop(entries.keys().next().value!);
      // The object itself is kept: its `usedAt`, moved on by the request that read it, stays with it.
      const entry: Entry = Object.assign(kept, { caller: frozen(kept.caller), keptUntil: clock() + ttlMs });
      const { caller } = entry;
      entries.set(keyHash, entry);
      index(byUser, caller.userId, keyHash);
      for (const membership of caller.organizations) index(byOrganization, membership.id, keyHash);
    },
    get size() {
      return entries.size;
    },
    stop: async () => {
      listening = false;
      dropAll();
      await stop();
    },
  };
}

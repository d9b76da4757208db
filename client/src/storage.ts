/**
 * Where `client.sync` keeps its local copy between runs: a small key-value interface, with IndexedDB
 * (through `idb-keyval`) for browsers and memory for tests and short-lived processes. The copy is
 * kept per API key and team (`keyOfTeam`, with a SHA-256 digest of the key, never the key itself),
 * so two people sharing a browser never read each other's, and a copy names the reader it belongs to.
 */
import { createStore, del, get, set, type UseStore } from 'idb-keyval';
import type { StoredTeam } from './localCopy.js';

/** A place to keep the local copy. Any key-value store with these three methods will do. */
export interface SyncStorage {
  get(key: string): Promise<unknown>;
  set(key: string, value: unknown): Promise<void>;
  delete(key: string): Promise<void>;
}

/** The key of one reader's copy of one team: `reader` is a digest of their API key (`readerOf`). */
export const keyOfTeam = (reader: string, teamId: string) => `team-os-sync/v1/${reader}/${teamId}`;

/** A digest of the `Authorization` a client sends: names whose copy it is, and tells nothing of the key. */
export async function readerOf(authorization: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(authorization));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}

/**
 * IndexedDB through `idb-keyval`: a database of its own (`team-os-sync` unless named), one entry per
 * reader and team. In Node, give it an IndexedDB first (`fake-indexeddb/auto` in tests).
 */
export function indexedDbStorage(databaseName = 'team-os-sync'): SyncStorage {
  let store: UseStore | undefined;
  // Opened at first use, so that building the client never touches IndexedDB.
  const opened = () => (store ??= createStore(databaseName, 'teams'));
  return {
    get: (key) => get(key, opened()),
    set: (key, value) => set(key, value, opened()),
    delete: (key) => del(key, opened()),
  };
}

/** In memory: kept while the process lives. Values are copied, as IndexedDB would. */
export function memoryStorage(): SyncStorage & { readonly size: number } {
  const entries = new Map<string, unknown>();
  return {
    get: async (key) => structuredClone(entries.get(key)),
    set: async (key, value) => void entries.set(key, structuredClone(value)),
    delete: async (key) => void entries.delete(key),
    get size() {
      return entries.size;
    },
  };
}

/** A stored team, or undefined when the entry is missing or of another form (an older client's). */
export function storedTeamOf(value: unknown, teamId: string): StoredTeam | undefined {
  const stored = value as Partial<StoredTeam> | undefined;
  if (typeof stored !== 'object' || stored === null || stored.version !== 1 || stored.teamId !== teamId) return undefined;
  if (typeof stored.userId !== 'string' || typeof stored.position !== 'string' || typeof stored.records !== 'object' || !Array.isArray(stored.tombstones)) return undefined;
  return stored as StoredTeam;
}

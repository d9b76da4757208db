/**
 * A team screen's local copy in a browser, bundled by esbuild for test/browserSync.test.ts and run in
 * headless Chromium: `client.sync` over `@team-os/client`, with IndexedDB (`indexedDbStorage`) when
 * asked. Each function returns plain data, so that the test compares the page's copy with what fresh
 * reads answer the same reader.
 */
import { createTeamOsClient, indexedDbStorage, type SyncStore } from '@team-os/client';

export interface SyncApi {
  baseUrl: string;
  apiKey: string;
}

/** The kinds of records the test compares with fresh reads. */
const kinds = ['team', 'member', 'task', 'issue', 'meeting', 'peopleReview'] as const;

/** What the page's copy of a team shows, as plain data. */
export interface Held {
  state: string;
  team: unknown;
  members: unknown[];
  openTasks: unknown[];
  openIssues: unknown[];
  lists: Record<(typeof kinds)[number], unknown[]>;
}

const stores = new Map<string, SyncStore>();
/** When each copy last changed (the page's `Date.now()`): once it equals fresh reads, the moment it got there. */
const changedAt = new Map<string, number>();

/** Opens `client.sync` on `teamIds` under `name`, kept in IndexedDB when `stored`; resolves once every team is shown. */
async function startSync(api: SyncApi, name: string, teamIds: string[], stored: boolean): Promise<void> {
  const client = createTeamOsClient({ baseUrl: api.baseUrl, apiKey: api.apiKey });
  const store = client.sync({ teamIds, ...(stored ? { storage: indexedDbStorage() } : {}) });
  stores.set(name, store);
  store.subscribe(() => changedAt.set(name, Date.now()));
  await store.ready;
}

/** The copy `name` holds of `teamId` now. */
function held(name: string, teamId: string): Held {
  const store = stores.get(name)!;
  return {
    state: store.state(teamId),
    team: store.team(teamId),
    members: store.members(teamId),
    openTasks: store.openTasks(teamId),
    openIssues: store.openIssues(teamId),
    lists: Object.fromEntries(kinds.map((kind) => [kind, store.list(kind, teamId)])) as Held['lists'],
  };
}

/** Stops the copy `name`, and writes what is not yet stored (as a page does on `pagehide`). */
async function closeSync(name: string): Promise<void> {
  await stores.get(name)?.close();
  stores.delete(name);
}

/** When the copy `name` last changed, in the page's `Date.now()`. */
function lastChangeAt(name: string): number | undefined {
  return changedAt.get(name);
}

export const page = { startSync, held, closeSync, lastChangeAt };
export type SyncPage = typeof page;

declare global {
  interface Window {
    teamOsSync: SyncPage;
  }
}

window.teamOsSync = page;

/**
 * `client.sync`'s local copy (`BENCH_ONLY=sync`, and in the full run), issue 44:
 *   - catching up after 1,000 missed events: a copy of a team of 1,000 open tasks kept in storage,
 *     the team changed 1,000 times while it is away, then started again from storage (one request,
 *     its stream from the stored position) against a copy started without storage (the snapshot
 *     and the stream): time until the copy shows the last change, and bytes received;
 *   - the copy's memory in Node for 10,000 records (a team of 10,000 open tasks loaded from its
 *     snapshot): the heap after a full collection, with the copy and without, ÷ its records.
 * Both are reported: figures, not targets.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { sql, type Kysely } from 'kysely';
import { createTeamOsClient, memoryStorage, type SyncStore } from '../../client/src/index.js';
import type { Database } from '../../src/db/database.js';
import { listen, reported, type Check } from './harness.js';
import type { Stack, World } from './seed.js';
import { apiOf } from './seed.js';

const missedEvents = 1_000;
const catchUpTasks = 1_000;
const memoryRecords = 10_000;

/** A team of its own in the bench's organization with `tasks` open tasks, its members the world's team's. */
async function seedTeam(db: Kysely<Database>, world: World, name: string, tasks: number): Promise<string> {
  const team = await db.insertInto('teams').values({ org_id: world.orgId, name, slug: name.toLowerCase().replace(/\W+/g, '-') }).returning('id').executeTakeFirstOrThrow();
  await db.insertInto('team_members').values(world.ownerIds.map((userId) => ({ team_id: team.id, user_id: userId, role: 'MEMBER' as const }))).execute();
  await sql`
    insert into tasks (team_id, title, owner_id, due_date, created_at)
    select ${team.id}, 'Check the pallet count #' || n, (${world.ownerIds}::text[])[1 + n % ${world.ownerIds.length}],
      date '2026-01-05' + (n % 365)::int, timestamptz '2026-01-05T08:00:00Z' + n * interval '1 millisecond'
    from generate_series(1, ${tasks}) as n
  `.execute(db);
  return team.id;
}

/** A full collection, for the heap's figures: `gc` exposed at run time when node was started without it. */
function collect(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/** A fetch that counts the bytes of every answer's body as the client reads it. */
function countingFetch() {
  const counted = { bytes: 0, requests: 0 };
  const fetch = async (request: Request): Promise<Response> => {
    counted.requests += 1;
    const response = await globalThis.fetch(request);
    if (!response.body) return response;
    const body = response.body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({ transform: (chunk, controller) => (counted.bytes += chunk.length, controller.enqueue(chunk)) }));
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
  return { fetch, counted };
}

async function until(what: string, check: () => boolean, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((next) => setTimeout(next, 5));
  }
}

export async function benchSync(stack: Stack): Promise<Check[]> {
  const full = await apiOf(stack);
  const api = await listen(full.app);
  const label = (what: string) => `${stack.label}: ${what}`;
  const stores: SyncStore[] = [];
  const open = (teamId: string, storage?: ReturnType<typeof memoryStorage>) => {
    const network = countingFetch();
    const client = createTeamOsClient({ baseUrl: `${api.url}/v1`, apiKey: stack.world.readKey, fetch: network.fetch });
    const store = client.sync({ teamIds: [teamId], ...(storage ? { storage } : {}) });
    stores.push(store);
    return { store, counted: network.counted };
  };
  try {
    // 1. Catching up after 1,000 missed events, against a load from the snapshot.
    const teamId = await seedTeam(stack.db, stack.world, 'Sync catch-up', catchUpTasks);
    const storage = memoryStorage();
    const first = open(teamId, storage);
    await first.store.ready;
    await first.store.close();
    const writer = createTeamOsClient({ baseUrl: `${api.url}/v1`, apiKey: stack.world.writeKey });
    const tasks = first.store.openTasks(teamId);
    for (let n = 0; n < missedEvents; n += 1) {
      const task = tasks[n % tasks.length]!;
      const answer = await writer.PATCH('/tasks/{id}', { params: { path: { id: task.id } }, body: { title: `Missed change ${n + 1}` } });
      if (answer.error) throw new Error(`PATCH answered ${answer.response.status}`);
    }
    const lastTask = tasks[(missedEvents - 1) % tasks.length]!.id;
    const caughtUp = (store: SyncStore) => store.get('task', lastTask)?.title === `Missed change ${missedEvents}`;

    let started = performance.now();
    const resumed = open(teamId, storage);
    await until('the copy from storage to catch up', () => caughtUp(resumed.store));
    const resumedMs = performance.now() - started;
    await resumed.store.close();

    started = performance.now();
    const loaded = open(teamId);
    await until('the copy from the snapshot to show the last change', () => caughtUp(loaded.store));
    const loadedMs = performance.now() - started;
    await loaded.store.close();
    const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KB`;
    console.log(
      `${label(`catching up after ${missedEvents.toLocaleString('en')} missed events (a team of ${catchUpTasks.toLocaleString('en')} open tasks)`)}: ` +
        `from storage ${resumed.counted.requests} request, ${kb(resumed.counted.bytes)} in ${resumedMs.toFixed(0)} ms; ` +
        `reloaded from the snapshot ${loaded.counted.requests} requests, ${kb(loaded.counted.bytes)} in ${loadedMs.toFixed(0)} ms`,
    );

    // 2. The copy's memory for 10,000 records.
    const bigTeamId = await seedTeam(stack.db, stack.world, 'Sync memory', memoryRecords);
    collect();
    const before = process.memoryUsage().heapUsed;
    const held = open(bigTeamId);
    await held.store.ready;
    await held.store.close();
    collect();
    const after = process.memoryUsage().heapUsed;
    const records = (['team', 'member', 'task', 'issue', 'goal', 'metric', 'metricValue', 'meeting', 'peopleReview'] as const).reduce((sum, kind) => sum + held.store.list(kind as never, bigTeamId).length, 0);
    const perRecord = (after - before) / 1024 / records;
    console.log(`${label(`the local copy's heap for ${records.toLocaleString('en')} records in Node`)}: ${((after - before) / 1024 / 1024).toFixed(1)} MB, ${perRecord.toFixed(2)} KB a record`);

    return [
      reported(label(`catch-up after ${missedEvents} missed events ÷ reload from the snapshot, time`), resumedMs / loadedMs, `${resumedMs.toFixed(0)} / ${loadedMs.toFixed(0)} ms`),
      reported(label(`catch-up after ${missedEvents} missed events ÷ reload from the snapshot, bytes`), resumed.counted.bytes / loaded.counted.bytes, `${kb(resumed.counted.bytes)} / ${kb(loaded.counted.bytes)}`),
      reported(label(`the local copy's heap, KB a record (${records} records)`), perRecord, `${((after - before) / 1024 / 1024).toFixed(1)} MB`),
    ];
  } finally {
    for (const store of stores) await store.close();
    await api.close();
    await full.close();
  }
}

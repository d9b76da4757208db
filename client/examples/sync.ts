/**
 * A team's screen kept by `client.sync`: loaded once, then kept true by the live stream, with a copy
 * in storage so that the next run starts from it and only catches up. It prints the team's open
 * tasks, completes the oldest one through the client (the copy shows it at once, before the event
 * comes back), prints them again, and stops.
 *
 *   TEAM_OS_URL=http://127.0.0.1:3000/v1 TEAM_OS_API_KEY=ak_… TEAM_OS_TEAM_ID=… npx tsx client/examples/sync.ts
 *
 * It needs the server (`make run`, a key from its data/demo-keys.txt): the mock cannot stream. In a
 * browser, give `storage: indexedDbStorage()` instead of the memory.
 */
import { createTeamOsClient, memoryStorage, unwrap } from '@team-os/client';

const client = createTeamOsClient({ baseUrl: process.env.TEAM_OS_URL ?? 'http://127.0.0.1:3000/v1', apiKey: process.env.TEAM_OS_API_KEY });
const teamId = process.env.TEAM_OS_TEAM_ID ?? '0c0c0000-0000-4000-8000-000000000001';

const stop = new AbortController();
const store = client.sync({
  teamIds: [teamId],
  signal: stop.signal,
  storage: memoryStorage(),
  onState: (team, state) => console.log(`sync: ${team} is ${state}`),
  onError: (error) => console.warn(`sync: retrying after ${String(error)}`),
});
await store.ready;

const show = () => {
  const tasks = store.openTasks(teamId);
  console.log(`${store.team(teamId)?.name}: ${tasks.length} open tasks`);
  for (const task of tasks.slice(0, 5)) console.log(`  ${task.dueDate}  ${task.title}`);
};
show();
store.subscribe(({ kinds }) => kinds.includes('task') && console.log('(tasks changed)'));

const oldest = store.openTasks(teamId)[0];
if (oldest) {
  unwrap(await client.PATCH('/tasks/{id}', { params: { path: { id: oldest.id } }, body: { completed: true } }));
  console.log(`completed "${oldest.title}": the copy shows it already`);
  show();
  // Reopened, so that the demo's data stays as it was.
  unwrap(await client.PATCH('/tasks/{id}', { params: { path: { id: oldest.id } }, body: { completed: false } }));
}
stop.abort();
await store.close();

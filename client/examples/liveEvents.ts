/**
 * A live screen: a team's new tasks as they happen, and what the screen says while the connection
 * comes and goes. So that there is something to show, it adds a task to the team once the stream is
 * open (a change: the task stays), prints the event that announces it, and stops.
 *
 *   TEAM_OS_URL=http://127.0.0.1:3000/v1 TEAM_OS_API_KEY=ak_… TEAM_OS_TEAM_ID=… npx tsx client/examples/liveEvents.ts
 *
 * It needs the server (`make run`, a key from its data/demo-keys.txt): the mock cannot stream.
 */
import { createTeamOsClient, unwrap } from '@team-os/client';

const client = createTeamOsClient({ baseUrl: process.env.TEAM_OS_URL ?? 'http://127.0.0.1:3000/v1', apiKey: process.env.TEAM_OS_API_KEY });
const teamId = process.env.TEAM_OS_TEAM_ID ?? '0c0c0000-0000-4000-8000-000000000001';
const title = `Try the live stream (${new Date().toISOString()})`;

const stop = new AbortController();
let added = false;
client.live({
  teamIds: [teamId],
  types: ['task.created'],
  signal: stop.signal,
  onOpen: async () => {
    console.log('live: open');
    if (added) return; // onOpen comes again after each reconnection
    added = true;
    const me = unwrap(await client.GET('/me'));
    unwrap(await client.POST('/teams/{teamId}/tasks', { params: { path: { teamId } }, body: { title, ownerId: me.user.id, dueDate: new Date().toISOString().slice(0, 10) } }));
  },
  onReconnecting: ({ attempt, delayMs, reason }) => console.log(`live: reconnecting in ${delayMs} ms (attempt ${attempt}): ${reason}`),
  onEvent: (event) => {
    console.log(`${event.type}: ${event.data.object.title}`);
    if (event.data.object.title === title) stop.abort();
  },
  onEnd: ({ status, code, message, requestId }) => {
    console.error(`live: ended (${status} ${code ?? ''}): ${message}; request ${requestId}`);
    process.exitCode = 1;
  },
});

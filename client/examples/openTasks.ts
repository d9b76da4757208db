/**
 * A frontend-style script: list a team's open tasks page by page, then complete the first one,
 * sending the ETag it read so that a change made meanwhile by someone else is not overwritten.
 *
 *   TEAM_OS_URL=http://127.0.0.1:4010/v1 TEAM_OS_API_KEY=ak_… TEAM_OS_TEAM_ID=… npx tsx client/examples/openTasks.ts
 *
 * It runs unchanged against the mock (`make mock`) and against the server (`make run`).
 */
import { createTeamOsClient, TeamOsError, unwrap } from '@team-os/client';

const client = createTeamOsClient({ baseUrl: process.env.TEAM_OS_URL ?? 'http://127.0.0.1:4010/v1', apiKey: process.env.TEAM_OS_API_KEY ?? 'ak_any_key_the_mock_accepts' });
const teamId = process.env.TEAM_OS_TEAM_ID ?? '0c0c0000-0000-4000-8000-000000000001';

const open: { id: string; title: string }[] = [];
for await (const task of client.pages('/teams/{teamId}/tasks', { params: { path: { teamId }, query: { completed: false, limit: 20 } } })) {
  console.log(`open: ${task.dueDate ?? 'no due date'}  ${task.title}`);
  open.push(task);
}

const first = open[0];
if (!first) console.log('no open tasks');
else {
  try {
    const task = unwrap(await client.GET('/tasks/{id}', { params: { path: { id: first.id } } }));
    const done = unwrap(await client.PATCH('/tasks/{id}', { params: { path: { id: task.id }, header: { 'If-Match': client.etagOf(task) } }, body: { completed: true } }));
    console.log(`completed: ${done.title}`);
  } catch (error) {
    if (error instanceof TeamOsError && error.code === 'preconditionFailed') console.log(`changed meanwhile, not completed: ${first.title}`);
    else throw error;
  }
}

/**
 * The contract stays friendly to the code generators frontend teams use: @hey-api/openapi-ts
 * generates a client from the bundled contract into a temporary folder, and that client, with a few
 * lines that use it as a team would, must compile under `tsc --strict`. Generators degrade quietly
 * (a schema they cannot read becomes `unknown`), so the lines that use it are what catch that. No
 * database and no server: it runs the two tools once.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractPath } from './support/contract.js';

const bin = (name: string) => resolve(import.meta.dirname, '../node_modules/.bin', name);

/** A tool's exit code and everything it printed. */
async function runTool(command: string, args: string[], cwd: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(command, args, { cwd, env: { ...process.env, NO_COLOR: '1' } });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const { code, stdout = '', stderr = '' } = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof code === 'number' ? code : 1, output: stdout + stderr };
  }
}

/** A frontend project's usual compiler settings: a bundler resolves the imports, the browser's fetch. */
const tsconfig = {
  compilerOptions: {
    target: 'ES2022',
    lib: ['ES2022', 'DOM', 'DOM.Iterable'],
    module: 'ESNext',
    moduleResolution: 'Bundler',
    strict: true,
    noEmit: true,
    skipLibCheck: false,
    types: [],
  },
  include: ['client', 'usage.ts'],
};

/** What a team writes against the generated client: named body shapes, typed events, typed errors. */
const usage = `import { client } from './client/client.gen';
import { createMeeting, getTask, setMeetingRating } from './client/sdk.gen';
import type { ApiError, MarkAbsent, RecordPastMeeting, ScheduleMeeting, Task, WebhookEvent } from './client/types.gen';

const schedule: ScheduleMeeting = { date: '2026-11-23' };
const recordPast: RecordPastMeeting = { startedAt: '2026-11-16T09:00:00Z', durationMin: 60 };
const absent: MarkAbsent = { absent: true };

export async function plan(teamId: string, meetingId: string, userId: string, taskId: string): Promise<string> {
  client.setConfig({ baseUrl: 'https://teamos.example/v1', headers: { Authorization: 'Bearer ak_example' } });
  await createMeeting({ path: { teamId }, body: schedule });
  await createMeeting({ path: { teamId }, body: recordPast });
  await setMeetingRating({ path: { id: meetingId, userId }, body: absent });
  const { data, error } = await getTask({ path: { id: taskId } });
  const failure: ApiError | undefined = error;
  const task: Task | undefined = data;
  return failure ? failure.error.code : (task?.title ?? '');
}

export function receive(event: WebhookEvent): string {
  if (event.type === 'task.created') return event.data.object.title;
  if (event.type === 'meeting_rating.set') return event.data.object.userId;
  return event.type;
}
`;

let folder: string;
let generation: { code: number; output: string };
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'teamos-generators-'));
  await copyFile(contractPath, join(folder, 'openapi.json'));
  generation = await runTool(bin('openapi-ts'), ['--input', 'openapi.json', '--output', 'client', '--no-log-file'], folder);
}, 120_000);
afterAll(() => rm(folder, { recursive: true, force: true }));

describe('@hey-api/openapi-ts 0.95', () => {
  it('generates a client from the contract that compiles under tsc --strict, used as a frontend team would', async () => {
    expect(generation, generation.output).toMatchObject({ code: 0 });
    await writeFile(join(folder, 'tsconfig.json'), JSON.stringify(tsconfig));
    await writeFile(join(folder, 'usage.ts'), usage);

    const compiled = await runTool(bin('tsc'), ['--project', 'tsconfig.json'], folder);

    expect(compiled, compiled.output).toEqual({ code: 0, output: '' });
  }, 120_000);

  it('defaults the generated client to the server that serves the contract (/v1), not to a local address', async () => {
    expect(generation, generation.output).toMatchObject({ code: 0 });
    const config = await readFile(join(folder, 'client/client.gen.ts'), 'utf8');
    expect(config).toMatch(/createConfig<\w+>\(\{ baseUrl: '\/v1' \}\)/);
  });
});

/**
 * Runs the docs page's code samples as a reader would: every `curl` sample's text with bash in one
 * script, every client sample as its own module in one Node process (./runClientSamples.ts). Each
 * sample runs with its environment (TEAM_OS_URL, TEAM_OS_API_KEY) and its text unchanged.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { shellQuote } from '../../scripts/codeSamples.js';
import type { ClientSampleResult, ClientSampleRun } from './runClientSamples.js';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');

export interface SampleRun {
  /** The operationId. */
  name: string;
  source: string;
  env: Record<string, string>;
}

export interface SampleAnswer {
  status: number;
  headers: Headers;
  body: unknown;
}

/** What one sample got: its last answer, or why it has none. */
export interface SampleOutcome {
  answer?: SampleAnswer;
  /** What went wrong: curl's exit status and message, or what the client sample threw. */
  failure?: string;
  /** Answers received, retries and redirects included. */
  answers: number;
}

function answerOf(status: number, headers: Headers, text: string): SampleAnswer {
  const json = headers.get('content-type')?.includes('json') && text !== '';
  return { status, headers, body: json ? JSON.parse(text) : text || undefined };
}

/** `curl -i` output: one or more header blocks (an interim `100 Continue` comes first), then the body. */
function parseCurlOutput(output: string): { answers: number; answer?: SampleAnswer } {
  let rest = output;
  let answers = 0;
  let last: SampleAnswer | undefined;
  while (rest.startsWith('HTTP/')) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) break;
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    rest = rest.slice(end + 4);
    const status = Number(statusLine!.split(' ')[1]);
    if (status < 200) continue;
    answers += 1;
    const headers = new Headers();
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
    }
    last = answerOf(status, headers, '');
  }
  return { answers, answer: last && answerOf(last.status, last.headers, rest) };
}

/** Runs every curl sample in turn, in one bash process. */
export async function runCurlSamples(runs: SampleRun[]): Promise<Map<string, SampleOutcome>> {
  const dir = await mkdtemp(join(tmpdir(), 'teamos-curl-samples-'));
  try {
    const script = runs.map(({ source, env }, index) => {
      const exports = Object.entries(env).map(([name, value]) => `export ${name}=${shellQuote(value)}`);
      return `(\n${exports.join('\n')}\n${source}\n) >${index}.out 2>${index}.err\necho $? >${index}.status`;
    });
    await writeFile(join(dir, 'samples.sh'), `cd ${shellQuote(dir)}\n${script.join('\n')}\n`);
    await run('bash', [join(dir, 'samples.sh')], { timeout: 240_000, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir } });
    const outcomes = new Map<string, SampleOutcome>();
    for (const [index, { name }] of runs.entries()) {
      const exit = Number(await readFile(join(dir, `${index}.status`), 'utf8'));
      const parsed = parseCurlOutput(await readFile(join(dir, `${index}.out`), 'utf8'));
      const failure = exit === 0 ? undefined : `curl exited with ${exit}: ${(await readFile(join(dir, `${index}.err`), 'utf8')).trim().split('\n').pop()}`;
      outcomes.set(name, { ...parsed, ...(failure ? { failure } : {}) });
    }
    return outcomes;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Runs every client sample in turn, each as its own module, in one Node process. */
export async function runClientSamples(runs: SampleRun[]): Promise<Map<string, SampleOutcome>> {
  const dir = await mkdtemp(join(tmpdir(), 'teamos-client-samples-'));
  try {
    // The samples import `@team-os/client` by its name, as a project that installed it does.
    await symlink(join(root, 'node_modules'), join(dir, 'node_modules'));
    await writeFile(join(dir, 'package.json'), '{ "type": "module" }\n');
    await mkdir(join(dir, 'samples'));
    const plan: ClientSampleRun[] = [];
    for (const [index, { name, source, env }] of runs.entries()) {
      const file = join(dir, 'samples', `${index}-${name}.ts`);
      await writeFile(file, `${source}\n`);
      plan.push({ name, file, env });
    }
    await writeFile(join(dir, 'plan.json'), JSON.stringify(plan));
    await run(process.execPath, ['--import', 'tsx', join(root, 'test/support/runClientSamples.ts'), join(dir, 'plan.json'), join(dir, 'results.json')], {
      cwd: dir,
      timeout: 240_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    const results = JSON.parse(await readFile(join(dir, 'results.json'), 'utf8')) as ClientSampleResult[];
    return new Map(
      results.map(({ name, error, answers }) => {
        const last = answers.at(-1);
        const answer = last && answerOf(last.status, new Headers(last.headers), last.text);
        return [name, { answers: answers.length, ...(answer ? { answer } : {}), ...(error ? { failure: error } : {}) }];
      }),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

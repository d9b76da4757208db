/**
 * Runs client code samples in one process (`node --import tsx runClientSamples.ts <plan.json> <results.json>`),
 * one after the other, each as the module it is: the plan lists each sample's file and the
 * environment it runs with (TEAM_OS_URL, TEAM_OS_API_KEY). Every answer the client receives is
 * recorded from `fetch`, so that the test can check it against the contract without touching the
 * sample's text. One process for all of them: a Node start with tsx costs about half a second of CPU.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';

export interface ClientSampleRun {
  name: string;
  file: string;
  env: Record<string, string>;
}

export interface RecordedAnswer {
  method: string;
  url: string;
  status: number;
  headers: [string, string][];
  text: string;
}

export interface ClientSampleResult {
  name: string;
  /** What the sample threw (a TeamOsError's message names its code), if it did. */
  error?: string;
  answers: RecordedAnswer[];
}

const [planFile, resultsFile] = process.argv.slice(2);
const plan = JSON.parse(await readFile(planFile!, 'utf8')) as ClientSampleRun[];

const send = globalThis.fetch;
let answers: Promise<RecordedAnswer>[] = [];
globalThis.fetch = async (input, init) => {
  const request = new Request(input, init);
  const response = await send(request.clone());
  const copy = response.clone();
  answers.push(
    copy.text().then((text) => ({ method: request.method, url: request.url, status: response.status, headers: [...response.headers], text })),
  );
  return response;
};

const results: ClientSampleResult[] = [];
for (const run of plan) {
  answers = [];
  Object.assign(process.env, run.env);
  let error: string | undefined;
  try {
    await import(pathToFileURL(run.file).href);
  } catch (thrown) {
    error = thrown instanceof Error ? `${thrown.name}: ${thrown.message}` : String(thrown);
  }
  results.push({ name: run.name, ...(error === undefined ? {} : { error }), answers: await Promise.all(answers) });
}
await writeFile(resultsFile!, JSON.stringify(results));

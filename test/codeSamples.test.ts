/**
 * The code samples of the docs page (`x-codeSamples` of generated/openapi.json, written by
 * scripts/codeSamples.ts) work: every operation has a `curl` sample and a `@team-os/client` sample,
 * and each one, run as its text stands, gets the operation's documented success and an answer the
 * contract accepts — from the mock for every operation, and from the server on the demo data for
 * every operation that can run there (see `cannotRunOnDemo`).
 */
import type { OpenAPIV3_1 } from 'openapi-types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT, CURL, type CodeSample } from '../scripts/codeSamples.js';
import { startMock, type MockServer } from '../scripts/mock.js';
import { runClientSamples, runCurlSamples, type SampleOutcome, type SampleRun } from './support/codeSamples.js';
import { checkResponse, operations, successStatuses, type ContractOperation } from './support/contract.js';
import { freePort } from './support/ports.js';

const MOCK_KEY = 'ak_mock_client_developer_key';

function sampleOf(op: ContractOperation, label: string): string {
  const samples = (op.operation as OpenAPIV3_1.OperationObject & { 'x-codeSamples'?: CodeSample[] })['x-codeSamples'] ?? [];
  const sample = samples.find((candidate) => candidate.label === label);
  if (!sample) throw new Error(`${op.operationId} has no ${label} sample in generated/openapi.json: run \`npm run generate\``);
  return sample.source;
}

/** Why an outcome is not the operation's documented success with an answer the contract accepts; [] when it is. */
function problemsOf(op: ContractOperation, outcome: SampleOutcome | undefined): string[] {
  if (!outcome) return ['the sample did not run'];
  if (outcome.failure) return [outcome.failure];
  const { answer } = outcome;
  if (!answer) return ['no answer'];
  const expected = successStatuses(op);
  const problems = expected.includes(answer.status) ? [] : [`status ${answer.status}, not ${expected.join(' or ')}: ${JSON.stringify(answer.body)?.slice(0, 300)}`];
  return [...problems, ...checkResponse(op, answer.status, answer.headers.get('content-type'), answer.body, answer.headers).problems];
}

describe('every operation has its code samples', () => {
  it.each(operations.map((op) => [op.operationId, op] as const))('%s has a curl sample and a client sample', (_, op) => {
    expect(sampleOf(op, CURL)).toMatch(/^curl /);
    expect(sampleOf(op, CLIENT)).toContain("from '@team-os/client'");
  });
});

describe('the code samples against the mock', () => {
  let mock: MockServer;
  const outcomes = { curl: new Map<string, SampleOutcome>(), client: new Map<string, SampleOutcome>() };

  beforeAll(async () => {
    mock = await startMock(await freePort(), await freePort());
    const env = { TEAM_OS_URL: mock.url, TEAM_OS_API_KEY: MOCK_KEY };
    const runs = (label: string): SampleRun[] => operations.map((op) => ({ name: op.operationId, source: sampleOf(op, label), env }));
    [outcomes.curl, outcomes.client] = await Promise.all([runCurlSamples(runs(CURL)), runClientSamples(runs(CLIENT))]);
  }, 300_000);
  afterAll(() => mock?.stop());

  it.each(operations.map((op) => [op.operationId, op] as const))('%s: both samples get its documented success, valid against the contract', (_, op) => {
    expect({ curl: problemsOf(op, outcomes.curl.get(op.operationId)), client: problemsOf(op, outcomes.client.get(op.operationId)) }).toEqual({ curl: [], client: [] });
  });
});

/**
 * An error code is one declaration: its value in the contract's `ErrorCode` with its line in the
 * overview (status, whether replayed, what it means), and its status and replay in `errorTable`
 * (src/errors.ts). `tsc` names a code the table lacks; these tests name whatever else is left out —
 * the overview's line, a documented error response whose example's status or replay disagrees, and
 * docs/architecture.md's list of stored answers.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { OpenAPIV3_1 } from 'openapi-types';
import { describe, expect, it } from 'vitest';
import { errorTable, type Replay } from '../src/errors.js';
import { contract, declaredHeaders, deref, operations } from './support/contract.js';

const errorCode = contract.components!.schemas!.ErrorCode as OpenAPIV3_1.SchemaObject;
const codes = errorCode.enum as string[];
const table = errorTable as Record<string, { status: number; replay: Replay }>;
/** Answered by stubs only, outside the contract. */
const outsideContract = ['notImplemented'];
/** How the overview marks a replay after the status: `(409, replayed)`. */
const marks: Record<Replay, string> = { stored: ', replayed', 'rule answers': ', rule violations replayed', 'not stored': '' };

/** The overview's line of each code: `- \`code\` (status[, mark]): what it means`. */
const overview = new Map(
  [...(errorCode.description ?? '').matchAll(/^- `(\w+)` \(([^)]*)\): \S/gm)].map((match) => [match[1]!, match[2]!] as const),
);

/** An error answer's example is replayed when its code is stored, or is a rule answer (one without `issues`). */
const replayedExample = (error: { code: string; issues?: unknown }) => {
  const replay = table[error.code]?.replay;
  return replay === 'stored' || (replay === 'rule answers' && error.issues === undefined);
};

describe('error codes', () => {
  it("has an errorTable line for every ErrorCode of the contract, and no other (but the stubs' notImplemented)", () => {
    const tabled = Object.keys(table).filter((code) => !outsideContract.includes(code));
    expect(codes.filter((code) => !tabled.includes(code)), 'in the contract\'s ErrorCode, not in errorTable (src/errors.ts)').toEqual([]);
    expect(tabled.filter((code) => !codes.includes(code)), "in errorTable (src/errors.ts), not in the contract's ErrorCode").toEqual([]);
  });

  it("gives every code one line in ErrorCode's overview, with the table's status and replay", () => {
    const expected = Object.fromEntries(codes.map((code) => [code, `${table[code]?.status}${marks[table[code]?.replay ?? 'not stored']}`]));
    const told = Object.fromEntries(codes.map((code) => [code, overview.get(code) ?? 'no line in openapi/components/schemas/ErrorCode.yaml']));
    expect(told).toEqual(expected);
    expect([...overview.keys()].filter((code) => !codes.includes(code)), 'lines of the overview for codes the enum lacks').toEqual([]);
  });

  it("documents each error with its table status, and Idempotent-Replayed on exactly the changes' errors that are replayed", () => {
    const problems: string[] = [];
    let replayedResponses = 0;
    for (const op of operations) {
      for (const [status, declared] of Object.entries(op.operation.responses ?? {})) {
        if (Number(status) < 400) continue;
        const response = deref<OpenAPIV3_1.ResponseObject>(declared, '').value;
        const examples = Object.entries(response.content?.['application/json']?.examples ?? {}).map(
          ([name, example]) => [name, (deref<OpenAPIV3_1.ExampleObject>(example, '').value.value as { error: { code: string; issues?: unknown } }).error] as const,
        );
        for (const [name, error] of examples) {
          if (table[error.code]?.status !== Number(status)) problems.push(`${op.operationId} ${status} example ${name}: ${error.code} is ${table[error.code]?.status ?? 'not in errorTable'}`);
        }
        const replayed = op.method !== 'get' && examples.some(([, error]) => replayedExample(error));
        if (replayed) replayedResponses += 1;
        if (replayed !== declaredHeaders(op, Number(status)).includes('Idempotent-Replayed')) {
          problems.push(`${op.operationId} ${status}: ${replayed ? 'shows a replayed error but does not declare' : 'shows no replayed error but declares'} Idempotent-Replayed`);
        }
      }
    }
    expect(problems).toEqual([]);
    expect(replayedResponses).toBeGreaterThan(0);
  });

  it("lists in docs/architecture.md the stored errors and the others as errorTable has them", () => {
    const architecture = readFileSync(resolve(import.meta.dirname, '../docs/architecture.md'), 'utf8');
    const sentence = /^Stored: 2xx and the errors `errorTable`[\s\S]*?\n\n/m.exec(architecture)?.[0] ?? '';
    const [stored = '', notStored = ''] = sentence.split('not stored:');
    const named = (text: string) => [...text.matchAll(/`(\w+)`/g)].map((match) => match[1]!).filter((code) => code in table).sort();
    const ofReplay = (...replays: Replay[]) => codes.filter((code) => replays.includes(table[code]!.replay) && table[code]!.status < 500).sort();
    expect(named(stored), 'the stored errors of docs/architecture.md ("Stored: 2xx and the errors")').toEqual(ofReplay('stored', 'rule answers'));
    expect(named(notStored), 'the errors docs/architecture.md says are not stored').toEqual(ofReplay('not stored', 'rule answers'));
  });
});

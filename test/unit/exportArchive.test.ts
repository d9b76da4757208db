/**
 * The export's archive layout (src/exports/archive.ts) as other tools read it: a tar that the
 * system's `tar` lists and extracts, whose files, each several gzip members, `gzip -dc` reads as one
 * NDJSON text; records name their columns in camelCase (the database writes the lines: the
 * demo's read-back in test/exports.test.ts checks them).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { camelName } from '../../src/db/queries/exports.js';
import { archiveOf, archiveSize, chunkOf, manifestOf, type StoredChunk } from '../../src/exports/archive.js';

async function* each(chunks: StoredChunk[]) {
  yield* chunks;
}

async function bytesOf(archive: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of archive) parts.push(part);
  return Buffer.concat(parts);
}

describe("the export's archive", () => {
  it('is a tar the system reads, each file of several gzip members read back as one NDJSON text', async () => {
    const chunks = [await chunkOf('{"id":"t1"}\n{"id":"t2"}\n'), await chunkOf('{"id":"t3"}\n')];
    const tasks = Buffer.concat(chunks);
    const empty = await chunkOf('');
    const files = [
      { kind: 'tasks', bytes: tasks.length, records: 3 },
      { kind: 'issues', bytes: empty.length, records: 0 },
    ];
    const manifest = manifestOf({ id: 'e1', orgId: 'o1', completedAt: '2026-11-28T09:15:09.540Z' }, files);
    const at = new Date('2026-11-28T09:15:09.540Z');
    const stored = [...chunks.map((data) => ({ kind: 'tasks', data })), { kind: 'issues', data: empty }];
    const archive = await bytesOf(archiveOf(manifest, files, each(stored), at));
    expect(archive.length).toBe(archiveSize(manifest, files));

    const folder = mkdtempSync(join(tmpdir(), 'export-archive-'));
    try {
      writeFileSync(join(folder, 'export.tar'), archive);
      expect(execFileSync('tar', ['-tf', 'export.tar'], { cwd: folder, encoding: 'utf8' }).trim().split('\n')).toEqual(['manifest.json', 'tasks.ndjson.gz', 'issues.ndjson.gz']);
      execFileSync('tar', ['-xf', 'export.tar'], { cwd: folder });
      expect(execFileSync('gzip', ['-dc', 'tasks.ndjson.gz'], { cwd: folder, encoding: 'utf8' })).toBe('{"id":"t1"}\n{"id":"t2"}\n{"id":"t3"}\n');
      expect(execFileSync('gzip', ['-dc', 'issues.ndjson.gz'], { cwd: folder, encoding: 'utf8' })).toBe('');
      expect(JSON.parse(execFileSync('cat', ['manifest.json'], { cwd: folder, encoding: 'utf8' }))).toMatchObject({ format: 1, files: [{ name: 'tasks.ndjson.gz', records: 3 }, { name: 'issues.ndjson.gz', records: 0 }] });
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('fails, rather than write a wrong archive, when the chunks do not add up to a file', async () => {
    const data = await chunkOf('{"id":"t1"}\n');
    const files = [{ kind: 'tasks', bytes: data.length + 1, records: 1 }];
    const manifest = manifestOf({ id: 'e1', orgId: 'o1', completedAt: null }, files);
    await expect(bytesOf(archiveOf(manifest, files, each([{ kind: 'tasks', data }]), new Date()))).rejects.toThrow();
  });

  it("names a record's columns in camelCase, as the API names its fields", () => {
    expect(['team_id', 'core_values_scores', 'due_date', 'id', 'week_1_value'].map(camelName)).toEqual(['teamId', 'coreValuesScores', 'dueDate', 'id', 'week1Value']);
  });
});

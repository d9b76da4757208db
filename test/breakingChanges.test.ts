/**
 * The breaking-change gate (scripts/breakingChanges.ts): each change made in a scratch copy of the
 * bundled contract, judged against the contract itself, as `make test` judges a branch against its base.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { judge } from '../scripts/breakingChanges.js';

const root = resolve(import.meta.dirname, '..');
const contractText = readFileSync(resolve(root, 'generated/openapi.json'), 'utf8');
const released = JSON.parse(contractText);
const changelog = readFileSync(resolve(root, 'CHANGELOG.md'), 'utf8');
const unreleased = (breaking: string) => `# Changelog\n\n## [Unreleased]\n\n### Breaking\n\n${breaking}\n\n## [1.7.0] - 2026-10-01\n`;

type Contract = Record<string, any>;
const changed = (change: (contract: Contract) => void): Contract => {
  const copy = JSON.parse(contractText);
  change(copy);
  return copy;
};
const schemas = (contract: Contract) => contract.components.schemas;

const breaking: [string, (contract: Contract) => void, string][] = [
  ['a response field removed', (c) => delete schemas(c).Task.properties.title, 'title'],
  ['an enum value removed from a response', (c) => (schemas(c).WebhookDeliveryState.enum = ['PENDING', 'DELIVERED']), 'FAILED'],
  ['an optional query parameter made required', (c) => (c.paths['/teams/{teamId}/tasks'].get.parameters.find((p: Contract) => p.name === 'completed').required = true), 'completed'],
  ['a request field\'s maximum lowered', (c) => (schemas(c).RateMeetingRequest.properties.rating.maximum = 5), 'rating'],
  [
    'a success status changed',
    (c) => {
      const responses = c.paths['/teams/{teamId}/tasks'].post.responses;
      responses['200'] = responses['201'];
      delete responses['201'];
    },
    '201',
  ],
  ['an operation removed', (c) => delete c.paths['/tasks/{id}'].delete, 'deleteTask'],
];

describe('CHANGELOG.md', () => {
  it('has as its latest release the contract\'s info.version', () => {
    const releases = [...changelog.matchAll(/^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}/gm)].map((match) => match[1]);
    expect(releases[0]).toBe(released.info.version);
  });

  it('keeps an Unreleased section first, where the next breaking changes are declared', () => {
    expect(changelog.split(/^## /m)[1]).toMatch(/^\[Unreleased\]/);
  });
});

describe('the breaking-change gate', () => {
  it('finds nothing between the contract and itself, and the committed changelog declares nothing it would need', () => {
    expect(judge(released, released, changelog)).toEqual({ findings: [], undeclared: [], newMajor: false });
  });

  it.each(breaking)('fails on %s', (_name, change, subject) => {
    const verdict = judge(released, changed(change), changelog);
    expect(verdict.undeclared.map((finding) => finding.subject)).toContain(subject);
  });

  it.each<[string, (contract: Contract) => void]>([
    ['a new optional response field', (c) => (schemas(c).Task.properties.priority = { type: 'string' })],
    ['a new operation', (c) => (c.paths['/teams/{teamId}/labels'] = { get: { operationId: 'listTeamLabels', responses: { '200': { description: 'The labels.' } } } })],
    ['a new enum value in a request', (c) => schemas(c).IssuePriority.enum.push('URGENT')],
  ])('passes %s', (_name, change) => {
    expect(judge(released, changed(change), changelog).findings).toEqual([]);
  });

  it('passes a breaking change the changelog declares, naming its schema or operation and its subject', () => {
    const withoutTitle = changed((c) => delete schemas(c).Task.properties.title);
    expect(judge(released, withoutTitle, unreleased('- `Task`: `title` removed; read `summary` instead.')).undeclared).toEqual([]);
    const withoutDelete = changed((c) => delete c.paths['/tasks/{id}'].delete);
    expect(judge(released, withoutDelete, unreleased('- `deleteTask` removed: complete a task instead.')).undeclared).toEqual([]);
    // Named elsewhere (another section, another field, the schema alone) declares nothing.
    expect(judge(released, withoutTitle, unreleased('- `Task`: `dueDate` renamed.')).undeclared).toHaveLength(1);
    expect(judge(released, withoutTitle, `## [Unreleased]\n\n### Removed\n\n- \`Task\`: \`title\`\n`).undeclared).toHaveLength(1);
  });

  it('passes any breaking change under a new major version', () => {
    const next = changed((c) => {
      delete schemas(c).Task.properties.title;
      c.info.version = '2.0.0';
    });
    const verdict = judge(released, next, changelog);
    expect(verdict).toMatchObject({ newMajor: true, undeclared: [] });
    expect(verdict.findings).not.toEqual([]);
  });

  describe('the command make test runs', () => {
    const scratch = mkdtempSync(join(tmpdir(), 'breaking-'));
    afterAll(() => rmSync(scratch, { recursive: true, force: true }));
    const run = (changelogText: string) => {
      writeFileSync(join(scratch, 'old.json'), contractText);
      writeFileSync(join(scratch, 'new.json'), JSON.stringify(changed((c) => delete schemas(c).Task.properties.title)));
      writeFileSync(join(scratch, 'CHANGELOG.md'), changelogText);
      try {
        return { status: 0, output: execFileSync(process.execPath, ['--import', 'tsx', 'scripts/breakingChanges.ts', ...['old.json', 'new.json', 'CHANGELOG.md'].map((file) => join(scratch, file))], { cwd: root, encoding: 'utf8' }) };
      } catch (error) {
        const failed = error as { status: number; stdout: string };
        return { status: failed.status, output: failed.stdout };
      }
    };

    it('exits 1 naming an undeclared change, and 0 once it is declared', () => {
      const refused = run(changelog);
      expect(refused.status).toBe(1);
      expect(refused.output).toContain('title: field removed — NOT DECLARED');
      const declared = run(unreleased('- `Task`: `title` removed.'));
      expect(declared.status, declared.output).toBe(0);
      expect(declared.output).toContain('declared in CHANGELOG.md');
    });
  });
});

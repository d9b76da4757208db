/**
 * The breaking-change gate (scripts/breakingChanges.ts) and the release that gives it its base
 * (scripts/release.ts): each change made in a scratch copy of the bundled contract and judged against
 * the contract itself, as `make test` judges the working tree against the last stored release.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { judge, missingBullet, passes, releasedContractPath, releasedVersions, type Verdict } from '../scripts/breakingChanges.js';
import { nextVersion, releasedChangelog, releasedContract, withInfoVersion } from '../scripts/release.js';

const root = resolve(import.meta.dirname, '..');
const contractText = readFileSync(resolve(root, 'generated/openapi.json'), 'utf8');
const current = JSON.parse(contractText);
const changelog = readFileSync(resolve(root, 'CHANGELOG.md'), 'utf8');
/** A changelog whose Unreleased section holds `body` (its `### …` parts). */
const unreleased = (body: string) => `# Changelog\n\n## [Unreleased]\n\n${body}\n\n## [1.8.0] - 2026-11-27\n`;

type Contract = Record<string, any>;
const copyOf = (...changes: ((contract: Contract) => void)[]): Contract => {
  const copy = JSON.parse(contractText);
  for (const change of changes) change(copy);
  return copy;
};
const schemas = (contract: Contract) => contract.components.schemas;
const parameter = (contract: Contract, path: string, name: string) => contract.paths[path].get.parameters.find((p: Contract) => p.name === name);
const dated = (at: string, sunset?: string) => ({ deprecated: true, 'x-deprecated-at': at, ...(sunset ? { 'x-sunset': sunset } : {}) });
const meetingStatusInline = (c: Contract) => (parameter(c, '/teams/{teamId}/meetings', 'status').schema = { type: 'string', enum: ['SCHEDULED', 'IN_PROGRESS', 'COMPLETED'] });
const deprecateDeleteTask = (c: Contract) => Object.assign(c.paths['/tasks/{id}'].delete, dated('2026-06-01', '2026-12-01'));

interface Case {
  name: string;
  change: (contract: Contract) => void;
  /** A change made to both sides: the release already had it. */
  base?: (contract: Contract) => void;
  changelog?: string;
  verdict: 'fails' | 'passes' | 'warns';
  /** Part of a finding's, warning's or policy violation's message ('' when there is none). */
  message: string;
  /** How many findings, when that is the point. */
  count?: number;
}

const cases: Case[] = [
  // What a client of the release trips over.
  { name: 'a response field removed', change: (c) => delete schemas(c).Task.properties.title, verdict: 'fails', message: 'title: field removed' },
  { name: 'a response field made nullable as oneOf [X, null]', change: (c) => (schemas(c).Task.properties.title = { oneOf: [{ type: 'string' }, { type: 'null' }] }), verdict: 'fails', message: 'title: type null may now be answered' },
  { name: 'a required response field made optional', change: (c) => (schemas(c).Task.required = schemas(c).Task.required.filter((name: string) => name !== 'title')), verdict: 'fails', message: 'title: field may now be missing' },
  { name: 'a type added to a response field', change: (c) => (schemas(c).Task.properties.completed.type = ['boolean', 'string']), verdict: 'fails', message: 'completed: type string may now be answered' },
  { name: 'an enum value removed from a response', change: (c) => (schemas(c).WebhookDeliveryState.enum = ['PENDING', 'DELIVERED']), verdict: 'fails', message: 'enum value "FAILED" removed' },
  { name: 'a response header removed', change: (c) => delete c.paths['/tasks/{id}'].get.responses['200'].headers.ETag, verdict: 'fails', message: '200: response header ETag removed' },
  {
    name: 'a success status changed',
    change: (c) => {
      const responses = c.paths['/teams/{teamId}/tasks'].post.responses;
      responses['200'] = responses['201'];
      delete responses['201'];
    },
    verdict: 'fails',
    message: 'success status 201 removed',
  },
  { name: "an operation's scope raised from read to write", change: (c) => (c.paths['/tasks/{id}'].get.security = [{ apiKey: ['write'] }]), verdict: 'fails', message: 'security: requires apiKey(write) where apiKey(read) sufficed' },
  { name: 'the default scope raised', change: (c) => (c.security = [{ apiKey: ['write'] }]), verdict: 'fails', message: 'security: requires apiKey(write) where apiKey(read) sufficed' },
  { name: 'an optional query parameter made required', change: (c) => (parameter(c, '/teams/{teamId}/tasks', 'completed').required = true), verdict: 'fails', message: 'query completed parameter now required' },
  { name: 'a query parameter removed', change: (c) => (c.paths['/teams/{teamId}/tasks'].get.parameters = c.paths['/teams/{teamId}/tasks'].get.parameters.filter((p: Contract) => p.name !== 'completed')), verdict: 'fails', message: 'query completed parameter removed' },
  { name: "a shared parameter's default changed, found once", change: (c) => (c.components.parameters.Limit.schema.default = 20), verdict: 'fails', message: 'query limit: default changed from 50 to 20', count: 1 },
  { name: 'an enum added to a request string that had none', change: (c) => (schemas(c).CreateTaskRequest.properties.title.enum = ['Call', 'Email']), verdict: 'fails', message: 'title: values now limited to "Call", "Email"' },
  { name: "a value removed from a query parameter's enum", base: meetingStatusInline, change: (c) => parameter(c, '/teams/{teamId}/meetings', 'status').schema.enum.pop(), verdict: 'fails', message: 'query status: enum value "COMPLETED" removed' },
  { name: "a value removed from a header parameter's enum", base: (c) => (c.components.parameters.IfNoneMatch.schema = { type: 'string', enum: ['*', 'W/"a"'] }), change: (c) => c.components.parameters.IfNoneMatch.schema.enum.pop(), verdict: 'fails', message: 'header If-None-Match: enum value "W/\\"a\\"" removed' },
  { name: "a request field's maximum lowered", change: (c) => (schemas(c).RateMeetingRequest.properties.rating.maximum = 5), verdict: 'fails', message: 'rating: maximum lowered from 10 to 5' },
  { name: 'a request field newly required', change: (c) => schemas(c).CreateTaskRequest.required.push('meetingId'), verdict: 'fails', message: 'meetingId: field now required' },
  { name: 'null no longer accepted by a request field', change: (c) => (schemas(c).CreateTaskRequest.properties.meetingId = { $ref: '#/components/schemas/Id' }), verdict: 'fails', message: 'meetingId: type null is no longer accepted' },
  { name: 'unknown request fields newly refused', change: (c) => (schemas(c).CreateTaskRequest.additionalProperties = false), verdict: 'fails', message: 'CreateTaskRequest: unknown fields now refused' },
  { name: "an event's type const renamed", change: (c) => (schemas(c).TaskCreatedEvent.properties.type.const = 'task.made'), verdict: 'fails', message: 'type: value "task.created" changed to "task.made"', count: 1 },
  { name: 'a webhook event removed', change: (c) => delete c.webhooks['task.created'], verdict: 'fails', message: 'webhook event task.created removed' },
  {
    name: "a new shape of a response field's union that does not tell its shapes apart",
    change: (c) => (schemas(c).TaskCreatedEvent.properties.data.properties.object = { oneOf: [{ $ref: '#/components/schemas/Task' }, { type: 'object', required: ['id'], properties: { id: { type: 'string' } } }] }),
    verdict: 'fails',
    message: 'object: shape object may now be answered',
  },
  // Any difference, an addition as much as a break, is told in the changelog under its heading.
  { name: 'a new optional response field without a bullet', change: (c) => (schemas(c).Task.properties.priority = { type: 'string' }), verdict: 'fails', message: 'priority: field added — a bullet under "### Added" naming `Task` and `priority`' },
  { name: 'a new operation without a bullet', change: (c) => (c.paths['/teams/{teamId}/labels'] = { get: { operationId: 'listTeamLabels', responses: { '200': { description: 'The labels.' } } } }), verdict: 'fails', message: 'operation GET /teams/{teamId}/labels added — a bullet under "### Added" naming `listTeamLabels`' },
  { name: 'a new error code without a bullet', change: (c) => schemas(c).ErrorCode.enum.push('issueClosed'), verdict: 'fails', message: 'enum value "issueClosed" added — a bullet under "### Added" naming `issueClosed`' },
  { name: 'a new webhook event without a bullet', change: (c) => (c.webhooks['label.created'] = c.webhooks['task.created']), verdict: 'fails', message: 'webhook event label.created added — a bullet under "### Added" naming `label.created`' },
  { name: 'a new optional query parameter without a bullet', change: (c) => c.paths['/teams/{teamId}/tasks'].get.parameters.push({ name: 'label', in: 'query', schema: { type: 'string' } }), verdict: 'fails', message: 'query label parameter added — a bullet under "### Added" naming `listTeamTasks` and `label`' },
  { name: 'a new documented status without a bullet', change: (c) => (c.paths['/tasks/{id}'].get.responses['409'] = c.paths['/tasks/{id}'].patch.responses['409']), verdict: 'fails', message: 'status 409 added — a bullet under "### Added" naming `getTask` and `409`' },
  { name: "a request field's limit raised without a bullet", change: (c) => (schemas(c).RateMeetingRequest.properties.rating.maximum = 100), verdict: 'fails', message: 'maximum changed from 10 to 100 — a bullet under "### Changed" naming `RateMeetingRequest` and `rating`' },
  { name: 'a new field told under another heading than Added', change: (c) => (schemas(c).Task.properties.priority = { type: 'string' }), changelog: unreleased('### Fixed\n\n- `Task`: `priority`.'), verdict: 'fails', message: 'priority: field added' },
  { name: 'a new field told without the schema it is in', change: (c) => (schemas(c).Task.properties.priority = { type: 'string' }), changelog: unreleased('### Added\n\n- `priority`.'), verdict: 'fails', message: 'priority: field added' },
  { name: 'a middle shape of a union removed, found once', change: (c) => schemas(c).Event.oneOf.splice(20, 1), verdict: 'fails', message: 'shape ', count: 1 },
  // The deprecation policy.
  { name: 'an operation removed that the release did not deprecate, though declared', change: (c) => delete c.paths['/tasks/{id}'].delete, changelog: unreleased('### Breaking\n\n- `deleteTask` removed.'), verdict: 'fails', message: 'deleteTask: removed, but the last release did not deprecate it' },
  { name: 'a new deprecation the changelog does not tell', change: (c) => Object.assign(c.paths['/tasks/{id}'].get, dated('2026-12-01', '2027-06-01')), verdict: 'fails', message: 'getTask: newly deprecated, but no bullet under "### Deprecated"' },
  { name: 'a sunset less than six months after the deprecation', change: (c) => Object.assign(c.paths['/tasks/{id}'].get, dated('2026-12-01', '2027-05-31')), changelog: unreleased('### Deprecated\n\n- `getTask`: read the list instead.'), verdict: 'fails', message: 'getTask: x-sunset 2027-05-31 is not at least six months after x-deprecated-at 2026-12-01' },
  { name: 'a deprecation without its date', change: (c) => (c.paths['/tasks/{id}'].get.deprecated = true), changelog: unreleased('### Deprecated\n\n- `getTask`.'), verdict: 'fails', message: 'getTask: deprecated without a valid x-deprecated-at' },
  { name: 'a shared parameter newly deprecated without a changelog bullet', change: (c) => Object.assign(c.components.parameters.Limit, dated('2026-12-01')), verdict: 'fails', message: 'the parameter Limit (query limit): newly deprecated' },
  // No false alarms.
  { name: 'the contract unchanged', change: () => {}, verdict: 'passes', message: '' },
  { name: 'a new optional response field, told', change: (c) => (schemas(c).Task.properties.priority = { type: 'string' }), changelog: unreleased('### Added\n\n- `Task`: `priority`.'), verdict: 'passes', message: '' },
  { name: 'a new operation, told', change: (c) => (c.paths['/teams/{teamId}/labels'] = { get: { operationId: 'listTeamLabels', responses: { '200': { description: 'The labels.' } } } }), changelog: unreleased('### Added\n\n- `GET /teams/{teamId}/labels` (`listTeamLabels`).'), verdict: 'passes', message: '' },
  { name: 'a new operation, told by its method and path', change: (c) => (c.paths['/teams/{teamId}/labels'] = { get: { operationId: 'listTeamLabels', responses: { '200': { description: 'The labels.' } } } }), changelog: unreleased('### Added\n\n- `GET /teams/{teamId}/labels`: the labels of a team.'), verdict: 'passes', message: '' },
  { name: 'a new error code, told', change: (c) => schemas(c).ErrorCode.enum.push('issueClosed'), changelog: unreleased('### Added\n\n- `issueClosed` (409).'), verdict: 'warns', message: 'enum value "issueClosed" added' },
  { name: "a request field's limit raised, told as a fix", change: (c) => (schemas(c).RateMeetingRequest.properties.rating.maximum = 100), changelog: unreleased('### Fixed\n\n- `RateMeetingRequest`: `rating` up to 100.'), verdict: 'passes', message: '' },
  { name: 'a new enum value in a request, told', base: meetingStatusInline, change: (c) => parameter(c, '/teams/{teamId}/meetings', 'status').schema.enum.push('CANCELLED'), changelog: unreleased('### Added\n\n- `CANCELLED` meetings.'), verdict: 'passes', message: '' },
  { name: "a nullable field's two shapes swapped", change: (c) => schemas(c).Task.properties.completedAt.oneOf.reverse(), verdict: 'passes', message: '', count: 0 },
  { name: "a request field's shapes in another order", change: (c) => schemas(c).CreateTaskRequest.properties.meetingId.oneOf.reverse(), verdict: 'passes', message: '', count: 0 },
  {
    name: 'two inline shapes, each described anew, in another order',
    base: (c) => (schemas(c).Task.properties.origin = { oneOf: [{ type: 'object', properties: { meetingId: { type: 'string' } } }, { type: 'object', properties: { issueId: { type: 'string' } } }] }),
    change: (c) => {
      const shapes = schemas(c).Task.properties.origin.oneOf.reverse();
      for (const shape of shapes) shape.description = 'Where the task came from.';
    },
    verdict: 'passes',
    message: '',
    count: 0,
  },
  {
    name: 'a new event type in the event union',
    change: (c) => schemas(c).Event.oneOf.push({ title: 'label.created', allOf: [{ type: 'object', required: ['type'], properties: { type: { type: 'string', const: 'label.created' } } }, { $ref: '#/components/schemas/EventIdentity' }] }),
    changelog: unreleased('### Added\n\n- `label.created`.'),
    verdict: 'passes',
    message: '',
    count: 0,
  },
  { name: "the event union's shapes in another order", change: (c) => schemas(c).Event.oneOf.reverse(), verdict: 'passes', message: '', count: 0 },
  {
    name: 'a path parameter renamed in the same position',
    change: (c) => {
      const item = c.paths['/tasks/{id}'];
      delete c.paths['/tasks/{id}'];
      c.paths['/tasks/{taskId}'] = item;
      for (const operation of Object.values<Contract>(item)) {
        if (!Array.isArray(operation.parameters)) continue;
        for (const p of operation.parameters) if (p.in === 'path') p.name = 'taskId';
      }
      if (item.parameters) for (const p of item.parameters) if (p.in === 'path') p.name = 'taskId';
    },
    verdict: 'passes',
    message: '',
    count: 0,
  },
  { name: 'a breaking change declared by its schema and subject', change: (c) => delete schemas(c).Task.properties.title, changelog: unreleased('### Breaking\n\n- `Task`: `title` removed; read `summary` instead.'), verdict: 'passes', message: 'title: field removed' },
  { name: "a shared parameter's change declared with one bullet naming the component", change: (c) => (c.components.parameters.Limit.schema.default = 20), changelog: unreleased('### Breaking\n\n- `Limit`: `limit` defaults to 20.'), verdict: 'passes', message: 'default changed from 50 to 20', count: 1 },
  { name: 'a top-level change declared by its non-empty subject', change: (c) => (c.security = [{ apiKey: ['write'] }]), changelog: unreleased('### Breaking\n\n- `security`: `write` is the default scope.'), verdict: 'passes', message: 'security: requires' },
  { name: 'the removal, declared, of an operation the release deprecated', base: deprecateDeleteTask, change: (c) => delete c.paths['/tasks/{id}'].delete, changelog: unreleased('### Breaking\n\n- `deleteTask` removed, as announced.'), verdict: 'passes', message: 'operation DELETE /tasks/{id} removed' },
  { name: 'a new deprecation told in the changelog, its sunset six months on', change: (c) => Object.assign(c.paths['/tasks/{id}'].get, dated('2026-12-01', '2027-06-01')), changelog: unreleased('### Deprecated\n\n- `getTask`: read the list instead.'), verdict: 'passes', message: '' },
  {
    name: 'a new deprecation of a parameter told by its name and operation',
    change: (c) => Object.assign(parameter(c, '/teams/{teamId}/tasks', 'completed'), dated('2026-12-01')),
    changelog: unreleased('### Deprecated\n\n- `completed` of `listTeamTasks`: filter on `completedAt`.'),
    verdict: 'passes',
    message: '',
  },
  {
    name: 'any breaking change under a new major version',
    change: (c) => {
      delete schemas(c).Task.properties.title;
      c.info.version = '2.0.0';
    },
    changelog: unreleased('### Removed\n\n- `Task`: `title`.'),
    verdict: 'passes',
    message: 'title: field removed',
  },
  // Told, not refused.
  { name: 'a value added to a response enum', change: (c) => schemas(c).WebhookDeliveryState.enum.push('RETRYING'), changelog: unreleased('### Added\n\n- `RETRYING`.'), verdict: 'warns', message: 'enum value "RETRYING" added' },
  { name: 'a documented 4xx removed', change: (c) => delete c.paths['/tasks/{id}'].get.responses['422'], changelog: unreleased('### Removed\n\n- `getTask`: `422`.'), verdict: 'warns', message: '422 no longer documented' },
];

const verdictOf = (verdict: Verdict): Case['verdict'] => (!passes(verdict) ? 'fails' : verdict.warnings.length > 0 ? 'warns' : 'passes');
const messagesOf = (verdict: Verdict, expected: Case['verdict']) =>
  expected === 'fails'
    ? [...verdict.undeclared.map((finding) => finding.message), ...verdict.violations, ...verdict.untold.map((difference) => `${difference.message} — ${missingBullet(difference)}`)]
    : expected === 'warns'
      ? verdict.warnings.map((warning) => warning.message)
      : verdict.findings.map((finding) => finding.message);

describe('the breaking-change gate', () => {
  it('has a table of at least 25 cases, each verdict among them', () => {
    expect(cases.length).toBeGreaterThanOrEqual(25);
    expect(new Set(cases.map((c) => c.verdict))).toEqual(new Set(['fails', 'passes', 'warns']));
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s: as the table says', (_name, c) => {
    const before = copyOf(...(c.base ? [c.base] : []));
    const after = copyOf(...(c.base ? [c.base] : []), c.change);
    const verdict = judge(before, after, c.changelog ?? unreleased(''));
    const summary = JSON.stringify({ findings: verdict.findings, warnings: verdict.warnings, violations: verdict.violations }, null, 1);
    expect(verdictOf(verdict), summary).toBe(c.verdict);
    if (c.message) expect(messagesOf(verdict, c.verdict).some((message) => message.includes(c.message)), summary).toBe(true);
    if (c.count !== undefined) expect(verdict.findings, summary).toHaveLength(c.count);
    for (const finding of [...verdict.findings, ...verdict.warnings]) expect(finding.subject, summary).not.toBe('');
  });

  it('tells the union shape removed from the middle by its name', () => {
    const after = copyOf((c) => schemas(c).Event.oneOf.splice(20, 1));
    const removed = current.components.schemas.Event.oneOf[20].title;
    expect(judge(current, after, changelog).findings.map((finding) => `${finding.component}: ${finding.subject}`)).toEqual([`Event: ${removed}`]);
  });

  describe('the command make test runs', () => {
    const scratch = mkdtempSync(join(tmpdir(), 'breaking-'));
    afterAll(() => rmSync(scratch, { recursive: true, force: true }));
    const gate = (...args: string[]) => {
      try {
        return { status: 0, output: execFileSync(process.execPath, ['--import', 'tsx', 'scripts/breakingChanges.ts', ...args], { cwd: root, encoding: 'utf8' }) };
      } catch (error) {
        const failed = error as { status: number; stdout: string };
        return { status: failed.status, output: failed.stdout };
      }
    };
    const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

    it('exits 1 naming an undeclared change, and 0 once it is declared', () => {
      writeFileSync(join(scratch, 'old.json'), contractText);
      writeFileSync(join(scratch, 'new.json'), JSON.stringify(copyOf((c) => delete schemas(c).Task.properties.title)));
      writeFileSync(join(scratch, 'CHANGELOG.md'), changelog);
      const refused = gate(join(scratch, 'old.json'), join(scratch, 'new.json'), join(scratch, 'CHANGELOG.md'));
      expect(refused.status).toBe(1);
      expect(refused.output).toContain('title: field removed — NOT DECLARED');
      writeFileSync(join(scratch, 'CHANGELOG.md'), unreleased('### Breaking\n\n- `Task`: `title` removed.'));
      const declared = gate(join(scratch, 'old.json'), join(scratch, 'new.json'), join(scratch, 'CHANGELOG.md'));
      expect(declared.status, declared.output).toBe(0);
      expect(declared.output).toContain('declared in CHANGELOG.md');
    });

    it('exits 1 naming the bullet an addition lacks, and 0 once it is there', () => {
      writeFileSync(join(scratch, 'old.json'), contractText);
      writeFileSync(join(scratch, 'new.json'), JSON.stringify(copyOf((c) => (schemas(c).Task.properties.priority = { type: 'string' }))));
      writeFileSync(join(scratch, 'CHANGELOG.md'), unreleased(''));
      const refused = gate(join(scratch, 'old.json'), join(scratch, 'new.json'), join(scratch, 'CHANGELOG.md'));
      expect(refused.status).toBe(1);
      expect(refused.output).toContain('priority: field added — NOT IN THE CHANGELOG (a bullet under "### Added" naming `Task` and `priority`)');
      writeFileSync(join(scratch, 'CHANGELOG.md'), unreleased('### Added\n\n- `Task`: `priority`, how urgent it is.'));
      const told = gate(join(scratch, 'old.json'), join(scratch, 'new.json'), join(scratch, 'CHANGELOG.md'));
      expect(told.status, told.output).toBe(0);
      expect(told.output).toContain('Differences from the release: 1, each told in CHANGELOG.md');
    });

    it('fails on a break made two commits before HEAD: it compares with the release, not with a commit', () => {
      const repo = join(scratch, 'repo');
      mkdirSync(join(repo, 'generated'), { recursive: true });
      cpSync(resolve(root, 'openapi/releases'), join(repo, 'openapi/releases'), { recursive: true });
      writeFileSync(join(repo, 'generated/openapi.json'), contractText);
      writeFileSync(join(repo, 'CHANGELOG.md'), changelog);
      git(repo, 'init', '-q', '-b', 'main');
      git(repo, 'add', '-A');
      git(repo, 'commit', '-qm', 'Release 1.8.0');
      writeFileSync(join(repo, 'generated/openapi.json'), JSON.stringify(copyOf((c) => delete schemas(c).Task.properties.title)));
      git(repo, 'commit', '-qam', 'Task without title');
      writeFileSync(join(repo, 'README.md'), 'Unrelated.\n');
      git(repo, 'add', '-A');
      git(repo, 'commit', '-qm', 'An unrelated change');
      const result = gate('--dir', repo);
      expect(result.status, result.output).toBe(1);
      expect(result.output).toContain('against the last release, openapi/releases/1.8.0.json');
      expect(result.output).toContain('title: field removed — NOT DECLARED');
    });

    it('fails, saying why, where no release is stored', () => {
      const empty = join(scratch, 'empty');
      mkdirSync(join(empty, 'generated'), { recursive: true });
      writeFileSync(join(empty, 'generated/openapi.json'), contractText);
      const result = gate('--dir', empty);
      expect(result.status).toBe(1);
      expect(result.output).toContain('no released contract in openapi/releases/');
    });
  });
});

describe('releases', () => {
  const [latest] = releasedVersions(root);

  it("stores the changelog's latest release, under its info.version, as the gate's base", () => {
    const releases = [...changelog.matchAll(/^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}/gm)].map((match) => match[1]);
    expect(latest).toBe(releases[0]);
    expect(JSON.parse(readFileSync(releasedContractPath(root, latest!), 'utf8')).info.version).toBe(latest);
  });

  it("keeps an Unreleased section first, where the next release's changes are told", () => {
    expect(changelog.split(/^## /m)[1]).toMatch(/^\[Unreleased\]/);
  });

  it('stores a release without the generated code samples', () => {
    expect(JSON.stringify(releasedContract(current))).not.toContain('x-codeSamples');
  });

  it('steps the version from the last release and refuses one that is not newer', () => {
    expect([nextVersion('1.8.0', 'major'), nextVersion('1.8.0', 'minor'), nextVersion('1.8.0', 'patch'), nextVersion('1.8.0', '1.10.0')]).toEqual(['2.0.0', '1.9.0', '1.8.1', '1.10.0']);
    expect(() => nextVersion('1.8.0', '1.8.0')).toThrow('not newer');
  });

  it('moves the Unreleased section under the version and its date, and refuses an empty one', () => {
    const text = '# Changelog\n\n## [Unreleased]\n\n### Added\n\n- Labels.\n\n## [1.8.0] - 2026-11-27\n\n- Old.\n';
    expect(releasedChangelog(text, '1.9.0', '2026-12-03')).toBe('# Changelog\n\n## [Unreleased]\n\n## [1.9.0] - 2026-12-03\n\n### Added\n\n- Labels.\n\n## [1.8.0] - 2026-11-27\n\n- Old.\n');
    expect(() => releasedChangelog(unreleased(''), '1.9.0', '2026-12-03')).toThrow('nothing to release');
  });

  it("sets the contract's info.version", () => {
    const yaml = readFileSync(resolve(root, 'openapi/openapi.yaml'), 'utf8');
    const released = withInfoVersion(yaml, '1.9.0');
    expect(released.split('\n').filter((line, index) => line !== yaml.split('\n')[index])).toEqual(['  version: 1.9.0']);
  });
});

/**
 * The breaking-change gate (`make test`'s step, docs/decisions.md "Breaking changes"): the bundled
 * contract against the last released one, each change a client written for the old one could trip
 * over named, and the run failed unless the change is declared — a new major `info.version`, or a
 * bullet under "### Breaking" of CHANGELOG.md's first section that names it.
 *
 *   tsx scripts/breakingChanges.ts                       the working tree against the base (see baseRef)
 *   tsx scripts/breakingChanges.ts OLD.json NEW.json [CHANGELOG.md]   two files (the tests')
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

type Node = Record<string, any>;

export interface Finding {
  /** The operationId, or `webhook <type>`. */
  operation: string;
  /** The component schema the change lies in, when it lies in one (`Task`). */
  schema: string | undefined;
  /** What changed: a field, parameter, enum value or status code. */
  subject: string;
  message: string;
}

const methods = ['get', 'put', 'post', 'delete', 'patch'];

/** Compares two bundled contracts (only local `#/components/…` references, as Redocly bundles them). */
export function findBreakingChanges(before: Node, after: Node): Finding[] {
  const findings = new Map<string, Finding>();
  const refOf = (document: Node, node: Node | undefined): { node: Node | undefined; name?: string } => {
    let name: string | undefined;
    for (let hops = 0; node && typeof node.$ref === 'string' && hops < 32; hops++) {
      const path = (node.$ref as string).replace(/^#\//, '').split('/');
      if (path[0] === 'components' && path[1] === 'schemas') name = path[2];
      node = path.reduce<Node | undefined>((at, key) => at?.[key.replaceAll('~1', '/').replaceAll('~0', '~')], document);
    }
    return { node, name };
  };
  const add = (operation: string, schema: string | undefined, subject: string, message: string) => {
    // A schema's change is told once, however many operations and event types reach it.
    const key = schema === undefined ? `${operation}\n${subject}\n${message}` : `${schema}\n${subject}\n${message.replace(/^[^:]*: /, '')}`;
    if (!findings.has(key)) findings.set(key, { operation, schema, subject, message });
  };
  const typesOf = (schema: Node): Set<string> | undefined =>
    schema.type === undefined ? undefined : new Set(Array.isArray(schema.type) ? schema.type : [schema.type]);

  /**
   * `answer`: the server writes it (a response, a webhook's body), so it may not widen nor lose what
   * the client reads; otherwise the client writes it (a request), so it may not narrow.
   */
  const compare = (operation: string, where: string, oldRaw: Node | undefined, newRaw: Node | undefined, answer: boolean, owner: string | undefined, seen: Set<string>) => {
    const oldRef = refOf(before, oldRaw);
    const newRef = refOf(after, newRaw);
    const [old, now] = [oldRef.node, newRef.node];
    if (!old || !now) return;
    const schema = newRef.name ?? oldRef.name ?? owner;
    const pair = `${oldRef.name ?? ''}|${newRef.name ?? ''}|${answer}`;
    if (oldRef.name && newRef.name) {
      // A component is judged once per direction: the event unions reach it from many places.
      if (seen.has(pair)) return;
      seen.add(pair);
    }
    const at = (name: string) => (where ? `${where}.${name}` : name);
    const oldTypes = typesOf(old);
    const newTypes = typesOf(now);
    if (oldTypes && newTypes) {
      const lost = answer ? [...newTypes].filter((type) => !oldTypes.has(type)) : [...oldTypes].filter((type) => !newTypes.has(type));
      for (const type of lost) add(operation, schema, where || type, `${where || 'the body'}: type ${type} ${answer ? 'may now be answered' : 'is no longer accepted'}`);
    }
    if (Array.isArray(old.enum) && Array.isArray(now.enum)) {
      for (const value of old.enum) if (!now.enum.includes(value)) add(operation, schema, String(value), `${where || 'value'}: enum value ${JSON.stringify(value)} removed`);
    }
    if (!answer) {
      const lowered = (key: string) => old[key] === undefined ? now[key] !== undefined : now[key] !== undefined && now[key] < old[key];
      const raised = (key: string) => old[key] === undefined ? now[key] !== undefined : now[key] !== undefined && now[key] > old[key];
      for (const key of ['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties']) {
        if (lowered(key)) add(operation, schema, where, `${where || 'the body'}: ${key} lowered from ${old[key] ?? 'none'} to ${now[key]}`);
      }
      for (const key of ['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties']) {
        if (raised(key)) add(operation, schema, where, `${where || 'the body'}: ${key} raised from ${old[key] ?? 'none'} to ${now[key]}`);
      }
      if (now.pattern !== undefined && now.pattern !== old.pattern) add(operation, schema, where, `${where || 'the body'}: pattern changed to ${now.pattern}`);
      if (now.additionalProperties === false && old.additionalProperties !== false) add(operation, schema, where, `${where || 'the body'}: unknown fields now refused`);
    }
    const oldProperties: Node = old.properties ?? {};
    const newProperties: Node = now.properties ?? {};
    const oldRequired = new Set<string>(old.required ?? []);
    const newRequired = new Set<string>(now.required ?? []);
    for (const name of Object.keys(oldProperties)) {
      if (!(name in newProperties)) {
        add(operation, schema, name, `${at(name)}: ${answer ? 'field removed' : 'field no longer accepted'}`);
        continue;
      }
      if (answer && oldRequired.has(name) && !newRequired.has(name)) add(operation, schema, name, `${at(name)}: field may now be missing`);
      compare(operation, at(name), oldProperties[name], newProperties[name], answer, schema, seen);
    }
    if (!answer) {
      for (const name of newRequired) if (!oldRequired.has(name)) add(operation, schema, name, `${at(name)}: field now required`);
    }
    if (old.items && now.items) compare(operation, `${where}[]`, old.items, now.items, answer, schema, seen);
    for (const key of ['oneOf', 'anyOf', 'allOf']) {
      const oldBranches: Node[] = old[key] ?? [];
      const newBranches: Node[] = now[key] ?? [];
      if (oldBranches.length > newBranches.length) add(operation, schema, where, `${where || 'the body'}: ${key} lost ${oldBranches.length - newBranches.length} of its shapes`);
      // Branches are matched by position: a union grows at its end (a new event type).
      oldBranches.slice(0, newBranches.length).forEach((branch, index) => compare(operation, where, branch, newBranches[index], answer, schema, seen));
    }
  };

  const parametersOf = (document: Node, pathItem: Node, operation: Node) => {
    const byKey = new Map<string, Node>();
    for (const raw of [...(pathItem.parameters ?? []), ...(operation.parameters ?? [])]) {
      const parameter = refOf(document, raw).node;
      if (parameter) byKey.set(`${parameter.in} ${parameter.name}`, parameter);
    }
    return byKey;
  };
  const contentOf = (document: Node, node: Node | undefined): Node => refOf(document, node).node?.content ?? {};

  const compareOperation = (operationId: string, oldItem: Node, newItem: Node, old: Node, now: Node) => {
    const seen = new Set<string>();
    const oldParameters = parametersOf(before, oldItem, old);
    const newParameters = parametersOf(after, newItem, now);
    for (const [key, parameter] of newParameters) {
      const previous = oldParameters.get(key);
      if (parameter.required && !previous?.required) add(operationId, undefined, parameter.name, `${key} parameter ${previous ? 'now required' : 'added as required'}`);
    }
    for (const [key, parameter] of oldParameters) {
      const next = newParameters.get(key);
      // Unknown query parameters are refused: a removed one fails the requests that send it.
      if (!next) add(operationId, undefined, parameter.name, `${key} parameter removed`);
      else compare(operationId, key, parameter.schema, next.schema, false, undefined, seen);
    }
    const oldBody = refOf(before, old.requestBody).node;
    const newBody = refOf(after, now.requestBody).node;
    if (newBody?.required && !oldBody?.required) add(operationId, undefined, 'requestBody', 'request body now required');
    for (const [type, media] of Object.entries<Node>(contentOf(before, old.requestBody))) {
      const next = contentOf(after, now.requestBody)[type];
      if (!next) add(operationId, undefined, type, `request body ${type} no longer accepted`);
      else compare(operationId, '', media.schema, next.schema, false, undefined, seen);
    }
    for (const [status, response] of Object.entries<Node>(old.responses ?? {})) {
      const next = now.responses?.[status];
      if (!next) {
        if (status.startsWith('2')) add(operationId, undefined, status, `success status ${status} removed`);
        continue;
      }
      for (const header of Object.keys(refOf(before, response).node?.headers ?? {})) {
        if (!(header in (refOf(after, next).node?.headers ?? {}))) add(operationId, undefined, header, `${status}: response header ${header} removed`);
      }
      for (const [type, media] of Object.entries<Node>(contentOf(before, response))) {
        const nextMedia = contentOf(after, next)[type];
        if (!nextMedia) add(operationId, undefined, type, `${status}: response ${type} removed`);
        else compare(operationId, '', media.schema, nextMedia.schema, true, undefined, seen);
      }
    }
  };

  for (const [path, oldItem] of Object.entries<Node>(before.paths ?? {})) {
    for (const method of methods) {
      const old = oldItem[method];
      if (!old) continue;
      const newItem = after.paths?.[path];
      const now = newItem?.[method];
      const operationId = old.operationId ?? `${method.toUpperCase()} ${path}`;
      if (!now) add(operationId, undefined, operationId, `operation ${method.toUpperCase()} ${path} removed`);
      else compareOperation(operationId, oldItem, newItem, old, now);
    }
  }
  for (const [type, oldItem] of Object.entries<Node>(before.webhooks ?? {})) {
    const newItem = after.webhooks?.[type];
    const name = `webhook ${type}`;
    if (!newItem?.post) {
      add(name, undefined, type, `webhook event ${type} removed`);
      continue;
    }
    compare(name, '', oldItem.post?.requestBody?.content?.['application/json']?.schema, newItem.post.requestBody?.content?.['application/json']?.schema, true, undefined, new Set());
  }
  return [...findings.values()];
}

/**
 * The bullets of the "### Breaking" part of the changelog's first `## ` section (Unreleased, or the
 * release being made), each with the names it puts in backticks.
 */
export function declaredBreakingChanges(changelog: string): string[][] {
  const section = changelog.split(/^## /m)[1] ?? '';
  const breaking = section.split(/^### /m).find((part) => /^Breaking\b/.test(part)) ?? '';
  return breaking
    .split(/^- /m)
    .slice(1)
    .map((bullet) => [...bullet.matchAll(/`([^`]+)`/g)].map((match) => match[1]!));
}

/** A change is declared by a bullet naming, in backticks, its operationId or schema, and its subject. */
export function isDeclared(finding: Finding, bullets: string[][]): boolean {
  const places = [finding.operation.replace(/^webhook /, ''), finding.schema].filter((place) => place !== undefined);
  return bullets.some((names) => names.includes(finding.subject) && places.some((place) => names.includes(place)));
}

const majorOf = (document: Node) => Number(String(document.info?.version ?? '0').split('.')[0]);

export interface Verdict {
  findings: Finding[];
  undeclared: Finding[];
  newMajor: boolean;
}

export function judge(before: Node, after: Node, changelog: string): Verdict {
  const findings = findBreakingChanges(before, after);
  const newMajor = majorOf(after) > majorOf(before);
  const bullets = declaredBreakingChanges(changelog);
  return { findings, newMajor, undeclared: newMajor ? [] : findings.filter((finding) => !isDeclared(finding, bullets)) };
}

const git = (...args: string[]) => execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
const tryGit = (...args: string[]) => {
  try {
    return git(...args);
  } catch {
    return undefined;
  }
};

/**
 * The last released contract: the newest `api-v<major>.*` tag of the contract's major, else where
 * this branch left main, else (on main itself) the commit before HEAD's first parent's change.
 */
function baseRef(major: number): { ref: string; why: string } | undefined {
  const tag = tryGit('tag', '--list', `api-v${major}.*`, '--sort=-v:refname')?.split('\n').find(Boolean);
  if (tag) return { ref: tag, why: `the release tag ${tag}` };
  const branch = tryGit('rev-parse', '--abbrev-ref', 'HEAD');
  if (branch !== 'main') {
    const base = tryGit('merge-base', 'HEAD', 'main') ?? tryGit('merge-base', 'HEAD', 'origin/main');
    if (base) return { ref: base, why: `where this branch left main (${base.slice(0, 12)})` };
  }
  const parent = tryGit('rev-parse', '--verify', '--quiet', 'HEAD^1');
  if (parent) return { ref: parent, why: `HEAD's first parent (${parent.slice(0, 12)})` };
  return undefined;
}

function main(args: string[]): number {
  const root = resolve(import.meta.dirname, '..');
  let before: Node;
  let after: Node;
  let changelogPath = resolve(root, 'CHANGELOG.md');
  if (args.length >= 2) {
    before = JSON.parse(readFileSync(args[0]!, 'utf8'));
    after = JSON.parse(readFileSync(args[1]!, 'utf8'));
    if (args[2]) changelogPath = args[2];
  } else {
    after = JSON.parse(readFileSync(resolve(root, 'generated/openapi.json'), 'utf8'));
    const base = baseRef(majorOf(after));
    if (!base) {
      console.log('Breaking changes: not checked — no earlier commit to compare with (a shallow clone of one commit?). Fetch the history and tags (git fetch --unshallow --tags) to check.');
      return 0;
    }
    const text = tryGit('show', `${base.ref}:generated/openapi.json`);
    if (text === undefined) {
      console.log(`Breaking changes: not checked — ${base.why} has no generated/openapi.json.`);
      return 0;
    }
    before = JSON.parse(text);
    console.log(`Breaking changes: the contract ${after.info.version} against ${base.why}, contract ${before.info.version}.`);
  }
  const changelog = existsSync(changelogPath) ? readFileSync(changelogPath, 'utf8') : '';
  const { findings, undeclared, newMajor } = judge(before, after, changelog);
  for (const finding of findings) {
    const state = newMajor ? 'declared by the new major version' : undeclared.includes(finding) ? 'NOT DECLARED' : 'declared in CHANGELOG.md';
    console.log(`  ${finding.operation}${finding.schema ? ` (${finding.schema})` : ''}: ${finding.message} — ${state}`);
  }
  if (undeclared.length === 0) {
    console.log(findings.length === 0 ? 'Breaking changes: none.' : `Breaking changes: ${findings.length}, each declared.`);
    return 0;
  }
  console.log(
    `Breaking changes: ${undeclared.length} not declared. Declare each under "### Breaking" in CHANGELOG.md's first section with a bullet that names, in backticks, ` +
      'its operationId (or the schema in parentheses) and its subject (the field, parameter, enum value or status), or raise info.version to a new major (docs/decisions.md, "Breaking changes").',
  );
  return 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exitCode = main(process.argv.slice(2));

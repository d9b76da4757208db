/**
 * The breaking-change gate (`make test`'s step, docs/decisions.md "Breaking changes"): the bundled
 * contract against the last released one (the newest of openapi/releases/, written by
 * `npm run release`), each change a client written for the released one could trip over named, and
 * the run failed unless the change is declared — a new major `info.version`, or a bullet under
 * "### Breaking" of CHANGELOG.md's first section that names it — and unless the deprecation policy holds.
 * Every other difference too (an addition as much as a break: an operation, a field, a parameter, a
 * status, a header, an enum value such as an error code, an event type) needs a bullet of that
 * section naming it under its heading (Added; Removed; Changed, Fixed or Security; Breaking serves
 * for all), so that no difference reaches a release untold.
 *
 *   tsx scripts/breakingChanges.ts [--dir DIR]                       DIR's (else this repository's) contract against its last release
 *   tsx scripts/breakingChanges.ts OLD.json NEW.json [CHANGELOG.md]   two files
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

type Node = Record<string, any>;

export interface Finding {
  /** The operationId, `webhook <type>`, or `security` for the contract's default requirement. */
  operation: string;
  /** The shared component (schema, parameter, response, header) the change lies in, when it lies in one. */
  component: string | undefined;
  /** What changed: a field, parameter, enum value, scope, shape or status code; never empty. */
  subject: string;
  message: string;
}

/** The changelog's heading a difference is told under. */
export type Heading = 'Added' | 'Removed' | 'Changed';

/** Any difference between the released contract and this one, breaking or not. */
export interface Difference extends Finding {
  heading: Heading;
  /** Named by its subject alone (an operation, an event type, an enum value such as an error code), not with a place. */
  whole: boolean;
  /** Another name of the subject a bullet may use instead: an operation's method and path. */
  alias?: string;
}

/** The headings under which a bullet tells a difference: its own, those of its kind, and Breaking, the stricter one. */
export const tellingHeadings: Record<Heading, string[]> = {
  Added: ['Added', 'Breaking'],
  Removed: ['Removed', 'Breaking'],
  Changed: ['Changed', 'Fixed', 'Security', 'Breaking'],
};

const methods = ['get', 'put', 'post', 'delete', 'patch'];
const releasesFolder = 'openapi/releases';

interface Resolved {
  node: Node | undefined;
  /** The last `#/components/<kind>/<name>` the references went through. */
  component: string | undefined;
}

function resolveIn(document: Node, raw: Node | undefined): Resolved {
  let node = raw;
  let component: string | undefined;
  for (let hops = 0; node && typeof node.$ref === 'string' && hops < 32; hops++) {
    const path = (node.$ref as string).replace(/^#\//, '').split('/').map((key) => key.replaceAll('~1', '/').replaceAll('~0', '~'));
    if (path[0] === 'components') component = path[2];
    node = path.reduce<Node | undefined>((at, key) => at?.[key], document);
  }
  return { node, component };
}

const unionOf = (node: Node): Node[] | undefined => node.oneOf ?? node.anyOf;
const jsonType = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value === 'number' && Number.isInteger(value) ? 'integer' : typeof value);
const valuesOf = (node: Node): unknown[] | undefined => (node.const !== undefined ? [node.const] : Array.isArray(node.enum) ? node.enum : undefined);
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const shown = (value: unknown) => JSON.stringify(value);

/** The JSON types a schema admits, through references and unions; undefined when it admits any. */
function typesOf(document: Node, raw: Node | undefined, depth = 0): Set<string> | undefined {
  const node = resolveIn(document, raw).node;
  if (!node || depth > 16) return undefined;
  const branches = unionOf(node);
  if (branches) {
    const types = new Set<string>();
    for (const branch of branches) {
      const inner = typesOf(document, branch, depth + 1);
      if (!inner) return undefined;
      for (const type of inner) types.add(type);
    }
    return types;
  }
  if (node.type !== undefined) return new Set(Array.isArray(node.type) ? node.type : [node.type]);
  const values = valuesOf(node);
  if (values) return new Set(values.map(jsonType));
  for (const part of node.allOf ?? []) {
    const inner = typesOf(document, part, depth + 1);
    if (inner) return inner;
  }
  return undefined;
}

/** The `const` a union's shape gives its discriminating property (`type`), looked for in its allOf parts too. */
function discriminatorOf(document: Node, raw: Node, property: string, depth = 0): unknown {
  const node = resolveIn(document, raw).node;
  if (!node || depth > 8) return undefined;
  const value = node.properties?.[property]?.const;
  if (value !== undefined) return value;
  for (const part of node.allOf ?? []) {
    const inner = discriminatorOf(document, part, property, depth + 1);
    if (inner !== undefined) return inner;
  }
  return undefined;
}

/** Six calendar months after `from` (the deprecation policy's least notice). */
function sixMonthsAfter(from: number): number {
  const date = new Date(from);
  date.setUTCMonth(date.getUTCMonth() + 6);
  return date.getTime();
}

/** The bullets under `### <heading>` of the changelog's first `## ` section, each as the names it puts in backticks. */
export function changelogBullets(changelog: string, heading: string): string[][] {
  const section = changelog.split(/^## /m)[1] ?? '';
  const part = section.split(/^### /m).find((text) => new RegExp(`^${heading}\\b`).test(text)) ?? '';
  return part
    .split(/^- /m)
    .slice(1)
    .map((bullet) => [...bullet.matchAll(/`([^`]+)`/g)].map((match) => match[1]!));
}

export const declaredBreakingChanges = (changelog: string) => changelogBullets(changelog, 'Breaking');

export interface Comparison {
  /** What breaks a client of the old contract. */
  findings: Finding[];
  /** What a careful client should look at, without failing the gate: a new value in an answer, a 4xx no longer documented. */
  warnings: Finding[];
  /** Operations removed that the old contract did not deprecate. */
  removedUndeprecated: string[];
  /** Every difference, each to be told in the changelog. */
  differences: Difference[];
}

/** Compares two bundled contracts (only local `#/...` references, as Redocly bundles them). */
export function compareContracts(before: Node, after: Node): Comparison {
  const findings = new Map<string, Finding>();
  const warnings = new Map<string, Finding>();
  const removedUndeprecated: string[] = [];
  const differences = new Map<string, Difference>();
  // A component's change is told once, however many operations and event types reach it.
  const keyOf = (operation: string, component: string | undefined, subject: string, message: string) =>
    component === undefined ? `${operation}\n${subject}\n${message}` : `${component}\n${subject}\n${message.replace(/^[^:]*: /, '')}`;
  const record = (into: Map<string, Finding>, operation: string, component: string | undefined, subject: string, message: string) => {
    const key = keyOf(operation, component, subject, message);
    if (!into.has(key)) into.set(key, { operation, component, subject, message });
  };
  const tell = (heading: Heading, operation: string, component: string | undefined, subject: string, message: string, whole = false, alias?: string) => {
    const key = whole ? `${heading}\n${subject}` : keyOf(operation, component, subject, message);
    if (!differences.has(key)) differences.set(key, { heading, operation, component, subject, message, whole, ...(alias ? { alias } : {}) });
  };
  // A component pair is judged once per direction: the event unions reach the same ones from many places.
  const seen = new Set<string>();

  /**
   * `answer`: the server writes it (a response, a webhook's body), so it may not widen nor lose what
   * the client reads; otherwise the client writes it (a request, a parameter), so it may not narrow.
   */
  const compare = (operation: string, where: string, subject: string, oldRaw: Node | undefined, newRaw: Node | undefined, answer: boolean, owner: string | undefined) => {
    const oldRef = resolveIn(before, oldRaw);
    const newRef = resolveIn(after, newRaw);
    const [old, now] = [oldRef.node, newRef.node];
    if (!old || !now) return;
    // Within one component when both sides name the same; a field that became another schema changed in its owner.
    const component = oldRef.component === newRef.component ? (newRef.component ?? owner) : owner;
    if (oldRef.component && newRef.component) {
      const pair = `${oldRef.component}|${newRef.component}|${answer}`;
      if (seen.has(pair)) return;
      seen.add(pair);
    }
    const label = where || component || 'the body';
    const what = subject || component || 'body';
    const add = (about: string, message: string) => record(findings, operation, component, about || what, `${label}: ${message}`);
    const warn = (about: string, message: string) => record(warnings, operation, component, about || what, `${label}: ${message}`);
    const differ = (heading: Heading, about: string, message: string, whole = false) => tell(heading, operation, component, about || what, `${label}: ${message}`, whole);
    const at = (name: string) => (where ? `${where}.${name}` : name);

    const oldTypes = typesOf(before, oldRaw);
    const newTypes = typesOf(after, newRaw);
    if (oldTypes && newTypes) {
      const lost = answer ? [...newTypes].filter((type) => !oldTypes.has(type)) : [...oldTypes].filter((type) => !newTypes.has(type));
      for (const type of lost) add(what, `type ${type} ${answer ? 'may now be answered' : 'is no longer accepted'}`);
      if (!same([...oldTypes].sort(), [...newTypes].sort())) differ('Changed', what, `type ${[...oldTypes].join('|')} changed to ${[...newTypes].join('|')}`);
    }

    const oldBranches = unionOf(old);
    const newBranches = unionOf(now);
    if (oldBranches || newBranches) {
      // A field made nullable is `X` become `oneOf [X, null]`: the one shape is matched among the new ones.
      const property = now.discriminator?.propertyName ?? old.discriminator?.propertyName ?? 'type';
      const { pairs, lost, added } = matchBranches(oldBranches ?? [oldRaw!], newBranches ?? [newRaw!], property);
      // A union that is a component itself (the event union) is declared by the shape; a field's, by the field.
      const ownUnion = oldRef.component !== undefined && oldRef.component === newRef.component;
      for (const branch of lost) add(ownUnion ? shapeName(before, branch, property) : what, `shape ${shapeName(before, branch, property)} removed`);
      // A union of its own (the event union) names its shapes: an event type is told by its name.
      for (const branch of lost) differ('Removed', ownUnion ? shapeName(before, branch, property) : what, `shape ${shapeName(before, branch, property)} removed`, ownUnion);
      for (const branch of added) differ('Added', ownUnion ? shapeName(after, branch, property) : what, `shape ${shapeName(after, branch, property)} added`, ownUnion);
      for (const [oldBranch, newBranch] of pairs) compare(operation, where, subject, oldBranch, newBranch, answer, component);
      // A new shape of an answer is unknown to the client, unless the union tells its shapes apart (a new
      // event type: clients ignore types they do not know); one of a new type was told above.
      const told = (branch: Node) => now.discriminator !== undefined || discriminatorOf(after, branch, property) !== undefined;
      if (answer && oldTypes) {
        for (const branch of added) {
          const types = typesOf(after, branch);
          if (!told(branch) && types && [...types].every((type) => oldTypes.has(type))) add(what, `shape ${shapeName(after, branch, property)} may now be answered`);
        }
      }
      return;
    }

    const oldValues = valuesOf(old);
    const newValues = valuesOf(now);
    if (oldValues && newValues) {
      if (old.const !== undefined && now.const !== undefined && !same(old.const, now.const)) {
        add(String(old.const), `value ${shown(old.const)} changed to ${shown(now.const)}`);
        differ('Changed', String(old.const), `value ${shown(old.const)} changed to ${shown(now.const)}`, true);
      } else {
        // An enum value (an error code, an event type, a status) is told by its name.
        for (const value of oldValues) if (!newValues.some((next) => same(next, value))) differ('Removed', String(value), `enum value ${shown(value)} removed`, true);
        for (const value of newValues) if (!oldValues.some((known) => same(known, value))) differ('Added', String(value), `enum value ${shown(value)} added`, true);
        for (const value of oldValues) if (!newValues.some((next) => same(next, value))) add(String(value), `enum value ${shown(value)} removed`);
        if (answer) {
          for (const value of newValues) {
            if (!oldValues.some((known) => same(known, value))) warn(String(value), `enum value ${shown(value)} added: a client must treat values it does not know as unknown`);
          }
        }
      }
    } else if (!answer && newValues) {
      add(what, `values now limited to ${newValues.map(shown).join(', ')}`);
    }
    if ((oldValues === undefined) !== (newValues === undefined)) differ('Changed', what, newValues ? `values now limited to ${newValues.map(shown).join(', ')}` : 'values no longer limited');
    for (const key of constraints) {
      if (!same(old[key], now[key])) differ('Changed', what, `${key} changed from ${shown(old[key] ?? 'none')} to ${shown(now[key] ?? 'none')}`);
    }
    if ((old.additionalProperties === false) !== (now.additionalProperties === false)) differ('Changed', what, now.additionalProperties === false ? 'unknown fields now refused' : 'unknown fields now allowed');
    if (!answer) {
      const lowered = (key: string) => (old[key] === undefined ? now[key] !== undefined : now[key] !== undefined && now[key] < old[key]);
      const raised = (key: string) => (old[key] === undefined ? now[key] !== undefined : now[key] !== undefined && now[key] > old[key]);
      for (const key of ['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties']) {
        if (lowered(key)) add(what, `${key} lowered from ${old[key] ?? 'none'} to ${now[key]}`);
      }
      for (const key of ['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties']) {
        if (raised(key)) add(what, `${key} raised from ${old[key] ?? 'none'} to ${now[key]}`);
      }
      if (now.pattern !== undefined && now.pattern !== old.pattern) add(what, `pattern changed to ${now.pattern}`);
      if (now.additionalProperties === false && old.additionalProperties !== false) add(what, 'unknown fields now refused');
      // What the server assumes when the client says nothing: a client that relied on it now gets something else.
      if (old.default !== undefined && !same(old.default, now.default)) add(what, `default changed from ${shown(old.default)} to ${now.default === undefined ? 'none' : shown(now.default)}`);
    }
    const oldProperties: Node = old.properties ?? {};
    const newProperties: Node = now.properties ?? {};
    const oldRequired = new Set<string>(old.required ?? []);
    const newRequired = new Set<string>(now.required ?? []);
    for (const name of Object.keys(newProperties)) if (!(name in oldProperties)) tell('Added', operation, component, name, `${at(name)}: field added`);
    for (const name of Object.keys(oldProperties)) {
      if (!(name in newProperties)) {
        record(findings, operation, component, name, `${at(name)}: ${answer ? 'field removed' : 'field no longer accepted'}`);
        tell('Removed', operation, component, name, `${at(name)}: field removed`);
        continue;
      }
      if (oldRequired.has(name) !== newRequired.has(name)) tell('Changed', operation, component, name, `${at(name)}: field now ${newRequired.has(name) ? 'required' : 'optional'}`);
      if (answer && oldRequired.has(name) && !newRequired.has(name)) record(findings, operation, component, name, `${at(name)}: field may now be missing`);
      compare(operation, at(name), name, oldProperties[name], newProperties[name], answer, component);
    }
    if (!answer) {
      for (const name of newRequired) if (!oldRequired.has(name)) record(findings, operation, component, name, `${at(name)}: field now required`);
    }
    if (old.items && now.items) compare(operation, `${where}[]`, subject, old.items, now.items, answer, component);
    // allOf parts are one shape's pieces, kept in their order.
    (old.allOf ?? []).forEach((part: Node, index: number) => compare(operation, where, subject, part, now.allOf?.[index], answer, component));
  };

  /**
   * Pairs a union's old shapes with its new ones by what they are — the component they name, their
   * title, their discriminator value, their content, their field names, their types — never by
   * position: reordered shapes are the same shapes, and one removed from the middle is one shape lost.
   */
  const matchBranches = (oldBranches: Node[], newBranches: Node[], property: string) => {
    const keys: ((document: Node, branch: Node) => string | undefined)[] = [
      (_document, branch) => (typeof branch.$ref === 'string' ? `ref ${branch.$ref.split('/').pop()}` : undefined),
      (_document, branch) => (typeof branch.title === 'string' ? `title ${branch.title}` : undefined),
      (document, branch) => {
        const value = discriminatorOf(document, branch, property);
        return value === undefined ? undefined : `value ${shown(value)}`;
      },
      (_document, branch) => `json ${JSON.stringify(branch)}`,
      (document, branch) => {
        const properties = resolveIn(document, branch).node?.properties;
        return properties ? `fields ${Object.keys(properties).sort().join(',')}` : undefined;
      },
      (document, branch) => `types ${[...(typesOf(document, branch) ?? ['any'])].sort().join(',')}`,
    ];
    const oldLeft = new Set(oldBranches);
    const newLeft = new Set(newBranches);
    const pairs: [Node, Node][] = [];
    for (const key of keys) {
      const byKey = new Map<string, Node>();
      for (const branch of newLeft) {
        const value = key(after, branch);
        if (value !== undefined && !byKey.has(value)) byKey.set(value, branch);
      }
      for (const branch of oldLeft) {
        const value = key(before, branch);
        const match = value === undefined ? undefined : byKey.get(value);
        if (!match) continue;
        pairs.push([branch, match]);
        oldLeft.delete(branch);
        newLeft.delete(match);
        byKey.delete(value!);
      }
    }
    return { pairs, lost: [...oldLeft], added: [...newLeft] };
  };
  const shapeName = (document: Node, branch: Node, property: string): string => {
    if (typeof branch.$ref === 'string') return branch.$ref.split('/').pop()!;
    if (typeof branch.title === 'string') return branch.title;
    const value = discriminatorOf(document, branch, property);
    return value !== undefined ? String(value) : [...(typesOf(document, branch) ?? ['any'])].join('|');
  };

  /** Parameters by `<in> <name>`, path parameters by position: `/tasks/{id}` and `/tasks/{taskId}` take the same one. */
  const parametersOf = (document: Node, path: string, pathItem: Node, operation: Node) => {
    const positions = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
    const byKey = new Map<string, { parameter: Node; component: string | undefined }>();
    for (const raw of [...(pathItem.parameters ?? []), ...(operation.parameters ?? [])]) {
      const { node: parameter, component } = resolveIn(document, raw);
      if (!parameter) continue;
      const key = parameter.in === 'path' ? `path #${positions.indexOf(parameter.name)}` : `${parameter.in} ${parameter.name}`;
      byKey.set(key, { parameter, component });
    }
    return byKey;
  };
  const contentOf = (document: Node, node: Node | undefined): Node => resolveIn(document, node).node?.content ?? {};

  const compareSecurity = (operation: string, oldRequirements: Node[], newRequirements: Node[]) => {
    if (!same(oldRequirements, newRequirements)) tell('Changed', operation, undefined, 'security', `security: ${shown(oldRequirements)} changed to ${shown(newRequirements)}`);
    const scopesOf = (requirement: Node) => Object.values<string[]>(requirement).flat();
    const format = (requirements: Node[]) =>
      requirements.length === 0 ? 'nothing' : requirements.map((requirement) => Object.entries<string[]>(requirement).map(([scheme, scopes]) => `${scheme}(${scopes.join(', ')})`).join(' and ') || 'nothing').join(' or ');
    const satisfied = (held: Node) =>
      newRequirements.length === 0 || newRequirements.some((needed) => Object.entries<string[]>(needed).every(([scheme, scopes]) => held[scheme] && scopes.every((scope) => held[scheme].includes(scope))));
    for (const held of oldRequirements.length === 0 ? [{}] : oldRequirements) {
      if (satisfied(held)) continue;
      const added = [...new Set(newRequirements.flatMap((needed) => [...scopesOf(needed), ...Object.keys(needed)]))].filter((name) => !scopesOf(held).includes(name) && !(name in held));
      record(findings, operation, undefined, added[0] ?? 'security', `security: requires ${format(newRequirements)} where ${format(oldRequirements)} sufficed`);
      return;
    }
  };

  const compareOperation = (operationId: string, oldPath: string, newPath: string, oldItem: Node, newItem: Node, old: Node, now: Node) => {
    if (old.security !== undefined || now.security !== undefined) compareSecurity(operationId, old.security ?? before.security ?? [], now.security ?? after.security ?? []);
    const oldParameters = parametersOf(before, oldPath, oldItem, old);
    const newParameters = parametersOf(after, newPath, newItem, now);
    for (const [key, { parameter, component }] of newParameters) {
      const previous = oldParameters.get(key)?.parameter;
      if (parameter.required && !previous?.required) record(findings, operationId, component, parameter.name, `${key} parameter ${previous ? 'now required' : 'added as required'}`);
      if (!previous) tell('Added', operationId, component, parameter.name, `${key} parameter added`);
      else if (Boolean(parameter.required) !== Boolean(previous.required)) tell('Changed', operationId, component, parameter.name, `${key} parameter now ${parameter.required ? 'required' : 'optional'}`);
    }
    for (const [key, { parameter, component }] of oldParameters) {
      const next = newParameters.get(key);
      const label = `${parameter.in} ${parameter.name}`;
      // Unknown query parameters are refused: a removed one fails the requests that send it.
      if (!next) record(findings, operationId, component, parameter.name, `${label} parameter removed`);
      if (!next) tell('Removed', operationId, component, parameter.name, `${label} parameter removed`);
      else compare(operationId, label, parameter.name, parameter.schema, next.parameter.schema, false, next.component ?? component);
    }
    const oldBody = resolveIn(before, old.requestBody).node;
    const newBody = resolveIn(after, now.requestBody).node;
    if (newBody?.required && !oldBody?.required) record(findings, operationId, undefined, 'requestBody', 'request body now required');
    if (Boolean(newBody?.required) !== Boolean(oldBody?.required)) tell('Changed', operationId, undefined, 'requestBody', `request body now ${newBody?.required ? 'required' : 'optional'}`);
    for (const type of Object.keys(contentOf(after, now.requestBody))) {
      if (!(type in contentOf(before, old.requestBody))) tell('Added', operationId, undefined, type, `request body ${type} accepted`);
    }
    for (const [type, media] of Object.entries<Node>(contentOf(before, old.requestBody))) {
      const next = contentOf(after, now.requestBody)[type];
      if (!next) record(findings, operationId, undefined, type, `request body ${type} no longer accepted`);
      if (!next) tell('Removed', operationId, undefined, type, `request body ${type} no longer accepted`);
      else compare(operationId, '', '', media.schema, next.schema, false, undefined);
    }
    for (const status of Object.keys(now.responses ?? {})) if (!(status in (old.responses ?? {}))) tell('Added', operationId, undefined, status, `status ${status} added`);
    for (const [status, response] of Object.entries<Node>(old.responses ?? {})) {
      const next = now.responses?.[status];
      if (!next) tell('Removed', operationId, undefined, status, `status ${status} removed`);
      if (!next) {
        if (status.startsWith('2')) record(findings, operationId, undefined, status, `success status ${status} removed`);
        // A client may still branch on it; the server may still send it undocumented.
        else if (status.startsWith('4')) record(warnings, operationId, undefined, status, `${status} no longer documented: a client that handles it keeps working, check that it is no longer answered`);
        continue;
      }
      const [oldAnswer, newAnswer] = [resolveIn(before, response), resolveIn(after, next)];
      const oldHeaders = oldAnswer.node?.headers ?? {};
      const newHeaders = newAnswer.node?.headers ?? {};
      for (const header of Object.keys(oldHeaders)) {
        if (!(header in newHeaders)) record(findings, operationId, undefined, header, `${status}: response header ${header} removed`);
        if (!(header in newHeaders)) tell('Removed', operationId, oldAnswer.component, header, `${status}: response header ${header} removed`);
      }
      // A header added to a shared response (every change's 422) is told once, by the response's name.
      for (const header of Object.keys(newHeaders)) if (!(header in oldHeaders)) tell('Added', operationId, newAnswer.component, header, `${status}: response header ${header} added`);
      for (const type of Object.keys(contentOf(after, next))) if (!(type in contentOf(before, response))) tell('Added', operationId, undefined, type, `${status}: response ${type} added`);
      for (const [type, media] of Object.entries<Node>(contentOf(before, response))) {
        const nextMedia = contentOf(after, next)[type];
        if (!nextMedia) record(findings, operationId, undefined, type, `${status}: response ${type} removed`);
        if (!nextMedia) tell('Removed', operationId, undefined, type, `${status}: response ${type} removed`);
        else compare(operationId, '', '', media.schema, nextMedia.schema, true, undefined);
      }
    }
  };

  compareSecurity('security', before.security ?? [], after.security ?? []);
  const template = (path: string) => path.replace(/\{[^}]+\}/g, '{}');
  const newPaths = new Map(Object.keys(after.paths ?? {}).map((path) => [template(path), path]));
  for (const [path, oldItem] of Object.entries<Node>(before.paths ?? {})) {
    const newPath = after.paths?.[path] ? path : newPaths.get(template(path));
    const newItem = newPath === undefined ? undefined : after.paths[newPath];
    for (const method of methods) {
      const old = oldItem[method];
      if (!old) continue;
      const now = newItem?.[method];
      const operationId = old.operationId ?? `${method.toUpperCase()} ${path}`;
      if (now) {
        compareOperation(operationId, path, newPath!, oldItem, newItem!, old, now);
        continue;
      }
      record(findings, operationId, undefined, operationId, `operation ${method.toUpperCase()} ${path} removed`);
      tell('Removed', operationId, undefined, operationId, `operation ${method.toUpperCase()} ${path} removed`, true, `${method.toUpperCase()} ${path}`);
      if (!old.deprecated) removedUndeprecated.push(operationId);
    }
  }
  const oldPaths = new Map(Object.keys(before.paths ?? {}).map((path) => [template(path), path]));
  for (const [path, newItem] of Object.entries<Node>(after.paths ?? {})) {
    const oldPath = before.paths?.[path] ? path : oldPaths.get(template(path));
    for (const method of methods) {
      const now = newItem[method];
      if (!now || (oldPath !== undefined && before.paths[oldPath][method])) continue;
      const operationId = now.operationId ?? `${method.toUpperCase()} ${path}`;
      tell('Added', operationId, undefined, operationId, `operation ${method.toUpperCase()} ${path} added`, true, `${method.toUpperCase()} ${path}`);
    }
  }
  for (const type of Object.keys(after.webhooks ?? {})) {
    if (!before.webhooks?.[type]?.post) tell('Added', `webhook ${type}`, undefined, type, `webhook event ${type} added`, true);
  }
  for (const [type, oldItem] of Object.entries<Node>(before.webhooks ?? {})) {
    const newItem = after.webhooks?.[type];
    const name = `webhook ${type}`;
    if (!newItem?.post) {
      record(findings, name, undefined, type, `webhook event ${type} removed`);
      tell('Removed', name, undefined, type, `webhook event ${type} removed`, true);
      continue;
    }
    const body = (item: Node) => item.post?.requestBody?.content?.['application/json']?.schema;
    compare(name, '', '', body(oldItem), body(newItem), true, undefined);
  }
  return { findings: [...findings.values()], warnings: [...warnings.values()], removedUndeprecated, differences: [...differences.values()] };
}

/** The constraints of a schema whose change a client may notice, either way. */
const constraints = ['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties', 'minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties', 'pattern', 'format', 'default'];

/**
 * A difference is told by a bullet under one of its headings that names, in backticks, its subject
 * (an operation by its operationId or its method and path, `POST /issues/{id}/reopen`) and, unless
 * it is named by its subject alone, its operationId, event type or component.
 */
export function isTold(difference: Difference, changelog: string): boolean {
  const places = [difference.operation.replace(/^webhook /, ''), difference.component].filter((place) => place !== undefined);
  return tellingHeadings[difference.heading].some((heading) =>
    changelogBullets(changelog, heading).some(
      (names) => (names.includes(difference.subject) || (difference.alias !== undefined && names.includes(difference.alias))) && (difference.whole || places.some((place) => names.includes(place))),
    ),
  );
}

/** The bullet a difference lacks, as the gate asks for it. */
export function missingBullet(difference: Difference): string {
  const place = difference.component ?? difference.operation.replace(/^webhook /, '');
  const names = difference.whole || place === difference.subject ? `\`${difference.subject}\`` : `\`${place}\` and \`${difference.subject}\``;
  return `a bullet under "### ${difference.heading}" naming ${names}`;
}

/** A change is declared by a bullet naming, in backticks, its operationId, component or event type, and its subject. */
export function isDeclared(finding: Finding, bullets: string[][]): boolean {
  const places = [finding.operation.replace(/^webhook /, ''), finding.component].filter((place) => place !== undefined);
  return bullets.some((names) => names.includes(finding.subject) && places.some((place) => names.includes(place)));
}

interface Deprecated {
  /** How the changelog names it: the operationId, or the parameter's name with its operationId or component. */
  names: string[];
  what: string;
  node: Node;
}

/** Everything the contract deprecates: operations, and parameters (a shared one once, by its component). */
function deprecatedIn(document: Node): Map<string, Deprecated> {
  const found = new Map<string, Deprecated>();
  for (const [name, parameter] of Object.entries<Node>(document.components?.parameters ?? {})) {
    if (parameter.deprecated) found.set(`parameter ${name}`, { names: [name, parameter.name], what: `the parameter ${name} (${parameter.in} ${parameter.name})`, node: parameter });
  }
  for (const [path, item] of Object.entries<Node>(document.paths ?? {})) {
    for (const method of methods) {
      const operation = item[method];
      if (!operation) continue;
      const operationId = operation.operationId ?? `${method.toUpperCase()} ${path}`;
      if (operation.deprecated) found.set(operationId, { names: [operationId], what: operationId, node: operation });
      for (const parameter of [...(item.parameters ?? []), ...(operation.parameters ?? [])]) {
        if (parameter.deprecated) found.set(`${operationId} ${parameter.in} ${parameter.name}`, { names: [operationId, parameter.name], what: `${operationId}'s ${parameter.in} parameter ${parameter.name}`, node: parameter });
      }
    }
  }
  return found;
}

/**
 * The deprecation policy (docs/decisions.md, "Deprecation"): each deprecation dated, its sunset at
 * least six months later, each new one told under "### Deprecated", and no operation removed that
 * the last release did not deprecate.
 */
export function deprecationViolations(before: Node, after: Node, changelog: string, removedUndeprecated: string[]): string[] {
  const violations: string[] = [];
  const told = changelogBullets(changelog, 'Deprecated');
  const released = deprecatedIn(before);
  for (const [key, { names, what, node }] of deprecatedIn(after)) {
    const at = Date.parse(String(node['x-deprecated-at']));
    const sunset = node['x-sunset'] === undefined ? undefined : Date.parse(String(node['x-sunset']));
    if (Number.isNaN(at)) violations.push(`${what}: deprecated without a valid x-deprecated-at (an instant or a day)`);
    else if (sunset !== undefined && (Number.isNaN(sunset) || sunset < sixMonthsAfter(at))) {
      violations.push(`${what}: x-sunset ${node['x-sunset']} is not at least six months after x-deprecated-at ${node['x-deprecated-at']}`);
    }
    if (!released.has(key) && !told.some((bullet) => names.every((name) => bullet.includes(name)))) {
      violations.push(`${what}: newly deprecated, but no bullet under "### Deprecated" in CHANGELOG.md's first section names ${names.map((name) => `\`${name}\``).join(' and ')}`);
    }
  }
  for (const operationId of removedUndeprecated) violations.push(`${operationId}: removed, but the last release did not deprecate it (deprecate it in one release, remove it in a later one)`);
  return violations;
}

const majorOf = (document: Node) => Number(String(document.info?.version ?? '0').split('.')[0]);

export interface Verdict {
  findings: Finding[];
  undeclared: Finding[];
  /** Every difference from the release, breaking or not. */
  differences: Difference[];
  /** The differences no bullet of the changelog's first section tells. */
  untold: Difference[];
  warnings: Finding[];
  /** Broken deprecation policy: fails the gate, whatever the changelog or the version says. */
  violations: string[];
  newMajor: boolean;
}

export function judge(before: Node, after: Node, changelog: string): Verdict {
  const { findings, warnings, removedUndeprecated, differences } = compareContracts(before, after);
  const newMajor = majorOf(after) > majorOf(before);
  const bullets = declaredBreakingChanges(changelog);
  const undeclared = newMajor ? [] : findings.filter((finding) => !isDeclared(finding, bullets));
  const untold = differences.filter((difference) => !isTold(difference, changelog));
  return { findings, undeclared, differences, untold, warnings, violations: deprecationViolations(before, after, changelog, removedUndeprecated), newMajor };
}

export const passes = (verdict: Verdict) => verdict.undeclared.length === 0 && verdict.violations.length === 0 && verdict.untold.length === 0;

const semver = (version: string) => version.split('.').map(Number);
const newerFirst = (a: string, b: string) => {
  const [x, y] = [semver(a), semver(b)];
  return (y[0]! - x[0]!) || (y[1]! - x[1]!) || (y[2]! - x[2]!);
};

/** The versions stored in `<dir>/openapi/releases/`, newest first. */
export function releasedVersions(dir: string): string[] {
  const folder = join(dir, releasesFolder);
  if (!existsSync(folder)) return [];
  return readdirSync(folder)
    .flatMap((file) => /^(\d+\.\d+\.\d+)\.json$/.exec(file)?.[1] ?? [])
    .sort(newerFirst);
}

export const releasedContractPath = (dir: string, version: string) => join(dir, releasesFolder, `${version}.json`);

/** Prints the verdict; true when the gate passes. */
export function report(verdict: Verdict): boolean {
  const { findings, undeclared, differences, untold, warnings, violations, newMajor } = verdict;
  const place = (finding: Finding) => `${finding.operation}${finding.component ? ` (${finding.component})` : ''}`;
  for (const finding of findings) {
    const name = finding.component ?? finding.operation.replace(/^webhook /, '');
    const state = newMajor ? 'declared by the new major version' : undeclared.includes(finding) ? `NOT DECLARED (a bullet naming \`${name}\` and \`${finding.subject}\`)` : 'declared in CHANGELOG.md';
    console.log(`  ${place(finding)}: ${finding.message} — ${state}`);
  }
  for (const warning of warnings) console.log(`  warning: ${place(warning)}: ${warning.message}`);
  for (const violation of violations) console.log(`  deprecation policy: ${violation}`);
  for (const difference of untold) console.log(`  ${place(difference)}: ${difference.message} — NOT IN THE CHANGELOG (${missingBullet(difference)})`);
  const told = `Differences from the release: ${differences.length}${untold.length === 0 ? ', each told in CHANGELOG.md' : `, ${untold.length} not told`}`;
  if (undeclared.length === 0 && violations.length === 0 && untold.length === 0) {
    console.log(`${findings.length === 0 ? 'Breaking changes: none' : `Breaking changes: ${findings.length}, each declared`}${warnings.length ? `; ${warnings.length} warning(s) above` : ''}. ${told}.`);
    return true;
  }
  if (untold.length > 0) {
    console.log(
      `${told}. Tell each in CHANGELOG.md's first section, under the heading named above (Added; Removed; Changed, Fixed or Security; or Breaking), ` +
        'with a bullet that names, in backticks, what is named above (docs/adding-an-operation.md, "The checklist").',
    );
  }
  if (undeclared.length > 0) {
    console.log(
      `Breaking changes: ${undeclared.length} not declared. Declare each under "### Breaking" in CHANGELOG.md's first section with a bullet that names, in backticks, ` +
        'its operationId, event type or component (in parentheses above) and its subject (the field, parameter, value, scope, shape or status), or raise info.version to a new major (docs/decisions.md, "Breaking changes").',
    );
  }
  if (violations.length > 0) console.log(`Deprecation policy: ${violations.length} broken (docs/decisions.md, "Deprecation").`);
  return false;
}

function main(args: string[]): number {
  const dirAt = args.indexOf('--dir');
  const dir = dirAt >= 0 ? resolve(args[dirAt + 1]!) : resolve(import.meta.dirname, '..');
  let before: Node;
  let after: Node;
  let changelogPath = join(dir, 'CHANGELOG.md');
  if (dirAt < 0 && args.length >= 2) {
    before = JSON.parse(readFileSync(args[0]!, 'utf8'));
    after = JSON.parse(readFileSync(args[1]!, 'utf8'));
    if (args[2]) changelogPath = args[2];
  } else {
    after = JSON.parse(readFileSync(join(dir, 'generated/openapi.json'), 'utf8'));
    const [latest] = releasedVersions(dir);
    if (!latest) {
      console.log(`Breaking changes: no released contract in ${releasesFolder}/ to compare with; \`npm run release\` stores one (docs/decisions.md, "Breaking changes").`);
      return 1;
    }
    before = JSON.parse(readFileSync(releasedContractPath(dir, latest), 'utf8'));
    console.log(`Breaking changes: the contract ${after.info.version} against the last release, ${releasesFolder}/${latest}.json.`);
  }
  const changelog = existsSync(changelogPath) ? readFileSync(changelogPath, 'utf8') : '';
  return report(judge(before, after, changelog)) ? 0 : 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exitCode = main(process.argv.slice(2));

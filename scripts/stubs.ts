/**
 * `npm run stubs`: the scaffold of every operation of the contract that has no handler yet. For each
 * one it writes, in the house's places:
 *   src/handlers/<area>.ts           the handler (access check, query, return) and its key in the area's map
 *   src/db/queries/<area>.ts         the query, which answers 501 notImplemented until it is written
 *   test/roundTrips.test.ts          the statement budget entry
 *   test/permissions/<area>.rows.ts  the matrix row, its undecided cells `?`
 *   test/fixtures/operationOrigins.ts  the operation as an `addition` to the reference
 *   test/<operationId>.test.ts       a test of the documented success, failing until the query is written
 *   src/events/catalog.ts            for a change (any method but GET), its events' placeholder
 * The area is the operation's tag (`Org chart` → orgChart); a new tag gets new files and its line in
 * src/handlers/index.ts and test/permissions/rows.ts. Everything written compiles but the events'
 * placeholder, which `tsc` refuses until the change declares its events or why it sends none; the
 * tests fail until the query and the rows are filled in. `--root DIR` scaffolds another copy of the project.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';

const rootFlag = process.argv.indexOf('--root');
const root = rootFlag > 0 ? resolve(process.argv[rootFlag + 1]!) : resolve(import.meta.dirname, '..');
const at = (path: string) => resolve(root, path);

interface Operation {
  operationId: string;
  tag: string;
  method: string;
  path: string;
  summary: string;
  status: number;
  pathParams: string[];
  exampleBody: unknown;
  /** The GET path the success answer's `Location` names, found by the header's example (`/v1/tasks/…` → `/tasks/{id}`). */
  locationRead: string | undefined;
}

/** `Org chart` → `orgChart`, `People reviews` → `peopleReviews`. */
export const areaOf = (tag: string) =>
  tag
    .toLowerCase()
    .split(/\s+/)
    .map((word, index) => (index === 0 ? word : word[0]!.toUpperCase() + word.slice(1)))
    .join('');

type Json = Record<string, any>;

async function contractOperations(): Promise<Operation[]> {
  const document = JSON.parse(await readFile(at('generated/openapi.json'), 'utf8')) as Json;
  const deref = (value: Json): Json =>
    value?.$ref ? deref(value.$ref.slice(2).split('/').reduce((node: Json, key: string) => node[key], document)) : value;
  const reads = Object.keys(document.paths as Json).filter((path) => (document.paths as Json)[path].get);
  const readOf = (operationId: string, example: unknown) => {
    const read = reads.find((path) => new RegExp(`^/v1${path.replace(/\{\w+\}/g, '[^/]+')}$`).test(String(example)));
    if (!read) throw new Error(`${operationId}: the example of its Location, ${String(example)}, is no GET path of the contract under /v1`);
    return read;
  };
  return Object.entries(document.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json)
      .filter(([, operation]) => operation?.operationId)
      .map(([method, operation]) => {
        const examples = Object.values(deref(operation.requestBody)?.content?.['application/json']?.examples ?? {}) as Json[];
        const status = Object.keys(operation.responses).find((code) => /^2/.test(code))!;
        const location = deref(deref(operation.responses[status])?.headers?.Location);
        return {
          operationId: operation.operationId,
          tag: operation.tags[0],
          method: method.toUpperCase(),
          path,
          summary: operation.summary,
          status: Number(status),
          pathParams: [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!),
          exampleBody: examples[0] ? deref(examples[0]).value : undefined,
          locationRead: location ? readOf(operation.operationId, location.example) : undefined,
        };
      }),
  );
}

const exportsName = (source: string, name: string) => new RegExp(`export (const|async function|function) ${name}\\b`).test(source);

/** Adds `name` to the import from `module`, or a new import after the last one. */
function withImport(source: string, module: string, name: string, typeOnly = false): string {
  const existing = new RegExp(`import (type )?\\{([^}]*)\\} from '${module.replace(/[.]/g, '\\.')}';`).exec(source);
  if (existing) {
    const names = existing[2]!.split(',').map((part) => part.trim()).filter(Boolean);
    if (names.some((part) => part.replace(/^type /, '') === name)) return source;
    const entry = existing[1] || !typeOnly ? name : `type ${name}`;
    const merged = `import ${existing[1] ?? ''}{ ${[...names, entry].join(', ')} } from '${module}';`;
    return source.replace(existing[0], merged);
  }
  const statement = `import ${typeOnly ? 'type ' : ''}{ ${name} } from '${module}';`;
  const imports = [...source.matchAll(/^import [^;]*;$/gms)];
  const last = imports.at(-1);
  if (!last) return `${statement}\n${source}`;
  const end = last.index! + last[0].length;
  return `${source.slice(0, end)}\n${statement}${source.slice(end)}`;
}

/** Inserts `text` before the line `};` that closes the object opened on the line matching `opening`. */
function insertIntoObject(source: string, opening: RegExp, text: string, file: string): string {
  const start = source.search(opening);
  if (start < 0) throw new Error(`${file}: ${opening} not found`);
  const end = source.indexOf('\n};', start);
  return `${source.slice(0, end + 1)}${text}${source.slice(end + 1)}`;
}

async function edit(file: string, change: (source: string) => string, fresh: string) {
  const path = at(file);
  const before = existsSync(path) ? await readFile(path, 'utf8') : fresh;
  const after = change(before);
  if (after !== before || !existsSync(path)) await writeFile(path, after);
}

/** A path with its parameters filled from `values` (a template literal's text). */
const pathWith = (op: Operation, values: (name: string) => string) => `\`/v1${op.path.replace(/\{(\w+)\}/g, (_match, name: string) => `\${${values(name)}}`)}\``;

/** The query's name: a read's noun (`getTeamTaskSummary` → `teamTaskSummary`), else the operationId. */
const queryNameOf = (op: Operation) => {
  const noun = op.operationId.replace(/^(get|list)(?=[A-Z])/, '');
  return noun === op.operationId ? op.operationId : noun[0]!.toLowerCase() + noun.slice(1);
};

async function scaffoldHandler(op: Operation, area: string, queryName: string) {
  const file = `src/handlers/${area}.ts`;
  const fresh = `/** Handlers of the ${op.tag} area. */\nimport type { AreaHandlers, Handler } from './types.js';\n\nexport const ${area}Handlers: AreaHandlers<'${op.tag}'> = {\n};\n`;
  await edit(
    file,
    (source) => {
      let next = source;
      const namespace = new RegExp(`import \\* as (\\w+) from '../db/queries/${area}\\.js';`).exec(next)?.[1];
      const call = `${namespace ? `${namespace}.` : ''}${queryName}(db${op.pathParams.map((name) => `, params.${name}`).join('')})`;
      if (!namespace) next = withImport(next, `../db/queries/${area}.js`, queryName);
      const lines: string[] = [];
      const context = ['db'];
      if (op.pathParams.includes('teamId')) {
        next = withImport(next, '../auth/access.js', 'loadTeamAccess');
        lines.push(`  await loadTeamAccess(db, caller, params.teamId, 'collection');`);
        context.push('caller');
      } else if (op.pathParams.includes('orgId')) {
        next = withImport(next, '../auth/access.js', 'loadOrganizationAccess');
        lines.push(`  await loadOrganizationAccess(db, caller, params.orgId, 'collection');`);
        context.push('caller');
      }
      if (op.status === 204) lines.push(`  await ${call};`, '  return { status: 204, body: undefined };');
      else if (op.locationRead) {
        // The record's own parameters (`id`) come from the record: until the statement returns one, `tsc` names them here.
        next = withImport(next, '../api/location.js', 'locationOf');
        const parameters = [...op.locationRead.matchAll(/\{(\w+)\}/g)].map(([, name]) => `${name}: ${op.pathParams.includes(name!) ? `params.${name}` : 'record'}`);
        lines.push(`  const record = await ${call};`, `  return { status: ${op.status}, body: record, headers: { Location: locationOf('${op.locationRead}', { ${parameters.join(', ')} }) } };`);
      } else lines.push(`  return { status: ${op.status}, body: await ${call} };`);
      const request = op.pathParams.length > 0 ? '{ params }' : '_request';
      const handler = `export const ${op.operationId}: Handler<'${op.operationId}'> = async (${request}, { ${context.join(', ')} }) => {\n${lines.join('\n')}\n};\n\n`;
      const mapStart = next.search(new RegExp(`^export const ${area}Handlers`, 'm'));
      if (mapStart < 0) throw new Error(`${file}: no \`export const ${area}Handlers: AreaHandlers<…>\` map`);
      next = next.slice(0, mapStart) + handler + next.slice(mapStart);
      return insertIntoObject(next, new RegExp(`^export const ${area}Handlers`, 'm'), `  ${op.operationId},\n`, file);
    },
    fresh,
  );
  await edit(
    'src/handlers/index.ts',
    (source) => {
      if (source.includes(`${area}Handlers`)) return source;
      const withArea = withImport(source, `./${area}.js`, `${area}Handlers`);
      return insertIntoObject(withArea, /^export const handlers = \{/m, `  ...${area}Handlers,\n`, 'src/handlers/index.ts');
    },
    '',
  );
}

async function scaffoldQuery(op: Operation, area: string, queryName: string) {
  const fresh = `/** Queries of the ${op.tag} area. */\nimport type { Kysely, Transaction } from 'kysely';\nimport type { Database } from '../database.js';\n\ntype Db = Kysely<Database> | Transaction<Database>;\n`;
  await edit(
    `src/db/queries/${area}.ts`,
    (source) => {
      const db = /^type Db = /m.test(source) ? 'Db' : 'Kysely<Database>';
      let next = withImport(source, '../../errors.js', 'NotImplemented');
      if (db !== 'Db') next = withImport(withImport(next, 'kysely', 'Kysely', true), '../database.js', 'Database', true);
      const parameters = ['db: ' + db, ...op.pathParams.map((name) => `${name}: string`)].join(', ');
      return `${next.trimEnd()}\n\n/** ${op.summary}: the statement of ${op.operationId}, with the row type it returns. */\nexport async function ${queryName}(${parameters}): Promise<never> {\n  throw new NotImplemented('${op.operationId}');\n}\n`;
    },
    fresh,
  );
}

async function scaffoldBudget(op: Operation) {
  // The house's usual count for a caller kept in memory, so the entry compiles: one statement for a read, a transaction for a change.
  const statements = op.method === 'GET' ? 1 : 5;
  await edit('test/roundTrips.test.ts', (source) => insertIntoObject(source, /^const budget: /m, `  ${op.operationId}: ${statements},\n`, 'test/roundTrips.test.ts'), '');
}

/** A change's line in the event catalog: `undefined`, which `tsc` refuses there, under what to write instead. */
async function scaffoldEvents(op: Operation) {
  const file = 'src/events/catalog.ts';
  const todo =
    `  // TODO ${op.operationId}: the events it sends, e.g. answered('<resource>.<action>', '<subject kind>', '<path parameter>') with the\n` +
    `  // contract's openapi/webhooks/<resource>.<action>.yaml and its branch of the Event and WebhookEvent unions, or noEvent('why it sends none').\n` +
    `  ${op.operationId}: undefined,\n`;
  await edit(file, (source) => insertIntoObject(source, /^export const eventCatalog/m, todo, file), '');
}

async function scaffoldOrigin(op: Operation) {
  const file = 'test/fixtures/operationOrigins.ts';
  await edit(file, (source) => insertIntoObject(source, /^export const operationOrigins/m, `  ${op.operationId}: 'addition',\n`, file), '');
}

/** The rows file whose `AreaRows<…>` names the tag, or a new one for a new tag. */
async function rowsFileOf(op: Operation, area: string): Promise<string> {
  const gatherer = await readFile(at('test/permissions/rows.ts'), 'utf8');
  for (const [, name] of gatherer.matchAll(/from '\.\/(\w+)\.rows\.js'/g)) {
    const file = `test/permissions/${name}.rows.ts`;
    if ((await readFile(at(file), 'utf8')).match(/AreaRows<([^>]*)>/)?.[1]!.includes(`'${op.tag}'`)) return file;
  }
  const file = `test/permissions/${area}.rows.ts`;
  const name = `${area}Rows`;
  await writeFile(
    at(file),
    `/** Matrix rows of the ${op.tag} operations. */\nimport { row, rowFor, type AreaRows } from './world.js';\n\nconst S = 'scope';\n\n// prettier-ignore\nexport const ${name}: AreaRows<'${op.tag}'> = {\n};\n`,
  );
  let next = withImport(gatherer, `./${area}.rows.js`, name);
  next = next.replace(/(\n\s*\/\/ Last:)/, `\n  gathered(file('${area}'), ${name}),$1`);
  await writeFile(at('test/permissions/rows.ts'), next);
  return file;
}

/** The widths of the matrix's columns under the rows files' header comment, noKey … superadminMember. */
const columnWidths = [5, 9, 9, 9, 12, 10, 10, 11, 11, 10, 9, 11, 17];

const knownParams: Record<string, string> = { teamId: 'w.team.id', orgId: 'w.org.id', userId: 'w.users.teamMember.id' };

async function scaffoldRow(op: Operation, area: string): Promise<string> {
  const file = await rowsFileOf(op, area);
  const platform = op.path.startsWith('/platform/');
  const cells: string[] = ['401', op.method === 'GET' ? "'?'" : 'S', ...Array<string>(11).fill("'?'"), platform ? "'?'" : 'S'];
  const expect = `[${cells.map((cell, index) => (index === cells.length - 1 ? cell : `${cell},`.padEnd(columnWidths[index]!))).join('')}]`;
  const body = op.exampleBody === undefined ? '' : `, body: ${JSON.stringify(op.exampleBody)}`;
  const unknown = op.pathParams.filter((name) => !knownParams[name]);
  const key = `  ${op.operationId}: ${unknown.length > 0 ? 'rowFor(' : 'row('}`;
  const head = `${key.padEnd(39)}${expect},\n`;
  const text =
    unknown.length > 0
      ? `${head}    prepareToWrite('${op.operationId}', '${file}'),\n    (w, target) => ({ path: ${pathWith(op, (name) => knownParams[name] ?? `target.${name}`)}${body} })),\n`
      : `${head}    (${op.pathParams.length > 0 ? 'w' : ''}) => ({ path: ${pathWith(op, (name) => knownParams[name]!)}${body} })),\n`;
  await edit(
    file,
    (source) => {
      let next = source;
      if (unknown.length > 0) next = withImport(next, './world.js', 'prepareToWrite');
      if (!/^const S = 'scope';/m.test(next)) next = next.replace(/\n\/\/ prettier-ignore\n/, `\nconst S = 'scope';\n\n// prettier-ignore\n`);
      return insertIntoObject(next, /^export const \w+: AreaRows</m, text, file);
    },
    '',
  );
  return file;
}

async function scaffoldTest(op: Operation): Promise<string> {
  const file = `test/${op.operationId}.test.ts`;
  if (existsSync(at(file))) return file;
  const values: Record<string, string> = { teamId: 'team.id', orgId: 'org.id', userId: 'member.user.id' };
  const unknown = op.pathParams.filter((name) => !values[name]);
  const path = `\`/v1${op.path.replace(/\{(\w+)\}/g, (_match, name: string) => `\${${values[name] ?? `item.${name}`}}`)}\``;
  const body = op.exampleBody === undefined ? '' : `, body: ${JSON.stringify(op.exampleBody)}`;
  const item =
    unknown.length > 0
      ? `    // What the path names: the skeleton makes none, so the answer is 404 until the test creates it.\n    const item = { ${unknown.map((name) => `${name}: '00000000-0000-4000-8000-000000000000'`).join(', ')} };\n`
      : '';
  const used = ['org', 'team', 'member'].filter((name) => path.includes(`${name}.`));
  const world = `    const { ${['org', 'team'].filter((name) => used.includes(name)).concat('person').join(', ')} } = await createTeamWorld(app.db);\n    const member = await person('MEMBER', 'MEMBER');\n`;
  const source = `/** ${op.method} ${op.path}: ${op.summary}. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseLabel } from './support/database.js';
import { createTeamWorld } from './support/factories.js';
import { startTestApp, type TestApp } from './support/testApp.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

describe(\`${op.operationId} (\${databaseLabel})\`, () => {
  it('${op.method} ${op.path} answers ${op.status} to a Member of the team', async () => {
${world}${item}
    const response = await app.request('${op.method}', ${path}, { key: member.key${body} });

    expect(response.status, JSON.stringify(response.body)).toBe(${op.status});
  });
});
`;
  await writeFile(at(file), source);
  return file;
}

async function main() {
  const written: string[] = [];
  for (const op of await contractOperations()) {
    const area = areaOf(op.tag);
    const handlers = at(`src/handlers/${area}.ts`);
    if (existsSync(handlers) && exportsName(await readFile(handlers, 'utf8'), op.operationId)) continue;
    const queries = at(`src/db/queries/${area}.ts`);
    const taken = existsSync(queries) && exportsName(await readFile(queries, 'utf8'), queryNameOf(op));
    const queryName = taken ? `${op.operationId}Statement` : queryNameOf(op);
    await scaffoldHandler(op, area, queryName);
    await scaffoldQuery(op, area, queryName);
    await scaffoldBudget(op);
    await scaffoldOrigin(op);
    const rows = await scaffoldRow(op, area);
    const test = await scaffoldTest(op);
    const change = op.method !== 'GET';
    if (change) await scaffoldEvents(op);
    const places: [string, string][] = [
      [`src/handlers/${area}.ts`, 'the handler: check the access and the permission it needs'],
      [`src/db/queries/${area}.ts`, `${queryName}: the statement (it answers 501 until written)`],
      ['test/roundTrips.test.ts', 'its statement budget'],
      [rows, 'its row: each ? cell'],
      ['test/fixtures/operationOrigins.ts', "'addition' ('reference' if it is one of the reference's 79)"],
      [test, 'the behaviours, one test each'],
      ...(change ? [['src/events/catalog.ts', "its events, or noEvent('why') (tsc refuses the placeholder)"] as [string, string]] : []),
    ];
    written.push(`${op.operationId} (${op.method} ${op.path}):`, ...places.map(([file, what]) => `  ${file.padEnd(36)}${what}`));
  }
  console.log(written.length > 0 ? `Scaffolded; fill in:\n${written.join('\n')}` : 'Every operation of the contract has a handler.');
}

await main();

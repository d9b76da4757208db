/**
 * `npm run stubs`: gives every operation of the contract a handler. For each operationId without
 * an export in its area's file (src/handlers/<area>.ts, by the operation's tag) it appends a stub
 * that answers 501 notImplemented, then rewrites the registry src/handlers/index.ts.
 */
import { existsSync } from 'node:fs';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const handlersDir = resolve(root, 'src/handlers');

interface OperationInfo {
  operationId: string;
  tag: string;
}

/** `Org chart` → `orgChart`, `People reviews` → `peopleReviews`. */
export const areaOf = (tag: string) =>
  tag
    .toLowerCase()
    .split(/\s+/)
    .map((word, index) => (index === 0 ? word : word[0]!.toUpperCase() + word.slice(1)))
    .join('');

async function contractOperations(): Promise<OperationInfo[]> {
  const document = JSON.parse(await readFile(resolve(root, 'generated/openapi.json'), 'utf8')) as {
    paths: Record<string, Record<string, { operationId?: string; tags?: string[] }>>;
  };
  return Object.values(document.paths).flatMap((item) =>
    Object.values(item)
      .filter((operation) => operation.operationId)
      .map((operation) => ({ operationId: operation.operationId!, tag: operation.tags![0]! })),
  );
}

const header = (area: string) =>
  `/** Handlers of the ${area} area. */\nimport { notImplemented, type Handler } from './types.js';\n`;

async function main() {
  const operations = await contractOperations();
  const areas = [...new Set(operations.map((operation) => areaOf(operation.tag)))].sort();
  let written = 0;
  for (const area of areas) {
    const file = resolve(handlersDir, `${area}.ts`);
    if (!existsSync(file)) await writeFile(file, header(area));
    const source = await readFile(file, 'utf8');
    for (const { operationId } of operations.filter((operation) => areaOf(operation.tag) === area)) {
      if (new RegExp(`export (const|async function|function) ${operationId}\\b`).test(source)) continue;
      await appendFile(file, `\nexport const ${operationId}: Handler<'${operationId}'> = notImplemented('${operationId}');\n`);
      written += 1;
    }
  }
  const registry = [
    '// Written by `npm run stubs`: every area\'s handlers, checked against the contract by `satisfies`.',
    ...areas.map((area) => `import * as ${area} from './${area}.js';`),
    "import type { HandlerMap } from './types.js';",
    '',
    `export const handlers = {\n${areas.map((area) => `  ...${area},`).join('\n')}\n} satisfies HandlerMap;`,
    '',
  ].join('\n');
  await writeFile(resolve(handlersDir, 'index.ts'), registry);
  console.log(`${written} stub(s) written; registry lists ${areas.length} areas.`);
}

await main();

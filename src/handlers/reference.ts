/**
 * Handlers of the reference area: the bundled contract and its documentation page, served as
 * generated, and the changelog as written (CHANGELOG.md of the repository; `npm run build` copies it
 * beside dist/src/, where the compiled code looks for it), so that the docs page can link it.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { AreaHandlers, Handler } from './types.js';

const generated = resolve(import.meta.dirname, '../../generated');
const contract = JSON.parse(readFileSync(resolve(generated, 'openapi.json'), 'utf8')) as Record<string, unknown>;
const docsPage = readFileSync(resolve(generated, 'docs.html'), 'utf8');
const changelog = readFileSync(resolve(import.meta.dirname, '../../CHANGELOG.md'), 'utf8');

export const getOpenApiDocument: Handler<'getOpenApiDocument'> = async () => ({ status: 200, body: contract });

export const getApiDocs: Handler<'getApiDocs'> = async () => ({ status: 200, body: docsPage });

export const getChangelog: Handler<'getChangelog'> = async () => ({ status: 200, body: changelog });

export const referenceHandlers: AreaHandlers<'Reference'> = {
  getOpenApiDocument,
  getApiDocs,
  getChangelog,
};

/** Handlers of the reference area: the bundled contract and its documentation page, served as generated. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { AreaHandlers, Handler } from './types.js';

const generated = resolve(import.meta.dirname, '../../generated');
const contract = JSON.parse(readFileSync(resolve(generated, 'openapi.json'), 'utf8')) as Record<string, unknown>;
const docsPage = readFileSync(resolve(generated, 'docs.html'), 'utf8');

export const getOpenApiDocument: Handler<'getOpenApiDocument'> = async () => ({ status: 200, body: contract });

export const getApiDocs: Handler<'getApiDocs'> = async () => ({ status: 200, body: docsPage });

export const referenceHandlers: AreaHandlers<'Reference'> = {
  getOpenApiDocument,
  getApiDocs,
};

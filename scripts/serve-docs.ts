/**
 * Serves the generated Redoc page and the bundled contract for reading in a browser:
 * http://127.0.0.1:4020/v1/docs (DOCS_PORT changes the port). The page needs no network.
 */
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { resolve } from 'node:path';

const generated = resolve(import.meta.dirname, '..', 'generated');
const port = Number(process.env.DOCS_PORT ?? 4020);
const files: Record<string, { file: string; type: string }> = {
  '/v1/docs': { file: 'docs.html', type: 'text/html; charset=utf-8' },
  '/v1/openapi.json': { file: 'openapi.json', type: 'application/json' },
  // The page links the changelog, which the server serves too.
  '/v1/changelog': { file: '../CHANGELOG.md', type: 'text/markdown; charset=utf-8' },
};

createServer(async (req, res) => {
  const path = (req.url ?? '/').split('?')[0]!;
  const target = files[path === '/' ? '/v1/docs' : path];
  if (!target) {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: try /v1/docs');
    return;
  }
  res.writeHead(200, { 'content-type': target.type }).end(await readFile(resolve(generated, target.file)));
}).listen(port, '127.0.0.1', () => {
  console.log(`API reference: http://127.0.0.1:${port}/v1/docs`);
});

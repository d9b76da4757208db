/**
 * `npm pack -w client` as a separate project sees it: the tarball holds the client and the contract's
 * types and nothing of the server, and a project that installs it type-checks and calls the live
 * server with it.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCaller } from './support/factories.js';
import { useProxiedApp } from './support/proxy.js';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '..');

const consumer = `import { createTeamOsClient, unwrap, type ResponseOf } from '@team-os/client';

declare const process: { argv: string[] };
const client = createTeamOsClient({ baseUrl: process.argv[2]!, apiKey: process.argv[3] });
const me: ResponseOf<'/me', 'get', 200> = unwrap(await client.GET('/me'));
export function neverCalled() {
  // @ts-expect-error a path the contract does not have
  return client.GET('/meself');
}
console.log(JSON.stringify({ id: me.user.id, scopes: me.scopes }));
`;

describe('the packed client', () => {
  let project: string;
  let files: string[];
  let installed: string[];
  beforeAll(async () => {
    project = await mkdtemp(join(tmpdir(), 'teamos-client-consumer-'));
    // The client is built by `npm run typecheck`; packing without scripts leaves the built files alone for tests reading them meanwhile.
    const { stdout } = await run('npm', ['pack', '-w', 'client', '--ignore-scripts', '--pack-destination', project, '--json'], { cwd: root });
    const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
    files = packed!.files.map((file) => file.path).sort();
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', join(project, packed!.filename)], { cwd: project });
    installed = (await readdir(join(project, 'node_modules'))).sort();
  }, 180_000);
  afterAll(async () => {
    if (project) await rm(project, { recursive: true, force: true });
  });

  it('installs with openapi-fetch, eventsource (the live stream) and idb-keyval (the local copy in IndexedDB) as its only dependencies', () => {
    expect(installed.filter((name) => !name.startsWith('.'))).toEqual(['@team-os', 'eventsource', 'eventsource-parser', 'idb-keyval', 'openapi-fetch', 'openapi-typescript-helpers']);
  });

  it('holds the client, the types of the contract and its README, and no server code', () => {
    expect(files).toContain('package.json');
    expect(files).toContain('README.md');
    expect(files).toContain('dist/generated/api.d.ts');
    expect(files).toContain('dist/client/src/index.js');
    expect(files).toContain('dist/client/src/index.d.ts');
    expect(files.filter((file) => !/^(package\.json|README\.md|dist\/generated\/api\.d\.ts|dist\/client\/src\/\w+\.(js|d\.ts))$/.test(file))).toEqual([]);
  });

  describe('installed in another project', () => {
    const started = useProxiedApp();

    it('type-checks against the contract and calls the server', async () => {
      await writeFile(join(project, 'consumer.ts'), consumer);
      // A browser-like project: no Node types, and the installed declarations checked too.
      const compilerOptions = { strict: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022', 'DOM'], types: [], skipLibCheck: false };
      await writeFile(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['consumer.ts'] }));
      await run(join(root, 'node_modules/.bin/tsc'), ['-p', '.'], { cwd: project });
      const { user, key } = await createCaller(started.app.db, { scopes: ['read'] });

      const { stdout } = await run(process.execPath, ['consumer.js', `${started.proxy.url}/v1`, key], { cwd: project });

      expect(JSON.parse(stdout)).toEqual({ id: user.id, scopes: ['read'] });
      expect(started.proxy.passed.map((request) => `${request.method} ${request.path} ${request.status}`)).toEqual(['GET /v1/me 200']);
      expect(started.proxy.violations).toEqual([]);
    }, 120_000);

    it('verifies a webhook through @team-os/client/webhooks once standardwebhooks is installed beside it', async () => {
      await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', 'standardwebhooks@^1.1.1'], { cwd: project });
      const secret = `whsec_${Buffer.from('a secret of 24 bytes....').toString('base64')}`;
      const body = JSON.stringify({ type: 'webhook.ping', timestamp: '2026-11-25T10:00:00.000Z', data: { orgId: 'o', teamId: null, object: { webhookId: 'w' } } });
      const at = new Date(Math.floor(Date.now() / 1000) * 1000);
      const signature = new Webhook(secret).sign('msg_1', at, body);
      const receiver = `import { verifyWebhook } from '@team-os/client/webhooks';
const event = verifyWebhook(${JSON.stringify(secret)}, { 'webhook-id': 'msg_1', 'webhook-timestamp': '${at.getTime() / 1000}', 'webhook-signature': ${JSON.stringify(signature)} }, ${JSON.stringify(body)});
if (event.type === 'webhook.ping') {
  const webhookId: string = event.data.object.webhookId;
  console.log(event.type, webhookId);
}
`;
      await writeFile(join(project, 'receiver.ts'), receiver);
      const compilerOptions = { strict: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022', 'DOM'], types: [], skipLibCheck: true };
      await writeFile(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['receiver.ts'] }));
      await run(join(root, 'node_modules/.bin/tsc'), ['-p', '.'], { cwd: project });

      const { stdout } = await run(process.execPath, ['receiver.js'], { cwd: project });

      expect(stdout.trim()).toBe('webhook.ping w');
    }, 120_000);
  });
});

/**
 * Security headers on every response: JSON answers that a browser can neither run, frame nor sniff,
 * and a documentation page whose Content-Security-Policy lets exactly its own inlined Redoc script
 * run — checked in headless Chromium with the network blocked. Without a Chromium binary
 * (`chromium`, `chromium-browser`, `google-chrome` or CHROMIUM_BIN) the browser checks are skipped
 * with a message; `.ci/run` installs Chromium, so CI runs them.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findChromium } from './browser/chromium.js';
import { inlineScriptHashes } from '../src/http/securityHeaders.js';
import { databaseLabel } from './support/database.js';
import { createCaller } from './support/factories.js';
import { send, startTestApp, type ApiResponse, type TestApp } from './support/testApp.js';

let app: TestApp;
let key: string;

beforeAll(async () => {
  app = await startTestApp({
    handlers: {
      listOrganizations: async () => {
        throw new Error('unexpected');
      },
    },
  });
  key = (await createCaller(app.db)).key;
});
afterAll(() => app.close());

const docsPage = await readFile(resolve(import.meta.dirname, '../generated/docs.html'), 'utf8');
const contract = JSON.parse(await readFile(resolve(import.meta.dirname, '../generated/openapi.json'), 'utf8')) as {
  paths: Record<string, Record<string, { summary?: string; tags?: string[] }>>;
};

function expectJsonApiHeaders(response: ApiResponse, contentType = /^application\/json/) {
  const headers = response.headers;
  expect(headers.get('content-type')).toMatch(contentType);
  expect(headers.get('x-content-type-options')).toBe('nosniff');
  expect(headers.has('x-powered-by')).toBe(false);
  expect(headers.get('content-security-policy')).toBe("default-src 'none';frame-ancestors 'none'");
  expect(headers.get('x-frame-options')).toBe('DENY');
  expect(headers.get('referrer-policy')).toBe('no-referrer');
  expect(headers.get('cross-origin-resource-policy')).toBe('same-origin');
  expect(headers.get('cross-origin-opener-policy')).toBe('same-origin');
  expect(headers.get('strict-transport-security')).toBe('max-age=31536000; includeSubDomains');
  expect(headers.get('x-permitted-cross-domain-policies')).toBe('none');
  // Headers that only steer HTML pages are left out of JSON answers.
  for (const name of ['origin-agent-cluster', 'x-dns-prefetch-control', 'x-download-options', 'x-xss-protection']) {
    expect(headers.has(name), name).toBe(false);
  }
}

/** The directives of a Content-Security-Policy header by name. */
function directives(policy: string | null): Map<string, string[]> {
  return new Map(
    (policy ?? '')
      .split(';')
      .map((directive) => directive.trim().split(/\s+/))
      .filter(([name]) => name)
      .map(([name, ...values]) => [name!, values]),
  );
}

describe(`security headers on JSON responses (${databaseLabel})`, () => {
  it('a success answer is nosniff, has no X-Powered-By and may not run, load or be framed', async () => {
    const response = await app.request('GET', '/v1/me', { key });
    expect(response.status).toBe(200);
    expectJsonApiHeaders(response);
  });

  it('so is every error: 401, 404, 405, 422 and 500', async () => {
    const answers = [
      await app.request('GET', '/v1/me'),
      await app.request('GET', '/v1/no-such-path', { key }),
      await app.request('PUT', '/v1/me', { key }),
      await app.request('GET', '/v1/me?unknown=1', { key }),
      await app.request('GET', '/v1/orgs', { key }),
    ];
    expect(answers.map((response) => response.status)).toEqual([401, 404, 405, 422, 500]);
    for (const response of answers) expectJsonApiHeaders(response);
  });

  it('so are the public contract document and the health check', async () => {
    expectJsonApiHeaders(await app.request('GET', '/v1/openapi.json'));
    expectJsonApiHeaders(await send(app.url, 'GET', '/healthz'));
  });

  it('so is the changelog, Markdown that a browser shows as text and never runs', async () => {
    const response = await app.request('GET', '/v1/changelog');
    expect(response.status).toBe(200);
    expectJsonApiHeaders(response, /^text\/markdown; charset=utf-8$/);
  });
});

describe(`security headers on the docs page (${databaseLabel})`, () => {
  it('lets exactly the inline scripts of the page run, by hash, and nothing from elsewhere', async () => {
    const response = await app.request('GET', '/v1/docs');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.has('x-powered-by')).toBe(false);
    expect(response.headers.get('x-frame-options')).toBe('DENY');

    const policy = directives(response.headers.get('content-security-policy'));
    const hashes = inlineScriptHashes(docsPage);
    expect(hashes.length).toBeGreaterThan(0);
    expect(policy.get('default-src')).toEqual(["'none'"]);
    expect(policy.get('script-src')).toEqual(hashes);
    expect(policy.get('frame-ancestors')).toEqual(["'none'"]);
    expect(policy.get('base-uri')).toEqual(["'none'"]);
    expect(policy.get('object-src')).toEqual(["'none'"]);
    for (const values of policy.values()) expect(values.join(' ')).not.toMatch(/https?:|\*|'unsafe-eval'/);
  });
});

/** The headers helmet steers, as a response has them (null: not sent). */
const helmetHeaders = (response: ApiResponse) =>
  Object.fromEntries(
    ['content-security-policy', 'cross-origin-opener-policy', 'cross-origin-resource-policy', 'origin-agent-cluster', 'referrer-policy', 'strict-transport-security',
      'x-content-type-options', 'x-dns-prefetch-control', 'x-download-options', 'x-frame-options', 'x-permitted-cross-domain-policies', 'x-xss-protection', 'x-powered-by',
    ].map((name) => [name, response.headers.get(name)]),
  );

describe(`security headers on every path that answers the docs page (${databaseLabel})`, () => {
  it('are the page\'s own, whatever the spelling the router accepts: a trailing slash, another case, a percent-encoded letter, and HEAD', async () => {
    const page = helmetHeaders(await app.request('GET', '/v1/docs'));
    for (const path of ['/v1/docs/', '/v1/DOCS', '/V1/Docs/', '/v1/%64ocs']) {
      for (const method of ['GET', 'HEAD']) {
        const response = await send(app.url, method, path);
        expect([method, path, response.status, response.headers.get('content-type'), helmetHeaders(response)]).toEqual([method, path, 200, 'text/html; charset=utf-8', page]);
      }
    }
  });

  it('are a JSON answer\'s on an error there', async () => {
    const response = await app.request('GET', '/v1/docs?unknown=1');
    expect(response.status).toBe(422);
    expectJsonApiHeaders(response);
  });
});

const chromium = findChromium();
if (!chromium) {
  console.warn('securityHeaders.test.ts: no Chromium binary (chromium, chromium-browser, google-chrome or CHROMIUM_BIN): the docs page is not checked in a browser');
}

interface Rendered {
  /** The text of the page after its scripts ran. */
  text: string;
  /** Messages the page wrote to the console, Content-Security-Policy violations included. */
  console: string[];
}

/**
 * Loads a page in headless Chromium with every host but 127.0.0.1 unresolvable (no network), lets
 * its scripts run, and returns the resulting DOM's text and the console messages.
 */
async function render(url: string): Promise<Rendered> {
  const profile = await mkdtemp(join(tmpdir(), 'teamos-chromium-'));
  try {
    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((done, fail) => {
      execFile(
        chromium!,
        [
          '--headless',
          '--no-sandbox',
          '--disable-gpu',
          '--no-first-run',
          `--user-data-dir=${profile}`,
          '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
          '--enable-logging=stderr',
          '--v=0',
          '--virtual-time-budget=15000',
          '--dump-dom',
          url,
        ],
        { timeout: 150_000, maxBuffer: 64 * 1024 * 1024 },
        (error, out, err) => (error ? fail(error) : done({ stdout: out, stderr: err })),
      );
    });
    const text = stdout
      .replace(/<(script|style|svg)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, ' ')
      .replace(/<[^>]+>/g, ' ')
      .replace(/&#x27;|&#39;/g, "'")
      .replace(/&quot;/g, '"')
      .replace(/&amp;/g, '&')
      .replace(/\s+/g, ' ');
    const consoleMessages = stderr.split(/\n(?=\[)/).filter((line) => line.includes(':CONSOLE'));
    return { text, console: consoleMessages };
  } finally {
    await rm(profile, { recursive: true, force: true });
  }
}

const tasksSummaries = Object.values(contract.paths)
  .flatMap((item) => Object.values(item))
  .filter((op) => op.tags?.includes('Tasks'))
  .map((op) => op.summary!);

describe.skipIf(!chromium)(`the docs page in headless Chromium, offline (${databaseLabel})`, () => {
  it('renders the operations of a tag with no Content-Security-Policy violation in the console', async () => {
    expect(tasksSummaries.length).toBeGreaterThan(0);
    const page = await render(`${app.url}/v1/docs#tag/Tasks`);
    for (const summary of tasksSummaries) expect(page.text).toContain(summary);
    expect(page.console.filter((message) => /Content Security Policy/i.test(message))).toEqual([]);
  }, 180_000);

  it('the check can fail: the same page under a policy without the script hashes neither renders nor stays quiet', async () => {
    const strict: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'" });
      res.end(docsPage);
    });
    await new Promise<void>((listening) => strict.listen(0, '127.0.0.1', listening));
    try {
      const page = await render(`http://127.0.0.1:${(strict.address() as AddressInfo).port}/v1/docs#tag/Tasks`);
      expect(page.text).not.toContain(tasksSummaries[0]);
      expect(page.console.some((message) => /Content Security Policy/i.test(message))).toBe(true);
    } finally {
      await new Promise((closed) => strict.close(closed));
    }
  }, 90_000);
});

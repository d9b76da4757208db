/**
 * What the README and the docs page (the contract's description, as generated/openapi.json bundles it)
 * say a newcomer can rely on, held to what the code does: a list written out twice drifts the day the
 * code's list changes.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mockOnlyRequestHeaders } from '../../scripts/mock.js';
import { allowedHeaders, exposedHeaders } from '../../src/http/cors.js';

const root = resolve(import.meta.dirname, '../..');
const readme = readFileSync(resolve(root, 'README.md'), 'utf8');
const description = (JSON.parse(readFileSync(resolve(root, 'generated/openapi.json'), 'utf8')) as { info: { description: string } }).info
  .description;

/** The README's row of a setting in the Settings table. */
const settingRow = (name: string) => readme.split('\n').find((line) => line.startsWith(`| \`${name}\` |`)) ?? '';

/** The names in a written list such as "A, B, C and D" or "`A`, `B` and `C`". */
const namesIn = (list: string) =>
  list
    .replace(/`/g, '')
    .split(/,\s*|\s+and\s+/)
    .map((name) => name.trim())
    .filter(Boolean);

/** The docs page's section under a `## ` heading. */
const section = (heading: string) => description.split(/^## /m).find((part) => part.startsWith(`${heading}\n`)) ?? '';

describe('the CORS lists a page developer reads', () => {
  const row = settingRow('CORS_ORIGINS');

  it('README names the request headers a page may send as src/http/cors.ts allows them, and Prefer as the mock’s alone', () => {
    const [, list, mockOnly] = /headers ([^;]+?), and on the mock alone Prism's ([^;]+);/.exec(row) ?? [];
    expect(namesIn(list ?? '')).toEqual(allowedHeaders);
    expect(namesIn(mockOnly ?? '')).toEqual(mockOnlyRequestHeaders);
  });

  it('README names the response headers a page may read as src/http/cors.ts exposes them', () => {
    const [, list] = /exposes ([^;]+);/.exec(row) ?? [];
    expect(namesIn(list ?? '')).toEqual(exposedHeaders);
  });

  it('the docs page names the same request and response headers', () => {
    const browsers = section('Browsers (CORS)').replace(/\s+/g, ' ');
    const [, requestList] = /the request headers (.+?), for up to 2 hours/.exec(browsers) ?? [];
    const [, responseList] = /lets the page read (.+?)\. /.exec(browsers) ?? [];
    expect(namesIn(requestList ?? '')).toEqual(allowedHeaders);
    expect(namesIn(responseList ?? '')).toEqual(exposedHeaders);
  });

  it('the docs page says the mock applies the server’s rule, as scripts/mock.ts does, instead of allowing every origin', () => {
    expect(section('Browsers (CORS)')).not.toMatch(/every\s+origin/);
    expect(section('Browsers (CORS)').replace(/\s+/g, ' ')).toContain('the mock applies the same rule');
  });
});

describe('the operations that need no key, as the contract declares them (`security: []`)', () => {
  const contract = JSON.parse(readFileSync(resolve(root, 'generated/openapi.json'), 'utf8')) as {
    paths: Record<string, Record<string, { security?: unknown[] }>>;
  };
  const keyless = Object.entries(contract.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([, operation]) => operation.security?.length === 0)
      .map(([method]) => `\`${method.toUpperCase()} ${path}\``),
  );
  const flat = (text: string) => text.replace(/\s+/g, ' ');

  it('are each named where the docs page says every request carries a key, and where it says every answer counts', () => {
    expect(keyless.length).toBeGreaterThan(0);
    for (const operation of keyless) {
      expect(flat(section('Authentication')), 'Authentication').toContain(operation);
      expect(flat(section('Rate limit')), 'Rate limit').toContain(operation);
    }
  });
});

describe('the probes during a database outage, as src/observability/probes.ts answers them', () => {
  // Liveness answers 200 whatever the database does; readiness 503 while it cannot read the migrations.
  const sentencesNaming = (text: string, probe: string) =>
    text
      .replace(/\s+/g, ' ')
      .split(/(?<=\.) /)
      .filter((sentence) => sentence.includes(probe));

  it('the docs page’s Outages section gives /healthz 200 and /readyz 503', () => {
    const outages = section('Outages');
    const healthz = sentencesNaming(outages, '`GET /healthz`');
    expect(healthz.length).toBeGreaterThan(0);
    for (const sentence of healthz) expect(sentence).toMatch(/`GET \/readyz` answers 503.*`GET \/healthz` keeps answering 200/);
  });

  it('no page says /healthz answers 503', () => {
    for (const text of [description, readme]) {
      for (const sentence of sentencesNaming(text, '/healthz')) expect(sentence).not.toMatch(/\/healthz`?[^.;]*\b503\b/);
    }
  });
});

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const page = readFileSync(resolve(import.meta.dirname, '../generated/docs.html'), 'utf8');
const tags = page.match(/<(script|link|img|iframe)\b[^>]*>/gi) ?? [];

describe('the docs page', () => {
  it('loads no script, stylesheet, font or image from the network', () => {
    expect(tags.length).toBeGreaterThan(0);
    for (const tag of tags) expect(tag).not.toMatch(/\b(src|href)\s*=\s*["']?(https?:)?\/\//i);
    expect(page).not.toMatch(/@import\s+url\(["']?https?:/i);
    // Redoc's sidebar logo is inlined by the generator instead of loaded from Redocly's CDN.
    expect(page).not.toContain('https://cdn.redoc.ly/');
  });

  it('embeds the whole bundled contract', () => {
    const contract = JSON.parse(readFileSync(resolve(import.meta.dirname, '../generated/openapi.json'), 'utf8')) as {
      paths: Record<string, unknown>;
    };
    for (const path of Object.keys(contract.paths)) expect(page).toContain(JSON.stringify(path));
  });

  it('keeps Redoc telemetry off for readers', () => {
    expect(page).toMatch(/__redoc_options = \{[^}]*"disableTelemetry":true/);
  });
});

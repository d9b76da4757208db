import { describe, expect, it } from 'vitest';
import { nameFromEmail } from '../../src/rules/accounts.js';
import { nextFreeSlug, slugify } from '../../src/rules/slug.js';

describe('slugs generated from names', () => {
  it('lowercases, folds accents and joins words with single dashes', () => {
    expect(slugify('  Predaj & Marketing — Košice ', 'team')).toBe('predaj-marketing-kosice');
  });

  it('falls back when the name has no letters or digits', () => {
    expect(slugify('★★★', 'team')).toBe('team');
  });

  it('keeps slugs short without a trailing dash', () => {
    const slug = slugify(`${'a'.repeat(59)} b`, 'team');
    expect(slug).toBe('a'.repeat(59));
  });

  it('takes the base when it is free', () => {
    expect(nextFreeSlug('sales', ['sales-2', 'marketing'])).toBe('sales');
  });

  it('appends the smallest free number when the base is taken', () => {
    expect(nextFreeSlug('sales', ['sales'])).toBe('sales-2');
    expect(nextFreeSlug('sales', ['sales', 'sales-2', 'sales-4'])).toBe('sales-3');
  });
});

describe('names of new accounts', () => {
  it('take the part of the e-mail before @, at most 200 characters', () => {
    expect(nameFromEmail('jana.mala@example.com')).toBe('jana.mala');
    expect(nameFromEmail(`"a@b"@example.com`)).toBe('"a@b"');
    expect(nameFromEmail(`${'n'.repeat(250)}@example.com`)).toHaveLength(200);
  });
});

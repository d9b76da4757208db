/**
 * Slugs generated from names: lowercase ASCII letters, digits and single dashes. Accents are folded
 * (Košice → kosice) so that names in any of the supported languages give readable slugs.
 */

const MAX_LENGTH = 60;

export function slugify(name: string, fallback: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, MAX_LENGTH)
    .replace(/^-+|-+$/g, '');
  return slug || fallback;
}

/** The first free slug for `base`: the base itself, else `base-2`, `base-3`, … (the smallest free number). */
export function nextFreeSlug(base: string, taken: Iterable<string>): string {
  const used = new Set(taken);
  if (!used.has(base)) return base;
  for (let n = 2; ; n += 1) {
    const candidate = `${base}-${n}`;
    if (!used.has(candidate)) return candidate;
  }
}

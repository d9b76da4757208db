/** Walking paginated lists, and the order they are expected in, as several test files need. */
import { expect } from 'vitest';
import type { ApiResponse, TestApp } from './testApp.js';

/** More pages than any test's walk takes: past this the list is taken to never end. */
const maxPages = 1_000;

/**
 * Every page of a list, following nextCursor until null: the items in order, and each page's size.
 * `path` may carry a query string of its own; `limit` (if given) and the cursor are appended to it.
 * Each page must be 200 and hold at most `limit` items.
 */
export async function walkPages<T = any>(
  app: TestApp,
  path: string,
  key: string,
  options: { limit?: number } = {},
): Promise<{ items: T[]; sizes: number[] }> {
  const { limit } = options;
  const items: T[] = [];
  const sizes: number[] = [];
  let cursor: string | null = null;
  do {
    const query = [limit === undefined ? [] : [`limit=${limit}`], cursor === null ? [] : [`cursor=${encodeURIComponent(cursor)}`]].flat();
    const url = query.length === 0 ? path : `${path}${path.includes('?') ? '&' : '?'}${query.join('&')}`;
    const page: ApiResponse<{ data: T[]; nextCursor: string | null }> = await app.request('GET', url, { key });
    expect(page.status, `GET ${url}`).toBe(200);
    if (limit !== undefined) expect(page.body.data.length, `GET ${url}`).toBeLessThanOrEqual(limit);
    items.push(...page.body.data);
    sizes.push(page.body.data.length);
    cursor = page.body.nextCursor;
    expect(sizes.length, `GET ${path}: the walk ends`).toBeLessThan(maxPages);
  } while (cursor !== null);
  return { items, sizes };
}

/** The ids of rows in the order lists return them: oldest first by created_at, then by id. */
export function expectedOrder(rows: { id: string; created_at: Date }[]): string[] {
  return [...rows]
    .sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((row) => row.id);
}

/**
 * Conditional requests (RFC 9110 §13): every successful read answers with a strong `ETag` (a hash of
 * the exact bytes of its body), `If-None-Match` with a current tag answers 304, and a change of one
 * resource sent with `If-Match` is applied only while the resource still has that tag — else 412
 * and nothing changes.
 *
 * Express evaluates neither on bodies written directly, and its `req.fresh` refuses a 304 whenever
 * the request says `Cache-Control: no-cache`, which Node's own fetch adds to every request with
 * `If-None-Match`; RFC 9110 §13.1.2 asks an origin server to evaluate it anyway, so it is done here.
 */
import { hash } from 'node:crypto';
import type { Operation } from 'openapi-backend';
import { FormatError, PreconditionFailed } from '../errors.js';
import type { Metrics } from '../observability/metrics.js';

/** A strong tag of an answer's text: the same text always has the same tag, and any other text another one. */
export function etagOf(body: string): string {
  return `"${hash('sha256', body, 'base64url').slice(0, 32)}"`;
}

const entityTag = /^(W\/)?"[\x21\x23-\x7e\x80-\xff]*"$/;

/** The tags of an If-Match or If-None-Match field: `*`, or a comma-separated list; undefined when malformed. */
function entityTags(header: string): '*' | string[] | undefined {
  if (header.trim() === '*') return '*';
  const tags = header.split(',').map((tag) => tag.trim()).filter((tag) => tag !== '');
  return tags.length > 0 && tags.every((tag) => entityTag.test(tag)) ? tags : undefined;
}

/**
 * Whether If-None-Match names the current tag (weak comparison, RFC 9110 §13.1.2), so that the
 * answer is 304. A malformed field is ignored, as if it were absent: the full answer is never wrong.
 */
export function noneMatchHits(header: string | undefined, tag: string): boolean {
  if (header === undefined) return false;
  const tags = entityTags(header);
  if (tags === '*') return true;
  return tags?.some((candidate) => candidate.replace(/^W\//, '') === tag) ?? false;
}

export type IfMatch = '*' | string[];

/** The condition of an If-Match field; undefined when absent. A malformed field is a format error. */
export function ifMatchOf(header: string | undefined): IfMatch | undefined {
  if (header === undefined) return undefined;
  const tags = entityTags(header);
  if (tags === undefined) {
    throw new FormatError([
      {
        origin: 'header',
        code: 'invalid_format',
        path: ['If-Match'],
        message: 'If-Match must be * or a comma-separated list of entity tags such as "abc".',
        format: 'entity-tag',
      },
    ]);
  }
  return tags;
}

/** Strong comparison (RFC 9110 §13.1.1): a weak tag never matches; `*` matches any existing resource. */
export function ifMatchHolds(condition: IfMatch, tag: string): boolean {
  return condition === '*' || condition.includes(tag);
}

/** A change goes on only while its resource has a tag the condition names: otherwise 412, counted in `counts`. */
export function requireIfMatch(condition: IfMatch, tag: string, counts: Metrics['conditional']): void {
  if (ifMatchHolds(condition, tag)) return;
  counts.preconditionFailed.inc();
  throw new PreconditionFailed();
}

/** The read that shows the resource a change acts on. */
export interface ResourceRead {
  operationId: string;
  /** The path parameters of the read, all of which the change's path has too. */
  parameters: string[];
  /** The change answers with the same record as the read, so its body's tag is the resource's new tag. */
  sameRecord: boolean;
}

/** The JSON schema an operation answers with `status`, as text, so that two answers of the same record compare equal. */
export const answerSchema = (operation: Operation, status: string) =>
  JSON.stringify((operation.responses?.[status] as { content?: Record<string, { schema?: unknown }> } | undefined)?.content?.['application/json']?.schema ?? null);

const isPage = (operation: Operation) => answerSchema(operation, '200').includes('"nextCursor"');

/** A read that answers a whole set as a file (a CSV export): a list too, not one resource. */
const isFile = (operation: Operation) => {
  const content = (operation.responses?.['200'] as { content?: Record<string, unknown> } | undefined)?.content;
  return content !== undefined && content['text/csv'] !== undefined;
};

/**
 * For each change: the read of one resource (not a list) at its own path or the nearest path
 * above it — `PATCH /tasks/{id}` acts on `GET /tasks/{id}`, a rating `PUT
 * /meetings/{id}/ratings/me` on `GET /meetings/{id}`; the search stops at a list (or a CSV file of one). A change with no
 * such read takes no If-Match.
 */
export function resourceReads(operations: Operation[]): Map<string, ResourceRead> {
  const reads = new Map(operations.filter((op) => op.method === 'get').map((op) => [op.path, op]));
  const found = new Map<string, ResourceRead>();
  for (const change of operations.filter((op) => op.method !== 'get')) {
    const segments = change.path.split('/');
    for (let length = segments.length; length > 1; length -= 1) {
      const read = reads.get(segments.slice(0, length).join('/'));
      if (!read) continue;
      // A change inside a list (a new task, a member's role) is not a change of the resource above it.
      if (isPage(read) || isFile(read)) break;
      const parameters = [...read.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
      const answer = Object.keys(change.responses ?? {}).find((status) => status.startsWith('2'));
      const sameRecord = answer !== undefined && answer !== '204' && answerSchema(change, answer) === answerSchema(read, '200');
      found.set(change.operationId!, { operationId: read.operationId!, parameters, sameRecord });
      break;
    }
  }
  return found;
}

/**
 * The URL of a record's own read, answered as `Location` by the create that made it. Only a path of
 * the contract with a `GET` is accepted, and its parameters by name, so a Location cannot name a URL
 * that does not answer the record.
 */
import type { paths } from '../../generated/api.js';

/** The contract's paths that answer a `GET`. */
export type ReadPath = { [P in keyof paths]: paths[P] extends { get: object } ? P : never }[keyof paths];

type ParameterNames<P extends string> = P extends `${string}{${infer Name}}${infer Rest}` ? Name | ParameterNames<Rest> : never;

/** `/v1` and `path` with its parameters filled in: `locationOf('/tasks/{id}', { id })` → `/v1/tasks/…`. */
export function locationOf<P extends ReadPath>(path: P, parameters: Record<ParameterNames<P>, string>): string {
  const values = parameters as Record<string, string>;
  return `/v1${path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(values[name]!))}`;
}

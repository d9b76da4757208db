import type { paths } from '../../generated/api.js';

type JsonOk<Operation> = Operation extends { responses: { 200: { content: { 'application/json': infer Body } } } } ? Body : never;

/** The body of a `GET` of `Path`'s 200 answer. */
export type PageOf<Path extends keyof paths> = JsonOk<paths[Path]['get']>;

/** Every path whose `GET` answers a list: `{ data: [...], nextCursor }`. */
export type ListPath = {
  [Path in keyof paths]: paths[Path] extends { get: object } ? (PageOf<Path> extends { data: unknown[]; nextCursor: unknown } ? Path : never) : never;
}[keyof paths];

/** One item of `Path`'s list. */
export type ItemOf<Path extends ListPath> = PageOf<Path> extends { data: (infer Item)[] } ? Item : never;

type Method = 'get' | 'put' | 'post' | 'delete' | 'patch';

/** The statuses the contract declares for `method` on `Path`. */
export type StatusOf<Path extends keyof paths, M extends Method> = paths[Path][M] extends { responses: infer Responses } ? keyof Responses : never;

/** The body of one declared answer: `ResponseOf<'/tasks/{id}', 'get', 200>` is a task; an undeclared status does not compile. */
export type ResponseOf<Path extends keyof paths, M extends Method, Status extends StatusOf<Path, M>> = paths[Path][M] extends {
  responses: Record<Status, infer Response>;
}
  ? Response extends { content: { 'application/json': infer Body } }
    ? Body
    : undefined
  : never;

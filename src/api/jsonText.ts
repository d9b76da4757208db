/**
 * A response body that is already the contract's JSON, written by PostgreSQL (src/db/json.ts): the
 * router sends its text as it is instead of serialising an object. `Body` is the type the text
 * holds, so a handler can return it only where the contract declares that body.
 */
export class JsonText<Body> {
  declare private readonly body: Body;
  /** The text's entity tag, once the router has hashed it (src/http/router.ts): a text answered again is not hashed again. */
  tag: string | undefined;
  constructor(readonly text: string) {}
}

/** The JSON of a body, whichever form the handler gave it in. */
export const bodyText = (body: unknown): string => (body instanceof JsonText ? body.text : JSON.stringify(body));

/** The id of a record already written as JSON text, for its `Location`. */
export const idOf = (record: JsonText<{ id: string }>): string => (JSON.parse(record.text) as { id: string }).id;

/** The list envelope `{ data, nextCursor }` around records already written as JSON text. */
export const pageText = <Item>(page: { records: string; nextCursor: string | null }) =>
  new JsonText<{ data: Item[]; nextCursor: string | null }>(`{"data":[${page.records}],"nextCursor":${JSON.stringify(page.nextCursor)}}`);

/**
 * Type tests of the typed client, checked by `tsc --noEmit` (npm run typecheck) and never run: each
 * `@ts-expect-error` line must fail to compile, or the check fails because the directive is unused.
 */
import { createTeamOsClient, type ResponseOf, type WebhookEvent, type WebhookEventOf, type WebhookEventType } from '../client/src/index.js';

const client = createTeamOsClient({ baseUrl: 'http://127.0.0.1:4010/v1', apiKey: 'ak_example' });
const id = '0d0d0000-0000-4000-8000-000000000001';

export async function compiles() {
  const { data } = await client.GET('/tasks/{id}', { params: { path: { id } } });
  const title: string | undefined = data?.title;
  await client.PATCH('/tasks/{id}', { params: { path: { id }, header: { 'If-Match': client.etagOf(data) } }, body: { completed: true } });
  for await (const task of client.pages('/teams/{teamId}/tasks', { params: { path: { teamId: id }, query: { completed: false } } })) {
    const due: string | null = task.dueDate;
    void due;
  }
  for await (const organization of client.pages('/orgs')) void organization.name;
  const ok: ResponseOf<'/tasks/{id}', 'get', 200> = data!;
  return [title, ok];
}

/** `true` only when A and B are the same type; a wrong `true` does not compile. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** `etagOf` gives a tag or throws, never `undefined`: openapi-fetch drops an undefined If-Match and the change would go unguarded. */
export const etagIsAlwaysATag: Same<ReturnType<typeof client.etagOf>, string> = true;
/** The contract's WebhookEvent is the event of every type of its `webhooks` section, and nothing else. */
export const webhookEventIsEveryEvent: Same<WebhookEvent, { [Type in WebhookEventType]: WebhookEventOf<Type> }[WebhookEventType]> = true;

export async function doesNotCompile(event: WebhookEvent) {
  // @ts-expect-error a path the contract does not have
  await client.GET('/task/{id}', { params: { path: { id } } });
  // @ts-expect-error a missing path parameter
  await client.GET('/tasks/{id}', { params: { path: {} } });
  // @ts-expect-error a body field the contract does not have
  await client.PATCH('/tasks/{id}', { params: { path: { id } }, body: { titel: 'Renew the customs bond' } });
  // @ts-expect-error a body field of the wrong type
  await client.PATCH('/tasks/{id}', { params: { path: { id } }, body: { completed: 'yes' } });
  // @ts-expect-error a status the contract does not declare for the operation
  const teapot: ResponseOf<'/tasks/{id}', 'get', 418> = undefined as never;
  // @ts-expect-error a path that answers no list cannot be paged
  client.pages('/tasks/{id}', { params: { path: { id } } });
  // @ts-expect-error a query parameter the list does not have
  client.pages('/teams/{teamId}/tasks', { params: { path: { teamId: id }, query: { done: true } } });
  if (event.type === 'task.created') {
    const title: string = event.data.object.title;
    // @ts-expect-error a task event's object is a task
    const quarter: string = event.data.object.quarter;
    return [title, quarter, teapot];
  }
  return [teapot];
}

/**
 * The demo's records that only the docs page's samples need, beyond Northwind's teams and their
 * content: the accounts two samples add by e-mail, the platform's other organization, a key for the
 * operator to revoke, the organization's webhook with a failed delivery of the log's one event, and
 * the platform's AI provider and prompt, and last the organization's export, written as a server's
 * worker writes it (so it holds every record above). Each carries the id its sample names (sampleIds.ts), and
 * every instant lies between the organization's set-up and now, as the rest of the demo's do.
 */
import type { Transaction } from 'kysely';
import { pino } from 'pino';
import { generateKey } from '../../auth/apiKeys.js';
import type { SecretBox } from '../../auth/secrets.js';
import type { Database } from '../../db/database.js';
import { insertEvents } from '../../db/queries/events.js';
import { newWebhookSecret } from '../../handlers/webhooks.js';
import { keyTail } from '../../records/platform.js';
import { toTask } from '../../records/tasks.js';
import { addMinutes } from '../../time.js';
import { eventText } from '../../events/outbox.js';
import { runDueExports } from '../../exports/worker.js';
import { SAMPLE_IDS } from './sampleIds.js';

const YEAR_MS = 365 * 24 * 60 * 60 * 1000;

export async function seedSampleRecords(db: Transaction<Database>, context: { origin: Date; now: Date; secrets: SecretBox }): Promise<void> {
  const { origin, secrets } = context;
  const afterOrigin = (minutes: number) => addMinutes(origin, minutes);

  // The accounts the samples add by e-mail: a consultant to the organization, an Owner to a new one.
  await db
    .insertInto('users')
    .values({ email: 'tomas.varga@consultants.example', name: 'Tomáš Varga (consultant)', system_role: 'USER', created_at: afterOrigin(30 * 24 * 60) })
    .execute();
  const tatraOwner = await db
    .insertInto('users')
    .values({ email: 'marek.kral@tatra.example', name: 'Marek Kráľ', timezone: 'Europe/Prague', system_role: 'USER', created_at: afterOrigin(60 * 24 * 60) })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db
    .insertInto('organizations')
    .values({
      id: SAMPLE_IDS.otherOrganization,
      name: 'Tatra Outfitters',
      slug: 'tatra-outfitters',
      timezone: 'Europe/Prague',
      default_locale: 'sk',
      created_at: afterOrigin(60 * 24 * 60 + 5),
    })
    .execute();
  await db
    .insertInto('organization_members')
    .values({ org_id: SAMPLE_IDS.otherOrganization, user_id: tatraOwner.id, role: 'OWNER', joined_at: afterOrigin(60 * 24 * 60 + 6) })
    .execute();

  // A key of the Owner's that no one holds any more; its secret is thrown away at once.
  const oldKey = generateKey();
  await db
    .insertInto('api_keys')
    .values({
      id: SAMPLE_IDS.apiKey,
      user_id: SAMPLE_IDS.owner,
      name: 'Old laptop',
      prefix: oldKey.prefix,
      key_hash: oldKey.hash,
      scopes: ['write'],
      expires_at: new Date(afterOrigin(24 * 60).getTime() + YEAR_MS),
      created_at: afterOrigin(24 * 60),
    })
    .execute();

  // The log's event of the to-do the samples name, and the webhook's failed delivery of it. The
  // webhook is paused, so that `make run` sends nothing to its address, which does not resolve.
  const task = await db.selectFrom('tasks').selectAll().where('id', '=', SAMPLE_IDS.task).executeTakeFirstOrThrow();
  const webhookAt = afterOrigin(2 * 24 * 60);
  await db
    .insertInto('webhook_subscriptions')
    .values({
      id: SAMPLE_IDS.webhook,
      org_id: SAMPLE_IDS.organization,
      url: 'https://hooks.northwind.example/teamos/todos',
      events: ['task.created', 'task.updated', 'task.deleted'],
      description: 'Mirrors to-dos on the warehouse planning board',
      is_active: false,
      secret: secrets.seal(newWebhookSecret()),
      created_at: webhookAt,
      updated_at: task.created_at,
    })
    .execute();
  const event = eventText(SAMPLE_IDS.event, 'task.created', task.created_at, { orgId: SAMPLE_IDS.organization, teamId: task.team_id, object: toTask(task) });
  await insertEvents(db, [{ id: SAMPLE_IDS.event, orgId: SAMPLE_IDS.organization, teamId: task.team_id, type: 'task.created', event }], task.created_at);
  await db
    .insertInto('webhook_deliveries')
    .values({ id: SAMPLE_IDS.delivery, event_id: SAMPLE_IDS.event, subscription_id: SAMPLE_IDS.webhook, state: 'FAILED', attempt_count: 1, next_attempt_at: null, created_at: task.created_at })
    .execute();
  await db
    .insertInto('webhook_attempts')
    .values({
      delivery_id: SAMPLE_IDS.delivery,
      attempted_at: new Date(task.created_at.getTime() + 1_000),
      status_code: null,
      latency_ms: 12,
      error: 'getaddrinfo ENOTFOUND hooks.northwind.example',
      response_body: null,
    })
    .execute();

  // The platform's AI provider (its key a stand-in: nothing calls it) and the prompt of to-do titles.
  const providerKey = 'sk-demo-0000-not-a-real-key';
  const provider = await db
    .insertInto('ai_providers')
    .values({
      type: 'OPENAI',
      api_key_encrypted: secrets.seal(providerKey),
      api_key_last4: keyTail(providerKey),
      default_model: 'gpt-4.1-mini',
      created_at: afterOrigin(10),
      updated_at: afterOrigin(10),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db
    .insertInto('ai_prompts')
    .values({
      input_type: 'TODO_TITLE',
      system_prompt: 'Rewrite the to-do as one short action that starts with a verb.',
      provider_id: provider.id,
      created_at: afterOrigin(11),
      updated_at: afterOrigin(11),
    })
    .execute();

  // Last, so that it holds everything above: the organization's export, started and completed an hour
  // before now by the worker's own code (its statements join this transaction).
  const exportedAt = new Date(context.now.getTime() - 60 * 60 * 1000);
  await db.insertInto('org_exports').values({ id: SAMPLE_IDS.export, org_id: SAMPLE_IDS.organization, created_at: exportedAt }).execute();
  await runDueExports({ db, logger: pino({ level: 'silent' }), now: () => exportedAt });
}

/** Queries of platform administration: names and counts only, never organization content. */
import { sql, type Kysely, type NotNull, type Transaction } from 'kysely';
import type {
  AiInputType,
  AiProviderType,
  Database,
  Locale,
  NewAiPrompt,
  NewAiProvider,
  NewOrganization,
  NewUser,
  OrganizationRole,
  OrganizationRow,
  OrganizationStatus,
  UserRow,
} from '../database.js';
import { nextFreeSlug, slugify } from '../../rules/slug.js';
import { jsonRecord, type JsonShape } from '../json.js';
import { insertEventsOfRows, type BulkStamp } from './events.js';
import { preparedJsonPages } from '../pagination.js';

type Db = Kysely<Database> | Transaction<Database>;

/** `count(*)` is a bigint, which the drivers hand over as text, number or bigint. */
type Count = number | string | bigint;

export type PlatformUserRow = Pick<UserRow, 'id' | 'email' | 'name' | 'system_role' | 'created_at'> & {
  org_count: Count;
  active_api_keys: Count;
};

export type PlatformOrganizationRow = Pick<OrganizationRow, 'id' | 'name' | 'slug' | 'status' | 'created_at'> & {
  members: Count;
  teams: Count;
};

const platformUserRows = (db: Db, { now }: { now: Date }) =>
  db.selectFrom('users').select((eb) => [
    'users.id',
    'users.email',
    'users.name',
    'users.system_role',
    'users.created_at',
    eb
      .selectFrom('organization_members')
      .whereRef('organization_members.user_id', '=', 'users.id')
      .select((count) => count.fn.countAll<string>().as('n'))
      .as('org_count'),
    eb
      .selectFrom('api_keys')
      .whereRef('api_keys.user_id', '=', 'users.id')
      .where('api_keys.revoked_at', 'is', null)
      .where('api_keys.expires_at', '>', now)
      .select((count) => count.fn.countAll<string>().as('n'))
      .as('active_api_keys'),
  ]);

type PlatformUserPageRow = Awaited<ReturnType<ReturnType<typeof platformUserRows>['executeTakeFirstOrThrow']>>;

/**
 * All accounts, oldest first, with how many organizations they belong to and how many keys still work
 * at `now`, written as JSON by `shape` (given by the handler).
 */
export function platformUserPages<R>(shape: JsonShape<PlatformUserPageRow, R>) {
  const pages = preparedJsonPages(
    platformUserRows,
    [
      { column: 'users.created_at', direction: 'asc', type: 'instant' },
      { column: 'users.id', direction: 'asc', type: 'string' },
    ],
    shape,
  );
  return (db: Db, page: { limit: number; cursor?: string | undefined }, now: Date) => pages(db, { now }, page);
}

export async function userExists(db: Kysely<Database>, id: string): Promise<boolean> {
  return (await db.selectFrom('users').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

async function insertUser(db: Kysely<Database>, user: NewUser): Promise<string> {
  return (await db.insertInto('users').values(user).returning('id').executeTakeFirstOrThrow()).id;
}

// ---------------------------------------------------------------------------------------------------
// Organizations

/** Organizations with their numbers of members and teams, counted in the same query. */
function platformOrganizations(db: Db) {
  return db
    .selectFrom('organizations')
    .select((eb) => [
      'organizations.id',
      'organizations.name',
      'organizations.slug',
      'organizations.status',
      'organizations.created_at',
      eb
        .selectFrom('organization_members')
        .whereRef('organization_members.org_id', '=', 'organizations.id')
        .select((count) => count.fn.countAll<string>().as('n'))
        .as('members'),
      eb
        .selectFrom('teams')
        .whereRef('teams.org_id', '=', 'organizations.id')
        .select((count) => count.fn.countAll<string>().as('n'))
        .as('teams'),
    ])
    .$narrowType<{ members: NotNull; teams: NotNull }>();
}

/** All organizations, oldest first, written as JSON by `shape` (given by the handler). */
export function platformOrganizationPages<R>(shape: JsonShape<PlatformOrganizationRow, R>) {
  const pages = preparedJsonPages(
    (db: Db) => platformOrganizations(db),
    [
      { column: 'organizations.created_at', direction: 'asc', type: 'instant' },
      { column: 'organizations.id', direction: 'asc', type: 'string' },
    ],
    shape,
  );
  return (db: Db, page: { limit: number; cursor?: string | undefined }) => pages(db, {}, page);
}

export function findOrganization(db: Kysely<Database>, id: string) {
  return platformOrganizations(db).where('organizations.id', '=', id).executeTakeFirst();
}

/** Slugs already taken by `base` and its numbered forms (`base-2`, `base-3`, …). */
async function takenOrganizationSlugs(db: Kysely<Database>, base: string): Promise<string[]> {
  // A slug holds only [a-z0-9-], so it is safe inside the pattern.
  const rows = await db
    .selectFrom('organizations')
    .select('slug')
    .where((eb) => eb.or([eb('slug', '=', base), eb('slug', '~', `^${base}-[0-9]+$`)]))
    .execute();
  return rows.map((row) => row.slug);
}

function insertOrganization(db: Kysely<Database>, organization: NewOrganization) {
  return db
    .insertInto('organizations')
    .values(organization)
    .returning(['id', 'name', 'slug', 'status', 'created_at'])
    .executeTakeFirstOrThrow();
}

async function insertOwner(db: Kysely<Database>, orgId: string, userId: string): Promise<void> {
  await db.insertInto('organization_members').values({ org_id: orgId, user_id: userId, role: 'OWNER' }).execute();
}

/**
 * A new organization with its first Owner, inside the caller's transaction: the first free slug made
 * from its name, and the owner's account when it is given as one to create. Shared by
 * `POST /platform/orgs` and the operator command line. A unique violation means another writer took
 * the slug or the e-mail in the meantime.
 */
export async function createOrganizationWithOwner(
  trx: Transaction<Database>,
  organization: { name: string; timezone: string; defaultLocale: Locale },
  owner: { id: string } | { account: NewUser },
) {
  const base = slugify(organization.name, 'organization');
  const created = await insertOrganization(trx, {
    name: organization.name,
    slug: nextFreeSlug(base, await takenOrganizationSlugs(trx, base)),
    timezone: organization.timezone,
    default_locale: organization.defaultLocale,
  });
  const ownerId = 'id' in owner ? owner.id : await insertUser(trx, owner.account);
  await insertOwner(trx, created.id, ownerId);
  return created;
}

/**
 * Writes only when the status differs, so setting the current status changes nothing. A change is one
 * of what the organization's GET answers, so the statement writes its `organization.updated` too,
 * `shape` writing the organization with the role `OWNER`: the platform acts for the organization with
 * an Owner's standing, and every member's view of the event carries their own role instead.
 */
export async function setOrganizationStatus<R>(
  db: Kysely<Database>,
  id: string,
  status: OrganizationStatus,
  shape: JsonShape<OrganizationRow & { role: OrganizationRole }, R>,
  stamp: BulkStamp,
): Promise<void> {
  await sql`
    with changed as (update organizations set status = ${status} where id = ${id} and status <> ${status} returning *),
    updated as (select x.id as org_id, null::text as team_id, ${jsonRecord(shape, 'x')} as object from (select changed.*, 'OWNER' as role from changed) x)
    ${insertEventsOfRows('updated', 'organization.updated', stamp)}
  `.execute(db);
}

// ---------------------------------------------------------------------------------------------------
// API keys

/** Every key of one account, newest first; never the hash. */
export function listApiKeysOfUser(db: Kysely<Database>, userId: string) {
  return db
    .selectFrom('api_keys')
    .select(['id', 'name', 'prefix', 'scopes', 'expires_at', 'revoked_at', 'last_used_at', 'created_at'])
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/** Revokes a key that is still active; whether it did. A revoked or expired key keeps its state. */
export async function revokeApiKey(db: Kysely<Database>, id: string, now: Date): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function apiKeyExists(db: Kysely<Database>, id: string): Promise<boolean> {
  return (await db.selectFrom('api_keys').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

// ---------------------------------------------------------------------------------------------------
// AI settings

const providerColumns = ['id', 'type', 'api_key_last4', 'default_model', 'is_active', 'created_at', 'updated_at'] as const;

/** Configured providers in the order they were added; never the sealed key. */
export function listAiProviders(db: Kysely<Database>) {
  return db.selectFrom('ai_providers').select(providerColumns).orderBy('created_at').orderBy('id').execute();
}

/** Creates the provider (enabled), or replaces its key and default model and keeps whether it is enabled. */
export function saveAiProvider(db: Kysely<Database>, provider: Omit<NewAiProvider, 'is_active'>) {
  return db
    .insertInto('ai_providers')
    .values(provider)
    .onConflict((conflict) =>
      conflict.column('type').doUpdateSet((eb) => ({
        api_key_encrypted: eb.ref('excluded.api_key_encrypted'),
        api_key_last4: eb.ref('excluded.api_key_last4'),
        default_model: eb.ref('excluded.default_model'),
        updated_at: sql`now()`,
      })),
    )
    .returning(providerColumns)
    .executeTakeFirstOrThrow();
}

export function setAiProviderActive(db: Kysely<Database>, type: AiProviderType, isActive: boolean) {
  return db
    .updateTable('ai_providers')
    .set({ is_active: isActive, updated_at: sql`now()` })
    .where('type', '=', type)
    .returning(providerColumns)
    .executeTakeFirst();
}

/**
 * Every provider in the order they were added, locked until the transaction ends: `share` keeps them
 * from being deleted or changed, `update` also from being locked by others. Always all of them and in
 * this order, so that two transactions never wait for each other's locks (a deadlock).
 */
export function lockAiProviders(db: Kysely<Database>, mode: 'share' | 'update') {
  const query = db.selectFrom('ai_providers').select(['id', 'type', 'is_active']).orderBy('created_at').orderBy('id');
  return (mode === 'share' ? query.forShare() : query.forUpdate()).execute();
}

/** The first enabled provider of a list in the order they were added, or null. */
export const firstEnabled = (providers: { id: string; is_active: boolean }[]): string | null =>
  providers.find((provider) => provider.is_active)?.id ?? null;

/**
 * Deletes the provider after moving the prompts that used it to the first enabled provider that
 * remains (or to none). A moved prompt loses its `modelOverride`: it named a model of the deleted
 * provider, which the other provider would not know. The prompts move first: once the provider is
 * gone, the foreign key has already set their provider to null and which prompts used it is lost.
 * Whether it existed.
 */
export async function deleteAiProvider(trx: Kysely<Database>, type: AiProviderType): Promise<boolean> {
  const providers = await lockAiProviders(trx, 'update');
  const provider = providers.find((candidate) => candidate.type === type);
  if (!provider) return false;
  await trx
    .updateTable('ai_prompts')
    .set({ provider_id: firstEnabled(providers.filter((other) => other !== provider)), model_override: null, updated_at: sql`now()` })
    .where('provider_id', '=', provider.id)
    .execute();
  await trx.deleteFrom('ai_providers').where('id', '=', provider.id).execute();
  return true;
}

/** The place of each input type in the contract's AiInputType enum: the order of the prompt list. */
const inputTypeOrder: Record<AiInputType, number> = {
  TODO_TITLE: 0,
  ISSUE_TITLE: 1,
  ISSUE_DESCRIPTION: 2,
  ROCK_TITLE: 3,
  ROCK_DESCRIPTION: 4,
  MEASURABLE_TITLE: 5,
  HEADLINE: 6,
  CASCADING_MESSAGE: 7,
  VTO_CONTENT: 8,
};

/** The custom prompts (at most one per input type), ordered by input type. */
export async function listAiPrompts(db: Kysely<Database>) {
  const rows = await db.selectFrom('ai_prompts').selectAll().execute();
  return rows.sort((a, b) => inputTypeOrder[a.input_type] - inputTypeOrder[b.input_type]);
}

/** Creates or replaces the prompt of its input type; a saved prompt is active. */
export function saveAiPrompt(db: Kysely<Database>, prompt: Omit<NewAiPrompt, 'is_active'>) {
  return db
    .insertInto('ai_prompts')
    .values({ ...prompt, is_active: true })
    .onConflict((conflict) =>
      conflict.column('input_type').doUpdateSet((eb) => ({
        system_prompt: eb.ref('excluded.system_prompt'),
        provider_id: eb.ref('excluded.provider_id'),
        model_override: eb.ref('excluded.model_override'),
        is_active: true,
        updated_at: sql`now()`,
      })),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Whether there was a prompt to delete. */
export async function deleteAiPrompt(db: Kysely<Database>, inputType: AiInputType): Promise<boolean> {
  const result = await db.deleteFrom('ai_prompts').where('input_type', '=', inputType).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

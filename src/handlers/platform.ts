/** Handlers of the platform area. */
import argon2 from 'argon2';
import type { Schemas } from '../api/operations.js';
import type { Locale, NewUser } from '../db/database.js';
import {
  apiKeyExists,
  createOrganizationWithOwner,
  deleteAiPrompt,
  deleteAiProvider,
  findOrganization,
  firstEnabled,
  listAiPrompts,
  listAiProviders,
  listApiKeysOfUser,
  lockAiProviders,
  platformOrganizationPages,
  platformUserPages,
  revokeApiKey,
  saveAiPrompt,
  saveAiProvider,
  setAiProviderActive,
  setOrganizationStatus,
  userExists,
} from '../db/queries/platform.js';
import { findUserByEmail } from '../db/queries/users.js';
import { pageLimit } from '../db/pagination.js';
import { NotFound, RuleViolation } from '../errors.js';
import { organizationJson } from '../records/organizations.js';
import { keyTail, platformOrganizationJson, platformUserJson, toAiPrompt, toAiProvider, toApiKeyInfo, toPlatformOrganization } from '../records/platform.js';
import { pageText } from '../api/jsonText.js';
import { nameFromEmail } from '../rules/accounts.js';
import { storedTimeZone } from './shared.js';
import type { AreaHandlers, Handler } from './types.js';
import { inTransaction } from '../db/transaction.js';

// ---------------------------------------------------------------------------------------------------
// Organizations

const organizationPages = platformOrganizationPages(platformOrganizationJson);

export const listPlatformOrganizations: Handler<'listPlatformOrganizations'> = async ({ query }, { db }) => {
  const page = await organizationPages(db, { limit: pageLimit(query.limit), cursor: query.cursor });
  return { status: 200, body: pageText(page) };
};

/** A concurrent request may take the chosen slug (or create the owner's account) first; then the whole creation runs again. */
const CREATE_ATTEMPTS = 5;

const isUniqueViolation = (error: unknown): boolean => (error as { code?: unknown } | null)?.code === '23505';

/** The account to create for an owner whose e-mail is unknown; its password only as an argon2id hash. */
async function newOwnerAccount(
  owner: Schemas['CreatePlatformOrganizationRequest']['owner'],
  locale: Locale,
  hashPassword: (password: string) => Promise<string>,
): Promise<NewUser> {
  const externalOnly = owner.externalOnly === true;
  if ((owner.password !== undefined) === externalOnly) {
    throw new RuleViolation('A new owner needs exactly one way to sign in: either a password or externalOnly true.');
  }
  return {
    email: owner.email,
    name: owner.name || nameFromEmail(owner.email),
    locale,
    password_hash: owner.password === undefined ? null : await hashPassword(owner.password),
    external_only: externalOnly,
  };
}

export const createPlatformOrganization: Handler<'createPlatformOrganization'> = async ({ body }, { db }) => {
  const timezone = storedTimeZone(body.timezone);
  // Hashing is slow on purpose: done at most once, and outside the transaction.
  let hashed: Promise<string> | undefined;
  const hashPassword = (password: string) => (hashed ??= argon2.hash(password, { type: argon2.argon2id }));

  for (let attempt = 1; ; attempt += 1) {
    const owner: { id: string } | { account: NewUser } =
      (await findUserByEmail(db, body.owner.email)) ?? { account: await newOwnerAccount(body.owner, body.defaultLocale, hashPassword) };
    try {
      const organization = await inTransaction(db, (trx) =>
        createOrganizationWithOwner(trx, { name: body.name, timezone, defaultLocale: body.defaultLocale }, owner),
      );
      return { status: 201, body: toPlatformOrganization({ ...organization, members: 1, teams: 0 }) };
    } catch (error) {
      if (attempt < CREATE_ATTEMPTS && isUniqueViolation(error)) continue;
      throw error;
    }
  }
};

/** A new status is a change of the organization its members read: it sends their `organization.updated`. */
export const updatePlatformOrganization: Handler<'updatePlatformOrganization'> = async ({ params, body }, { db, now, traceparent }) => {
  const organization = await inTransaction(db, async (trx) => {
    await setOrganizationStatus(trx, params.id, body.status, organizationJson, { at: now(), traceparent });
    return findOrganization(trx, params.id);
  });
  if (!organization) throw new NotFound();
  return { status: 200, body: toPlatformOrganization(organization) };
};

// ---------------------------------------------------------------------------------------------------
// Accounts and their keys

const userPages = platformUserPages(platformUserJson);

export const listPlatformUsers: Handler<'listPlatformUsers'> = async ({ query }, { db, now }) => {
  const page = await userPages(db, { limit: pageLimit(query.limit), cursor: query.cursor }, now());
  return { status: 200, body: pageText(page) };
};

export const listPlatformUserApiKeys: Handler<'listPlatformUserApiKeys'> = async ({ params }, { db, now }) => {
  if (!(await userExists(db, params.id))) throw new NotFound();
  const keys = await listApiKeysOfUser(db, params.id);
  const at = now();
  return { status: 200, body: { data: keys.map((key) => toApiKeyInfo(key, at)), nextCursor: null } };
};

export const revokePlatformApiKey: Handler<'revokePlatformApiKey'> = async ({ params }, { db, now }) => {
  if (!(await revokeApiKey(db, params.id, now())) && !(await apiKeyExists(db, params.id))) throw new NotFound();
  return { status: 204, body: undefined };
};

// ---------------------------------------------------------------------------------------------------
// AI settings

export const getPlatformAiConfig: Handler<'getPlatformAiConfig'> = async (_request, { db }) => {
  const [providers, prompts] = await Promise.all([listAiProviders(db), listAiPrompts(db)]);
  return { status: 200, body: { providers: providers.map(toAiProvider), prompts: prompts.map(toAiPrompt) } };
};

export const putPlatformAiProvider: Handler<'putPlatformAiProvider'> = async ({ params, body }, { db, secrets }) => {
  const provider = await saveAiProvider(db, {
    type: params.type,
    api_key_encrypted: secrets.seal(body.apiKey),
    api_key_last4: keyTail(body.apiKey),
    default_model: body.defaultModel,
  });
  return { status: 200, body: toAiProvider(provider) };
};

export const updatePlatformAiProvider: Handler<'updatePlatformAiProvider'> = async ({ params, body }, { db }) => {
  const provider = await setAiProviderActive(db, params.type, body.isActive);
  if (!provider) throw new NotFound();
  return { status: 200, body: toAiProvider(provider) };
};

export const deletePlatformAiProvider: Handler<'deletePlatformAiProvider'> = async ({ params }, { db }) => {
  const deleted = await inTransaction(db, (trx) => deleteAiProvider(trx, params.type));
  if (!deleted) throw new NotFound();
  return { status: 204, body: undefined };
};

export const putPlatformAiPrompt: Handler<'putPlatformAiPrompt'> = async ({ params, body }, { db }) => {
  const prompt = await inTransaction(db, async (trx) => {
    // Locked so that the provider stored with the prompt cannot be deleted before the prompt is saved.
    const providers = await lockAiProviders(trx, 'share');
    let providerId: string | null = null;
    if (body.providerId != null) {
      const named = providers.find((provider) => provider.id === body.providerId);
      if (!named) throw new RuleViolation('providerId is not a configured AI provider.');
      if (named.is_active) providerId = named.id;
    }
    return saveAiPrompt(trx, {
      input_type: params.inputType,
      system_prompt: body.systemPrompt,
      provider_id: providerId ?? firstEnabled(providers),
      model_override: body.modelOverride || null,
    });
  });
  return { status: 200, body: toAiPrompt(prompt) };
};

export const deletePlatformAiPrompt: Handler<'deletePlatformAiPrompt'> = async ({ params }, { db }) => {
  if (!(await deleteAiPrompt(db, params.inputType))) throw new NotFound();
  return { status: 204, body: undefined };
};

export const platformHandlers: AreaHandlers<'Platform'> = {
  listPlatformOrganizations,
  createPlatformOrganization,
  updatePlatformOrganization,
  listPlatformUsers,
  listPlatformUserApiKeys,
  revokePlatformApiKey,
  getPlatformAiConfig,
  putPlatformAiProvider,
  updatePlatformAiProvider,
  deletePlatformAiProvider,
  putPlatformAiPrompt,
  deletePlatformAiPrompt,
};

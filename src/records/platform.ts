/** Rows → the contract's platform records. */
import type { Schemas } from '../api/operations.js';
import { keyStatus } from '../auth/apiKeys.js';
import type { AiPromptRow, AiProviderRow, ApiKeyRow } from '../db/database.js';
import { declareRecord } from '../db/json.js';
import type { PlatformOrganizationRow, PlatformUserRow } from '../db/queries/platform.js';

/** `toPlatformUser` for single reads and changes, `platformUserJson` for the list (src/db/json.ts). */
export const { toRecord: toPlatformUser, shape: platformUserJson } = declareRecord<PlatformUserRow, Schemas['PlatformUser']>({
  id: ['id', 'id'],
  email: ['text', 'email'],
  name: ['text', 'name'],
  systemRole: ['enum', 'system_role'],
  orgCount: ['integer', 'org_count'],
  activeApiKeys: ['integer', 'active_api_keys'],
  createdAt: ['instant', 'created_at'],
});

/** `toPlatformOrganization` for single reads and changes, `platformOrganizationJson` for the list (src/db/json.ts). */
export const { toRecord: toPlatformOrganization, shape: platformOrganizationJson } = declareRecord<PlatformOrganizationRow, Schemas['PlatformOrganization']>({
  id: ['id', 'id'],
  name: ['text', 'name'],
  slug: ['text', 'slug'],
  status: ['enum', 'status'],
  members: ['integer', 'members'],
  teams: ['integer', 'teams'],
  createdAt: ['instant', 'created_at'],
});

export type ApiKeyInfoRow = Omit<ApiKeyRow, 'user_id' | 'key_hash'>;

export const toApiKeyInfo = (row: ApiKeyInfoRow, now: Date): Schemas['ApiKeyInfo'] => ({
  id: row.id,
  name: row.name,
  prefix: row.prefix,
  scopes: row.scopes,
  status: keyStatus(row, now),
  expiresAt: row.expires_at.toISOString(),
  lastUsedAt: row.last_used_at?.toISOString() ?? null,
  createdAt: row.created_at.toISOString(),
});

/**
 * The stored part of a provider key for its masked form: its last 4 characters, or nothing for a
 * key shorter than 12, of which 4 characters would give away too much.
 */
export const keyTail = (apiKey: string): string => (apiKey.length < 12 ? '' : apiKey.slice(-4));

export type AiProviderInfoRow = Omit<AiProviderRow, 'api_key_encrypted'>;

export const toAiProvider = (row: AiProviderInfoRow): Schemas['AiProvider'] => ({
  id: row.id,
  type: row.type,
  defaultModel: row.default_model,
  isActive: row.is_active,
  apiKeyMasked: row.api_key_last4 === '' ? '********' : `****${row.api_key_last4}`,
});

export const toAiPrompt = (row: AiPromptRow): Schemas['AiPrompt'] => ({
  id: row.id,
  inputType: row.input_type,
  systemPrompt: row.system_prompt,
  providerId: row.provider_id,
  modelOverride: row.model_override,
  isActive: row.is_active,
});

/**
 * Matrix rows of platform administration: only a `platform` key whose owner is SUPERADMIN now, whatever
 * the owner's organization roles; every other key gets 403 insufficientScope.
 */
import { createKey, createOrganization, createUser } from '../support/factories.js';
import { row, rowFor, unique, type World } from './world.js';

const S = 'scope';

async function ensureProvider(w: World, type: 'OPENAI' | 'ANTHROPIC') {
  await w.db
    .insertInto('ai_providers')
    .values({ type, api_key_encrypted: 'not-a-real-secret', api_key_last4: 'abcd', default_model: 'model-1' })
    .onConflict((conflict) => conflict.column('type').doNothing())
    .execute();
}

async function ensurePrompt(w: World) {
  await w.db
    .insertInto('ai_prompts')
    .values({ input_type: 'HEADLINE', system_prompt: 'Write a headline.' })
    .onConflict((conflict) => conflict.column('input_type').doNothing())
    .execute();
}

// prettier-ignore
export const platformRows = [
  //                                  noKey readOnly orgOwner orgAdmin implementer teamOwner teamAdmin teamMember teamViewer orgMember outsider superadmin superadminMember formerSuperadmin
  row('listPlatformOrganizations',     [401, S,       S,       S,       S,          S,        S,        S,         S,         S,        S,       200,       200,             S],
    () => ({ path: '/v1/platform/orgs' })),
  row('createPlatformOrganization',    [401, S,       S,       S,       S,          S,        S,        S,         S,         S,        S,       201,       201,             S],
    () => ({
      path: '/v1/platform/orgs',
      body: { name: `Org ${unique()}`, timezone: 'Europe/Bratislava', defaultLocale: 'en', owner: { email: `owner.${unique()}@example.com`, externalOnly: true } },
    })),
  rowFor('updatePlatformOrganization', [401, S,       S,       S,       S,          S,        S,        S,         S,         S,        S,       200,       200,             S],
    (w) => createOrganization(w.db),
    (w, org) => ({ path: `/v1/platform/orgs/${org.id}`, body: { status: 'ACTIVE' } })),
  row('listPlatformUsers',             [401, S,       S,       S,       S,          S,        S,        S,         S,         S,        S,       200,       200,             S],
    () => ({ path: '/v1/platform/users' })),
  row('listPlatformUserApiKeys',       [401, S,       S,       S,       S,          S,        S,        S,         S,         S,        S,       200,       200,             S],
    (w) => ({ path: `/v1/platform/users/${w.users.orgMember.id}/api-keys` })),
  rowFor('revokePlatformApiKey',       [401, S,       S,       S,       S,          S,        S,        S,         S,         S,        S,       204,       204,             S],
    async (w) => createKey(w.db, (await createUser(w.db)).id),
    (w, key) => ({ path: `/v1/platform/api-keys/${key.row.id}` })),
  row('getPlatformAiConfig',           [401, S,       S,       S,       S,          S,        S,        S,         S,         S,        S,       200,       200,             S],
    () => ({ path: '/v1/platform/ai' })),
  row('putPlatformAiProvider',         [401, S,       S,       S,       S,          S,        S,        S,         S,         S,        S,       200,       200,             S],
    () => ({ path: '/v1/platform/ai/providers/OPENAI', body: { apiKey: 'sk-test-0123456789', defaultModel: 'gpt-test' } })),
  rowFor('updatePlatformAiProvider',   [401, S,       S,       S,       S,          S,        S,        S,         S,         S,        S,       200,       200,             S],
    (w) => ensureProvider(w, 'ANTHROPIC'),
    () => ({ path: '/v1/platform/ai/providers/ANTHROPIC', body: { isActive: true } })),
  rowFor('deletePlatformAiProvider',   [401, S,       S,       S,       S,          S,        S,        S,         S,         S,        S,       204,       204,             S],
    (w) => ensureProvider(w, 'ANTHROPIC'),
    () => ({ path: '/v1/platform/ai/providers/ANTHROPIC' })),
  row('putPlatformAiPrompt',           [401, S,       S,       S,       S,          S,        S,        S,         S,         S,        S,       200,       200,             S],
    () => ({ path: '/v1/platform/ai/prompts/TODO_TITLE', body: { systemPrompt: 'Write a short to-do title.' } })),
  rowFor('deletePlatformAiPrompt',     [401, S,       S,       S,       S,          S,        S,        S,         S,         S,        S,       204,       204,             S],
    (w) => ensurePrompt(w),
    () => ({ path: '/v1/platform/ai/prompts/HEADLINE' })),
];

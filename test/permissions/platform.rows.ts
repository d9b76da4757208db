/**
 * Matrix rows of platform administration: only a `platform` key whose owner is SUPERADMIN now, whatever
 * the owner's organization roles; every other key gets 403 insufficientScope.
 */
import { createKey, createOrganization, createUser } from '../support/factories.js';
import { row, rowFor, unique, type AreaRows, type World } from './world.js';

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
export const platformRows: AreaRows<'Platform'> = {
  //                                  noKey readOnly orgOwner orgAdmin implementer teamOwner teamAdmin teamMember teamViewer orgMember outsider superadmin superadminMember formerSuperadmin
  listPlatformOrganizations: row(      [401, S,       S,       S,       S,          S,        S,        S,         S,         S,        S,       200,       200,             S],
    () => ({ path: '/v1/platform/orgs' })),
  createPlatformOrganization: row(     [401, S,       S,       S,       S,          S,        S,        S,         S,         S,        S,       201,       201,             S],
    () => ({
      path: '/v1/platform/orgs',
      body: { name: `Org ${unique()}`, timezone: 'Europe/Bratislava', defaultLocale: 'en', owner: { email: `owner.${unique()}@example.com`, externalOnly: true } },
    })),
  updatePlatformOrganization: rowFor(  [401, S,       S,       S,       S,          S,        S,        S,         S,         S,        S,       200,       200,             S],
    (w) => createOrganization(w.db),
    (w, org) => ({ path: `/v1/platform/orgs/${org.id}`, body: { status: 'ACTIVE' } })),
  listPlatformUsers: row(              [401, S,       S,       S,       S,          S,        S,        S,         S,         S,        S,       200,       200,             S],
    () => ({ path: '/v1/platform/users' })),
  listPlatformUserApiKeys: row(        [401, S,       S,       S,       S,          S,        S,        S,         S,         S,        S,       200,       200,             S],
    (w) => ({ path: `/v1/platform/users/${w.users.orgMember.id}/api-keys` })),
  revokePlatformApiKey: rowFor(        [401, S,       S,       S,       S,          S,        S,        S,         S,         S,        S,       204,       204,             S],
    async (w) => createKey(w.db, (await createUser(w.db)).id),
    (w, key) => ({ path: `/v1/platform/api-keys/${key.row.id}` })),
  getPlatformAiConfig: row(            [401, S,       S,       S,       S,          S,        S,        S,         S,         S,        S,       200,       200,             S],
    () => ({ path: '/v1/platform/ai' })),
  putPlatformAiProvider: row(          [401, S,       S,       S,       S,          S,        S,        S,         S,         S,        S,       200,       200,             S],
    () => ({ path: '/v1/platform/ai/providers/OPENAI', body: { apiKey: 'sk-test-0123456789', defaultModel: 'gpt-test' } })),
  updatePlatformAiProvider: rowFor(    [401, S,       S,       S,       S,          S,        S,        S,         S,         S,        S,       200,       200,             S],
    (w) => ensureProvider(w, 'ANTHROPIC'),
    () => ({ path: '/v1/platform/ai/providers/ANTHROPIC', body: { isActive: true } })),
  deletePlatformAiProvider: rowFor(    [401, S,       S,       S,       S,          S,        S,        S,         S,         S,        S,       204,       204,             S],
    (w) => ensureProvider(w, 'ANTHROPIC'),
    () => ({ path: '/v1/platform/ai/providers/ANTHROPIC' })),
  putPlatformAiPrompt: row(            [401, S,       S,       S,       S,          S,        S,        S,         S,         S,        S,       200,       200,             S],
    () => ({ path: '/v1/platform/ai/prompts/TODO_TITLE', body: { systemPrompt: 'Write a short to-do title.' } })),
  deletePlatformAiPrompt: rowFor(      [401, S,       S,       S,       S,          S,        S,        S,         S,         S,        S,       204,       204,             S],
    (w) => ensurePrompt(w),
    () => ({ path: '/v1/platform/ai/prompts/HEADLINE' })),
};

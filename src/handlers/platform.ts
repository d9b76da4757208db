/** Handlers of the platform area. */
import { listUsers } from '../db/queries/platform.js';
import { pageLimit } from '../db/pagination.js';
import { toPlatformUser } from '../records/platform.js';
import { notImplemented, type Handler } from './types.js';

export const listPlatformOrganizations: Handler<'listPlatformOrganizations'> = notImplemented('listPlatformOrganizations');

export const createPlatformOrganization: Handler<'createPlatformOrganization'> = notImplemented('createPlatformOrganization');

export const updatePlatformOrganization: Handler<'updatePlatformOrganization'> = notImplemented('updatePlatformOrganization');

export const listPlatformUsers: Handler<'listPlatformUsers'> = async ({ query }, { db }) => {
  const page = await listUsers(db, { limit: pageLimit(query.limit), cursor: query.cursor }, new Date());
  return { status: 200, body: { data: page.rows.map(toPlatformUser), nextCursor: page.nextCursor } };
};

export const listPlatformUserApiKeys: Handler<'listPlatformUserApiKeys'> = notImplemented('listPlatformUserApiKeys');

export const revokePlatformApiKey: Handler<'revokePlatformApiKey'> = notImplemented('revokePlatformApiKey');

export const getPlatformAiConfig: Handler<'getPlatformAiConfig'> = notImplemented('getPlatformAiConfig');

export const putPlatformAiProvider: Handler<'putPlatformAiProvider'> = notImplemented('putPlatformAiProvider');

export const updatePlatformAiProvider: Handler<'updatePlatformAiProvider'> = notImplemented('updatePlatformAiProvider');

export const deletePlatformAiProvider: Handler<'deletePlatformAiProvider'> = notImplemented('deletePlatformAiProvider');

export const putPlatformAiPrompt: Handler<'putPlatformAiPrompt'> = notImplemented('putPlatformAiPrompt');

export const deletePlatformAiPrompt: Handler<'deletePlatformAiPrompt'> = notImplemented('deletePlatformAiPrompt');

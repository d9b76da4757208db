/** Handlers of the documents area: the team's links and files; the API adds links only. */
import { requireChange, teamAccess, teamAllows } from '../auth/permissions.js';
import { loadTeamAccess } from '../auth/access.js';
import { standingOf } from '../db/queries/access.js';
import * as documents from '../db/queries/documents.js';
import { pageLimit } from '../db/pagination.js';
import { RuleViolation } from '../errors.js';
import { documentJson, toDocument } from '../records/documents.js';
import { pageText } from '../api/jsonText.js';
import { isLinkUrl } from '../rules/documents.js';
import type { AreaHandlers, Handler } from './types.js';

const teamDocumentPages = documents.teamDocumentPages(documentJson);

export const listTeamDocuments: Handler<'listTeamDocuments'> = async ({ params, query }, { db, caller }) => {
  const page = await teamDocumentPages(db, params.teamId, caller.userId, { limit: pageLimit(query.limit), cursor: query.cursor });
  const { access } = await loadTeamAccess(db, caller, params.teamId, 'collection', page.standing);
  return { status: 200, body: pageText(page), logOf: access.orgId };
};

export const createDocument: Handler<'createDocument'> = async ({ params, body }, { db, caller }) => {
  // A limit of the field alone, checked like the contract's own limits: before visibility.
  if (!isLinkUrl(body.url)) throw new RuleViolation('The url must be an http:// or https:// address with a host.');
  const { access } = await loadTeamAccess(db, caller, params.teamId, 'collection');
  requireChange(access, teamAllows(access, 'addDocument'));
  const link = await documents.insertLink(db, { teamId: params.teamId, name: body.name, url: body.url, createdById: caller.userId });
  return { status: 201, body: toDocument(link) };
};

export const deleteDocument: Handler<'deleteDocument'> = async ({ params }, { db, caller }) => {
  const document = await documents.findDocument(db, params.id, caller.userId);
  const access = teamAccess(caller, document && standingOf(document), 'item');
  requireChange(access, teamAllows(access, 'delete'));
  await documents.deleteDocument(db, params.id);
  return { status: 204, body: undefined };
};

export const documentsHandlers: AreaHandlers<'Documents'> = {
  listTeamDocuments,
  createDocument,
  deleteDocument,
};

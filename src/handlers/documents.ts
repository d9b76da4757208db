/** Handlers of the documents area. */
import { notImplemented, type Handler } from './types.js';

export const listTeamDocuments: Handler<'listTeamDocuments'> = notImplemented('listTeamDocuments');

export const createDocument: Handler<'createDocument'> = notImplemented('createDocument');

export const deleteDocument: Handler<'deleteDocument'> = notImplemented('deleteDocument');

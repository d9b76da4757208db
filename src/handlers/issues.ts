/** Handlers of the issues area. */
import { notImplemented, type Handler } from './types.js';

export const listTeamIssues: Handler<'listTeamIssues'> = notImplemented('listTeamIssues');

export const createIssue: Handler<'createIssue'> = notImplemented('createIssue');

export const getIssue: Handler<'getIssue'> = notImplemented('getIssue');

export const updateIssue: Handler<'updateIssue'> = notImplemented('updateIssue');

export const deleteIssue: Handler<'deleteIssue'> = notImplemented('deleteIssue');

/** Handlers of the teams area. */
import { notImplemented, type Handler } from './types.js';

export const listOrganizationTeams: Handler<'listOrganizationTeams'> = notImplemented('listOrganizationTeams');

export const createTeam: Handler<'createTeam'> = notImplemented('createTeam');

export const getTeam: Handler<'getTeam'> = notImplemented('getTeam');

export const updateTeam: Handler<'updateTeam'> = notImplemented('updateTeam');

export const deleteTeam: Handler<'deleteTeam'> = notImplemented('deleteTeam');

export const listTeamMembers: Handler<'listTeamMembers'> = notImplemented('listTeamMembers');

export const addTeamMember: Handler<'addTeamMember'> = notImplemented('addTeamMember');

export const updateTeamMember: Handler<'updateTeamMember'> = notImplemented('updateTeamMember');

export const removeTeamMember: Handler<'removeTeamMember'> = notImplemented('removeTeamMember');

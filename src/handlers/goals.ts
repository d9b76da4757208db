/** Handlers of the goals area. */
import { notImplemented, type Handler } from './types.js';

export const listOrganizationGoals: Handler<'listOrganizationGoals'> = notImplemented('listOrganizationGoals');

export const listTeamGoals: Handler<'listTeamGoals'> = notImplemented('listTeamGoals');

export const createGoal: Handler<'createGoal'> = notImplemented('createGoal');

export const getGoal: Handler<'getGoal'> = notImplemented('getGoal');

export const updateGoal: Handler<'updateGoal'> = notImplemented('updateGoal');

export const deleteGoal: Handler<'deleteGoal'> = notImplemented('deleteGoal');

export const createMilestone: Handler<'createMilestone'> = notImplemented('createMilestone');

export const updateMilestone: Handler<'updateMilestone'> = notImplemented('updateMilestone');

export const deleteMilestone: Handler<'deleteMilestone'> = notImplemented('deleteMilestone');

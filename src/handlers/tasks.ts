/** Handlers of the tasks area. */
import { notImplemented, type Handler } from './types.js';

export const listTeamTasks: Handler<'listTeamTasks'> = notImplemented('listTeamTasks');

export const createTask: Handler<'createTask'> = notImplemented('createTask');

export const getTask: Handler<'getTask'> = notImplemented('getTask');

export const updateTask: Handler<'updateTask'> = notImplemented('updateTask');

export const deleteTask: Handler<'deleteTask'> = notImplemented('deleteTask');

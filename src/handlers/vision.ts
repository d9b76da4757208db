/** Handlers of the vision area. */
import { notImplemented, type Handler } from './types.js';

export const getTeamVision: Handler<'getTeamVision'> = notImplemented('getTeamVision');

export const createTeamVision: Handler<'createTeamVision'> = notImplemented('createTeamVision');

export const updateTeamVision: Handler<'updateTeamVision'> = notImplemented('updateTeamVision');

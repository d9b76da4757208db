/** Handlers of the orgChart area. */
import { notImplemented, type Handler } from './types.js';

export const listTeamSeats: Handler<'listTeamSeats'> = notImplemented('listTeamSeats');

export const createSeat: Handler<'createSeat'> = notImplemented('createSeat');

export const updateSeat: Handler<'updateSeat'> = notImplemented('updateSeat');

export const deleteSeat: Handler<'deleteSeat'> = notImplemented('deleteSeat');

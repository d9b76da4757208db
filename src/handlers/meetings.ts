/** Handlers of the meetings area. */
import { notImplemented, type Handler } from './types.js';

export const listTeamMeetings: Handler<'listTeamMeetings'> = notImplemented('listTeamMeetings');

export const createMeeting: Handler<'createMeeting'> = notImplemented('createMeeting');

export const getMeeting: Handler<'getMeeting'> = notImplemented('getMeeting');

export const updateMeeting: Handler<'updateMeeting'> = notImplemented('updateMeeting');

export const getMeetingRecap: Handler<'getMeetingRecap'> = notImplemented('getMeetingRecap');

export const rateMeetingAsMe: Handler<'rateMeetingAsMe'> = notImplemented('rateMeetingAsMe');

export const setMeetingRating: Handler<'setMeetingRating'> = notImplemented('setMeetingRating');

export const revealMeetingRatings: Handler<'revealMeetingRatings'> = notImplemented('revealMeetingRatings');

export const createSegue: Handler<'createSegue'> = notImplemented('createSegue');

export const createHeadline: Handler<'createHeadline'> = notImplemented('createHeadline');

export const createCascadingMessage: Handler<'createCascadingMessage'> = notImplemented('createCascadingMessage');

export const deleteCascadingMessage: Handler<'deleteCascadingMessage'> = notImplemented('deleteCascadingMessage');

export const acknowledgeCascadingMessages: Handler<'acknowledgeCascadingMessages'> = notImplemented('acknowledgeCascadingMessages');

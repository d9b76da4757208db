/** Handlers of the peopleReviews area. */
import { notImplemented, type Handler } from './types.js';

export const listTeamPeopleReviews: Handler<'listTeamPeopleReviews'> = notImplemented('listTeamPeopleReviews');

export const putPeopleReview: Handler<'putPeopleReview'> = notImplemented('putPeopleReview');

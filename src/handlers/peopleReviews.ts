/** Handlers of the people reviews area: each evaluator's review of team members, per quarter (People Analyzer). */
import { requireChange, seesEveryPeopleReview, teamAllows } from '../auth/permissions.js';
import { loadTeamAccess } from '../auth/access.js';
import * as peopleReviews from '../db/queries/peopleReviews.js';
import { pageLimit } from '../db/pagination.js';
import { gwcJson, peopleReviewJson, toPeopleReview } from '../records/peopleReviews.js';
import { pageText } from '../api/jsonText.js';
import { clearable, requireTeamMember } from './shared.js';
import type { AreaHandlers, Handler } from './types.js';
import { inTransaction } from '../db/transaction.js';

const teamPeopleReviewPages = peopleReviews.teamPeopleReviewPages(peopleReviewJson, gwcJson);

export const listTeamPeopleReviews: Handler<'listTeamPeopleReviews'> = async ({ params, query }, { db, caller }) => {
  const { access } = await loadTeamAccess(db, caller, params.teamId, 'collection');
  const page = await teamPeopleReviewPages(
    db,
    params.teamId,
    { quarter: query.quarter, involving: seesEveryPeopleReview(access) ? undefined : caller.userId },
    { limit: pageLimit(query.limit), cursor: query.cursor },
  );
  return { status: 200, body: pageText(page), logOf: access.orgId };
};

/** The evaluator is always the caller; a second write for the same person and quarter replaces the review whole. */
export const putPeopleReview: Handler<'putPeopleReview'> = async ({ params, body }, { db, caller }) => {
  const { access } = await loadTeamAccess(db, caller, params.teamId, 'collection');
  requireChange(access, teamAllows(access, 'writePeopleReview'));
  const review = await inTransaction(db, async (trx) => {
    await requireTeamMember(trx, params.teamId, body.userId, 'review', 'reviewed person');
    return peopleReviews.upsertPeopleReview(trx, {
      teamId: params.teamId,
      userId: body.userId,
      evaluatorId: caller.userId,
      quarter: body.quarter,
      coreValuesScores: body.coreValuesScores,
      gwc: body.gwc,
      notes: clearable(body.notes ?? null),
    });
  });
  return { status: 200, body: toPeopleReview(review) };
};

export const peopleReviewsHandlers: AreaHandlers<'People reviews'> = {
  listTeamPeopleReviews,
  putPeopleReview,
};

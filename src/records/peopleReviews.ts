/** Rows → the contract's people review record. */
import type { Schemas } from '../api/operations.js';
import type { PeopleReviewRow } from '../db/database.js';
import type { JsonShape } from '../db/json.js';
import type { GwcColumns, PeopleReviewPageRow } from '../db/queries/peopleReviews.js';

export const toPeopleReview = (row: PeopleReviewRow): Schemas['PeopleReview'] => ({
  id: row.id,
  teamId: row.team_id,
  userId: row.user_id,
  evaluatorId: row.evaluator_id,
  quarter: row.quarter,
  coreValuesScores: row.core_values_scores,
  gwc: { getsIt: row.gwc.getsIt, wantsIt: row.gwc.wantsIt, capacityToDoIt: row.gwc.capacityToDoIt },
  notes: row.notes,
  updatedAt: row.updated_at.toISOString(),
});

/** `toPeopleReview`'s `gwc`, written by PostgreSQL for the list (src/db/json.ts). */
export const gwcJson: JsonShape<GwcColumns, Schemas['Gwc']> = {
  getsIt: ['boolean', 'gets_it'],
  wantsIt: ['boolean', 'wants_it'],
  capacityToDoIt: ['boolean', 'capacity_to_do_it'],
};

/** `toPeopleReview` written by PostgreSQL, for the list (src/db/json.ts); `gwc` by `gwcJson`. */
export const peopleReviewJson: JsonShape<PeopleReviewPageRow, Schemas['PeopleReview']> = {
  id: ['id', 'id'],
  teamId: ['id', 'team_id'],
  userId: ['id', 'user_id'],
  evaluatorId: ['id', 'evaluator_id'],
  quarter: ['text', 'quarter'],
  coreValuesScores: ['json', 'core_values_scores_json'],
  gwc: ['json', 'gwc_json'],
  notes: ['text', 'notes'],
  updatedAt: ['instant', 'updated_at'],
};

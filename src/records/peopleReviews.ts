/** Rows → the contract's people review record. */
import type { Schemas } from '../api/operations.js';
import type { PeopleReviewRow } from '../db/database.js';

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

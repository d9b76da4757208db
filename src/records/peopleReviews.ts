/** Rows → the contract's people review record. */
import type { Schemas } from '../api/operations.js';
import type { Gwc, PeopleReviewRow } from '../db/database.js';
import { declareRecord } from '../db/json.js';

/** A review's `gwc` as stored, field by field in the contract's order; `gwcJson` for the list (src/db/json.ts). */
const gwc = declareRecord<Gwc, Schemas['Gwc']>({
  getsIt: ['boolean', 'getsIt'],
  wantsIt: ['boolean', 'wantsIt'],
  capacityToDoIt: ['boolean', 'capacityToDoIt'],
});

export const { shape: gwcJson } = gwc;

/**
 * `toPeopleReview` for single reads and changes, its jsonb columns as the driver parsed them;
 * `peopleReviewJson` for the list, whose query writes them as JSON text (`gwc` by `gwcJson`).
 */
export const { toRecord: toPeopleReview, shape: peopleReviewJson } = declareRecord<PeopleReviewRow, Schemas['PeopleReview']>({
  id: ['id', 'id'],
  revision: ['integer', 'revision'],
  teamId: ['id', 'team_id'],
  userId: ['id', 'user_id'],
  evaluatorId: ['id', 'evaluator_id'],
  quarter: ['text', 'quarter'],
  coreValuesScores: ['json', 'core_values_scores'],
  gwc: ['json', 'gwc', gwc],
  notes: ['text', 'notes'],
  updatedAt: ['instant', 'updated_at'],
});

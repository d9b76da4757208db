/** Queries of people reviews (People Analyzer). */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { CoreValuesScores, Database, Gwc } from '../database.js';
import { paginate } from '../pagination.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface PeopleReviewFilters {
  quarter?: string | undefined;
  /** Only reviews this person wrote or is the subject of; undefined for every review of the team. */
  involving?: string | undefined;
}

/**
 * The team's reviews, newest quarter first, then by reviewed person and evaluator: the order of the
 * unique index `people_reviews_team_id_quarter_user_id_evaluator_id_key`, which also serves the
 * quarter filter. The three keys identify a review within its team.
 */
export function listTeamPeopleReviews(db: Db, teamId: string, filters: PeopleReviewFilters, page: { limit: number; cursor?: string | undefined }) {
  let query = db.selectFrom('people_reviews').selectAll('people_reviews').where('people_reviews.team_id', '=', teamId);
  if (filters.quarter !== undefined) query = query.where('people_reviews.quarter', '=', filters.quarter);
  const involving = filters.involving;
  if (involving !== undefined) {
    query = query.where((eb) => eb.or([eb('people_reviews.user_id', '=', involving), eb('people_reviews.evaluator_id', '=', involving)]));
  }
  return paginate(query, {
    ...page,
    order: [
      { column: 'people_reviews.quarter', direction: 'desc', type: 'string', value: (row) => row.quarter },
      { column: 'people_reviews.user_id', direction: 'asc', type: 'string', value: (row) => row.user_id },
      { column: 'people_reviews.evaluator_id', direction: 'asc', type: 'string', value: (row) => row.evaluator_id },
    ],
  });
}

export interface PeopleReviewWrite {
  teamId: string;
  userId: string;
  evaluatorId: string;
  quarter: string;
  coreValuesScores: CoreValuesScores;
  gwc: Gwc;
  notes: string | null;
}

/**
 * Creates the evaluator's review of the person for the quarter, or replaces it whole, in one
 * statement: the unique index decides, so concurrent writes leave exactly one review.
 */
export function upsertPeopleReview(db: Db, review: PeopleReviewWrite) {
  return db
    .insertInto('people_reviews')
    .values({
      team_id: review.teamId,
      user_id: review.userId,
      evaluator_id: review.evaluatorId,
      quarter: review.quarter,
      core_values_scores: JSON.stringify(review.coreValuesScores),
      gwc: JSON.stringify(review.gwc),
      notes: review.notes,
    })
    .onConflict((oc) =>
      oc.columns(['team_id', 'user_id', 'evaluator_id', 'quarter']).doUpdateSet((eb) => ({
        core_values_scores: eb.ref('excluded.core_values_scores'),
        gwc: eb.ref('excluded.gwc'),
        notes: eb.ref('excluded.notes'),
        updated_at: sql<Date>`now()`,
      })),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

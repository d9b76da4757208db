/** Queries of people reviews (People Analyzer). */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { CoreValuesScores, Database, Gwc, PeopleReviewRow } from '../database.js';
import { jsonRecord, type JsonShape } from '../json.js';
import { preparedJsonPages } from '../pagination.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface PeopleReviewFilters {
  quarter?: string | undefined;
  /** Only reviews this person wrote or is the subject of; undefined for every review of the team. */
  involving?: string | undefined;
}

/**
 * A review as the list reads it: its jsonb columns written as the mapper's JSON text instead (the
 * single reads have them parsed, under the same names).
 */
export type PeopleReviewPageRow = Omit<PeopleReviewRow, 'core_values_scores' | 'gwc'> & { core_values_scores: string; gwc: string };

/**
 * `core_values_scores` as `JSON.stringify` writes the parsed jsonb: jsonb's text has other spacing.
 * The driver's `JSON.parse` keeps jsonb's key order, except that JavaScript puts array-index keys
 * ("0" to "4294967294") first, in numeric order, which jsonb's order (by length, then bytes) already
 * gives among them.
 */
const coreValuesScoresJson = sql<string>`(select '{' || coalesce(string_agg(to_json(s.key)::text || ':' || s.value::text, ',' order by
  case when s.key ~ '^(0|[1-9][0-9]{0,9})$' then s.key::int8 < 4294967295 else false end desc, s.n), '') || '}'
  from jsonb_each(people_reviews.core_values_scores) with ordinality as s(key, value, n))`;

/**
 * The team's reviews, newest quarter first, then by reviewed person and evaluator: the order of the
 * unique index `people_reviews_team_id_quarter_user_id_evaluator_id_key`, which also serves the
 * quarter filter. The three keys identify a review within its team. Written as JSON by `shape`, its
 * `gwc` by `gwcShape` (both given by the handler).
 */
export function teamPeopleReviewPages<R, G>(shape: JsonShape<PeopleReviewPageRow, R>, gwcShape: JsonShape<Gwc, G>) {
  // The mapper writes `gwc` field by field; its booleans become columns of a row for `jsonRecord`.
  const gwcJson = sql<string>`(select ${jsonRecord(gwcShape, 'g')} from (select (people_reviews.gwc->>'getsIt')::boolean as "getsIt",
    (people_reviews.gwc->>'wantsIt')::boolean as "wantsIt", (people_reviews.gwc->>'capacityToDoIt')::boolean as "capacityToDoIt") as g)`;
  const rows = (db: Db, { teamId, quarter, involving }: { teamId: string; quarter: string | undefined; involving: string | undefined }) => {
    let query = db
      .selectFrom('people_reviews')
      .select([
        'people_reviews.id',
        'people_reviews.revision',
        'people_reviews.team_id',
        'people_reviews.user_id',
        'people_reviews.evaluator_id',
        'people_reviews.quarter',
        'people_reviews.notes',
        'people_reviews.created_at',
        'people_reviews.updated_at',
        coreValuesScoresJson.as('core_values_scores'),
        gwcJson.as('gwc'),
      ])
      .where('people_reviews.team_id', '=', teamId);
    if (quarter !== undefined) query = query.where('people_reviews.quarter', '=', quarter);
    if (involving !== undefined) {
      query = query.where((eb) => eb.or([eb('people_reviews.user_id', '=', involving), eb('people_reviews.evaluator_id', '=', involving)]));
    }
    return query;
  };
  const pages = preparedJsonPages(
    rows,
    [
      { column: 'people_reviews.quarter', direction: 'desc', type: 'string' },
      { column: 'people_reviews.user_id', direction: 'asc', type: 'string' },
      { column: 'people_reviews.evaluator_id', direction: 'asc', type: 'string' },
    ],
    shape,
  );
  return (db: Db, teamId: string, filters: PeopleReviewFilters, page: { limit: number; cursor?: string | undefined }) =>
    pages(db, { teamId, quarter: filters.quarter, involving: filters.involving }, page);
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

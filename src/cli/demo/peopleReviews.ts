/** The demo's people reviews. */
import { addMinutes } from '../../time.js';
import { addDays, localTime } from './calendar.js';
import { LEADERSHIP_VALUES, type Person } from './content.js';
import type { DemoContext } from './context.js';

/** Reviews at the end of last quarter, against the leadership team's core values. */
export async function peopleReviews(
  { db, ids, calendar }: DemoContext,
  teamId: string,
  evaluator: Person,
  reviews: { person: Person; livesValues: boolean[]; capacity: boolean; notes: string }[],
): Promise<void> {
  const { quarterStart, lastQuarter } = calendar;
  const at = localTime(addDays(quarterStart, -5), '10:00');
  await db
    .insertInto('people_reviews')
    .values(
      reviews.map((review, index) => {
        const reviewedAt = addMinutes(at, index * 30);
        return {
          team_id: teamId,
          user_id: ids[review.person],
          evaluator_id: ids[evaluator],
          quarter: lastQuarter,
          core_values_scores: JSON.stringify(Object.fromEntries(LEADERSHIP_VALUES.map((value, i) => [value, review.livesValues[i] ?? true]))),
          gwc: JSON.stringify({ getsIt: true, wantsIt: true, capacityToDoIt: review.capacity }),
          notes: review.notes,
          created_at: reviewedAt,
          updated_at: reviewedAt,
        };
      }),
    )
    .execute();
}

/** The demo's accountability charts: seats, and the seats below them. */
import type { SeatPlan } from './content.js';
import type { DemoContext } from './context.js';

export async function seats(context: DemoContext, teamId: string, plans: SeatPlan[], parentId: string | null = null): Promise<void> {
  const { db, ids, calendar } = context;
  const { settledIn } = calendar;
  for (const [index, plan] of plans.entries()) {
    const { id } = await db
      .insertInto('seats')
      .values({
        ...(plan.id ? { id: plan.id } : {}),
        team_id: teamId,
        parent_id: parentId,
        user_id: plan.person === null ? null : ids[plan.person],
        title: plan.title,
        responsibilities: plan.responsibilities,
        position: index + 1,
        created_at: settledIn(60 + index),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    if (plan.below) await seats(context, teamId, plan.below, id);
  }
}

/** The demo's Rocks with their milestones, set at the planning day before their quarter. */
import { addMinutes } from '../../time.js';
import { addDays, firstDayOfQuarter, planningOf } from './calendar.js';
import type { GoalPlan } from './content.js';
import type { DemoContext } from './context.js';

export async function goals({ db, orgId, ids, calendar }: DemoContext, teamId: string, plans: GoalPlan[], goalQuarter: string): Promise<void> {
  const { today } = calendar;
  const start = firstDayOfQuarter(goalQuarter);
  const createdAt = planningOf(start);
  for (const [index, plan] of plans.entries()) {
    const goalCreatedAt = addMinutes(createdAt, index * 5);
    const { id } = await db
      .insertInto('goals')
      .values({
        ...(plan.id ? { id: plan.id } : {}),
        team_id: teamId,
        org_id: orgId,
        title: plan.title,
        description: plan.description,
        owner_id: ids[plan.owner],
        quarter: goalQuarter,
        level: plan.level,
        status: plan.status,
        created_at: goalCreatedAt,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db
      .insertInto('milestones')
      .values(
        plan.milestones.map((milestone, position) => {
          const due = addDays(start, milestone.dueAfterDays);
          return {
            ...(milestone.id ? { id: milestone.id } : {}),
            goal_id: id,
            title: milestone.title,
            due_date: due,
            // Done once due, unless the goal is behind on it; a finished Rock has them all done.
            completed: plan.status === 'DONE' || (due < today && !milestone.late),
            created_at: addMinutes(goalCreatedAt, position + 1),
          };
        }),
      )
      .execute();
  }
}

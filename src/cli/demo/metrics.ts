/** The demo's Scorecard: measurables with a value for each past week, judged against their goal as the API judges them. */
import { judgeValue } from '../../rules/metricValues.js';
import { addWeeks } from '../../time.js';
import { addDays, localTime } from './calendar.js';
import type { MetricPlan } from './content.js';
import type { DemoContext } from './context.js';

export async function scorecard({ db, ids, calendar }: DemoContext, teamId: string, plans: MetricPlan[]): Promise<void> {
  const { thisMonday, settledIn } = calendar;
  for (const [index, plan] of plans.entries()) {
    const { id } = await db
      .insertInto('metrics')
      .values({
        ...(plan.id ? { id: plan.id } : {}),
        team_id: teamId,
        title: plan.title,
        goal: plan.goal,
        owner_id: ids[plan.owner],
        unit: plan.unit,
        description: plan.description,
        position: index + 1,
        created_at: settledIn(30 + index),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db
      .insertInto('metric_values')
      .values(
        plan.values.map((value, week) => {
          const monday = addWeeks(thisMonday, week - plan.values.length);
          // Entered on the Friday afternoon of its week.
          const enteredAt = localTime(addDays(monday, 4), '16:00');
          const onTrack = judgeValue(value, plan.goal);
          if (onTrack === null) throw new Error(`The demo value ${value} cannot be judged against ${plan.goal}.`);
          return { metric_id: id, week: monday, value, on_track: onTrack, entered_by_id: ids[plan.owner], created_at: enteredAt, updated_at: enteredAt };
        }),
      )
      .execute();
  }
}

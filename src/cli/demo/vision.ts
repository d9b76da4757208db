/** The demo's vision: written the day after the set-up, its quarter's Rocks brought up to date at the planning day. */
import { storedVisionValue } from '../../rules/vision.js';
import { addMinutes } from '../../time.js';
import { planningOf } from './calendar.js';
import type { GoalPlan, LEADERSHIP_VISION } from './content.js';
import type { DemoContext } from './context.js';

/** `rocks` are the team's Rocks of this quarter; the vision lists the company ones. */
export async function vision({ db, calendar }: DemoContext, teamId: string, plan: typeof LEADERSHIP_VISION, rocks: GoalPlan[]): Promise<void> {
  const visionUpdatedAt = addMinutes(planningOf(calendar.quarterStart), 3 * 60);
  await db
    .insertInto('visions')
    .values({
      team_id: teamId,
      core_values: storedVisionValue(plan.coreValues),
      core_focus: storedVisionValue(plan.coreFocus),
      ten_year_target: storedVisionValue(plan.tenYearTarget),
      marketing_strategy: storedVisionValue(plan.marketingStrategy),
      three_year_picture: storedVisionValue(plan.threeYearPicture),
      one_year_plan: storedVisionValue(plan.oneYearPlan),
      quarterly_rocks: storedVisionValue(rocks.filter((rock) => rock.level === 'COMPANY').map((rock) => rock.title)),
      issues_list: storedVisionValue(plan.issuesList),
      created_at: calendar.settledIn(0),
      updated_at: visionUpdatedAt,
    })
    .execute();
}

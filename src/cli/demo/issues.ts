/** The demo's issues, in every status, some raised in a meeting. */
import type { IssuePriority, IssueStatus } from '../../db/database.js';
import type { Person } from './content.js';
import type { DemoContext } from './context.js';
import type { Meeting } from './meetings.js';

export async function issue(
  { db, ids }: DemoContext,
  teamId: string,
  plan: {
    title: string;
    description?: string;
    priority: IssuePriority;
    status: IssueStatus;
    createdBy: Person;
    createdAt: Date;
    meeting?: Meeting;
    resolvedAt?: Date;
    id?: string;
  },
): Promise<void> {
  await db
    .insertInto('issues')
    .values({
      ...(plan.id ? { id: plan.id } : {}),
      team_id: teamId,
      title: plan.title,
      description: plan.description ?? null,
      priority: plan.priority,
      status: plan.status,
      meeting_id: plan.meeting?.id ?? null,
      created_by_id: ids[plan.createdBy],
      resolved_at: plan.resolvedAt ?? null,
      created_at: plan.createdAt,
    })
    .execute();
}

/** Rows → the contract's goal and milestone records. */
import type { Schemas } from '../api/operations.js';
import type { GoalRow, MilestoneRow } from '../db/database.js';
import type { MilestoneJson } from '../db/queries/goals.js';

export const toMilestone = (row: MilestoneJson | MilestoneRow): Schemas['Milestone'] => ({
  id: row.id,
  goalId: row.goal_id,
  title: row.title,
  dueDate: row.due_date,
  completed: row.completed,
});

export const toGoal = (row: GoalRow & { milestones: MilestoneJson[] }): Schemas['Goal'] => ({
  id: row.id,
  teamId: row.team_id,
  title: row.title,
  description: row.description,
  ownerId: row.owner_id,
  quarter: row.quarter,
  level: row.level,
  status: row.status,
  milestones: row.milestones.map(toMilestone),
  createdAt: row.created_at.toISOString(),
});

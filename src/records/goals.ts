/** Rows → the contract's goal and milestone records. */
import type { Schemas } from '../api/operations.js';
import type { GoalRow, MilestoneRow } from '../db/database.js';
import type { JsonShape } from '../db/json.js';
import type { GoalPageRow, MilestoneJson } from '../db/queries/goals.js';

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

/** `toMilestone` written by PostgreSQL, for the goal lists (src/db/json.ts). */
export const milestoneJson: JsonShape<MilestoneRow, Schemas['Milestone']> = {
  id: ['id', 'id'],
  goalId: ['id', 'goal_id'],
  title: ['text', 'title'],
  dueDate: ['day', 'due_date'],
  completed: ['boolean', 'completed'],
};

/** `toGoal` written by PostgreSQL, for the lists: `milestones_json` is the array of `milestoneJson` records. */
export const goalJson: JsonShape<GoalPageRow, Schemas['Goal']> = {
  id: ['id', 'id'],
  teamId: ['id', 'team_id'],
  title: ['text', 'title'],
  description: ['text', 'description'],
  ownerId: ['id', 'owner_id'],
  quarter: ['text', 'quarter'],
  level: ['enum', 'level'],
  status: ['enum', 'status'],
  milestones: ['json', 'milestones_json'],
  createdAt: ['instant', 'created_at'],
};

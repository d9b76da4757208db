/** Rows → the contract's goal and milestone records. */
import type { Schemas } from '../api/operations.js';
import type { GoalRow } from '../db/database.js';
import { declareRecord } from '../db/json.js';
import type { CsvRow } from '../api/csvBody.js';
import type { MilestoneJson } from '../db/queries/goals.js';

const milestone = declareRecord<MilestoneJson, Schemas['Milestone']>({
  id: ['id', 'id'],
  revision: ['integer', 'revision'],
  goalId: ['id', 'goal_id'],
  title: ['text', 'title'],
  dueDate: ['day', 'due_date'],
  completed: ['boolean', 'completed'],
});

/** `toMilestone` for single reads and changes (a milestone's row or a goal's), `milestoneJson` for the goal lists (src/db/json.ts). */
export const { toRecord: toMilestone, shape: milestoneJson } = milestone;

/**
 * `toGoal` for single reads and changes, its `milestones` the rows the query read; `goalJson` for the
 * lists, whose `milestones` is already the array of `milestoneJson` records.
 */
export const { toRecord: toGoal, shape: goalJson } = declareRecord<GoalRow & { milestones: MilestoneJson[] }, Schemas['Goal']>({
  id: ['id', 'id'],
  revision: ['integer', 'revision'],
  teamId: ['id', 'team_id'],
  title: ['text', 'title'],
  description: ['text', 'description'],
  ownerId: ['id', 'owner_id'],
  quarter: ['text', 'quarter'],
  level: ['enum', 'level'],
  status: ['enum', 'status'],
  milestones: ['json', 'milestones', milestone],
  createdAt: ['instant', 'created_at'],
});

/** The columns of a goal's milestone in a CSV export (the contract's `GoalsCsv`), in their order. */
export const goalCsvColumns = [
  'goalId',
  'title',
  'description',
  'ownerEmail',
  'quarter',
  'level',
  'status',
  'milestoneId',
  'milestoneTitle',
  'milestoneDueDate',
  'milestoneCompleted',
] as const;

/** A goal of the CSV export → its rows: one per milestone, the goal's cells on each; one with empty milestone cells when it has none. */
export const goalCsvRows = (row: {
  id: string;
  title: string;
  description: string | null;
  owner_email: string;
  quarter: string;
  level: string;
  status: string;
  milestones: MilestoneJson[];
}): CsvRow[] => {
  const goal = [row.id, row.title, row.description, row.owner_email, row.quarter, row.level, row.status];
  if (row.milestones.length === 0) return [[...goal, null, null, null, null]];
  return row.milestones.map((m) => [...goal, m.id, m.title, m.due_date, String(m.completed)]);
};

/**
 * Compile-time checks of `declareRecord` (src/db/json.ts), run by `tsc --noEmit`: each
 * `@ts-expect-error` line must fail to type-check, so a declaration that disagrees with its row or
 * with the contract's record breaks the build, as a hand-written mapper did.
 */
import type { Schemas } from '../src/api/operations.js';
import type { GoalRow, MilestoneRow, TaskRow } from '../src/db/database.js';
import { declareRecord } from '../src/db/json.js';
import type { MilestoneJson } from '../src/db/queries/goals.js';

const taskFields = {
  id: ['id', 'id'],
  revision: ['integer', 'revision'],
  teamId: ['id', 'team_id'],
  title: ['text', 'title'],
  ownerId: ['id', 'owner_id'],
  dueDate: ['day', 'due_date'],
  completed: ['boolean', 'completed'],
  completedAt: ['instant', 'completed_at'],
  meetingId: ['id', 'meeting_id'],
  createdAt: ['instant', 'created_at'],
} as const;

export const task = declareRecord<TaskRow, Schemas['Task']>(taskFields);

// @ts-expect-error every field of the contract's record is declared
export const missingField = declareRecord<TaskRow, Schemas['Task']>({ ...taskFields, createdAt: undefined });

// @ts-expect-error a task has no `name`
export const extraField = declareRecord<TaskRow, Schemas['Task']>({ ...taskFields, name: ['text', 'title'] });

// @ts-expect-error the column is one of the row's
export const unknownColumn = declareRecord<TaskRow, Schemas['Task']>({ ...taskFields, title: ['text', 'name'] });

// @ts-expect-error an instant column is not written as text
export const instantAsText = declareRecord<TaskRow, Schemas['Task']>({ ...taskFields, createdAt: ['text', 'created_at'] });

// @ts-expect-error a text column is not an instant
export const textAsInstant = declareRecord<TaskRow, Schemas['Task']>({ ...taskFields, title: ['instant', 'title'] });

// @ts-expect-error a column that may be null does not fill a field that may not
export const nullIntoRequired = declareRecord<TaskRow, Schemas['Task']>({ ...taskFields, ownerId: ['id', 'meeting_id'] });

// @ts-expect-error a boolean is not a number
export const booleanAsInteger = declareRecord<TaskRow, Schemas['Task']>({ ...taskFields, completed: ['integer', 'completed'] });

// @ts-expect-error a text column is never passed through as JSON (PostgreSQL would write it unquoted)
export const textAsJson = declareRecord<TaskRow, Schemas['Task']>({ ...taskFields, title: ['json', 'title'] });

const milestone = declareRecord<MilestoneJson, Schemas['Milestone']>({
  id: ['id', 'id'],
  revision: ['integer', 'revision'],
  goalId: ['id', 'goal_id'],
  title: ['text', 'title'],
  dueDate: ['day', 'due_date'],
  completed: ['boolean', 'completed'],
});

const goalFields = {
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
} as const;

export const goal = declareRecord<GoalRow & { milestones: MilestoneJson[] }, Schemas['Goal']>(goalFields);

// @ts-expect-error the nested record maps the row's elements into the field's
export const wrongNested = declareRecord<GoalRow & { milestones: MilestoneJson[] }, Schemas['Goal']>({ ...goalFields, milestones: ['json', 'milestones', task] });

// @ts-expect-error the derived mapper takes the declared row
export const wrongRow = task.toRecord({} as MilestoneRow);

export const mapped: Schemas['Goal'] = goal.toRecord({} as GoalRow & { milestones: MilestoneJson[] });

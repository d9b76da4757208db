/** Rows → the contract's task record. */
import type { Schemas } from '../api/operations.js';
import type { TaskRow } from '../db/database.js';
import type { JsonShape } from '../db/json.js';

export const toTask = (row: TaskRow): Schemas['Task'] => ({
  id: row.id,
  teamId: row.team_id,
  title: row.title,
  ownerId: row.owner_id,
  dueDate: row.due_date,
  completed: row.completed,
  completedAt: row.completed_at?.toISOString() ?? null,
  meetingId: row.meeting_id,
  createdAt: row.created_at.toISOString(),
});

/** `toTask` written by PostgreSQL, for the list (src/db/json.ts). */
export const taskJson: JsonShape<TaskRow, Schemas['Task']> = {
  id: ['id', 'id'],
  teamId: ['id', 'team_id'],
  title: ['text', 'title'],
  ownerId: ['id', 'owner_id'],
  dueDate: ['day', 'due_date'],
  completed: ['boolean', 'completed'],
  completedAt: ['instant', 'completed_at'],
  meetingId: ['id', 'meeting_id'],
  createdAt: ['instant', 'created_at'],
};

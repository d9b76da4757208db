/** Rows → the contract's task record. */
import type { Schemas } from '../api/operations.js';
import type { TaskRow } from '../db/database.js';

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

/** Rows → the contract's task record: `toTask` for single reads and changes, `taskJson` for the list (src/db/json.ts). */
import type { Schemas } from '../api/operations.js';
import type { TaskRow } from '../db/database.js';
import { declareRecord } from '../db/json.js';

export const { toRecord: toTask, shape: taskJson } = declareRecord<TaskRow, Schemas['Task']>({
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
});

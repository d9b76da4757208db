/** Rows → the contract's task record: `toTask` for single reads and changes, `taskJson` for the list (src/db/json.ts). */
import type { Schemas } from '../api/operations.js';
import type { TaskRow } from '../db/database.js';
import { declareRecord } from '../db/json.js';
import type { CsvRow } from '../api/csvBody.js';

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

/** The columns of a task in a CSV export and import (the contract's `TasksCsv`), in their order. */
export const taskCsvColumns = ['id', 'title', 'ownerEmail', 'dueDate', 'completed', 'completedAt', 'createdAt'] as const;

/** A row of the CSV export → its cells, in the order of `taskCsvColumns`. */
export const taskCsvRow = (row: { id: string; title: string; owner_email: string; due_date: string; completed: boolean; completed_at: Date | null; created_at: Date }): CsvRow => [
  row.id,
  row.title,
  row.owner_email,
  row.due_date,
  String(row.completed),
  row.completed_at?.toISOString() ?? null,
  row.created_at.toISOString(),
];

/** Rows → the contract's issue record: `toIssue` for single reads and changes, `issueJson` for the list (src/db/json.ts). */
import type { Schemas } from '../api/operations.js';
import type { IssueRow } from '../db/database.js';
import { declareRecord } from '../db/json.js';
import type { CsvRow } from '../api/csvBody.js';

export const { toRecord: toIssue, shape: issueJson } = declareRecord<IssueRow, Schemas['Issue']>({
  id: ['id', 'id'],
  revision: ['integer', 'revision'],
  teamId: ['id', 'team_id'],
  title: ['text', 'title'],
  description: ['text', 'description'],
  priority: ['enum', 'priority'],
  status: ['enum', 'status'],
  meetingId: ['id', 'meeting_id'],
  createdById: ['id', 'created_by_id'],
  resolvedAt: ['instant', 'resolved_at'],
  createdAt: ['instant', 'created_at'],
});

/** The columns of an issue in a CSV export and import (the contract's `IssuesCsv`), in their order. */
export const issueCsvColumns = ['id', 'title', 'description', 'priority', 'status', 'createdByEmail', 'resolvedAt', 'createdAt'] as const;

/** A row of the CSV export → its cells, in the order of `issueCsvColumns`. */
export const issueCsvRow = (row: {
  id: string;
  title: string;
  description: string | null;
  priority: string;
  status: string;
  created_by_email: string;
  resolved_at: Date | null;
  created_at: Date;
}): CsvRow => [row.id, row.title, row.description, row.priority, row.status, row.created_by_email, row.resolved_at?.toISOString() ?? null, row.created_at.toISOString()];

/** Rows → the contract's issue record: `toIssue` for single reads and changes, `issueJson` for the list (src/db/json.ts). */
import type { Schemas } from '../api/operations.js';
import type { IssueRow } from '../db/database.js';
import { declareRecord } from '../db/json.js';

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

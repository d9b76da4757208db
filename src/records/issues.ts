/** Rows → the contract's issue record. */
import type { Schemas } from '../api/operations.js';
import type { IssueRow } from '../db/database.js';
import type { JsonShape } from '../db/json.js';

export const toIssue = (row: IssueRow): Schemas['Issue'] => ({
  id: row.id,
  teamId: row.team_id,
  title: row.title,
  description: row.description,
  priority: row.priority,
  status: row.status,
  meetingId: row.meeting_id,
  createdById: row.created_by_id,
  resolvedAt: row.resolved_at?.toISOString() ?? null,
  createdAt: row.created_at.toISOString(),
});

/** `toIssue` written by PostgreSQL, for the list (src/db/json.ts). */
export const issueJson: JsonShape<IssueRow, Schemas['Issue']> = {
  id: ['id', 'id'],
  teamId: ['id', 'team_id'],
  title: ['text', 'title'],
  description: ['text', 'description'],
  priority: ['enum', 'priority'],
  status: ['enum', 'status'],
  meetingId: ['id', 'meeting_id'],
  createdById: ['id', 'created_by_id'],
  resolvedAt: ['instant', 'resolved_at'],
  createdAt: ['instant', 'created_at'],
};

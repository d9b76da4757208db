/** Rows → the contract's issue record. */
import type { Schemas } from '../api/operations.js';
import type { IssueRow } from '../db/database.js';

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

/** Rows → the contract's organization export record. */
import type { Schemas } from '../api/operations.js';
import type { OrgExportRow } from '../db/database.js';

export const toOrgExport = (row: OrgExportRow): Schemas['OrgExport'] => ({
  id: row.id,
  orgId: row.org_id,
  state: row.state,
  failure: row.failure,
  recordsDone: row.records_done,
  recordsTotal: row.records_total,
  archiveBytes: Number(row.archive_bytes),
  createdAt: row.created_at.toISOString(),
  completedAt: row.completed_at?.toISOString() ?? null,
  expiresAt: row.expires_at?.toISOString() ?? null,
});

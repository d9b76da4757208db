/** Rows → the contract's document record. */
import type { Schemas } from '../api/operations.js';
import type { DocumentRow } from '../db/database.js';

export const toDocument = (row: DocumentRow): Schemas['Document'] => ({
  id: row.id,
  teamId: row.team_id,
  name: row.name,
  url: row.url,
  type: row.type,
  createdById: row.created_by_id,
  createdAt: row.created_at.toISOString(),
});

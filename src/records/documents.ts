/** Rows → the contract's document record. */
import type { Schemas } from '../api/operations.js';
import type { DocumentRow } from '../db/database.js';
import type { JsonShape } from '../db/json.js';

export const toDocument = (row: DocumentRow): Schemas['Document'] => ({
  id: row.id,
  teamId: row.team_id,
  name: row.name,
  url: row.url,
  type: row.type,
  createdById: row.created_by_id,
  createdAt: row.created_at.toISOString(),
});

/** `toDocument` written by PostgreSQL, for the list (src/db/json.ts). */
export const documentJson: JsonShape<DocumentRow, Schemas['Document']> = {
  id: ['id', 'id'],
  teamId: ['id', 'team_id'],
  name: ['text', 'name'],
  url: ['text', 'url'],
  type: ['enum', 'type'],
  createdById: ['id', 'created_by_id'],
  createdAt: ['instant', 'created_at'],
};

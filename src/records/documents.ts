/** Rows → the contract's document record: `toDocument` for single reads and changes, `documentJson` for the list (src/db/json.ts). */
import type { Schemas } from '../api/operations.js';
import type { DocumentRow } from '../db/database.js';
import { declareRecord } from '../db/json.js';

export const { toRecord: toDocument, shape: documentJson } = declareRecord<DocumentRow, Schemas['Document']>({
  id: ['id', 'id'],
  revision: ['integer', 'revision'],
  teamId: ['id', 'team_id'],
  name: ['text', 'name'],
  url: ['text', 'url'],
  type: ['enum', 'type'],
  createdById: ['id', 'created_by_id'],
  createdAt: ['instant', 'created_at'],
});

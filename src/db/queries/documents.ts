/** Queries of documents (links added through the API, files uploaded in the web application). */
import type { Kysely, Transaction } from 'kysely';
import type { Database, DocumentRow } from '../database.js';
import type { JsonShape } from '../json.js';
import { preparedJsonPages } from '../pagination.js';
import { callerTeamRole, standingColumnNames, standingColumns, withStanding } from './access.js';

type Db = Kysely<Database> | Transaction<Database>;

/** A document with its team's organization and the caller's role in the team, in one query. */
export function findDocument(db: Db, documentId: string, userId: string) {
  return db
    .selectFrom('documents')
    .innerJoin('teams', 'teams.id', 'documents.team_id')
    .select(['documents.id', 'documents.team_id', 'teams.org_id', callerTeamRole('documents.team_id', userId)])
    .where('documents.id', '=', documentId)
    .executeTakeFirst();
}

const documentPageRows = (db: Db, { teamId, userId }: { teamId: string; userId: string }) =>
  db.selectFrom('documents').selectAll('documents').select(standingColumns(teamId, userId)).where('documents.team_id', '=', teamId);

/**
 * The team's documents, oldest first (index `documents_team_id_created_at_id_idx`), written as JSON by
 * `shape` (given by the handler), with the caller's standing in the team for the access check (`standingColumns`).
 */
export function teamDocumentPages<R>(shape: JsonShape<DocumentRow, R>) {
  const pages = preparedJsonPages(
    documentPageRows,
    [
      { column: 'documents.created_at', direction: 'asc', type: 'instant' },
      { column: 'documents.id', direction: 'asc', type: 'string' },
    ],
    shape,
    standingColumnNames,
  );
  return async (db: Db, teamId: string, userId: string, page: { limit: number; cursor?: string | undefined }) => withStanding(teamId, await pages(db, { teamId, userId }, page));
}

export function insertLink(db: Db, link: { teamId: string; name: string; url: string; createdById: string }) {
  return db
    .insertInto('documents')
    .values({ team_id: link.teamId, name: link.name, url: link.url, type: 'LINK', created_by_id: link.createdById })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteDocument(db: Db, documentId: string) {
  await db.deleteFrom('documents').where('id', '=', documentId).execute();
}

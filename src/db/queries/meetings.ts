/** Queries of meetings used by other areas. */
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../database.js';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * The team of a meeting, or undefined when there is no such meeting. Inside a transaction the row is
 * locked against deletion until a task or issue that refers to it is written.
 */
export async function meetingTeamId(db: Db, meetingId: string): Promise<string | undefined> {
  const row = await db.selectFrom('meetings').select('team_id').where('id', '=', meetingId).forKeyShare().executeTakeFirst();
  return row?.team_id;
}

/** Queries of the vision document: one per team. */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, VisionsTable } from '../database.js';

type Db = Kysely<Database> | Transaction<Database>;

/** The columns holding the vision's fields (each the field's stored form). */
export type VisionColumn = Exclude<keyof VisionsTable, 'id' | 'team_id' | 'created_at' | 'updated_at' | 'revision'>;

export function findVision(db: Db, teamId: string) {
  return db.selectFrom('visions').selectAll().where('team_id', '=', teamId).executeTakeFirst();
}

/** The team's vision, created with every field null when the team has none; an existing one is left unchanged. */
export async function createVision(db: Db, teamId: string) {
  const created = await db
    .insertInto('visions')
    .values({ team_id: teamId })
    .onConflict((oc) => oc.column('team_id').doNothing())
    .returningAll()
    .executeTakeFirst();
  return created ?? (await findVision(db, teamId))!;
}

/** Sets one field, creating the vision first when the team has none, in one statement (the unique `team_id` decides). */
export function setVisionField(db: Db, teamId: string, column: VisionColumn, stored: string) {
  return db
    .insertInto('visions')
    .values({ team_id: teamId, [column]: stored })
    .onConflict((oc) =>
      oc.column('team_id').doUpdateSet((eb) => ({
        [column]: eb.ref(`excluded.${column}`),
        updated_at: sql<Date>`now()`,
      })),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

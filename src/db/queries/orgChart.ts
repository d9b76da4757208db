/** Queries of the accountability chart: the seats of a team. */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, SeatRow } from '../database.js';
import { callerTeamRole } from './access.js';
import { insertEventsOfRows, logRevision, type BulkStamp } from './events.js';

type Db = Kysely<Database> | Transaction<Database>;

/** A seat with its team's organization and the caller's role in the team, in one query. */
export function findSeat(db: Db, seatId: string, userId: string) {
  return db
    .selectFrom('seats')
    .innerJoin('teams', 'teams.id', 'seats.team_id')
    .select(['seats.id', 'seats.team_id', 'teams.org_id', callerTeamRole('seats.team_id', userId)])
    .where('seats.id', '=', seatId)
    .executeTakeFirst();
}

/**
 * Every seat of the team, depth first: each top-level seat by position, followed by the seats below
 * it, recursively, each level by position — one recursive query that walks down through
 * `seats_parent_id_idx`. The sort path holds each ancestor's position (zero-padded, so text order is
 * number order) and id, so that seats sharing a position still keep their branches together.
 */
export async function listTeamSeats(db: Db, teamId: string): Promise<SeatRow[]> {
  const { rows } = await sql<SeatRow>`
    with recursive tree as (
      select s.*, array[lpad(s.position::text, 10, '0') || s.id] as path
      from seats s
      where s.team_id = ${teamId} and s.parent_id is null
      union all
      select s.*, tree.path || (lpad(s.position::text, 10, '0') || s.id)
      from seats s
      join tree on s.parent_id = tree.id
    )
    select id, revision, team_id, parent_id, user_id, title, responsibilities, position, created_at
    from tree
    order by path collate "C"
  `.execute(db);
  return rows;
}

/**
 * Locks the team's chart against other new seats until the transaction ends, so that two seats added
 * at once cannot take the same position. `for no key update` leaves the team's key free: inserts
 * elsewhere that reference the team are not held up.
 */
export async function lockTeamChart(trx: Transaction<Database>, teamId: string) {
  await trx.selectFrom('teams').select('id').where('id', '=', teamId).forNoKeyUpdate().executeTakeFirst();
}

/** The team of a seat, the seat kept from being deleted until the transaction ends; undefined when there is none. */
export async function seatTeamId(trx: Transaction<Database>, seatId: string): Promise<string | undefined> {
  const row = await trx.selectFrom('seats').select('team_id').where('id', '=', seatId).forKeyShare().executeTakeFirst();
  return row?.team_id;
}

/** Adds the seat after the existing seats on its level (the seats with the same parent). */
export function insertSeat(
  trx: Transaction<Database>,
  seat: { teamId: string; parentId: string | null; userId: string | null; title: string; responsibilities: string | null },
) {
  return trx
    .insertInto('seats')
    .values((eb) => {
      let level = eb.selectFrom('seats').where('team_id', '=', seat.teamId);
      level = seat.parentId === null ? level.where('parent_id', 'is', null) : level.where('parent_id', '=', seat.parentId);
      return {
        team_id: seat.teamId,
        parent_id: seat.parentId,
        user_id: seat.userId,
        title: seat.title,
        responsibilities: seat.responsibilities,
        position: level.select(sql<number>`coalesce(max(position), 0) + 1`.as('position')),
      };
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface SeatChange {
  title?: string | undefined;
  userId?: string | null | undefined;
  responsibilities?: string | null | undefined;
}

/** Applies the change in one statement; undefined when the seat no longer exists. */
export function updateSeat(db: Db, seatId: string, change: SeatChange) {
  return db
    .updateTable('seats')
    .set({ title: change.title, user_id: change.userId, responsibilities: change.responsibilities })
    .where('id', '=', seatId)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Deletes the seat; the foreign key `seats(parent_id)` cascades, so every seat below it goes in the
 * same statement, which writes the `seat.deleted` of each of those too (the seat's own is the
 * outbox's), read from the chart as the statement found it, whatever their number.
 */
export async function deleteSeat(db: Db, seatId: string, stamp: BulkStamp) {
  await sql`
    with recursive below as (
      select s.id, s.team_id from seats s where s.parent_id = ${seatId}
      union all
      select s.id, s.team_id from seats s join below on s.parent_id = below.id
    ),
    gone as (delete from seats where id = ${seatId} returning id),
    taken as (
      select t.org_id, below.team_id, '{"id":' || to_json(below.id)::text || ',"revision":' || ${logRevision} || '}' as object
      from below join teams t on t.id = below.team_id
      where exists (select 1 from gone)
    )
    ${insertEventsOfRows('taken', 'seat.deleted', stamp)}
  `.execute(db);
}

/** Rows → the contract's seat record. */
import type { Schemas } from '../api/operations.js';
import type { SeatRow } from '../db/database.js';

export const toSeat = (row: SeatRow): Schemas['Seat'] => ({
  id: row.id,
  revision: Number(row.revision),
  teamId: row.team_id,
  title: row.title,
  parentId: row.parent_id,
  userId: row.user_id,
  responsibilities: row.responsibilities,
  position: row.position,
});

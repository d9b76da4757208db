/** Rows → the contract's team records. */
import type { Schemas } from '../api/operations.js';
import type { TeamMemberRow, TeamRow, UserRow } from '../db/database.js';
import { declareRecord } from '../db/json.js';

export const toTeam = (row: TeamRow): Schemas['Team'] => ({
  id: row.id,
  revision: Number(row.revision),
  orgId: row.org_id,
  name: row.name,
  slug: row.slug,
  isLeadership: row.is_leadership,
  meetingDurationMin: row.meeting_duration_min,
  meetingWarningMin: row.meeting_warning_min,
});

export type TeamMemberDetails = Pick<TeamMemberRow, 'user_id' | 'revision' | 'role'> & Pick<UserRow, 'email' | 'name'>;

/** `toTeamMember` for single reads and changes, `teamMemberJson` for the list (src/db/json.ts). */
export const { toRecord: toTeamMember, shape: teamMemberJson } = declareRecord<TeamMemberDetails, Schemas['TeamMember']>({
  userId: ['id', 'user_id'],
  revision: ['integer', 'revision'],
  email: ['text', 'email'],
  name: ['text', 'name'],
  role: ['enum', 'role'],
});

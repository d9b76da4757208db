/** Rows → the contract's team records. */
import type { Schemas } from '../api/operations.js';
import type { TeamMemberRow, TeamRow, UserRow } from '../db/database.js';
import type { JsonShape } from '../db/json.js';

export const toTeam = (row: TeamRow): Schemas['Team'] => ({
  id: row.id,
  orgId: row.org_id,
  name: row.name,
  slug: row.slug,
  isLeadership: row.is_leadership,
  meetingDurationMin: row.meeting_duration_min,
  meetingWarningMin: row.meeting_warning_min,
});

export type TeamMemberDetails = Pick<TeamMemberRow, 'user_id' | 'role'> & Pick<UserRow, 'email' | 'name'>;

export const toTeamMember = (row: TeamMemberDetails): Schemas['TeamMember'] => ({
  userId: row.user_id,
  email: row.email,
  name: row.name,
  role: row.role,
});

/** `toTeamMember` written by PostgreSQL, for the list (src/db/json.ts). */
export const teamMemberJson: JsonShape<TeamMemberDetails, Schemas['TeamMember']> = {
  userId: ['id', 'user_id'],
  email: ['text', 'email'],
  name: ['text', 'name'],
  role: ['enum', 'role'],
};

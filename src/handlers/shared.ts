/** Rules several areas share, checked inside the change's transaction. */
import type { Transaction } from 'kysely';
import type { Database } from '../db/database.js';
import { isTeamMember } from '../db/queries/teams.js';
import { RuleViolation } from '../errors.js';

/** Any `ownerId` (task, goal, metric) and `userId` (seat, review) must be a member of the item's team. */
export async function requireTeamMember(trx: Transaction<Database>, teamId: string, userId: string, item: string) {
  if (!(await isTeamMember(trx, teamId, userId))) {
    throw new RuleViolation(`The ${item}'s owner must be a member of its team.`);
  }
}

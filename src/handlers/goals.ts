/** Handlers of the goals area: quarterly goals (Rocks) of a team or of the whole company, and their milestones. */
import { locationOf } from '../api/location.js';
import { goalAccess, mayDeleteGoal, mayManageGoal, mayReportOnGoal, requireChange, teamAllows } from '../auth/permissions.js';
import type { GoalLevel } from '../db/database.js';
import { loadOrganizationAccess, loadTeamAccess } from '../auth/access.js';
import { standingOf } from '../db/queries/access.js';
import * as goals from '../db/queries/goals.js';
import { EXPORT_BATCH_ROWS, pageLimit, type CreationKey } from '../db/pagination.js';
import { attachment, csvBody, keysetBatches } from '../api/csvBody.js';
import { NotFound, RuleViolation } from '../errors.js';
import { goalCsvColumns, goalCsvRows, goalJson, milestoneJson, toGoal, toMilestone } from '../records/goals.js';
import { pageText } from '../api/jsonText.js';
import { clearable, requireTeamMember } from './shared.js';
import type { AreaHandlers, Handler } from './types.js';
import { inTransaction } from '../db/transaction.js';

function requireCompanyLevelAllowed(level: GoalLevel | undefined, isLeadership: boolean) {
  if (level === 'COMPANY' && !isLeadership) {
    throw new RuleViolation('Company goals can be set only in a leadership team.');
  }
}

const companyGoalPages = goals.companyGoalPages(goalJson, milestoneJson);
const teamGoalPages = goals.teamGoalPages(goalJson, milestoneJson);

export const listOrganizationGoals: Handler<'listOrganizationGoals'> = async ({ params, query }, { db, caller }) => {
  await loadOrganizationAccess(db, caller, params.orgId, 'collection');
  const page = await companyGoalPages(db, params.orgId, { quarter: query.quarter, status: query.status }, { limit: pageLimit(query.limit), cursor: query.cursor });
  return { status: 200, body: pageText(page), logOf: params.orgId };
};

export const listTeamGoals: Handler<'listTeamGoals'> = async ({ params, query }, { db, caller }) => {
  const page = await teamGoalPages(
    db,
    params.teamId,
    caller.userId,
    { quarter: query.quarter, status: query.status, level: query.level },
    { limit: pageLimit(query.limit), cursor: query.cursor },
  );
  const { access } = await loadTeamAccess(db, caller, params.teamId, 'collection', page.standing);
  return { status: 200, body: pageText(page), logOf: access.orgId };
};

export const createGoal: Handler<'createGoal'> = async ({ params, body }, { db, caller }) => {
  const { team, access } = await loadTeamAccess(db, caller, params.teamId, 'collection');
  requireChange(access, teamAllows(access, 'manageGoals'));
  const level = body.level ?? 'DEPARTMENT';
  requireCompanyLevelAllowed(level, team.is_leadership);
  const goal = await inTransaction(db, async (trx) => {
    await requireTeamMember(trx, team.id, body.ownerId, 'goal');
    return goals.insertGoal(trx, {
      teamId: team.id,
      orgId: team.org_id,
      title: body.title,
      description: clearable(body.description ?? null),
      ownerId: body.ownerId,
      quarter: body.quarter,
      level,
    });
  });
  return { status: 201, body: toGoal({ ...goal, milestones: [] }), headers: { Location: locationOf('/goals/{id}', { id: goal.id }) } };
};

export const getGoal: Handler<'getGoal'> = async ({ params }, { db, caller }) => {
  const goal = await goals.findGoal(db, params.id, caller.userId);
  const standing = goal && standingOf(goal);
  goalAccess(caller, standing, goal?.level);
  return { status: 200, body: toGoal(goal!), logOf: standing!.orgId };
};

/**
 * The goal stays locked from the permission check to the write, so its owner, who may report its
 * status, cannot change in between. Only a new owner is checked: other fields stay editable after the
 * current owner has left the team.
 */
export const updateGoal: Handler<'updateGoal'> = async ({ params, body }, { db, caller }) => {
  const goal = await inTransaction(db, async (trx) => {
    const stored = await goals.lockGoal(trx, params.id, caller.userId);
    const access = goalAccess(caller, stored && standingOf(stored), stored?.level);
    const statusOnly = Object.keys(body).every((field) => field === 'status');
    requireChange(access, statusOnly ? mayReportOnGoal(access, caller.userId, stored!.owner_id) : mayManageGoal(access));
    requireCompanyLevelAllowed(body.level, stored!.is_leadership);
    if (body.ownerId !== undefined) await requireTeamMember(trx, stored!.team_id, body.ownerId, 'goal');
    return goals.updateGoal(trx, params.id, { ...body, description: clearable(body.description) });
  });
  return { status: 200, body: toGoal(goal) };
};

export const deleteGoal: Handler<'deleteGoal'> = async ({ params }, { db, caller }) => {
  const goal = await goals.findGoalFacts(db, params.id, caller.userId);
  const access = goalAccess(caller, goal && standingOf(goal), goal?.level);
  requireChange(access, mayDeleteGoal(access));
  await goals.deleteGoal(db, params.id);
  return { status: 204, body: undefined };
};

export const createMilestone: Handler<'createMilestone'> = async ({ params, body }, { db, caller }) => {
  const goal = await goals.findGoalFacts(db, params.id, caller.userId);
  const access = goalAccess(caller, goal && standingOf(goal), goal?.level);
  requireChange(access, mayReportOnGoal(access, caller.userId, goal!.owner_id));
  const milestone = await goals.insertMilestone(db, params.id, { title: body.title, dueDate: body.dueDate ?? null });
  if (!milestone) throw new NotFound();
  return { status: 201, body: toMilestone(milestone) };
};

export const updateMilestone: Handler<'updateMilestone'> = async ({ params, body }, { db, caller }) => {
  const milestone = await goals.findMilestone(db, params.id, caller.userId);
  const access = goalAccess(caller, milestone && standingOf(milestone), milestone?.level);
  requireChange(access, mayReportOnGoal(access, caller.userId, milestone!.owner_id));
  const updated = await goals.updateMilestone(db, params.id, body);
  if (!updated) throw new NotFound();
  return { status: 200, body: toMilestone(updated) };
};

export const deleteMilestone: Handler<'deleteMilestone'> = async ({ params }, { db, caller }) => {
  const milestone = await goals.findMilestone(db, params.id, caller.userId);
  const access = goalAccess(caller, milestone && standingOf(milestone), milestone?.level);
  requireChange(access, mayReportOnGoal(access, caller.userId, milestone!.owner_id));
  await goals.deleteMilestone(db, params.id);
  return { status: 204, body: undefined };
};

/** The whole list as CSV, a row per milestone, read in batches of goals as the connection takes them. */
export const exportTeamGoals: Handler<'exportTeamGoals'> = async ({ params }, { db, caller , logger }) => {
  const first = await goals.goalExportBatch(db, params.teamId, caller.userId, undefined);
  await loadTeamAccess(db, caller, params.teamId, 'collection', first.standing);
  const read = async (after: CreationKey) => (await goals.goalExportBatch(db, params.teamId, caller.userId, after)).rows;
  const keyOf = (row: { id: string; created_at_text: string }) => ({ at: row.created_at_text, id: row.id });
  return { status: 200, headers: attachment('goals.csv'), body: csvBody(goalCsvColumns, keysetBatches(first.rows, EXPORT_BATCH_ROWS, read, keyOf, (batch) => batch.flatMap(goalCsvRows)), logger) };
};

export const goalsHandlers: AreaHandlers<'Goals'> = {
  listOrganizationGoals,
  listTeamGoals,
  createGoal,
  getGoal,
  updateGoal,
  deleteGoal,
  createMilestone,
  updateMilestone,
  deleteMilestone,
  exportTeamGoals,
};

/**
 * Matrix rows of the goal and milestone operations. Company goals are readable by every member of the
 * organization (orgMember), who still may change nothing of them; department goals only by those who
 * see the team. Goals belong to the team Member (teamMember), who may report on them.
 */
import { createGoal, createMilestone } from '../support/executionFactories.js';
import { row, rowFor, type AreaRows, type World } from './world.js';

const S = 'scope';

const departmentGoal = (w: World) => createGoal(w.db, w.team, w.users.teamMember.id);
const companyGoal = async (w: World) => createGoal(w.db, await w.newTeam({ isLeadership: true }), w.users.teamMember.id, { level: 'COMPANY' });
const milestoneOf = (goal: (w: World) => ReturnType<typeof departmentGoal>) => async (w: World) => createMilestone(w.db, (await goal(w)).id);

// prettier-ignore
export const goalRows: AreaRows<'Goals'> = {
  //                                  noKey readOnly orgOwner orgAdmin implementer teamOwner teamAdmin teamMember teamViewer orgMember outsider superadmin superadminMember formerSuperadmin
  listTeamGoals: row(                  [401, 200,     200,     200,     200,        200,      200,      200,       200,       403,      403,     403,       200,             S],
    (w) => ({ path: `/v1/teams/${w.team.id}/goals` })),
  listOrganizationGoals: row(          [401, 200,     200,     200,     200,        200,      200,      200,       200,       200,      403,     403,       200,             S],
    (w) => ({ path: `/v1/orgs/${w.org.id}/goals` })),
  createGoal: row(                     [401, S,       201,     201,     201,        201,      201,      403,       403,       403,      403,     403,       403,             S],
    (w) => ({ path: `/v1/teams/${w.team.id}/goals`, body: { title: 'Sign 5 new enterprise customers', ownerId: w.users.teamMember.id, quarter: '2026-Q4' } })),
  getGoal: rowFor(                     [401, 200,     200,     200,     200,        200,      200,      200,       200,       200,      404,     404,       200,             S],
    companyGoal,
    (_w, goal) => ({ path: `/v1/goals/${goal.id}` })),
  updateGoal: rowFor(                  [401, S,       200,     200,     200,        200,      200,      200,       403,       403,      404,     404,       403,             S],
    companyGoal,
    (_w, goal) => ({ path: `/v1/goals/${goal.id}`, body: { status: 'OFF_TRACK' } })),
  deleteGoal: rowFor(                  [401, S,       204,     204,     204,        204,      204,      403,       403,       404,      404,     404,       403,             S],
    departmentGoal,
    (_w, goal) => ({ path: `/v1/goals/${goal.id}` })),
  createMilestone: rowFor(             [401, S,       201,     201,     201,        201,      201,      201,       403,       403,      404,     404,       403,             S],
    companyGoal,
    (_w, goal) => ({ path: `/v1/goals/${goal.id}/milestones`, body: { title: 'Close the fifth contract', dueDate: '2026-12-18' } })),
  updateMilestone: rowFor(             [401, S,       200,     200,     200,        200,      200,      200,       403,       404,      404,     404,       403,             S],
    milestoneOf(departmentGoal),
    (_w, milestone) => ({ path: `/v1/milestones/${milestone.id}`, body: { completed: true } })),
  deleteMilestone: rowFor(             [401, S,       204,     204,     204,        204,      204,      204,       403,       403,      404,     404,       403,             S],
    milestoneOf(companyGoal),
    (_w, milestone) => ({ path: `/v1/milestones/${milestone.id}` })),
  exportTeamGoals: row(                [401, 200,     200,     200,     200,        200,      200,      200,       200,       403,      403,     403,       200,             S],
    (w) => ({ path: `/v1/teams/${w.team.id}/goals/csv` })),
};

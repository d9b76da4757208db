/** Matrix rows of the people review operations: every member of the team reads (what they may see), Members and above write. */
import { row, type AreaRows } from './world.js';

const S = 'scope';

// prettier-ignore
export const peopleReviewRows: AreaRows<'People reviews'> = {
  //                                  noKey readOnly orgOwner orgAdmin implementer teamOwner teamAdmin teamMember teamViewer orgMember outsider superadmin superadminMember formerSuperadmin
  listTeamPeopleReviews: row(          [401, 200,     200,     200,     200,        200,      200,      200,       200,       403,      403,     403,       200,             S],
    (w) => ({ path: `/v1/teams/${w.team.id}/people-reviews` })),
  putPeopleReview: row(                [401, S,       200,     200,     200,        200,      200,      200,       403,       403,      403,     403,       200,             S],
    (w) => ({
      path: `/v1/teams/${w.team.id}/people-reviews`,
      body: { userId: w.users.teamMember.id, quarter: '2026-Q4', coreValuesScores: { 'Help first': true }, gwc: { getsIt: true, wantsIt: true, capacityToDoIt: true } },
    })),
};

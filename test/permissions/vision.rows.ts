/** Matrix rows of the vision: everyone who sees the team reads it, team Admins and Owners create and change it. */
import { createVision } from '../support/areaFactories.js';
import { row, rowFor, type AreaRows, type World } from './world.js';

const S = 'scope';

/** A team of its own for every caller, with a vision, so that each read finds one. */
const teamWithVision = async (w: World) => {
  const team = await w.newTeam();
  await createVision(w.db, team.id, { core_values: '["Help first"]' });
  return team;
};

// prettier-ignore
export const visionRows: AreaRows<'Vision'> = {
  //                                  noKey readOnly orgOwner orgAdmin implementer teamOwner teamAdmin teamMember teamViewer orgMember outsider superadmin superadminMember formerSuperadmin
  getTeamVision: rowFor(               [401, 200,     200,     200,     200,        200,      200,      200,       200,       403,      403,     403,       200,             S],
    teamWithVision,
    (_w, team) => ({ path: `/v1/teams/${team.id}/vision` })),
  createTeamVision: row(               [401, S,       201,     201,     201,        201,      201,      403,       403,       403,      403,     403,       403,             S],
    (w) => ({ path: `/v1/teams/${w.team.id}/vision` })),
  updateTeamVision: row(               [401, S,       200,     200,     200,        200,      200,      403,       403,       403,      403,     403,       403,             S],
    (w) => ({ path: `/v1/teams/${w.team.id}/vision`, body: { field: 'tenYearTarget', value: '€50M annual revenue by 2036' } })),
};

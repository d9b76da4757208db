/** Matrix rows of the accountability chart: everyone who sees the team reads it, team Admins and Owners change it. */
import { createSeat } from '../support/areaFactories.js';
import { row, rowFor, type AreaRows, type World } from './world.js';

const S = 'scope';

const newSeat = (w: World) => createSeat(w.db, w.team.id, { userId: w.users.teamMember.id });

// prettier-ignore
export const orgChartRows: AreaRows<'Org chart'> = {
  //                                  noKey readOnly orgOwner orgAdmin implementer teamOwner teamAdmin teamMember teamViewer orgMember outsider superadmin superadminMember formerSuperadmin
  listTeamSeats: row(                  [401, 200,     200,     200,     200,        200,      200,      200,       200,       403,      403,     403,       200,             S],
    (w) => ({ path: `/v1/teams/${w.team.id}/org-chart` })),
  createSeat: row(                     [401, S,       201,     201,     201,        201,      201,      403,       403,       403,      403,     403,       403,             S],
    (w) => ({ path: `/v1/teams/${w.team.id}/org-chart/seats`, body: { title: 'Head of Sales', userId: w.users.teamMember.id } })),
  updateSeat: rowFor(                  [401, S,       200,     200,     200,        200,      200,      403,       403,       404,      404,     404,       403,             S],
    newSeat,
    (_w, seat) => ({ path: `/v1/org-chart/seats/${seat.id}`, body: { userId: null } })),
  deleteSeat: rowFor(                  [401, S,       204,     204,     204,        204,      204,      403,       403,       404,      404,     404,       403,             S],
    newSeat,
    (_w, seat) => ({ path: `/v1/org-chart/seats/${seat.id}` })),
};

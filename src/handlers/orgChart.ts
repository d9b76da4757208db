/** Handlers of the org-chart area: the seats of a team's accountability chart. */
import type { Transaction } from 'kysely';
import { requireChange, teamAccess, teamAllows } from '../auth/permissions.js';
import type { Database } from '../db/database.js';
import { loadTeamAccess } from '../auth/access.js';
import { standingOf } from '../db/queries/access.js';
import * as orgChart from '../db/queries/orgChart.js';
import { NotFound, RuleViolation } from '../errors.js';
import { toSeat } from '../records/orgChart.js';
import { clearable, requireTeamMember } from './shared.js';
import type { AreaHandlers, Handler } from './types.js';
import { inTransaction } from '../db/transaction.js';

/** A new seat's parent must be a seat of the same team. */
async function requireSeatOfTeam(trx: Transaction<Database>, teamId: string, parentId: string) {
  if ((await orgChart.seatTeamId(trx, parentId)) !== teamId) {
    throw new RuleViolation('The parent must be a seat of the same team.');
  }
}

export const listTeamSeats: Handler<'listTeamSeats'> = async ({ params }, { db, caller }) => {
  const { access } = await loadTeamAccess(db, caller, params.teamId, 'collection');
  const seats = await orgChart.listTeamSeats(db, params.teamId);
  return { status: 200, body: { data: seats.map(toSeat), nextCursor: null }, logOf: access.orgId };
};

export const createSeat: Handler<'createSeat'> = async ({ params, body }, { db, caller }) => {
  const { access } = await loadTeamAccess(db, caller, params.teamId, 'collection');
  requireChange(access, teamAllows(access, 'editOrgChart'));
  const seat = await inTransaction(db, async (trx) => {
    await orgChart.lockTeamChart(trx, params.teamId);
    const parentId = body.parentId ?? null;
    if (parentId !== null) await requireSeatOfTeam(trx, params.teamId, parentId);
    const userId = body.userId ?? null;
    if (userId !== null) await requireTeamMember(trx, params.teamId, userId, 'seat', 'holder');
    return orgChart.insertSeat(trx, {
      teamId: params.teamId,
      parentId,
      userId,
      title: body.title,
      responsibilities: clearable(body.responsibilities ?? null),
    });
  });
  return { status: 201, body: toSeat(seat) };
};

/** Only a new person is checked: other fields stay editable after the person in the seat has left the team. */
export const updateSeat: Handler<'updateSeat'> = async ({ params, body }, { db, caller }) => {
  const seat = await orgChart.findSeat(db, params.id, caller.userId);
  const access = teamAccess(caller, seat && standingOf(seat), 'item');
  requireChange(access, teamAllows(access, 'editOrgChart'));
  const updated = await inTransaction(db, async (trx) => {
    if (body.userId != null) await requireTeamMember(trx, seat!.team_id, body.userId, 'seat', 'holder');
    return orgChart.updateSeat(trx, params.id, {
      title: body.title,
      userId: body.userId,
      responsibilities: clearable(body.responsibilities),
    });
  });
  if (!updated) throw new NotFound();
  return { status: 200, body: toSeat(updated) };
};

/** The seats below go with it, each with its `seat.deleted`. */
export const deleteSeat: Handler<'deleteSeat'> = async ({ params }, { db, caller, now, traceparent }) => {
  const seat = await orgChart.findSeat(db, params.id, caller.userId);
  const access = teamAccess(caller, seat && standingOf(seat), 'item');
  requireChange(access, teamAllows(access, 'delete'));
  await orgChart.deleteSeat(db, params.id, { at: now(), traceparent });
  return { status: 204, body: undefined };
};

export const orgChartHandlers: AreaHandlers<'Org chart'> = {
  listTeamSeats,
  createSeat,
  updateSeat,
  deleteSeat,
};

/** Handlers of the vision area: the team's vision document (V/TO), one per team. */
import { locationOf } from '../api/location.js';
import { requireChange, teamAllows } from '../auth/permissions.js';
import { loadTeamAccess } from '../auth/access.js';
import * as vision from '../db/queries/vision.js';
import { NotFound, RuleViolation } from '../errors.js';
import { toVision, visionColumns } from '../records/vision.js';
import { fitsStoredLimit, storedVisionValue, VISION_STORED_MAX } from '../rules/vision.js';
import type { AreaHandlers, Handler } from './types.js';

export const getTeamVision: Handler<'getTeamVision'> = async ({ params }, { db, caller }) => {
  const { access } = await loadTeamAccess(db, caller, params.teamId, 'collection');
  const found = await vision.findVision(db, params.teamId);
  if (!found) throw new NotFound('The team has no vision yet.');
  return { status: 200, body: toVision(found), logOf: access.orgId };
};

export const createTeamVision: Handler<'createTeamVision'> = async ({ params }, { db, caller }) => {
  const { access } = await loadTeamAccess(db, caller, params.teamId, 'collection');
  requireChange(access, teamAllows(access, 'editVision'));
  const created = toVision(await vision.createVision(db, params.teamId));
  return { status: 201, body: created, headers: { Location: locationOf('/teams/{teamId}/vision', { teamId: params.teamId }) } };
};

/** The shape of the value was checked with the contract; its stored form is a limit of the field alone, checked before visibility like the others. */
export const updateTeamVision: Handler<'updateTeamVision'> = async ({ params, body }, { db, caller }) => {
  const stored = storedVisionValue(body.value);
  if (!fitsStoredLimit(stored)) {
    throw new RuleViolation(`${body.field}: the stored value may have at most ${VISION_STORED_MAX} characters.`);
  }
  const { access } = await loadTeamAccess(db, caller, params.teamId, 'collection');
  requireChange(access, teamAllows(access, 'editVision'));
  const updated = await vision.setVisionField(db, params.teamId, visionColumns[body.field], stored);
  return { status: 200, body: toVision(updated) };
};

export const visionHandlers: AreaHandlers<'Vision'> = {
  getTeamVision,
  createTeamVision,
  updateTeamVision,
};

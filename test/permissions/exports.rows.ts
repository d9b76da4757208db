/**
 * Matrix rows of the Exports operations: the organization's Owners only (its Admins, as every other
 * member and anyone outside it, get 403, as on the organization's administration). An export read or
 * downloaded is a COMPLETED one made in the database (no worker runs in the matrix's app).
 */
import { row, rowFor, type AreaRows, type World } from './world.js';

const S = 'scope';

const completedExport = (w: World) =>
  w.db
    .insertInto('org_exports')
    .values({ org_id: w.org.id, state: 'COMPLETED', records_total: 0, completed_at: new Date(), expires_at: new Date(Date.now() + 86_400_000) })
    .returning('id')
    .executeTakeFirstOrThrow();

// prettier-ignore
export const exportsRows: AreaRows<'Exports'> = {
  //                                  noKey readOnly orgOwner orgAdmin implementer teamOwner teamAdmin teamMember teamViewer orgMember outsider superadmin superadminMember formerSuperadmin
  startOrgExport: row(                 [401, S,       202,     403,     403,        403,      403,      403,       403,       403,      403,     403,       403,             S],
    (w) => ({ path: `/v1/orgs/${w.org.id}/exports` })),
  getOrgExport: rowFor(                [401, 200,     200,     403,     403,        403,      403,      403,       403,       403,      403,     403,       403,             S],
    completedExport,
    (w, target) => ({ path: `/v1/orgs/${w.org.id}/exports/${target.id}` })),
  downloadOrgExport: rowFor(           [401, 200,     200,     403,     403,        403,      403,      403,       403,       403,      403,     403,       403,             S],
    completedExport,
    (w, target) => ({ path: `/v1/orgs/${w.org.id}/exports/${target.id}/archive` })),
};

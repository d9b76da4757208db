/** Matrix rows of the document operations: team Members add links, team Admins delete. */
import { createDocument } from '../support/areaFactories.js';
import { row, rowFor, type AreaRows, type World } from './world.js';

const S = 'scope';

const newLink = (w: World) => createDocument(w.db, w.team.id, w.users.teamMember.id);

// prettier-ignore
export const documentRows: AreaRows<'Documents'> = {
  //                                  noKey readOnly orgOwner orgAdmin implementer teamOwner teamAdmin teamMember teamViewer orgMember outsider superadmin superadminMember formerSuperadmin
  listTeamDocuments: row(              [401, 200,     200,     200,     200,        200,      200,      200,       200,       403,      403,     403,       200,             S],
    (w) => ({ path: `/v1/teams/${w.team.id}/documents` })),
  createDocument: row(                 [401, S,       201,     201,     201,        201,      201,      201,       403,       403,      403,     403,       201,             S],
    (w) => ({ path: `/v1/teams/${w.team.id}/documents`, body: { name: 'Pipeline dashboard', url: 'https://crm.northwind.example/dashboards/pipeline' } })),
  deleteDocument: rowFor(              [401, S,       204,     204,     204,        204,      204,      403,       403,       404,      404,     404,       403,             S],
    newLink,
    (_w, document) => ({ path: `/v1/documents/${document.id}` })),
};

/** Matrix rows of the issue operations. */
import { createIssue } from '../support/executionFactories.js';
import { csvFile } from '../support/testApp.js';
import { row, rowFor, type AreaRows, type World } from './world.js';

const S = 'scope';

const newIssue = (w: World) => createIssue(w.db, w.team.id, w.users.teamMember.id);

// prettier-ignore
export const issueRows: AreaRows<'Issues'> = {
  //                                  noKey readOnly orgOwner orgAdmin implementer teamOwner teamAdmin teamMember teamViewer orgMember outsider superadmin superadminMember formerSuperadmin
  listTeamIssues: row(                 [401, 200,     200,     200,     200,        200,      200,      200,       200,       403,      403,     403,       200,             S],
    (w) => ({ path: `/v1/teams/${w.team.id}/issues` })),
  createIssue: row(                    [401, S,       201,     201,     201,        201,      201,      201,       403,       403,      403,     403,       201,             S],
    (w) => ({ path: `/v1/teams/${w.team.id}/issues`, body: { title: 'Late deliveries' } })),
  getIssue: rowFor(                    [401, 200,     200,     200,     200,        200,      200,      200,       200,       404,      404,     404,       200,             S],
    newIssue,
    (_w, issue) => ({ path: `/v1/issues/${issue.id}` })),
  updateIssue: rowFor(                 [401, S,       200,     200,     200,        200,      200,      200,       403,       404,      404,     404,       200,             S],
    newIssue,
    (_w, issue) => ({ path: `/v1/issues/${issue.id}`, body: { status: 'SOLVED' } })),
  deleteIssue: rowFor(                 [401, S,       204,     204,     204,        204,      204,      403,       403,       404,      404,     404,       403,             S],
    newIssue,
    (_w, issue) => ({ path: `/v1/issues/${issue.id}` })),
  importTeamIssues: row(               [401, S,       200,     200,     200,        200,      200,      200,       403,       403,      403,     403,       200,             S],
    (w) => ({ path: `/v1/teams/${w.team.id}/issues/csv`, body: csvFile('title,priority\r\nLate deliveries,HIGH\r\n') })),
  exportTeamIssues: row(               [401, 200,     200,     200,     200,        200,      200,      200,       200,       403,      403,     403,       200,             S],
    (w) => ({ path: `/v1/teams/${w.team.id}/issues/csv` })),
};

/** Matrix rows of the issue operations. */
import { createIssue } from '../support/executionFactories.js';
import { row, rowFor, type World } from './world.js';

const S = 'scope';

const newIssue = (w: World) => createIssue(w.db, w.team.id, w.users.teamMember.id);

// prettier-ignore
export const issueRows = [
  //                                  noKey readOnly orgOwner orgAdmin implementer teamOwner teamAdmin teamMember teamViewer orgMember outsider superadmin superadminMember formerSuperadmin
  row('listTeamIssues',                [401, 200,     200,     200,     200,        200,      200,      200,       200,       403,      403,     403,       200,             S],
    (w) => ({ path: `/v1/teams/${w.team.id}/issues` })),
  row('createIssue',                   [401, S,       201,     201,     201,        201,      201,      201,       403,       403,      403,     403,       201,             S],
    (w) => ({ path: `/v1/teams/${w.team.id}/issues`, body: { title: 'Late deliveries' } })),
  rowFor('getIssue',                   [401, 200,     200,     200,     200,        200,      200,      200,       200,       404,      404,     404,       200,             S],
    newIssue,
    (_w, issue) => ({ path: `/v1/issues/${issue.id}` })),
  rowFor('updateIssue',                [401, S,       200,     200,     200,        200,      200,      200,       403,       404,      404,     404,       200,             S],
    newIssue,
    (_w, issue) => ({ path: `/v1/issues/${issue.id}`, body: { status: 'SOLVED' } })),
  rowFor('deleteIssue',                [401, S,       204,     204,     204,        204,      204,      403,       403,       404,      404,     404,       403,             S],
    newIssue,
    (_w, issue) => ({ path: `/v1/issues/${issue.id}` })),
];

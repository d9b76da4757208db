/** Matrix rows of the Scorecard operations. Metrics belong to the team Member (teamMember). */
import { randomUUID } from 'node:crypto';
import { createMetric } from '../support/scorecardFactories.js';
import { csvFile } from '../support/testApp.js';
import { row, rowFor, type AreaRows, type World } from './world.js';

const S = 'scope';

const newMetric = (w: World) => createMetric(w.db, w.team.id, w.users.teamMember.id);

// prettier-ignore
export const metricRows: AreaRows<'Metrics'> = {
  //                                  noKey readOnly orgOwner orgAdmin implementer teamOwner teamAdmin teamMember teamViewer orgMember outsider superadmin superadminMember formerSuperadmin
  listTeamMetrics: row(                [401, 200,     200,     200,     200,        200,      200,      200,       200,       403,      403,     403,       200,             S],
    (w) => ({ path: `/v1/teams/${w.team.id}/metrics` })),
  getTeamScorecard: row(               [401, 200,     200,     200,     200,        200,      200,      200,       200,       403,      403,     403,       200,             S],
    (w) => ({ path: `/v1/teams/${w.team.id}/scorecard?from=2026-11-02&to=2026-11-16` })),
  createMetric: row(                   [401, S,       201,     201,     201,        201,      201,      403,       403,       403,      403,     403,       403,             S],
    (w) => ({ path: `/v1/teams/${w.team.id}/metrics`, body: { title: 'New qualified leads', goal: '>=25', ownerId: w.users.teamMember.id } })),
  updateMetric: rowFor(                [401, S,       200,     200,     200,        200,      200,      403,       403,       404,      404,     404,       403,             S],
    newMetric,
    // The new metric is the team's last: moving it down runs the move and shifts no other metric (whose own event the move would write too).
    (_w, metric) => ({ path: `/v1/metrics/${metric.id}`, body: { direction: 'down', goal: '>=30' } })),
  deleteMetric: rowFor(                [401, S,       204,     204,     204,        204,      204,      403,       403,       404,      404,     404,       403,             S],
    newMetric,
    (_w, metric) => ({ path: `/v1/metrics/${metric.id}` })),
  listMetricValues: rowFor(            [401, 200,     200,     200,     200,        200,      200,      200,       200,       404,      404,     404,       200,             S],
    newMetric,
    (_w, metric) => ({ path: `/v1/metrics/${metric.id}/values?from=2026-11-02` })),
  putMetricValue: rowFor(              [401, S,       200,     200,     200,        200,      200,      200,       403,       404,      404,     404,       200,             S],
    newMetric,
    (_w, metric) => ({ path: `/v1/metrics/${metric.id}/values/2026-11-16`, body: { value: '27' } })),
  putScorecardWeek: rowFor(            [401, S,       200,     200,     200,        200,      200,      200,       403,       403,      403,     403,       200,             S],
    newMetric,
    (w, metric) => ({ path: `/v1/teams/${w.team.id}/scorecard/weeks/2026-11-16`, body: { values: [{ metricId: metric.id, value: '27' }] } })),
  importTeamScorecard: rowFor(         [401, S,       200,     200,     200,        200,      200,      200,       403,       403,      403,     403,       200,             S],
    // A title of its own: a column names the metric by its title, which other rows' metrics share.
    (w) => createMetric(w.db, w.team.id, w.users.teamMember.id, { title: `Leads ${randomUUID()}` }),
    (w, metric) => ({ path: `/v1/teams/${w.team.id}/scorecard/csv`, body: csvFile(`week,${metric.title}\r\n2026-11-16,27\r\n`) })),
  exportTeamScorecard: row(            [401, 200,     200,     200,     200,        200,      200,      200,       200,       403,      403,     403,       200,             S],
    (w) => ({ path: `/v1/teams/${w.team.id}/scorecard/csv` })),
};

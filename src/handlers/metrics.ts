/** Handlers of the metrics area: a team's weekly Scorecard, its order, and the weekly values. */
import type { Kysely } from 'kysely';
import type { Caller } from '../auth/caller.js';
import { requireChange, teamAccess, teamAllows } from '../auth/permissions.js';
import type { Database } from '../db/database.js';
import { loadTeamAccess } from '../auth/access.js';
import { standingOf } from '../db/queries/access.js';
import * as metrics from '../db/queries/metrics.js';
import { EXPORT_BATCH_ROWS, pageLimit } from '../db/pagination.js';
import { attachment, csvBody, keysetBatches } from '../api/csvBody.js';
import type { Day } from '../db/database.js';
import { FormatError, NotFound, RuleViolation } from '../errors.js';
import { metricJson, metricValueJson, scorecardCsvRow, scorecardMetricJson, scorecardText, toMetric, toMetricValue } from '../records/metrics.js';
import { pageText } from '../api/jsonText.js';
import { judgeValue } from '../rules/metricValues.js';
import { judgeWeek } from '../rules/scorecardWeek.js';
import { SCORECARD_MAX_WEEKS, scorecardWeeks } from '../rules/scorecardWeeks.js';
import { currentWeekMonday, isMonday } from '../time.js';
import { badRows, clearable, requireTeamMember, sheetOf, zoneInTeam } from './shared.js';
import { judgeScorecardRows, scorecardCsvImport } from '../rules/csvImport.js';
import type { AreaHandlers, Handler } from './types.js';
import { inTransaction } from '../db/transaction.js';

/** The metric and the caller's access to it; an invisible metric is answered like a missing one (404). */
async function loadMetric(db: Kysely<Database>, caller: Caller, metricId: string) {
  const metric = await metrics.findMetric(db, metricId, caller.userId);
  const access = teamAccess(caller, metric && standingOf(metric), 'item');
  return { metric: metric!, access };
}

export const listTeamMetrics: Handler<'listTeamMetrics'> = async ({ params }, { db, caller }) => {
  const { rows, standing } = await metrics.listTeamMetrics(db, params.teamId, caller.userId);
  const { access } = await loadTeamAccess(db, caller, params.teamId, 'collection', standing);
  return { status: 200, body: { data: rows.map(toMetric), nextCursor: null }, logOf: access.orgId };
};

/**
 * The metrics with their values and the caller's access come in one statement. Only the default range
 * of a caller whose organizations lie in different zones needs the team first, for its zone.
 */
const scorecards = metrics.scorecards(scorecardMetricJson, metricValueJson);

export const getTeamScorecard: Handler<'getTeamScorecard'> = async ({ params, query }, { db, caller, now }) => {
  const { zone, access } = query.from === undefined && query.to === undefined ? await zoneInTeam(db, caller, params.teamId) : { zone: undefined, access: undefined };
  const range = scorecardWeeks(query, () => currentWeekMonday(now(), zone!));
  if (!range) {
    throw new RuleViolation(`The range must run forwards, cover at most ${SCORECARD_MAX_WEEKS} weeks and stay within the years 2000-2100.`);
  }
  const scorecard = await scorecards(db, params.teamId, caller.userId, range.from, range.to);
  const decided = access ?? (await loadTeamAccess(db, caller, params.teamId, 'collection', scorecard.standing)).access;
  return { status: 200, body: scorecardText(params.teamId, range, scorecard.records), logOf: decided.orgId };
};

/** The Scorecard is locked while the new metric takes the place after the last one. */
export const createMetric: Handler<'createMetric'> = async ({ params, body }, { db, caller }) => {
  const { access } = await loadTeamAccess(db, caller, params.teamId, 'collection');
  requireChange(access, teamAllows(access, 'manageMetrics'));
  const metric = await inTransaction(db, async (trx) => {
    await requireTeamMember(trx, params.teamId, body.ownerId, 'metric');
    await metrics.lockScorecard(trx, params.teamId);
    return metrics.insertMetric(trx, {
      teamId: params.teamId,
      title: body.title,
      goal: body.goal,
      ownerId: body.ownerId,
      unit: clearable(body.unit ?? null),
      description: clearable(body.description ?? null),
    });
  });
  return { status: 201, body: toMetric(metric) };
};

/**
 * Fields and a move are applied in one transaction: all or nothing. A move shifts the neighbour it
 * swaps with, whose `metric.updated` the move's statement writes. Only a new owner is checked, so
 * other fields stay editable after the current owner has left the team.
 */
export const updateMetric: Handler<'updateMetric'> = async ({ params, body }, { db, caller, now, traceparent }) => {
  const { metric, access } = await loadMetric(db, caller, params.id);
  requireChange(access, teamAllows(access, 'manageMetrics'));
  const updated = await inTransaction(db, async (trx) => {
    if (body.ownerId !== undefined) await requireTeamMember(trx, metric.team_id, body.ownerId, 'metric');
    if (body.direction !== undefined) {
      await metrics.lockScorecard(trx, metric.team_id);
      await metrics.moveMetric(trx, params.id, body.direction, metricJson, { at: now(), traceparent });
    }
    return metrics.updateMetric(trx, params.id, { ...body, unit: clearable(body.unit), description: clearable(body.description) });
  });
  if (!updated) throw new NotFound();
  return { status: 200, body: toMetric(updated) };
};

/** The metrics below move up one place each, and their `metric.updated` are written with the move. */
export const deleteMetric: Handler<'deleteMetric'> = async ({ params }, { db, caller, now, traceparent }) => {
  const { metric, access } = await loadMetric(db, caller, params.id);
  requireChange(access, teamAllows(access, 'delete'));
  await inTransaction(db, async (trx) => {
    await metrics.lockScorecard(trx, metric.team_id);
    await metrics.deleteMetric(trx, params.id, metricJson, { at: now(), traceparent });
  });
  return { status: 204, body: undefined };
};

const metricValuePages = metrics.metricValuePages(metricValueJson);

export const listMetricValues: Handler<'listMetricValues'> = async ({ params, query }, { db, caller }) => {
  const { access } = await loadMetric(db, caller, params.id);
  const page = await metricValuePages(db, params.id, { from: query.from, to: query.to }, { limit: pageLimit(query.limit), cursor: query.cursor });
  return { status: 200, body: pageText(page), logOf: access.orgId };
};

/** A week that is not a Monday is refused with the format checks, before the metric is looked up. */
export const putMetricValue: Handler<'putMetricValue'> = async ({ params, body }, { db, caller }) => {
  if (!isMonday(params.week)) throw new RuleViolation('The week must be given by its Monday.');
  const { metric, access } = await loadMetric(db, caller, params.id);
  requireChange(access, teamAllows(access, 'enterMetricValue'));
  const onTrack = body.onTrack ?? judgeValue(body.value, metric.goal);
  if (onTrack === null) {
    throw new RuleViolation(`The value "${body.value}" cannot be judged against the goal "${metric.goal}"; send onTrack with it.`);
  }
  const saved = await metrics.putMetricValue(db, {
    metricId: params.id,
    week: params.week,
    value: body.value,
    onTrack,
    enteredById: caller.userId,
  });
  if (!saved) throw new NotFound();
  return { status: 200, body: toMetricValue(saved) };
};

/**
 * Every item is judged against the team's metrics, read in the change's transaction, before anything
 * is written; the values are then written in one statement, all or nothing.
 */
export const putScorecardWeek: Handler<'putScorecardWeek'> = async ({ params, body }, { db, caller }) => {
  if (!isMonday(params.week)) throw new RuleViolation('The week must be given by its Monday.');
  const { rows, standing } = await metrics.listTeamMetrics(db, params.teamId, caller.userId);
  const { access } = await loadTeamAccess(db, caller, params.teamId, 'collection', standing);
  requireChange(access, teamAllows(access, 'enterMetricValue'));
  const judged = judgeWeek(body.values, new Map(rows.map((row) => [row.id, row.goal])));
  if ('issues' in judged) throw new FormatError(judged.issues, 'Some values cannot be saved; nothing was saved.');
  const saved = await inTransaction(db, (trx) => metrics.putWeekValues(trx, { teamId: params.teamId, week: params.week, enteredById: caller.userId, values: judged.values }));
  const byMetric = new Map(saved.map((row) => [row.metric_id, row]));
  // A metric deleted between the check and the write: the transaction is rolled back with the rest.
  const missing = judged.values.findIndex((value) => !byMetric.has(value.metricId));
  if (missing >= 0) throw new FormatError([{ origin: 'body', code: 'invalid_value', path: ['values', String(missing), 'metricId'], message: 'Not a metric of this team.' }]);
  return { status: 200, body: { teamId: params.teamId, week: params.week, values: judged.values.map((value) => toMetricValue(byMetric.get(value.metricId)!)) } };
};

/** The Scorecard as a table of weeks by metrics: the metrics (with the caller's standing) make the header, the weeks come in batches. */
export const exportTeamScorecard: Handler<'exportTeamScorecard'> = async ({ params }, { db, caller , logger }) => {
  const { rows, standing } = await metrics.listTeamMetrics(db, params.teamId, caller.userId);
  await loadTeamAccess(db, caller, params.teamId, 'collection', standing);
  const ids = rows.map((row) => row.id);
  const read = (after: Day | undefined) => metrics.scorecardExportBatch(db, params.teamId, after);
  const first = ids.length === 0 ? [] : await read(undefined);
  const batches = keysetBatches(first, EXPORT_BATCH_ROWS, read, (row) => row.week, (batch) => batch.map(scorecardCsvRow(ids)));
  return { status: 200, headers: attachment('scorecard.csv'), body: csvBody(['week', ...rows.map((row) => row.title)], batches, logger) };
};

/**
 * The table is read against the team's metrics and every value judged as the Scorecard week's PUT
 * judges it (`judgeWeek`) before anything is written (a dry run stops there); the values are then
 * written in one statement, all or nothing. Its one summary event is the catalog's.
 */
export const importTeamScorecard: Handler<'importTeamScorecard'> = async ({ params, query, body }, { db, caller }) => {
  const { rows, standing } = await metrics.listTeamMetrics(db, params.teamId, caller.userId);
  const { access } = await loadTeamAccess(db, caller, params.teamId, 'collection', standing);
  requireChange(access, teamAllows(access, 'enterMetricValue'));
  const sheet = sheetOf(body, scorecardCsvImport(rows));
  const judged = judgeScorecardRows(sheet, rows);
  if ('issues' in judged) throw badRows(judged.issues);
  const dryRun = query.dryRun === true;
  const written = dryRun ? judged.values.length : await inTransaction(db, async (trx) => {
    const saved = await metrics.putScorecardValues(trx, { teamId: params.teamId, enteredById: caller.userId, values: judged.values });
    if (saved.length !== judged.values.length) throw new RuleViolation('A metric was deleted during the import; nothing was written. Send the file again.');
    return saved.length;
  });
  return { status: 200, body: { teamId: params.teamId, kind: 'scorecard', dryRun, rows: sheet.records.length, written } };
};

export const metricsHandlers: AreaHandlers<'Metrics'> = {
  listTeamMetrics,
  createMetric,
  getTeamScorecard,
  updateMetric,
  deleteMetric,
  listMetricValues,
  putMetricValue,
  putScorecardWeek,
  exportTeamScorecard,
  importTeamScorecard,
};

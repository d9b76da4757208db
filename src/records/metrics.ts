/** Rows → the contract's metric, weekly value and Scorecard records. */
import { JsonText } from '../api/jsonText.js';
import type { CsvRow } from '../api/csvBody.js';
import type { Schemas } from '../api/operations.js';
import type { MetricRow, MetricValueRow } from '../db/database.js';
import { declareRecord, type JsonShape } from '../db/json.js';
import type { ScorecardWeeks } from '../rules/scorecardWeeks.js';

const metric = declareRecord<MetricRow, Schemas['Metric']>({
  id: ['id', 'id'],
  revision: ['integer', 'revision'],
  teamId: ['id', 'team_id'],
  title: ['text', 'title'],
  goal: ['text', 'goal'],
  ownerId: ['id', 'owner_id'],
  unit: ['text', 'unit'],
  description: ['text', 'description'],
  position: ['integer', 'position'],
});

export const toMetric = metric.toRecord;
/** A metric as PostgreSQL writes it (src/db/json.ts): the object of the events of metrics a change shifted. */
export const metricJson = metric.shape;

/** A Scorecard row: the metric with its weeks' values, written by PostgreSQL (src/db/json.ts). */
export const scorecardMetricJson = { ...metric.shape, values: ['json', 'values_json'] } as const satisfies JsonShape<
  MetricRow & { values_json: string },
  Schemas['ScorecardMetric']
>;

/** `toMetricValue` for single reads and changes, `metricValueJson` for the list (src/db/json.ts). */
export const { toRecord: toMetricValue, shape: metricValueJson } = declareRecord<MetricValueRow, Schemas['MetricValue']>({
  metricId: ['id', 'metric_id'],
  week: ['day', 'week'],
  revision: ['integer', 'revision'],
  value: ['text', 'value'],
  onTrack: ['boolean', 'on_track'],
  enteredById: ['id', 'entered_by_id'],
});

/** The Scorecard around its metrics, which PostgreSQL wrote with `scorecardMetricJson`. */
export const scorecardText = (teamId: string, range: ScorecardWeeks, metrics: string) =>
  new JsonText<Schemas['Scorecard']>(
    `{"teamId":${JSON.stringify(teamId)},"from":${JSON.stringify(range.from)},"to":${JSON.stringify(range.to)},"weeks":${JSON.stringify(range.weeks)},"metrics":[${metrics}]}`,
  );

/** A week of the Scorecard's CSV export → its cells: the week, then each metric's value in `metricIds`' order. */
export const scorecardCsvRow = (metricIds: readonly string[]) => (row: { week: string; values: Record<string, string> }): CsvRow => [
  row.week,
  ...metricIds.map((id) => row.values[id] ?? null),
];

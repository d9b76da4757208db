/** Rows → the contract's metric, weekly value and Scorecard records. */
import { JsonText } from '../api/jsonText.js';
import type { Schemas } from '../api/operations.js';
import type { MetricRow, MetricValueRow } from '../db/database.js';
import type { JsonShape } from '../db/json.js';
import type { ScorecardWeeks } from '../rules/scorecardWeeks.js';

export const toMetric = (row: MetricRow): Schemas['Metric'] => ({
  id: row.id,
  teamId: row.team_id,
  title: row.title,
  goal: row.goal,
  ownerId: row.owner_id,
  unit: row.unit,
  description: row.description,
  position: row.position,
});

export const toMetricValue = (row: MetricValueRow): Schemas['MetricValue'] => ({
  metricId: row.metric_id,
  week: row.week,
  value: row.value,
  onTrack: row.on_track,
  enteredById: row.entered_by_id,
});

/** `toMetricValue` written by PostgreSQL, for the list (src/db/json.ts). */
export const metricValueJson: JsonShape<MetricValueRow, Schemas['MetricValue']> = {
  metricId: ['id', 'metric_id'],
  week: ['day', 'week'],
  value: ['text', 'value'],
  onTrack: ['boolean', 'on_track'],
  enteredById: ['id', 'entered_by_id'],
};

/** A Scorecard row: `toMetric` with its weeks' values, written by PostgreSQL (src/db/json.ts). */
export const scorecardMetricJson: JsonShape<MetricRow & { values_json: string }, Schemas['ScorecardMetric']> = {
  id: ['id', 'id'],
  teamId: ['id', 'team_id'],
  title: ['text', 'title'],
  goal: ['text', 'goal'],
  ownerId: ['id', 'owner_id'],
  unit: ['text', 'unit'],
  description: ['text', 'description'],
  position: ['integer', 'position'],
  values: ['json', 'values_json'],
};

/** The Scorecard around its metrics, which PostgreSQL wrote with `scorecardMetricJson`. */
export const scorecardText = (teamId: string, range: ScorecardWeeks, metrics: string) =>
  new JsonText<Schemas['Scorecard']>(
    `{"teamId":${JSON.stringify(teamId)},"from":${JSON.stringify(range.from)},"to":${JSON.stringify(range.to)},"weeks":${JSON.stringify(range.weeks)},"metrics":[${metrics}]}`,
  );

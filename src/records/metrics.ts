/** Rows → the contract's metric, weekly value and Scorecard records. */
import type { Schemas } from '../api/operations.js';
import type { MetricRow, MetricValueRow } from '../db/database.js';
import type { JsonShape } from '../db/json.js';
import type { MetricValueTuple } from '../db/queries/metrics.js';
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

const fromTuple = (metricId: string, [week, value, onTrack, enteredById]: MetricValueTuple): Schemas['MetricValue'] => ({
  metricId,
  week,
  value,
  onTrack,
  enteredById,
});

export const toScorecard = (teamId: string, range: ScorecardWeeks, rows: (MetricRow & { values: MetricValueTuple[] })[]): Schemas['Scorecard'] => ({
  teamId,
  from: range.from,
  to: range.to,
  weeks: range.weeks,
  metrics: rows.map((row) => ({ ...toMetric(row), values: row.values.map((value) => fromTuple(row.id, value)) })),
});

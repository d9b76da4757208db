/** Queries of the Scorecard: metrics, their order, and their weekly values. */
import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { Database, Day, MetricRow, MetricValueRow } from '../database.js';
import { jsonRecord, preparedJsonList, type JsonShape } from '../json.js';
import { EXPORT_BATCH_ROWS, preparedJsonPages } from '../pagination.js';
import { prepared } from '../prepared.js';
import { callerTeamRole, standingColumnNames, standingColumns, withStanding } from './access.js';
import { insertEventsOfRows, type BulkStamp } from './events.js';

type Db = Kysely<Database> | Transaction<Database>;
type Page = { limit: number; cursor?: string | undefined };

/** The team's metrics in Scorecard order. */
export async function listTeamMetrics(db: Db, teamId: string, userId: string) {
  const rows = await db.selectFrom('metrics').selectAll('metrics').select(standingColumns(teamId, userId)).where('metrics.team_id', '=', teamId).orderBy('metrics.position').execute();
  return withStanding(teamId, { rows, facts: rows[0] });
}

/**
 * The team's metrics in Scorecard order, each written as JSON by `metricShape` with its values in the
 * weeks `from`…`to` (oldest first) written by `valueShape` inside it, and the team's facts for the
 * access check: one statement whatever the number of metrics.
 */
export function scorecards<M, V>(metricShape: JsonShape<MetricRow & { values_json: string }, M>, valueShape: JsonShape<MetricValueRow, V>) {
  const list = preparedJsonList(
    (db: Db, { teamId, userId, from, to }: { teamId: string; userId: string; from: Day; to: Day }) =>
      db
        .selectFrom('metrics')
        .selectAll('metrics')
        .select(standingColumns(teamId, userId))
        .select(
          sql<string>`(
            select '[' || coalesce(string_agg(${jsonRecord(valueShape, 'v')}, ',' order by v.week), '') || ']'
            from metric_values v
            where v.metric_id = metrics.id and v.week between ${from}::date and ${to}::date
          )`.as('values_json'),
        )
        .where('metrics.team_id', '=', teamId),
    [{ column: 'metrics.position', direction: 'asc' }],
    metricShape,
    standingColumnNames,
  );
  return async (db: Db, teamId: string, userId: string, from: Day, to: Day) => withStanding(teamId, await list(db, { teamId, userId, from, to }));
}

const metricById = prepared((db, { metricId, userId }: { metricId: string; userId: string }) =>
  db
    .selectFrom('metrics')
    .innerJoin('teams', 'teams.id', 'metrics.team_id')
    .selectAll('metrics')
    .select(['teams.org_id', callerTeamRole('metrics.team_id', userId)])
    .where('metrics.id', '=', metricId),
);

/** A metric with its team's organization and the caller's role in the team, in one query. */
export async function findMetric(db: Db, metricId: string, userId: string) {
  return (await metricById(db, { metricId, userId }))[0];
}

/**
 * Serializes the changes of one team's Scorecard order (adding, moving, deleting) until the end of the
 * transaction, so that two of them never read the same positions. `for no key update` leaves rows that
 * merely refer to the team (tasks, issues, …) free to be written meanwhile.
 */
export async function lockScorecard(trx: Transaction<Database>, teamId: string) {
  await trx.selectFrom('teams').select('id').where('id', '=', teamId).forNoKeyUpdate().execute();
}

/** Adds the metric after the team's last one; call with the Scorecard locked. */
export function insertMetric(
  trx: Transaction<Database>,
  metric: { teamId: string; title: string; goal: string; ownerId: string; unit: string | null; description: string | null },
) {
  return trx
    .insertInto('metrics')
    .values({
      team_id: metric.teamId,
      title: metric.title,
      goal: metric.goal,
      owner_id: metric.ownerId,
      unit: metric.unit,
      description: metric.description,
      position: sql<number>`(select coalesce(max(m.position), 0) + 1 from metrics m where m.team_id = ${metric.teamId})`,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface MetricChange {
  title?: string | undefined;
  goal?: string | undefined;
  ownerId?: string | undefined;
  unit?: string | null | undefined;
  description?: string | null | undefined;
}

/** Applies the change (possibly none) and returns the metric; undefined when it no longer exists. */
export function updateMetric(db: Db, metricId: string, change: MetricChange) {
  const set = {
    title: change.title,
    goal: change.goal,
    owner_id: change.ownerId,
    unit: change.unit,
    description: change.description,
  };
  if (Object.values(set).every((value) => value === undefined)) {
    return db.selectFrom('metrics').selectAll().where('id', '=', metricId).executeTakeFirst();
  }
  return db.updateTable('metrics').set(set).where('id', '=', metricId).returningAll().executeTakeFirst();
}

/**
 * Swaps the metric with its neighbour above (`up`) or below (`down`) in one statement; at the top or
 * the bottom there is no neighbour and nothing moves. The neighbour's place changed what its GET
 * answers, so the statement writes its `metric.updated` too (the moved metric's own is the outbox's),
 * `shape` writing it as the metric's record. Call with the Scorecard locked.
 */
export async function moveMetric<R>(trx: Transaction<Database>, metricId: string, direction: 'up' | 'down', shape: JsonShape<MetricRow, R>, stamp: BulkStamp) {
  const step = direction === 'up' ? -1 : 1;
  await sql`
    with moving as (select team_id, position from metrics where id = ${metricId}),
    moved as (
      update metrics m
      set position = case when m.id = ${metricId} then m.position + ${step}::int else m.position - ${step}::int end
      from moving
      where m.team_id = moving.team_id
        and (m.id = ${metricId} or m.position = moving.position + ${step}::int)
        and exists (select 1 from metrics n where n.team_id = moving.team_id and n.position = moving.position + ${step}::int)
      returning m.*
    ),
    shifted as (${shiftedMetrics(sql`select * from moved where moved.id <> ${metricId}`, shape)})
    ${insertEventsOfRows('shifted', 'metric.updated', stamp)}
  `.execute(trx);
}

/** The metrics of `rows` (a query of metric rows) with their organization, team and record, for their events. */
const shiftedMetrics = <R>(rows: RawBuilder<unknown>, shape: JsonShape<MetricRow, R>) =>
  sql`select t.org_id, x.team_id, ${jsonRecord(shape, 'x')} as object from (${rows}) x join teams t on t.id = x.team_id order by x.position`;

/**
 * Deletes the metric (its values go with it) and closes the gap it leaves: each metric below moves up
 * one place, and the statement that moves them writes the `metric.updated` of each (`shape` writing
 * it as the metric's record), whatever their number. Call with the Scorecard locked.
 */
export async function deleteMetric<R>(trx: Transaction<Database>, metricId: string, shape: JsonShape<MetricRow, R>, stamp: BulkStamp) {
  const deleted = await trx.deleteFrom('metrics').where('id', '=', metricId).returning(['team_id', 'position']).executeTakeFirst();
  if (!deleted) return;
  await sql`
    with moved as (
      update metrics set position = position - 1 where team_id = ${deleted.team_id} and position > ${deleted.position} returning *
    ),
    shifted as (${shiftedMetrics(sql`select * from moved`, shape)})
    ${insertEventsOfRows('shifted', 'metric.updated', stamp)}
  `.execute(trx);
}

export interface WeekRange {
  from?: Day | undefined;
  to?: Day | undefined;
}

type MetricValuePageArgs = { metricId: string; from: Day | undefined; to: Day | undefined };

/**
 * The metric's weekly values, oldest week first, written as JSON by `shape` (given by the handler);
 * `from` and `to` are inclusive.
 */
export function metricValuePages<R>(shape: JsonShape<MetricValueRow, R>) {
  const pages = preparedJsonPages(
    (db: Db, { metricId, from, to }: MetricValuePageArgs) => {
      let query = db.selectFrom('metric_values').selectAll().where('metric_id', '=', metricId);
      if (from !== undefined) query = query.where('week', '>=', from);
      if (to !== undefined) query = query.where('week', '<=', to);
      return query;
    },
    [{ column: 'week', direction: 'asc', type: 'day' }],
    shape,
  );
  return (db: Db, metricId: string, range: WeekRange, page: Page) => pages(db, { metricId, from: range.from, to: range.to }, page);
}

/**
 * Creates or replaces the week's value in one statement. A replacement keeps `entered_by_id`, the
 * person who first entered the week. Undefined when the metric no longer exists (an `insert … select`,
 * so a metric deleted meanwhile gives no row instead of a foreign-key error).
 */
export function putMetricValue(db: Db, value: { metricId: string; week: Day; value: string; onTrack: boolean; enteredById: string }) {
  return db
    .insertInto('metric_values')
    .columns(['metric_id', 'week', 'value', 'on_track', 'entered_by_id'])
    .expression((eb) =>
      eb
        .selectFrom('metrics')
        .select([
          'metrics.id',
          sql<Day>`${value.week}::date`.as('week'),
          sql<string>`${value.value}::text`.as('value'),
          sql<boolean>`${value.onTrack}::boolean`.as('on_track'),
          sql<string>`${value.enteredById}::text`.as('entered_by_id'),
        ])
        .where('metrics.id', '=', value.metricId),
    )
    .onConflict((conflict) =>
      conflict.columns(['metric_id', 'week']).doUpdateSet((eb) => ({
        value: eb.ref('excluded.value'),
        on_track: eb.ref('excluded.on_track'),
        updated_at: sql`now()`,
      })),
    )
    .returningAll()
    .executeTakeFirst();
}

/**
 * Creates or replaces one week's value of several metrics of the team in one statement, each as
 * `putMetricValue` does (a replacement keeps `entered_by_id`). Only metrics of the team are written: a
 * metric deleted meanwhile, or of another team, gives no row.
 */
export function putWeekValues(
  db: Db,
  week: { teamId: string; week: Day; enteredById: string; values: readonly { metricId: string; value: string; onTrack: boolean }[] },
): Promise<MetricValueRow[]> {
  return putScorecardValues(db, { teamId: week.teamId, enteredById: week.enteredById, values: week.values.map((value) => ({ ...value, week: week.week })) });
}

/**
 * `putWeekValues` for values of any weeks (a Scorecard's CSV import): one statement whatever their
 * number, each metric and week at most once.
 */
export async function putScorecardValues(
  db: Db,
  scorecard: { teamId: string; enteredById: string; values: readonly { metricId: string; week: Day; value: string; onTrack: boolean }[] },
): Promise<MetricValueRow[]> {
  const { values } = scorecard;
  const { rows } = await sql<MetricValueRow>`
    insert into metric_values (metric_id, week, value, on_track, entered_by_id)
    select m.id, sent.week, sent.value, sent.on_track, ${scorecard.enteredById}::text
    from unnest(${values.map((v) => v.metricId)}::text[], ${values.map((v) => v.week)}::date[], ${values.map((v) => v.value)}::text[], ${values.map((v) => v.onTrack)}::boolean[])
      as sent(metric_id, week, value, on_track)
    join metrics m on m.id = sent.metric_id
    where m.team_id = ${scorecard.teamId}
    on conflict (metric_id, week) do update set value = excluded.value, on_track = excluded.on_track, updated_at = now()
    returning *
  `.execute(db);
  return rows;
}

/**
 * A batch of the team's Scorecard weeks for its CSV export, oldest first after `after`: each week that
 * has a value, with its values by metric id. At most one row per week, whatever the number of metrics.
 */
export async function scorecardExportBatch(db: Db, teamId: string, after: Day | undefined) {
  const { rows } = await sql<{ week: Day; values: Record<string, string> }>`
    select v.week::text as week, json_object_agg(v.metric_id, v.value) as values
    from metric_values v join metrics m on m.id = v.metric_id
    where m.team_id = ${teamId} and (${after ?? null}::date is null or v.week > ${after ?? null}::date)
    group by v.week
    order by v.week
    limit ${EXPORT_BATCH_ROWS}
  `.execute(db);
  return rows;
}

/** Factories for the Scorecard: metrics and their weekly values, inserted straight into the database. */
import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/database.js';
import { addWeeks } from '../../src/time.js';

export interface MetricOptions {
  title?: string;
  goal?: string;
  unit?: string | null;
  description?: string | null;
}

/** A metric after the team's last one. */
export async function createMetric(db: Kysely<Database>, teamId: string, ownerId: string, options: MetricOptions = {}) {
  const last = await db.selectFrom('metrics').select((eb) => eb.fn.max('position').as('position')).where('team_id', '=', teamId).executeTakeFirst();
  return db
    .insertInto('metrics')
    .values({
      team_id: teamId,
      owner_id: ownerId,
      title: options.title ?? 'New qualified leads',
      goal: options.goal ?? '>=25',
      unit: options.unit ?? null,
      description: options.description ?? null,
      position: (last?.position ?? 0) + 1,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** `count` consecutive weeks of values from the Monday `firstWeek`, in one insert; `value(i)` gives the i-th. */
export function createMetricValues(
  db: Kysely<Database>,
  metricId: string,
  enteredById: string,
  firstWeek: string,
  count: number,
  value: (index: number) => string = (index) => String(20 + (index % 10)),
) {
  const rows = Array.from({ length: count }, (_, index) => ({
    metric_id: metricId,
    week: addWeeks(firstWeek, index),
    value: value(index),
    on_track: index % 2 === 0,
    entered_by_id: enteredById,
  }));
  return db.insertInto('metric_values').values(rows).returningAll().execute();
}

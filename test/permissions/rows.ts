/**
 * Every area's matrix rows, each knowing its file. Each area types its main rows with its tags'
 * operations (`AreaRows`), so `tsc` names an operation without rows in that area's file.
 */
import { administrationRows as administration, administrationVariants } from './administration.rows.js';
import { documentRows } from './documents.rows.js';
import { goalRows } from './goals.rows.js';
import { issueRows } from './issues.rows.js';
import { meetingRows } from './meetings.rows.js';
import { metricRows } from './metrics.rows.js';
import { orgChartRows } from './orgChart.rows.js';
import { peopleReviewRows } from './peopleReviews.rows.js';
import { platformRows } from './platform.rows.js';
import { exportsRows } from './exports.rows.js';
import { taskRows } from './tasks.rows.js';
import { visionRows } from './vision.rows.js';
import { webhookRows, webhookVariants } from './webhooks.rows.js';
import { gathered, type MatrixRow } from './world.js';

const file = (area: string) => `test/permissions/${area}.rows.ts`;

export const administrationRows = gathered(file('administration'), administration, administrationVariants);

export const matrixRows: MatrixRow[] = [
  administrationRows,
  gathered(file('platform'), platformRows),
  gathered(file('tasks'), taskRows),
  gathered(file('issues'), issueRows),
  gathered(file('goals'), goalRows),
  gathered(file('metrics'), metricRows),
  gathered(file('meetings'), meetingRows),
  gathered(file('documents'), documentRows),
  gathered(file('peopleReviews'), peopleReviewRows),
  gathered(file('orgChart'), orgChartRows),
  gathered(file('vision'), visionRows),
  gathered(file('exports'), exportsRows),
  // Last: their subscriptions would otherwise make the rows after them emit events.
  gathered(file('webhooks'), webhookRows, webhookVariants),
].flat();

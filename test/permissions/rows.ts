/** Every area's matrix rows: each operation with a key has exactly one (test/permissions.test.ts checks it). */
import { administrationRows } from './administration.rows.js';
import { documentRows } from './documents.rows.js';
import { goalRows } from './goals.rows.js';
import { issueRows } from './issues.rows.js';
import { meetingRows } from './meetings.rows.js';
import { metricRows } from './metrics.rows.js';
import { orgChartRows } from './orgChart.rows.js';
import { peopleReviewRows } from './peopleReviews.rows.js';
import { platformRows } from './platform.rows.js';
import { taskRows } from './tasks.rows.js';
import { visionRows } from './vision.rows.js';
import { webhookRows } from './webhooks.rows.js';
import type { MatrixRow } from './world.js';

export const matrixRows: MatrixRow[] = [
  administrationRows,
  platformRows,
  taskRows,
  issueRows,
  goalRows,
  metricRows,
  meetingRows,
  documentRows,
  peopleReviewRows,
  orgChartRows,
  visionRows,
  // Last: their subscriptions would otherwise make the rows after them emit events.
  webhookRows,
].flat();

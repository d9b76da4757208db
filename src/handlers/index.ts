/**
 * Every area's handlers. Each area file types its own map with its tag's operations (`AreaHandlers`),
 * so `tsc` names a missing handler in that file; `satisfies HandlerMap` here names a tag without an area.
 */
import { accountHandlers } from './account.js';
import { documentsHandlers } from './documents.js';
import { exportsHandlers } from './exports.js';
import { eventsHandlers } from './events.js';
import { goalsHandlers } from './goals.js';
import { issuesHandlers } from './issues.js';
import { meetingsHandlers } from './meetings.js';
import { metricsHandlers } from './metrics.js';
import { orgChartHandlers } from './orgChart.js';
import { organizationsHandlers } from './organizations.js';
import { peopleReviewsHandlers } from './peopleReviews.js';
import { platformHandlers } from './platform.js';
import { referenceHandlers } from './reference.js';
import { tasksHandlers } from './tasks.js';
import { teamsHandlers } from './teams.js';
import { visionHandlers } from './vision.js';
import { webhooksHandlers } from './webhooks.js';
import type { HandlerMap } from './types.js';

export const handlers = {
  ...accountHandlers,
  ...documentsHandlers,
  ...eventsHandlers,
  ...exportsHandlers,
  ...goalsHandlers,
  ...issuesHandlers,
  ...meetingsHandlers,
  ...metricsHandlers,
  ...orgChartHandlers,
  ...organizationsHandlers,
  ...peopleReviewsHandlers,
  ...platformHandlers,
  ...referenceHandlers,
  ...tasksHandlers,
  ...teamsHandlers,
  ...visionHandlers,
  ...webhooksHandlers,
} satisfies HandlerMap;

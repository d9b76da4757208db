// Written by `npm run stubs`: every area's handlers, checked against the contract by `satisfies`.
import * as account from './account.js';
import * as documents from './documents.js';
import * as events from './events.js';
import * as goals from './goals.js';
import * as issues from './issues.js';
import * as meetings from './meetings.js';
import * as metrics from './metrics.js';
import * as orgChart from './orgChart.js';
import * as organizations from './organizations.js';
import * as peopleReviews from './peopleReviews.js';
import * as platform from './platform.js';
import * as reference from './reference.js';
import * as tasks from './tasks.js';
import * as teams from './teams.js';
import * as vision from './vision.js';
import * as webhooks from './webhooks.js';
import type { HandlerMap } from './types.js';

export const handlers = {
  ...account,
  ...documents,
  ...events,
  ...goals,
  ...issues,
  ...meetings,
  ...metrics,
  ...orgChart,
  ...organizations,
  ...peopleReviews,
  ...platform,
  ...reference,
  ...tasks,
  ...teams,
  ...vision,
  ...webhooks,
} satisfies HandlerMap;

/** Handlers of the metrics area. */
import { notImplemented, type Handler } from './types.js';

export const listTeamMetrics: Handler<'listTeamMetrics'> = notImplemented('listTeamMetrics');

export const createMetric: Handler<'createMetric'> = notImplemented('createMetric');

export const updateMetric: Handler<'updateMetric'> = notImplemented('updateMetric');

export const deleteMetric: Handler<'deleteMetric'> = notImplemented('deleteMetric');

export const listMetricValues: Handler<'listMetricValues'> = notImplemented('listMetricValues');

export const putMetricValue: Handler<'putMetricValue'> = notImplemented('putMetricValue');

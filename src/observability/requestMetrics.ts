import type { Request, Response } from 'express';
import type { AnsweredStep } from './answered.js';
import { statusClassOf, type Metrics } from './metrics.js';

/**
 * Observes every answered request's duration by operation id, method and status class. The operation
 * id is the one the router found in the contract (`res.locals.operationId`, set before
 * authentication, so a 401 to a real operation counts under it); anything else — an unknown path, a
 * method the path has not — counts as `unknown`, so no label ever holds a path someone made up.
 * The probes (`res.locals.probe`) are not API traffic and are left out.
 */
export function requestMetrics(metrics: Metrics): AnsweredStep {
  const { requests } = metrics.http;
  return (req: Request, res: Response, seconds: number) => {
    if (res.locals.probe) return;
    const operationId = (res.locals.operationId as string | undefined) ?? 'unknown';
    requests.observe({ operation_id: operationId, method: req.method, status_class: statusClassOf(res.statusCode) }, seconds);
  };
}

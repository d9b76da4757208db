import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import type { AnsweredStep } from '../observability/answered.js';

/**
 * One log line per request: method, route template, status, duration, request id, trace id and key id — never the key.
 * A level above info (LOG_LEVEL=warn) writes no request lines.
 */
export function requestLog(logger: Logger): AnsweredStep {
  // The line's fields are these seven and nothing else, none of them a secret: the logger's redaction,
  // which walks every field of every line for the paths it censors, is left out of this line alone
  // (a third of the line's cost, BENCH_ONLY=stages). Every other line keeps it.
  const lines = logger.child({}, { redact: [] });
  return (req: Request, res: Response, seconds: number) => {
    if (!lines.isLevelEnabled('info')) return;
    lines.info(
      {
        method: req.method,
        route: (res.locals.route as string | undefined) ?? null,
        status: res.statusCode,
        durationMs: seconds * 1000,
        requestId: req.requestId,
        traceId: req.trace.traceId,
        keyId: req.caller?.keyId ?? null,
      },
      'request',
    );
  };
}

import type { Request, Response } from 'express';
import type { Logger } from 'pino';

/** One log line per request: method, route template, status, duration, request id, trace id and key id — never the key. */
export function requestLog(logger: Logger) {
  return (req: Request, res: Response) => {
    // A level above info (LOG_LEVEL=warn) writes no request lines: nothing to measure or listen for.
    if (!logger.isLevelEnabled('info')) return;
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      logger.info(
        {
          method: req.method,
          route: (res.locals.route as string | undefined) ?? null,
          status: res.statusCode,
          durationMs: Number(process.hrtime.bigint() - started) / 1e6,
          requestId: req.requestId,
          traceId: req.trace.traceId,
          keyId: req.caller?.keyId ?? null,
        },
        'request',
      );
    });
  };
}

/**
 * OpenTelemetry tracing with the official SDK, off unless OTEL_EXPORTER_OTLP_ENDPOINT (or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set. Off, nothing of OpenTelemetry is loaded: `startTracing`
 * imports the SDK when it is called, and the app, the database hook and the webhook worker only look
 * whether they were given a `Tracing`.
 *
 * On, spans are created explicitly in the three places that matter, not by auto-instrumentation
 * (whose require hooks cost every request and do not see ESM imports):
 *   - a server span per API request (/v1), named by the contract's operation id, carrying exactly the
 *     request's W3C trace context (`req.trace`, src/observability/traceContext.ts): its trace id, its
 *     span id, and as parent the span of the incoming `traceparent`. The SDK's id generator is handed
 *     those ids for that one span, so there is one trace context, not a second one beside it;
 *   - a client span per database statement run under a recorded span, from the database's statement
 *     hook (src/db/connect.ts), with the statement's text as Kysely compiled it: values are parameters
 *     and never part of it, and a failed statement keeps only its SQLSTATE (a database error's
 *     message may quote a value);
 *   - a client span per webhook delivery attempt, a child of the change's `traceparent` stored with
 *     its event; the delivery then sends that span's `traceparent`, so a receiver that traces
 *     continues under it.
 * A statement finds its request through the active context, kept by OpenTelemetry's
 * AsyncLocalStorage context manager: on Node 20 that puts a hook on every promise of the process,
 * which is why it is created only when tracing is on (the bench measures the cost).
 *
 * Nothing is registered globally (no global tracer provider or context manager): several apps, traced
 * or not, can run in one process (the tests), each with its own `Tracing`.
 *
 * The standard variables the SDK reads itself apply: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES,
 * OTEL_TRACES_SAMPLER (parent-based always-on unless set: a request continues its caller's sampling
 * decision, a new trace is recorded), OTEL_EXPORTER_OTLP_HEADERS and _TIMEOUT, OTEL_BSP_*. Spans are
 * sent in batches as OTLP/HTTP with JSON bodies.
 */
import type { Context, Span } from '@opentelemetry/api';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { NextFunction, Request, Response } from 'express';
import type { LogEvent } from 'kysely';
import type { Logger } from 'pino';
import { loggableError } from '../logger.js';
import { instanceId } from './instance.js';
import { parseTraceparent, traceparentOf } from './traceContext.js';

export interface TracingSettings {
  /** Where spans are sent: the OTLP/HTTP traces URL itself (`…/v1/traces`). */
  url: string;
}

/** What a webhook delivery attempt is, as its span records it. */
export interface DeliveryAttempt {
  /** The `traceparent` of the change that wrote the event; null for an event written outside a request. */
  traceparent: string | null;
  url: URL;
  eventId: string;
  deliveryId: string;
  /** The attempt's number, the first being 1. */
  attempt: number;
}

export interface Tracing {
  /** Express middleware for /v1: the request's server span, ended when its answer is. */
  requests(req: Request, res: Response, next: NextFunction): void;
  /** The database's statement hook: a span for a statement that ran under a recorded span. */
  statement(event: LogEvent): void;
  /** Sends a delivery attempt in a span of its own; `send` is given the `traceparent` to send. */
  delivery<Sent extends { statusCode: number | null; error: string | null }>(
    attempt: DeliveryAttempt,
    send: (traceparent: string | null) => Promise<Sent>,
  ): Promise<Sent>;
  /** Sends the spans not sent yet and stops. */
  close(): Promise<void>;
}

const knownMethods = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);
const sqlState = /^[0-9A-Z]{5}$/;
const firstWord = /^\s*([A-Za-z]+)/;

export async function startTracing(settings: TracingSettings, logger: Logger): Promise<Tracing> {
  const [api, core, sdk, { AsyncLocalStorageContextManager }, { OTLPTraceExporter }, resources, semconv] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/core'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/semantic-conventions'),
  ]);
  const { ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace } = api;

  // The request's span takes the ids of `req.trace`: handed over for the one synchronous startSpan call.
  let handOver: { traceId: string; spanId: string } | undefined;
  const random = new sdk.RandomIdGenerator();
  const idGenerator = {
    generateTraceId: () => handOver?.traceId ?? random.generateTraceId(),
    generateSpanId: () => handOver?.spanId ?? random.generateSpanId(),
  };

  // An export that fails is said once, and once again when exports get through again.
  const otlp = new OTLPTraceExporter({ url: settings.url });
  let failing = false;
  const exporter: SpanExporter = {
    export: (spans: ReadableSpan[], done) =>
      otlp.export(spans, (result) => {
        const failed = result.code !== core.ExportResultCode.SUCCESS;
        if (failed && !failing) logger.warn({ err: loggableError(result.error), url: settings.url }, 'could not send trace spans; dropping them until the collector answers');
        if (!failed && failing) logger.info({ url: settings.url }, 'trace spans sent again');
        failing = failed;
        done(result);
      }),
    shutdown: () => otlp.shutdown(),
    forceFlush: () => otlp.forceFlush(),
  };

  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ [semconv.ATTR_SERVICE_NAME]: 'teamos-api', [semconv.ATTR_SERVICE_INSTANCE_ID]: instanceId }))
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win.
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const provider = new sdk.BasicTracerProvider({ resource, idGenerator, spanProcessors: [new sdk.BatchSpanProcessor(exporter)] });
  const tracer = provider.getTracer('teamos-api');
  const contexts = new AsyncLocalStorageContextManager();

  const traceparentOfSpan = (span: Span) => {
    const { traceId, spanId, traceFlags } = span.spanContext();
    return traceparentOf({ traceId, spanId, flags: traceFlags & TraceFlags.SAMPLED ? '01' : '00' });
  };
  const remoteParent = (traceparent: string | null | undefined): Context => {
    const parent = parseTraceparent(traceparent ?? undefined);
    if (!parent) return ROOT_CONTEXT;
    return trace.setSpanContext(ROOT_CONTEXT, { traceId: parent.traceId, spanId: parent.parentId, traceFlags: Number.parseInt(parent.flags, 16), isRemote: true });
  };

  return {
    requests(req, res, next) {
      const parent = remoteParent(req.get('traceparent'));
      handOver = req.trace;
      let span: Span;
      try {
        span = tracer.startSpan(
          req.method,
          {
            kind: SpanKind.SERVER,
            attributes: {
              [semconv.ATTR_HTTP_REQUEST_METHOD]: knownMethods.has(req.method) ? req.method : '_OTHER',
              [semconv.ATTR_URL_SCHEME]: 'http',
              [semconv.ATTR_URL_PATH]: req.originalUrl.split('?', 1)[0],
            },
          },
          parent,
        );
      } finally {
        handOver = undefined;
      }
      // The sampler decides (a new trace is recorded unless OTEL_TRACES_SAMPLER says otherwise); the
      // answer and the change's events say what it decided.
      const sampled = span.spanContext().traceFlags & TraceFlags.SAMPLED;
      const flags = Number.parseInt(req.trace.flags, 16);
      if ((flags & TraceFlags.SAMPLED) !== sampled) {
        req.trace.flags = ((flags & ~TraceFlags.SAMPLED) | sampled).toString(16).padStart(2, '0');
        res.setHeader('traceresponse', traceparentOf(req.trace));
      }
      if (!span.isRecording()) return next();

      res.once('close', () => {
        const status = res.statusCode;
        span.setAttribute(semconv.ATTR_HTTP_RESPONSE_STATUS_CODE, status);
        const route = res.locals.route as string | undefined;
        if (route) span.setAttribute(semconv.ATTR_HTTP_ROUTE, route);
        const operationId = res.locals.operationId as string | undefined;
        if (operationId) span.updateName(operationId);
        if (status >= 500) {
          span.setAttribute(semconv.ATTR_ERROR_TYPE, String(status));
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        span.end();
      });
      // Everything the request runs after this, awaited or called back, runs in its span's context
      // (Express 5 reads the body through promises, which keep it too).
      contexts.with(trace.setSpan(parent, span), next);
    },

    statement(event) {
      const active = contexts.active();
      if (!trace.getSpan(active)?.isRecording()) return;
      const ended = performance.now();
      const text = event.query.sql;
      const operation = firstWord.exec(text)?.[1] ?? semconv.DB_SYSTEM_NAME_VALUE_POSTGRESQL;
      const span = tracer.startSpan(
        operation,
        {
          kind: SpanKind.CLIENT,
          startTime: ended - event.queryDurationMillis,
          attributes: {
            [semconv.ATTR_DB_SYSTEM_NAME]: semconv.DB_SYSTEM_NAME_VALUE_POSTGRESQL,
            // The name before the stable conventions, which many backends still read.
            'db.system': semconv.DB_SYSTEM_NAME_VALUE_POSTGRESQL,
            [semconv.ATTR_DB_OPERATION_NAME]: operation,
            [semconv.ATTR_DB_QUERY_TEXT]: text,
          },
        },
        active,
      );
      if (event.level === 'error') {
        const code = (event.error as { code?: unknown } | undefined)?.code;
        const state = typeof code === 'string' && sqlState.test(code) ? code : undefined;
        if (state) span.setAttribute(semconv.ATTR_DB_RESPONSE_STATUS_CODE, state);
        span.setAttribute(semconv.ATTR_ERROR_TYPE, state ?? 'other');
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end(ended);
    },

    async delivery(attempt, send) {
      // The target's host and port, never its URL: a webhook URL may hold a token in its path or query.
      const port = attempt.url.port ? Number(attempt.url.port) : attempt.url.protocol === 'https:' ? 443 : 80;
      const span = tracer.startSpan(
        'POST',
        {
          kind: SpanKind.CLIENT,
          attributes: {
            [semconv.ATTR_HTTP_REQUEST_METHOD]: 'POST',
            [semconv.ATTR_SERVER_ADDRESS]: attempt.url.hostname.replace(/^\[(.*)\]$/, '$1'),
            [semconv.ATTR_SERVER_PORT]: port,
            'webhook.event_id': attempt.eventId,
            'webhook.delivery_id': attempt.deliveryId,
            'webhook.attempt': attempt.attempt,
          },
        },
        remoteParent(attempt.traceparent),
      );
      try {
        const sent = await send(traceparentOfSpan(span));
        if (sent.statusCode !== null) span.setAttribute(semconv.ATTR_HTTP_RESPONSE_STATUS_CODE, sent.statusCode);
        const failure = sent.statusCode === null ? sent.error : sent.statusCode >= 400 ? String(sent.statusCode) : undefined;
        if (failure) {
          span.setAttribute(semconv.ATTR_ERROR_TYPE, failure);
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        return sent;
      } catch (error) {
        span.setAttribute(semconv.ATTR_ERROR_TYPE, error instanceof Error ? error.constructor.name : 'other');
        span.setStatus({ code: SpanStatusCode.ERROR });
        throw error;
      } finally {
        span.end();
      }
    },

    async close() {
      // Spans a collector could not take were said by the exporter; stopping goes on without them.
      await provider.shutdown().catch(() => undefined);
      contexts.disable();
    },
  };
}

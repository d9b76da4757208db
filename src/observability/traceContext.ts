/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): a request that comes with a valid
 * `traceparent` continues its trace, anything else starts one. A malformed header is ignored, as the
 * recommendation asks: tracing is never a reason to refuse a request.
 *
 * This server's part of the request is a span of its own (a new span id, the caller's span as its
 * parent), kept in `req.trace`. Its trace id is on the log lines of the request, named by the code that
 * writes them (`traceId`: the request line, an internal error); not through AsyncLocalStorage and a
 * logger mixin, which on Node 20 puts a hook on every promise of the process: measured here 2.1 → 5.7 µs
 * of CPU per 50 awaits, several per cent of a request. The client gets it back in `traceresponse`
 * (Trace Context Level 2): `00-{trace id}-{this span's id}-{flags}`.
 *
 * Why a header of its own rather than X-Request-Id made equal to the trace id: X-Request-Id already
 * promises to echo a well-formed id the client sent, which a trace id could not honour when the client
 * sends both; and `traceresponse` is the name tracing tools look for, with the span id beside the
 * trace id. The request id stays the client's handle, the trace id the tracing systems'.
 *
 * What a request changes carries the trace on: the events it writes keep `traceparent` (this span as
 * the parent) and their webhook deliveries send it.
 */
import type { Request, Response } from 'express';
import { randomDraw } from '../random.js';

declare global {
  namespace Express {
    interface Request {
      /** The request's trace (`traceContext`). */
      trace: TraceContext;
    }
  }
}

export interface TraceContext {
  traceId: string;
  /** This server's span of the request. */
  spanId: string;
  /** The trace flags, two hex digits (`01`: the caller may record the trace). */
  flags: string;
}

/**
 * Version 00 exactly, lower-case hex (upper case is invalid); a later version may append fields after
 * its first four, and is read as 00. Version ff is invalid.
 */
const header = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const zeros = /^0+$/;

/** The trace a `traceparent` field continues; undefined when it is absent or malformed (several fields joined by commas included). */
export function parseTraceparent(field: string | undefined): { traceId: string; parentId: string; flags: string } | undefined {
  if (field === undefined || field.length > 512) return undefined;
  const match = header.exec(field.trim());
  if (!match) return undefined;
  const [, version, traceId, parentId, flags, rest] = match as unknown as [string, string, string, string, string, string | undefined];
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (zeros.test(traceId) || zeros.test(parentId)) return undefined;
  // Flags of a later version may mean more; only the sampled bit is known and kept.
  return { traceId, parentId, flags: version === '00' ? flags : (parseInt(flags, 16) & 1).toString(16).padStart(2, '0') };
}

/** The `traceparent` (and `traceresponse`) value naming this server's span of the trace. */
export const traceparentOf = (trace: TraceContext): string => `00-${trace.traceId}-${trace.spanId}-${trace.flags}`;

/**
 * A random id from the pool of random bytes (src/random.ts): two ids a request, each a call into the
 * random generator otherwise (measured here 4.7 µs a new trace). An id of zeros only is invalid, and
 * drawn again.
 */
function randomId(bytes: number): string {
  for (;;) {
    const id = randomDraw(bytes).toString('hex');
    if (!zeros.test(id)) return id;
  }
}

const newSpanId = () => randomId(8);
const newTraceId = () => randomId(16);

/** Continues or starts the request's trace (`req.trace`) and answers `traceresponse`. */
export function traceContext(req: Request, res: Response) {
  const field = req.headers.traceparent;
  const parent = parseTraceparent(typeof field === 'string' ? field : undefined);
  // A new trace is not recorded by anyone here: its sampled flag is off.
  const trace: TraceContext = parent ? { traceId: parent.traceId, spanId: newSpanId(), flags: parent.flags } : { traceId: newTraceId(), spanId: newSpanId(), flags: '00' };
  req.trace = trace;
  res.setHeader('traceresponse', traceparentOf(trace));
}

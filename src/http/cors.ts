/**
 * Cross-origin requests from browser pages (CORS, with the `cors` middleware): a page on an origin
 * of CORS_ORIGINS may call the API; every other origin gets no CORS header at all, so its browser
 * blocks the call. With no origin listed (the default) nothing is added and the API answers exactly
 * as without this module.
 *
 * It runs before the /v1 router, so a preflight (OPTIONS, which carries no key) is answered 204
 * before authentication and the rate limit, whatever the path: the real request that follows gets
 * the real answer (404 for an unknown path), with these headers, so the page can read it. Every
 * answer to an allowed origin carries them, errors included, as they are set before the request
 * goes on. A preflight from an origin not allowed goes on like any other OPTIONS request: 401
 * without a key, then 405 (the API has no OPTIONS operation).
 *
 * No credentials are allowed: a page sends its key in `Authorization`, never a cookie.
 */
import type { NextFunction, Request, Response } from 'express';
import cors from 'cors';

/** The methods of the contract's operations (HEAD, like GET, needs no preflight). */
const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * The request headers of the contract a page sets: its key, a JSON body, safe retries, conditional
 * requests, where a live stream resumes (an SSE client over fetch sends Last-Event-ID, which is not
 * safelisted), and its own request id to find its requests in the server's log. README.md (Settings,
 * CORS_ORIGINS) and the contract's description list them, and test/unit/docsTruth.test.ts holds them equal.
 */
export const allowedHeaders = ['Authorization', 'Content-Type', 'Idempotency-Key', 'If-Match', 'If-None-Match', 'Last-Event-ID', 'X-Request-Id'];

/**
 * The response headers of the contract a page reads, besides those every page may read
 * (Content-Type, Content-Length, …): Location of a create among them, Content-Disposition of a CSV or
 * an export's archive (its file name), and the deprecation of what it calls (src/http/deprecation.ts).
 */
export const exposedHeaders = [
  'ETag',
  'X-Request-Id',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'Idempotent-Replayed',
  'WWW-Authenticate',
  'Location',
  'Log-Position',
  'Content-Disposition',
  'traceresponse',
  'Deprecation',
  'Sunset',
  'Link',
];

/** How long a browser may reuse a preflight's answer: Chromium keeps it at most 2 hours, Firefox 24. */
const preflightMaxAgeSeconds = 7200;

/** `moreHeaders`: request headers a page may also set (the mock's `Prefer`, which picks Prism's answer). */
export function crossOrigin(origins: readonly string[], moreHeaders: readonly string[] = []) {
  if (origins.length === 0) return (_req: Request, _res: Response, next: NextFunction) => next();
  const allowed = new Set(origins);
  const answer = cors({
    // The allowed origin itself, never `*`: an answer names the one page that may read it.
    origin: (origin, decide) => decide(null, origin !== undefined && allowed.has(origin) ? origin : false),
    methods,
    allowedHeaders: [...allowedHeaders, ...moreHeaders],
    exposedHeaders,
    maxAge: preflightMaxAgeSeconds,
    credentials: false,
    optionsSuccessStatus: 204,
  });
  return (req: Request, res: Response, next: NextFunction) => {
    // Every answer depends on Origin once origins are listed, also one without CORS headers: a cache
    // must not hand it to an allowed page, nor an allowed page's answer to another origin.
    res.vary('Origin');
    answer(req, res, next);
  };
}

/**
 * Security headers (helmet) on every response. Two sets: JSON answers, which a browser should
 * never run, frame or sniff into something else, and the documentation page, an HTML page whose
 * Redoc script is inlined so that it works with no network.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { NextFunction, Request, Response } from 'express';
import helmet, { type HelmetOptions } from 'helmet';

/** Kept from helmet's defaults for every response (HSTS: one year with subdomains; browsers ignore it over plain HTTP). */
const common = {
  crossOriginOpenerPolicy: { policy: 'same-origin' },
  // Same-origin also for the pages CORS_ORIGINS allows (src/http/cors.ts): browsers apply this policy
  // only to loads without CORS (an <img>, a <script>, fetch with mode 'no-cors'), never to a fetch in
  // CORS mode, whose answer the page reads through Access-Control-Allow-Origin. So it blocks no page
  // the API allows, and still keeps every other page from pulling an answer into its own process.
  crossOriginResourcePolicy: { policy: 'same-origin' },
  referrerPolicy: { policy: 'no-referrer' },
  strictTransportSecurity: true,
  xContentTypeOptions: true,
  xFrameOptions: { action: 'deny' },
  xPermittedCrossDomainPolicies: true,
  xPoweredBy: true,
} satisfies HelmetOptions;

/**
 * JSON: a policy that allows nothing (a JSON document opened in a browser runs no script and loads
 * nothing) and no framing. Helmet's headers that only steer an HTML page (Origin-Agent-Cluster,
 * X-DNS-Prefetch-Control, X-Download-Options, X-XSS-Protection) are left out of every JSON answer.
 */
const jsonHeaders = helmet({
  ...common,
  contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
  originAgentCluster: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xXssProtection: false,
});

/** `'sha256-…'` of each inline script of the page, exactly as the HTML parser delimits it. */
export function inlineScriptHashes(page: string): string[] {
  return [...page.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script\s*>/gi)].map(
    ([, body]) => `'sha256-${createHash('sha256').update(body!, 'utf8').digest('base64')}'`,
  );
}

/**
 * The docs page: only its own inline scripts run (by hash, not `'unsafe-inline'`); styles may be
 * inline because Redoc's styled components write them at run time; images and fonts come from the
 * page itself or `data:` URLs; the page may fetch only from this server; nothing may frame it,
 * post a form or change the base URL.
 */
function docsHeaders(page: string) {
  return helmet({
    ...common,
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        scriptSrc: inlineScriptHashes(page),
        styleSrc: ["'unsafe-inline'"],
        imgSrc: ["'self'", 'data:'],
        fontSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        baseUri: ["'none'"],
        formAction: ["'none'"],
        frameAncestors: ["'none'"],
        objectSrc: ["'none'"],
      },
    },
  });
}

/**
 * What helmet does to a response, as the names it sets (with their values) and removes. Its JSON
 * set is the same for every request, so helmet decides it once here and each request replays it:
 * nine middlewares and a policy written out per request cost some 15 µs of a request's CPU
 * (`BENCH_ONLY=stages`), the replay one call per header.
 */
function decided(headers: typeof jsonHeaders) {
  const set: [name: string, value: string][] = [];
  const removed: string[] = [];
  const recorder = {
    setHeader: (name: string, value: string) => void set.push([name, value]),
    removeHeader: (name: string) => void removed.push(name),
  };
  let called = false;
  headers({} as never, recorder as never, () => (called = true));
  if (!called) throw new Error('helmet did not decide its headers at once');
  return { set, removed };
}

const json = decided(jsonHeaders);

/** The headers of every response: a JSON answer's. The docs page's are set over them as it is served (`pageHeaders`). */
export function securityHeaders(_req: Request, res: Response) {
  for (const [name, value] of json.set) res.setHeader(name, value);
  for (const name of json.removed) res.removeHeader(name);
}

// Worked out on the page's first request rather than at start: reading the 3 MB page and hashing
// its scripts cost every app's start about 40 ms of CPU, and the test suite starts a hundred apps.
let docs: ReturnType<typeof docsHeaders> | undefined;

/**
 * The docs page's headers, set by the router over the JSON ones when it answers with the page: so
 * every path that routes to it gets them (`/v1/docs/`, `/V1/DOCS`, percent-encoded letters, …: the
 * router matches paths regardless of case and with a trailing slash), and an error on its path gets a
 * JSON answer's.
 */
export function pageHeaders(req: Request, res: Response, next: NextFunction) {
  docs ??= docsHeaders(readFileSync(resolve(import.meta.dirname, '../../generated/docs.html'), 'utf8'));
  docs(req, res, next);
}

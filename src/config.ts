/** Settings from the environment, read once at start. Every variable is documented in README.md and .env.example. */
import { parseSecretsKey } from './auth/secrets.js';

export interface Config {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  dataDir: string;
  rateLimitPerMinute: number;
  redisUrl: string | undefined;
  logLevel: string;
  /** Key of the secrets stored encrypted (AI provider keys); see src/auth/secrets.ts for when it may be unset. */
  secretsKey: Buffer | undefined;
  /** Webhooks may target private, loopback and link-local addresses and plain http (development and tests only). */
  webhooksAllowPrivateTargets: boolean;
  /** How long a claim holds a delivery unless its worker renews it (every third of it, while sending): how soon another process takes over from one that died; the worker's default (10 s) unless set. */
  webhooksLeaseMs: number | undefined;
  /** How long a server's claim on an export holds unless renewed (EXPORTS_LEASE_MS; 30 s unless given). */
  exportsLeaseMs: number | undefined;
  /** Origins whose browser pages may call the API (CORS), as browsers send them in `Origin`; none unless listed. */
  corsOrigins: string[];
  /** How many days the event log keeps an event (the worker purges older ones); the worker's default unless set. */
  eventsRetentionDays: number | undefined;
  /** The port of the Prometheus metrics' own listener (on `host`); no metrics listener unless set. */
  metricsPort: number | undefined;
  /** After SIGTERM, how long /readyz answers 503 while the server still serves, before it stops listening (when anyone asked /readyz). */
  shutdownDrainMs: number;
  /**
   * Where OpenTelemetry spans are sent (OTLP/HTTP): OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, else
   * OTEL_EXPORTER_OTLP_ENDPOINT with `/v1/traces` appended, as the OpenTelemetry specification reads
   * them; tracing is off unless one is set (and off with OTEL_SDK_DISABLED=true). The SDK reads the
   * other OTEL_* variables itself.
   */
  otlpTracesUrl: string | undefined;
  /** Whether callers are kept in memory (src/auth/callerCache.ts): AUTH_CACHE `on` (the default) or `off`. */
  authCache: boolean;
}

/** A whole number of at least `minimum`, or undefined when unset (the component's default then applies). */
function atLeast(name: string, raw: string | undefined, minimum: number, why: string): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < minimum) throw new Error(`${name} must be a whole number of at least ${minimum} (${why}), not "${raw}"`);
  return value;
}

function positiveInteger(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number, not "${raw}"`);
  return value;
}

function booleanSetting(name: string, raw: string | undefined): boolean {
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  throw new Error(`${name} must be true or false, not "${raw}"`);
}

/**
 * A comma-separated list of origins (`https://app.example.com,http://localhost:5173`). Each is kept
 * as a browser writes its `Origin` (lowercase host, no default port, no trailing slash), so that a
 * listed origin cannot silently fail to match. Anything that is not only a scheme, host and port is
 * refused, `*` and `null` included: each origin that may call the API is named.
 */
function originList(name: string, raw: string | undefined): string[] {
  const origins = new Set<string>();
  for (const entry of (raw ?? '').split(',').map((part) => part.trim())) {
    if (entry === '') continue;
    const url = URL.canParse(entry) ? new URL(entry) : undefined;
    const onlyOrigin = url && (url.protocol === 'http:' || url.protocol === 'https:') && url.href === `${url.origin}/`;
    if (!onlyOrigin) throw new Error(`${name} must list origins such as https://app.example.com or http://localhost:5173, separated by commas, not "${entry}"`);
    origins.add(url.origin);
  }
  return [...origins];
}

/** CORS_ORIGINS as the server reads it; the mock (scripts/mock.ts) reads it here too, so both apply one rule. */
export function corsOriginsOf(env: NodeJS.ProcessEnv): string[] {
  return originList('CORS_ORIGINS', env.CORS_ORIGINS);
}

function onOff(name: string, raw: string | undefined, fallback: boolean): boolean {
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'on') return true;
  if (raw === 'off') return false;
  throw new Error(`${name} must be on or off, not "${raw}"`);
}

function metricsPort(raw: string | undefined, port: number): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const value = positiveInteger('METRICS_PORT', raw, 0);
  if (value === 0 || value > 65_535) throw new Error(`METRICS_PORT must be a port from 1 to 65535, not "${raw}"`);
  if (value === port) throw new Error(`METRICS_PORT must differ from PORT (${port}): the metrics are never served on the API's port`);
  return value;
}

function httpUrl(name: string, raw: string): string {
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new Error(`${name} must be an http:// or https:// URL such as http://localhost:4318, not "${raw}"`);
  return raw;
}

function otlpTracesUrl(env: NodeJS.ProcessEnv): string | undefined {
  // A boolean of the OpenTelemetry specification: only `true`, in any case, is true.
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (traces) return httpUrl('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', traces);
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  return base ? `${httpUrl('OTEL_EXPORTER_OTLP_ENDPOINT', base).replace(/\/$/, '')}/v1/traces` : undefined;
}

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = positiveInteger('PORT', env.PORT, 3000);
  return {
    port,
    host: env.HOST || '127.0.0.1',
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: env.DATA_DIR || './data',
    rateLimitPerMinute: positiveInteger('RATE_LIMIT_PER_MINUTE', env.RATE_LIMIT_PER_MINUTE, 120),
    redisUrl: env.REDIS_URL || undefined,
    logLevel: env.LOG_LEVEL || 'info',
    secretsKey: env.SECRETS_KEY ? parseSecretsKey(env.SECRETS_KEY, 'SECRETS_KEY') : undefined,
    webhooksAllowPrivateTargets: booleanSetting('WEBHOOKS_ALLOW_PRIVATE_TARGETS', env.WEBHOOKS_ALLOW_PRIVATE_TARGETS),
    webhooksLeaseMs: atLeast('WEBHOOKS_LEASE_MS', env.WEBHOOKS_LEASE_MS, 1_000, 'a shorter lease is renewed without pause and lost at once'),
    exportsLeaseMs: atLeast('EXPORTS_LEASE_MS', env.EXPORTS_LEASE_MS, 1_000, 'a shorter lease is renewed without pause and lost at once'),
    corsOrigins: corsOriginsOf(env),
    eventsRetentionDays: atLeast('EVENTS_RETENTION_DAYS', env.EVENTS_RETENTION_DAYS, 1, 'events must outlive their deliveries and the feed'),
    metricsPort: metricsPort(env.METRICS_PORT, port),
    shutdownDrainMs: positiveInteger('SHUTDOWN_DRAIN_MS', env.SHUTDOWN_DRAIN_MS, 5_000),
    otlpTracesUrl: otlpTracesUrl(env),
    authCache: onOff('AUTH_CACHE', env.AUTH_CACHE, true),
  };
}

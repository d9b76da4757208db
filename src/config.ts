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
  /** How long a worker holds a claimed delivery before another process may take it (a process that died); the worker's default unless set. */
  webhooksLeaseMs: number | undefined;
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

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    port: positiveInteger('PORT', env.PORT, 3000),
    host: env.HOST || '127.0.0.1',
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: env.DATA_DIR || './data',
    rateLimitPerMinute: positiveInteger('RATE_LIMIT_PER_MINUTE', env.RATE_LIMIT_PER_MINUTE, 120),
    redisUrl: env.REDIS_URL || undefined,
    logLevel: env.LOG_LEVEL || 'info',
    secretsKey: env.SECRETS_KEY ? parseSecretsKey(env.SECRETS_KEY, 'SECRETS_KEY') : undefined,
    webhooksAllowPrivateTargets: booleanSetting('WEBHOOKS_ALLOW_PRIVATE_TARGETS', env.WEBHOOKS_ALLOW_PRIVATE_TARGETS),
    webhooksLeaseMs: env.WEBHOOKS_LEASE_MS ? positiveInteger('WEBHOOKS_LEASE_MS', env.WEBHOOKS_LEASE_MS, 0) : undefined,
  };
}

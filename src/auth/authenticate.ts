/**
 * Authentication of every /v1 request but the two public documents. One query finds the key by its
 * hash together with its owner and the owner's current organization memberships — read on every
 * request, so a revocation or a change of roles takes effect at once, and the one round trip keeps
 * every request cheap. `lastUsedAt` is written at most about once a minute per key.
 */
import type { NextFunction, Request, Response } from 'express';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { Schemas } from '../api/operations.js';
import type { Database } from '../db/database.js';
import { prepared } from '../db/prepared.js';
import { BadRequest, Unauthenticated } from '../errors.js';
import { loggableError } from '../logger.js';
import { hashKey, keyPattern, keyStatus } from './apiKeys.js';
import type { Scope, SystemRole } from './scopes.js';

/** An organization the caller belongs to, with the caller's role in it, as read on this request. */
export type Membership = Schemas['Organization'];

export interface Caller {
  keyId: string;
  keyName: string;
  keyExpiresAt: Date;
  scopes: Scope[];
  userId: string;
  email: string;
  name: string;
  timezone: string | null;
  systemRole: SystemRole;
  /** The caller's organizations, by name. */
  organizations: Membership[];
}

const touchEveryMs = 60_000;

function keyQuery(db: Kysely<Database> | Transaction<Database>, keyHash: string) {
  return db
    .selectFrom('api_keys')
    .innerJoin('users', 'users.id', 'api_keys.user_id')
    .select((eb) => [
      'api_keys.id',
      'api_keys.name',
      'api_keys.scopes',
      'api_keys.expires_at',
      'api_keys.revoked_at',
      'api_keys.last_used_at',
      'users.id as user_id',
      'users.email',
      'users.name as user_name',
      'users.timezone',
      'users.system_role',
      eb
        .selectFrom('organization_members')
        .innerJoin('organizations', 'organizations.id', 'organization_members.org_id')
        .whereRef('organization_members.user_id', '=', 'users.id')
        .select(
          sql<Membership[]>`coalesce(json_agg(json_build_object(
            'id', organizations.id, 'name', organizations.name, 'status', organizations.status,
            'role', organization_members.role, 'timezone', organizations.timezone,
            'defaultLocale', organizations.default_locale
          ) order by organizations.name, organizations.id), '[]'::json)`.as('organizations'),
        )
        .as('organizations'),
    ])
    .where('api_keys.key_hash', '=', keyHash);
}

/** Built and compiled once: it runs on every request. */
const keyByHash = prepared((db, { keyHash }: { keyHash: string }) => keyQuery(db, keyHash));

function authorizationFields(rawHeaders: string[]): number {
  let count = 0;
  for (let index = 0; index < rawHeaders.length; index += 2) {
    if (rawHeaders[index]!.length === 13 && rawHeaders[index]!.toLowerCase() === 'authorization') count += 1;
  }
  return count;
}

export function authenticate(db: Kysely<Database>, logger: Logger) {
  return async (req: Request, _res: Response, next: NextFunction) => {
    // Node keeps only the first of several Authorization fields; which one the client meant is a guess we do not make.
    if (authorizationFields(req.rawHeaders) > 1) return next(new BadRequest('Send exactly one Authorization header.'));
    const match = /^Bearer (\S+)$/.exec(req.get('authorization') ?? '');
    const key = match?.[1];
    if (!key || !keyPattern.test(key)) return next(new Unauthenticated());

    const [row] = await keyByHash(db, { keyHash: hashKey(key) });
    const now = new Date();
    if (!row || keyStatus(row, now) !== 'active') return next(new Unauthenticated());

    if (!row.last_used_at || now.getTime() - row.last_used_at.getTime() >= touchEveryMs) {
      // Not awaited: recording the use must not slow down or fail the request.
      db.updateTable('api_keys')
        .set({ last_used_at: now })
        .where('id', '=', row.id)
        .execute()
        .catch((error: unknown) => logger.warn({ err: loggableError(error), keyId: row.id }, 'could not record key use'));
    }

    req.caller = {
      keyId: row.id,
      keyName: row.name,
      keyExpiresAt: row.expires_at,
      scopes: row.scopes,
      userId: row.user_id,
      email: row.email,
      name: row.user_name,
      timezone: row.timezone,
      systemRole: row.system_role,
      organizations: row.organizations ?? [],
    };
    next();
  };
}

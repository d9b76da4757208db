/**
 * Authentication of every /v1 request but the two public documents: the bearer key is looked up
 * by its hash together with its owner, on every request, so a revocation or a change of roles
 * takes effect at once. `lastUsedAt` is written at most about once a minute per key.
 */
import type { NextFunction, Request, Response } from 'express';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/database.js';
import { Unauthenticated } from '../errors.js';
import { hashKey, keyPattern, keyStatus } from './apiKeys.js';
import type { Scope, SystemRole } from './scopes.js';

export interface Caller {
  keyId: string;
  keyName: string;
  keyExpiresAt: Date;
  scopes: Scope[];
  userId: string;
  systemRole: SystemRole;
}

const touchEveryMs = 60_000;

export function authenticate(db: Kysely<Database>, logger: Logger) {
  return async (req: Request, _res: Response, next: NextFunction) => {
    const match = /^Bearer (\S+)$/.exec(req.get('authorization') ?? '');
    const key = match?.[1];
    if (!key || !keyPattern.test(key)) return next(new Unauthenticated());

    const row = await db
      .selectFrom('api_keys')
      .innerJoin('users', 'users.id', 'api_keys.user_id')
      .select([
        'api_keys.id',
        'api_keys.name',
        'api_keys.scopes',
        'api_keys.expires_at',
        'api_keys.revoked_at',
        'api_keys.last_used_at',
        'users.id as user_id',
        'users.system_role',
      ])
      .where('api_keys.key_hash', '=', hashKey(key))
      .executeTakeFirst();
    const now = new Date();
    if (!row || keyStatus(row, now) !== 'active') return next(new Unauthenticated());

    if (!row.last_used_at || now.getTime() - row.last_used_at.getTime() >= touchEveryMs) {
      // Not awaited: recording the use must not slow down or fail the request.
      db.updateTable('api_keys')
        .set({ last_used_at: now })
        .where('id', '=', row.id)
        .execute()
        .catch((error: unknown) => logger.warn({ err: error, keyId: row.id }, 'could not record key use'));
    }

    req.caller = {
      keyId: row.id,
      keyName: row.name,
      keyExpiresAt: row.expires_at,
      scopes: row.scopes as Scope[],
      userId: row.user_id,
      systemRole: row.system_role as SystemRole,
    };
    next();
  };
}

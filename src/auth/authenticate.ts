/**
 * Authentication of every /v1 request but the two public documents. One query finds the key by its
 * hash together with its owner and the owner's current organization memberships; with the caller
 * cache on (src/auth/callerCache.ts, the default), a caller read once is kept in memory and forgotten
 * as soon as any of that changes, so a known caller costs no statement and a revocation or a change
 * of roles still takes effect on the next request. Expiry is judged on every request against the
 * app's clock. `lastUsedAt` is written at most about once a minute per key.
 */
import type { NextFunction, Request, Response } from 'express';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/database.js';
import { prepared } from '../db/prepared.js';
import { BadRequest, Unauthenticated } from '../errors.js';
import { loggableError } from '../logger.js';
import { hashKey, keyPattern, keyStatus } from './apiKeys.js';
import type { Caller, Membership } from './caller.js';
import type { CallerCache, KeptCaller } from './callerCache.js';

const touchEveryMs = 60_000;

/** The one query authentication reads a caller with; the triggers of migrations 0007 and 0009 watch every column it reads (test/migrations.test.ts). */
export function keyQuery(db: Kysely<Database> | Transaction<Database>, by: { column: 'api_keys.key_hash' | 'api_keys.id'; value: string }) {
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
            'id', organizations.id, 'revision', organizations.revision, 'name', organizations.name, 'status', organizations.status,
            'role', organization_members.role, 'timezone', organizations.timezone,
            'defaultLocale', organizations.default_locale
          ) order by organizations.name, organizations.id), '[]'::json)`.as('organizations'),
        )
        .as('organizations'),
    ])
    .where(by.column, '=', by.value);
}

/** Built and compiled once: it runs on every request. */
const keyByHash = prepared((db, { keyHash }: { keyHash: string }) => keyQuery(db, { column: 'api_keys.key_hash', value: keyHash }));

function authorizationFields(rawHeaders: string[]): number {
  let count = 0;
  for (let index = 0; index < rawHeaders.length; index += 2) {
    if (rawHeaders[index]!.length === 13 && rawHeaders[index]!.toLowerCase() === 'authorization') count += 1;
  }
  return count;
}

type KeyRow = Awaited<ReturnType<typeof keyByHash>>[number];

function keptCaller(row: KeyRow): KeptCaller {
  return {
    caller: {
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
    },
    usedAt: row.last_used_at?.getTime(),
  };
}

/**
 * The caller of a key by its id, read from the database, never from memory: an open event stream
 * decides its access anew with it when a notification says the caller changed. Undefined for an
 * unknown or revoked key; expiry is the reader's to judge against its clock.
 */
export async function callerOfKey(db: Kysely<Database>, keyId: string): Promise<Caller | undefined> {
  const row = await keyQuery(db, { column: 'api_keys.id', value: keyId }).executeTakeFirst();
  return row && !row.revoked_at ? keptCaller(row).caller : undefined;
}

/** The caller of the key with this hash, read from the database and kept in memory; undefined for an unknown or revoked key. */
async function readCaller(db: Kysely<Database>, keyHash: string, callers: CallerCache | undefined): Promise<KeptCaller | undefined> {
  const mark = callers?.mark();
  const [row] = await keyByHash(db, { keyHash });
  if (!row || row.revoked_at) return undefined;
  const read = keptCaller(row);
  callers?.keep(keyHash, read, mark!);
  return read;
}

const bearer = /^Bearer (\S+)$/;

export function authenticate(db: Kysely<Database>, logger: Logger, options: { now: () => Date; callers: CallerCache | undefined }) {
  const { now: clock, callers } = options;
  const admit = (found: KeptCaller | undefined, req: Request, next: NextFunction) => {
    const now = clock();
    if (!found || keyStatus({ revoked_at: null, expires_at: found.caller.keyExpiresAt }, now) !== 'active') return next(new Unauthenticated());

    if (found.usedAt === undefined || now.getTime() - found.usedAt >= touchEveryMs) {
      const keyId = found.caller.keyId;
      // Remembered at once, so that this process tries again only a minute later; the condition
      // keeps the other processes, which remember their own, from writing it more often.
      found.usedAt = now.getTime();
      // Not awaited: recording the use must not slow down or fail the request.
      db.updateTable('api_keys')
        .set({ last_used_at: now })
        .where('id', '=', keyId)
        .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<=', new Date(now.getTime() - touchEveryMs))]))
        .execute()
        .catch((error: unknown) => logger.warn({ err: loggableError(error), keyId }, 'could not record key use'));
    }

    req.caller = found.caller;
    next();
  };
  // A caller kept in memory is admitted at once, without a promise: only a caller read from the database waits.
  return (req: Request, _res: Response, next: NextFunction) => {
    // Node keeps only the first of several Authorization fields; which one the client meant is a guess we do not make.
    if (authorizationFields(req.rawHeaders) > 1) return next(new BadRequest('Send exactly one Authorization header.'));
    const key = bearer.exec(req.headers.authorization ?? '')?.[1];
    if (!key || !keyPattern.test(key)) return next(new Unauthenticated());
    const keyHash = hashKey(key);
    const kept = callers?.get(keyHash);
    if (kept) return admit(kept, req, next);
    return readCaller(db, keyHash, callers).then((found) => admit(found, req, next));
  };
}

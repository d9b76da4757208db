/** Handlers of the account area. */
import { JsonText } from '../api/jsonText.js';
import type { Schemas } from '../api/operations.js';
import type { Caller } from '../auth/caller.js';
import type { AreaHandlers, Handler } from './types.js';

/**
 * Each caller's account, written once: a caller kept in memory (src/auth/callerCache.ts) is the same
 * object until anything it holds changes, which makes it a new one; so the text (and the tag the router
 * keeps on it) is written on a caller's first request, not on every one.
 */
const accounts = new WeakMap<Caller, JsonText<Schemas['Account']>>();

function accountOf(caller: Caller): JsonText<Schemas['Account']> {
  const account: Schemas['Account'] = {
    user: { id: caller.userId, email: caller.email, name: caller.name, timezone: caller.timezone },
    orgs: caller.organizations,
    scopes: caller.scopes,
    key: { id: caller.keyId, name: caller.keyName, expiresAt: caller.keyExpiresAt.toISOString() },
  };
  return new JsonText(JSON.stringify(account));
}

/** Everything comes from the caller as authentication read it on this request: no further query. */
export const getMe: Handler<'getMe'> = async (_request, { caller }) => {
  let account = accounts.get(caller);
  if (account === undefined) {
    account = accountOf(caller);
    accounts.set(caller, account);
  }
  return { status: 200, body: account };
};

export const accountHandlers: AreaHandlers<'Account'> = {
  getMe,
};

/** Handlers of the account area. */
import type { AreaHandlers, Handler } from './types.js';

/** Everything comes from the caller as authentication read it on this request: no further query. */
export const getMe: Handler<'getMe'> = async (_request, { caller }) => ({
  status: 200,
  body: {
    user: { id: caller.userId, email: caller.email, name: caller.name, timezone: caller.timezone },
    orgs: caller.organizations,
    scopes: caller.scopes,
    key: { id: caller.keyId, name: caller.keyName, expiresAt: caller.keyExpiresAt.toISOString() },
  },
});

export const accountHandlers: AreaHandlers<'Account'> = {
  getMe,
};

/** Handlers of the account area. */
import { listMemberOrganizations } from '../db/queries/organizations.js';
import { findUser } from '../db/queries/users.js';
import { toOrganization } from '../records/organizations.js';
import type { Handler } from './types.js';

export const getMe: Handler<'getMe'> = async (_request, { db, caller }) => {
  const [user, organizations] = await Promise.all([findUser(db, caller.userId), listMemberOrganizations(db, caller.userId)]);
  return {
    status: 200,
    body: {
      user: { id: user.id, email: user.email, name: user.name, timezone: user.timezone },
      orgs: organizations.map(toOrganization),
      scopes: caller.scopes,
      key: { id: caller.keyId, name: caller.keyName, expiresAt: caller.keyExpiresAt.toISOString() },
    },
  };
};

/** Handlers of the organizations area: the caller's organizations, their settings and members. */
import { mayAssignOrganizationRole, requireActive, requireChange } from '../auth/permissions.js';
import { loadOrganizationAccess } from '../auth/access.js';
import * as organizations from '../db/queries/organizations.js';
import { findUserByEmail } from '../db/queries/users.js';
import { pageLimit } from '../db/pagination.js';
import { NotFound, RuleViolation } from '../errors.js';
import { organizationMemberJson, toOrganization, toOrganizationMember } from '../records/organizations.js';
import { pageText } from '../api/jsonText.js';
import { nameFromEmail } from '../rules/accounts.js';
import { storedTimeZone } from './shared.js';
import type { AreaHandlers, Handler } from './types.js';
import { inTransaction } from '../db/transaction.js';

export const listOrganizations: Handler<'listOrganizations'> = async (_request, { caller }) => ({
  status: 200,
  body: { data: caller.organizations, nextCursor: null },
});

/** Platform operators too see an organization only as its members: non-members get 404. */
export const getOrganization: Handler<'getOrganization'> = async ({ params }, { caller }) => {
  const organization = caller.organizations.find((membership) => membership.id === params.orgId);
  if (!organization) throw new NotFound();
  return { status: 200, body: organization, logOf: organization.id };
};

export const updateOrganization: Handler<'updateOrganization'> = async ({ params, body }, { db, caller }) => {
  const access = await loadOrganizationAccess(db, caller, params.orgId, 'administration');
  requireActive(access);
  const row = await organizations.updateOrganization(db, params.orgId, {
    name: body.name,
    timezone: body.timezone === undefined ? undefined : storedTimeZone(body.timezone),
    default_locale: body.defaultLocale,
  });
  return { status: 200, body: toOrganization(row, access.role) };
};

const memberPages = organizations.memberPages(organizationMemberJson);

export const listOrganizationMembers: Handler<'listOrganizationMembers'> = async ({ params, query }, { db, caller }) => {
  await loadOrganizationAccess(db, caller, params.orgId, 'administration');
  const page = await memberPages(db, params.orgId, { limit: pageLimit(query.limit), cursor: query.cursor });
  return { status: 200, body: pageText(page), logOf: params.orgId };
};

/**
 * An existing account is added unchanged; an unknown e-mail gets a new account that signs in through
 * an external identity provider, named `name` or, without one, after the part of the e-mail before `@`.
 */
export const addOrganizationMember: Handler<'addOrganizationMember'> = async ({ params, body }, { db, caller }) => {
  const access = await loadOrganizationAccess(db, caller, params.orgId, 'administration');
  requireChange(access, mayAssignOrganizationRole(access.role, null, body.role));

  const added = await inTransaction(db, async (trx) => {
    const organization = await organizations.lockOrganization(trx, params.orgId);
    let user = await findUserByEmail(trx, body.email);
    const created = user === undefined;
    if (!user) {
      if (body.externalOnly !== true) {
        throw new RuleViolation('There is no account with this e-mail yet: send externalOnly true to create one that signs in through an external identity provider.');
      }
      user = await organizations.createExternalUser(trx, {
        email: body.email,
        name: body.name || nameFromEmail(body.email),
        locale: organization.default_locale,
      });
    } else if (await organizations.findMember(trx, params.orgId, user.id)) {
      throw new RuleViolation('This person is already a member of the organization.');
    }
    const member = await organizations.addMember(trx, params.orgId, user.id, body.role);
    return { ...toOrganizationMember({ ...member, email: user.email, name: user.name }), created };
  });
  return { status: 201, body: added };
};

/** The organization row is locked first, so two changes can never leave it without an Owner. */
export const updateOrganizationMember: Handler<'updateOrganizationMember'> = async ({ params, body }, { db, caller }) => {
  const access = await loadOrganizationAccess(db, caller, params.orgId, 'administration');
  const updated = await inTransaction(db, async (trx) => {
    await organizations.lockOrganization(trx, params.orgId);
    const member = await organizations.findMember(trx, params.orgId, params.userId);
    if (!member) throw new NotFound();
    requireChange(access, mayAssignOrganizationRole(access.role, member.role, body.role));
    if (member.role === 'OWNER' && body.role !== 'OWNER' && (await organizations.countOwners(trx, params.orgId)) === 1) {
      throw new RuleViolation('This person is the last Owner of the organization; make someone else Owner first.');
    }
    const revision = await organizations.setMemberRole(trx, params.orgId, params.userId, body.role);
    return { ...member, revision, role: body.role };
  });
  return { status: 200, body: toOrganizationMember(updated) };
};

/** Who leaves the organization leaves its teams, each with its `team_member.removed`. */
export const removeOrganizationMember: Handler<'removeOrganizationMember'> = async ({ params }, { db, caller, now, traceparent }) => {
  const access = await loadOrganizationAccess(db, caller, params.orgId, 'administration');
  await inTransaction(db, async (trx) => {
    await organizations.lockOrganization(trx, params.orgId);
    const member = await organizations.findMember(trx, params.orgId, params.userId);
    if (!member) throw new NotFound();
    requireChange(access, mayAssignOrganizationRole(access.role, member.role, null));
    if (member.role === 'OWNER' && (await organizations.countOwners(trx, params.orgId)) === 1) {
      throw new RuleViolation('This person is the last Owner of the organization; make someone else Owner first.');
    }
    await organizations.removeMember(trx, params.orgId, params.userId, { at: now(), traceparent });
  });
  return { status: 204, body: undefined };
};

export const organizationsHandlers: AreaHandlers<'Organizations'> = {
  listOrganizations,
  getOrganization,
  updateOrganization,
  listOrganizationMembers,
  addOrganizationMember,
  updateOrganizationMember,
  removeOrganizationMember,
};

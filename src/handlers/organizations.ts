/** Handlers of the organizations area. */
import { findMemberOrganization, listMemberOrganizations } from '../db/queries/organizations.js';
import { NotFound } from '../errors.js';
import { toOrganization } from '../records/organizations.js';
import { notImplemented, type Handler } from './types.js';

export const listOrganizations: Handler<'listOrganizations'> = async (_request, { db, caller }) => {
  const organizations = await listMemberOrganizations(db, caller.userId);
  return { status: 200, body: { data: organizations.map(toOrganization), nextCursor: null } };
};

/** Platform operators too see an organization only as its members: non-members get 404. */
export const getOrganization: Handler<'getOrganization'> = async ({ params }, { db, caller }) => {
  const organization = await findMemberOrganization(db, caller.userId, params.orgId);
  if (!organization) throw new NotFound();
  return { status: 200, body: toOrganization(organization) };
};

export const updateOrganization: Handler<'updateOrganization'> = notImplemented('updateOrganization');

export const listOrganizationMembers: Handler<'listOrganizationMembers'> = notImplemented('listOrganizationMembers');

export const addOrganizationMember: Handler<'addOrganizationMember'> = notImplemented('addOrganizationMember');

export const updateOrganizationMember: Handler<'updateOrganizationMember'> = notImplemented('updateOrganizationMember');

export const removeOrganizationMember: Handler<'removeOrganizationMember'> = notImplemented('removeOrganizationMember');

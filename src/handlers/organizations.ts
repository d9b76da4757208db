/** Handlers of the organizations area. */
import { NotFound } from '../errors.js';
import { notImplemented, type Handler } from './types.js';

export const listOrganizations: Handler<'listOrganizations'> = async (_request, { caller }) => ({
  status: 200,
  body: { data: caller.organizations, nextCursor: null },
});

/** Platform operators too see an organization only as its members: non-members get 404. */
export const getOrganization: Handler<'getOrganization'> = async ({ params }, { caller }) => {
  const organization = caller.organizations.find((membership) => membership.id === params.orgId);
  if (!organization) throw new NotFound();
  return { status: 200, body: organization };
};

export const updateOrganization: Handler<'updateOrganization'> = notImplemented('updateOrganization');

export const listOrganizationMembers: Handler<'listOrganizationMembers'> = notImplemented('listOrganizationMembers');

export const addOrganizationMember: Handler<'addOrganizationMember'> = notImplemented('addOrganizationMember');

export const updateOrganizationMember: Handler<'updateOrganizationMember'> = notImplemented('updateOrganizationMember');

export const removeOrganizationMember: Handler<'removeOrganizationMember'> = notImplemented('removeOrganizationMember');

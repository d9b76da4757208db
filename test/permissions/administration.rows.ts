/** Matrix rows of the account, organization, team and team-member operations. */
import { createUser } from '../support/factories.js';
import { row, rowFor, unique, variantRow, type AreaRows } from './world.js';

const S = 'scope';

// prettier-ignore
export const administrationRows: AreaRows<'Account' | 'Organizations' | 'Teams'> = {
  //                                  noKey readOnly orgOwner orgAdmin implementer teamOwner teamAdmin teamMember teamViewer orgMember outsider superadmin superadminMember formerSuperadmin
  getMe: row(                          [401, 200,     200,     200,     200,        200,      200,      200,       200,       200,      200,     200,       200,             S],
    () => ({ path: '/v1/me' })),
  listOrganizations: row(              [401, 200,     200,     200,     200,        200,      200,      200,       200,       200,      200,     200,       200,             S],
    () => ({ path: '/v1/orgs' })),
  getOrganization: row(                [401, 200,     200,     200,     200,        200,      200,      200,       200,       200,      404,     404,       200,             S],
    (w) => ({ path: `/v1/orgs/${w.org.id}` })),
  updateOrganization: row(             [401, S,       200,     200,     403,        403,      403,      403,       403,       403,      403,     403,       403,             S],
    (w) => ({ path: `/v1/orgs/${w.org.id}`, body: { defaultLocale: 'en' } })),
  listOrganizationMembers: row(        [401, 200,     200,     200,     403,        403,      403,      403,       403,       403,      403,     403,       403,             S],
    (w) => ({ path: `/v1/orgs/${w.org.id}/members` })),
  addOrganizationMember: rowFor(       [401, S,       201,     201,     403,        403,      403,      403,       403,       403,      403,     403,       403,             S],
    (w) => createUser(w.db),
    (w, person) => ({ path: `/v1/orgs/${w.org.id}/members`, body: { email: person.email, role: 'MEMBER' } })),
  updateOrganizationMember: rowFor(    [401, S,       200,     200,     403,        403,      403,      403,       403,       403,      403,     403,       403,             S],
    (w) => w.newMember('MEMBER'),
    (w, person) => ({ path: `/v1/orgs/${w.org.id}/members/${person.id}`, body: { role: 'IMPLEMENTER' } })),
  removeOrganizationMember: rowFor(    [401, S,       204,     204,     403,        403,      403,      403,       403,       403,      403,     403,       403,             S],
    (w) => w.newMember('MEMBER'),
    (w, person) => ({ path: `/v1/orgs/${w.org.id}/members/${person.id}` })),
  listOrganizationTeams: row(          [401, 200,     200,     200,     200,        200,      200,      200,       200,       200,      403,     403,       200,             S],
    (w) => ({ path: `/v1/orgs/${w.org.id}/teams` })),
  createTeam: row(                     [401, S,       201,     201,     403,        403,      403,      403,       403,       403,      403,     403,       403,             S],
    (w) => ({ path: `/v1/orgs/${w.org.id}/teams`, body: { name: `Team ${unique()}` } })),
  getTeam: row(                        [401, 200,     200,     200,     200,        200,      200,      200,       200,       404,      404,     404,       200,             S],
    (w) => ({ path: `/v1/teams/${w.team.id}` })),
  updateTeam: row(                     [401, S,       200,     200,     403,        403,      403,      403,       403,       403,      403,     403,       403,             S],
    (w) => ({ path: `/v1/teams/${w.team.id}`, body: { meetingDurationMin: 90 } })),
  deleteTeam: rowFor(                  [401, S,       204,     204,     403,        403,      403,      403,       403,       403,      403,     403,       403,             S],
    (w) => w.newTeam(),
    (w, team) => ({ path: `/v1/teams/${team.id}` })),
  getTeamSnapshot: row(                [401, 200,     200,     200,     200,        200,      200,      200,       200,       403,      403,     403,       200,             S],
    (w) => ({ path: `/v1/teams/${w.team.id}/snapshot` })),
  listTeamMembers: row(                [401, 200,     200,     200,     200,        200,      200,      200,       200,       403,      403,     403,       200,             S],
    (w) => ({ path: `/v1/teams/${w.team.id}/members` })),
  addTeamMember: rowFor(               [401, S,       201,     201,     403,        403,      403,      403,       403,       403,      403,     403,       403,             S],
    (w) => w.newMember('MEMBER'),
    (w, person) => ({ path: `/v1/teams/${w.team.id}/members`, body: { userId: person.id } })),
  updateTeamMember: rowFor(            [401, S,       200,     200,     403,        403,      403,      403,       403,       403,      403,     403,       403,             S],
    (w) => w.newMember('MEMBER', 'MEMBER'),
    (w, person) => ({ path: `/v1/teams/${w.team.id}/members/${person.id}`, body: { role: 'VIEWER' } })),
  removeTeamMember: rowFor(            [401, S,       204,     204,     403,        403,      403,      403,       403,       403,      403,     403,       403,             S],
    (w) => w.newMember('MEMBER', 'MEMBER'),
    (w, person) => ({ path: `/v1/teams/${w.team.id}/members/${person.id}` })),
};

// prettier-ignore
export const administrationVariants = [
  // Caller not allowed, target absent: administration is refused (403) before the person named is
  // looked up, so only the organization's Owners and Admins learn that the person is not a member.
  //                                                    noKey readOnly orgOwner orgAdmin implementer teamOwner teamAdmin teamMember teamViewer orgMember outsider superadmin superadminMember formerSuperadmin
  variantRow('addOrganizationMember', 'target absent', [401, S,       422,     422,     403,        403,      403,      403,       403,       403,      403,     403,       403,             S],
    async () => ({ email: `nobody-${unique()}@example.test` }),
    (w, person) => ({ path: `/v1/orgs/${w.org.id}/members`, body: { email: person.email, role: 'MEMBER' } })),
  variantRow('updateOrganizationMember', 'target absent', [401, S,    404,     404,     403,        403,      403,      403,       403,       403,      403,     403,       403,             S],
    (w) => createUser(w.db),
    (w, person) => ({ path: `/v1/orgs/${w.org.id}/members/${person.id}`, body: { role: 'IMPLEMENTER' } })),
  variantRow('removeOrganizationMember', 'target absent', [401, S,    404,     404,     403,        403,      403,      403,       403,       403,      403,     403,       403,             S],
    (w) => createUser(w.db),
    (w, person) => ({ path: `/v1/orgs/${w.org.id}/members/${person.id}` })),
  variantRow('addTeamMember', 'target absent', [401, S,               422,     422,     403,        403,      403,      403,       403,       403,      403,     403,       403,             S],
    (w) => createUser(w.db),
    (w, person) => ({ path: `/v1/teams/${w.team.id}/members`, body: { userId: person.id } })),
  variantRow('updateTeamMember', 'target absent', [401, S,            404,     404,     403,        403,      403,      403,       403,       403,      403,     403,       403,             S],
    (w) => w.newMember('MEMBER'),
    (w, person) => ({ path: `/v1/teams/${w.team.id}/members/${person.id}`, body: { role: 'VIEWER' } })),
  variantRow('removeTeamMember', 'target absent', [401, S,            404,     404,     403,        403,      403,      403,       403,       403,      403,     403,       403,             S],
    (w) => w.newMember('MEMBER'),
    (w, person) => ({ path: `/v1/teams/${w.team.id}/members/${person.id}` })),
];

import { describe, expect, it } from 'vitest';
import type { Caller } from '../../src/auth/caller.js';
import {
  effectiveTeamRole,
  eventReader,
  learnsOfNewTeam,
  goalAccess,
  mayAssignOrganizationRole,
  mayRateSelf,
  mayReportOnGoal,
  messagesAccess,
  organizationAccess,
  ratesAnyTime,
  readableTeams,
  requireChange,
  seesEveryPeopleReview,
  teamAccess,
  teamActions,
  teamAllows,
  teamChangeGrants,
} from '../../src/auth/permissions.js';
import type { OrganizationRole, OrganizationStatus, TeamRole } from '../../src/db/database.js';

function callerIn(role?: OrganizationRole, status: OrganizationStatus = 'ACTIVE'): Caller {
  return {
    keyId: 'k',
    keyName: 'Key',
    keyExpiresAt: new Date('2027-01-01T00:00:00.000Z'),
    scopes: ['write'],
    userId: 'me',
    email: 'me@example.com',
    name: 'Me',
    timezone: null,
    systemRole: 'USER',
    organizations: role ? [{ id: 'org', revision: 1, name: 'Org', status, role, timezone: 'Europe/Bratislava', defaultLocale: 'en' }] : [],
  };
}

const facts = (callerTeamRole: 'OWNER' | 'ADMIN' | 'MEMBER' | 'VIEWER' | null) => ({ teamId: 'team', orgId: 'org', callerTeamRole });
const code = (work: () => unknown) => {
  try {
    work();
    return 'allowed';
  } catch (error) {
    return (error as { code: string }).code;
  }
};

describe('the role a caller acts with in a team', () => {
  it('organization Owners, Admins and Implementers act as team Admins in every team, as Owner in a team they own', () => {
    for (const role of ['OWNER', 'ADMIN', 'IMPLEMENTER'] as const) {
      expect(effectiveTeamRole(role, null)).toBe('ADMIN');
      expect(effectiveTeamRole(role, 'VIEWER')).toBe('ADMIN');
      expect(effectiveTeamRole(role, 'OWNER')).toBe('OWNER');
    }
  });

  it('a plain organization Member has their team role, and no access to teams they are not in', () => {
    expect(effectiveTeamRole('MEMBER', 'VIEWER')).toBe('VIEWER');
    expect(effectiveTeamRole('MEMBER', null)).toBeNull();
  });

  it('a team row without organization membership gives no access', () => {
    expect(effectiveTeamRole(undefined, 'OWNER')).toBeNull();
  });
});

describe('visibility: 403 for collections, 404 for items and for what does not exist', () => {
  it('refuses a team the caller cannot see by the kind of target', () => {
    expect(code(() => teamAccess(callerIn('MEMBER'), facts(null), 'collection'))).toBe('forbidden');
    expect(code(() => teamAccess(callerIn('MEMBER'), facts(null), 'item'))).toBe('notFound');
    expect(code(() => teamAccess(callerIn('OWNER'), undefined, 'collection'))).toBe('notFound');
  });

  it('refuses an organization the caller is not a member of, and answers 404 when it does not exist', () => {
    expect(code(() => organizationAccess(callerIn(), 'org', 'collection', true))).toBe('forbidden');
    expect(code(() => organizationAccess(callerIn(), 'org', 'item', true))).toBe('notFound');
    expect(code(() => organizationAccess(callerIn(), 'org', 'collection', false))).toBe('notFound');
  });
});

describe('administration: only the organization\'s Owners and Admins, decided with visibility', () => {
  it('refuses everyone else with 403, team Owners and Admins and callers who cannot see the team included', () => {
    for (const role of ['MEMBER', 'IMPLEMENTER'] as const) {
      expect(code(() => organizationAccess(callerIn(role), 'org', 'administration', true)), role).toBe('forbidden');
      expect(code(() => teamAccess(callerIn(role), facts('OWNER'), 'administration')), role).toBe('forbidden');
    }
    expect(code(() => teamAccess(callerIn('MEMBER'), facts(null), 'administration'))).toBe('forbidden');
    expect(code(() => teamAccess(callerIn(), facts('ADMIN'), 'administration'))).toBe('forbidden');
    expect(code(() => organizationAccess(callerIn(), 'org', 'administration', true))).toBe('forbidden');
  });

  it('refuses with 403 before suspension, and answers 404 only for what does not exist', () => {
    expect(code(() => organizationAccess(callerIn('MEMBER', 'SUSPENDED'), 'org', 'administration', true))).toBe('forbidden');
    expect(code(() => organizationAccess(callerIn(), 'org', 'administration', false))).toBe('notFound');
    expect(code(() => teamAccess(callerIn('MEMBER'), undefined, 'administration'))).toBe('notFound');
  });

  it('lets Owners and Admins in, also to teams they are not in', () => {
    for (const role of ['OWNER', 'ADMIN'] as const) {
      expect(organizationAccess(callerIn(role), 'org', 'administration', true).role).toBe(role);
      expect(teamAccess(callerIn(role), facts(null), 'administration').orgRole).toBe(role);
    }
  });
});

describe('changes: suspension first, then the role', () => {
  it('a suspended organization refuses every change, even one the role would allow', () => {
    const access = teamAccess(callerIn('OWNER', 'SUSPENDED'), facts(null), 'item');
    expect(code(() => requireChange(access, teamAllows(access, 'delete')))).toBe('orgSuspended');
    expect(code(() => requireChange(access, false))).toBe('orgSuspended');
  });

  it('follows the reference\'s permissions of writes: Viewers nothing, Members the daily work, Admins the rest', () => {
    const as = (role: 'ADMIN' | 'MEMBER' | 'VIEWER') => teamAccess(callerIn('MEMBER'), facts(role), 'item');
    expect(['VIEWER', 'MEMBER', 'ADMIN'].map((role) => teamAllows(as(role as 'ADMIN'), 'writeTask'))).toEqual([false, true, true]);
    expect(['VIEWER', 'MEMBER', 'ADMIN'].map((role) => teamAllows(as(role as 'ADMIN'), 'delete'))).toEqual([false, false, true]);
    expect(code(() => requireChange(as('VIEWER'), teamAllows(as('VIEWER'), 'writeIssue')))).toBe('forbidden');
  });
});

describe('organization roles', () => {
  it('only an Owner grants OWNER or ADMIN or changes and removes an Owner or Admin', () => {
    expect(mayAssignOrganizationRole('OWNER', 'ADMIN', null)).toBe(true);
    expect(mayAssignOrganizationRole('ADMIN', 'MEMBER', 'IMPLEMENTER')).toBe(true);
    expect(mayAssignOrganizationRole('ADMIN', 'MEMBER', 'ADMIN')).toBe(false);
    expect(mayAssignOrganizationRole('ADMIN', 'OWNER', 'OWNER')).toBe(false);
    expect(mayAssignOrganizationRole('ADMIN', 'ADMIN', null)).toBe(false);
  });

  it('Members and Implementers administer nothing', () => {
    expect(mayAssignOrganizationRole('MEMBER', null, 'MEMBER')).toBe(false);
    expect(mayAssignOrganizationRole('IMPLEMENTER', 'MEMBER', 'MEMBER')).toBe(false);
  });
});

describe('goals', () => {
  it('a company goal is readable by every organization member but changeable by none outside its team', () => {
    const access = goalAccess(callerIn('MEMBER'), facts(null), 'COMPANY');
    expect(access.team).toBeNull();
    expect(mayReportOnGoal(access, 'me', 'me')).toBe(false);
    expect(code(() => goalAccess(callerIn('MEMBER'), facts(null), 'DEPARTMENT'))).toBe('notFound');
  });

  it('the goal\'s owner reports on it as a Member, not as a Viewer', () => {
    const member = goalAccess(callerIn('MEMBER'), facts('MEMBER'), 'DEPARTMENT');
    const viewer = goalAccess(callerIn('MEMBER'), facts('VIEWER'), 'DEPARTMENT');
    expect([mayReportOnGoal(member, 'me', 'me'), mayReportOnGoal(member, 'me', 'someone')]).toEqual([true, false]);
    expect(mayReportOnGoal(viewer, 'me', 'me')).toBe(false);
  });
});

describe('people reviews', () => {
  it('team Admins and Owners and the organization\'s Owners, Admins and Implementers see every review; Members and Viewers only their own', () => {
    const inTeam = (role: 'OWNER' | 'ADMIN' | 'MEMBER' | 'VIEWER') => teamAccess(callerIn('MEMBER'), facts(role), 'collection');
    expect(['OWNER', 'ADMIN', 'MEMBER', 'VIEWER'].map((role) => seesEveryPeopleReview(inTeam(role as 'ADMIN')))).toEqual([true, true, false, false]);
    for (const orgRole of ['OWNER', 'ADMIN', 'IMPLEMENTER'] as const) {
      expect(seesEveryPeopleReview(teamAccess(callerIn(orgRole), facts(null), 'collection')), orgRole).toBe(true);
      expect(seesEveryPeopleReview(teamAccess(callerIn(orgRole), facts('VIEWER'), 'collection')), orgRole).toBe(true);
    }
  });
});

describe('meetings', () => {
  const access = (orgRole: OrganizationRole, teamRole: 'OWNER' | 'ADMIN' | 'MEMBER' | 'VIEWER' | null) =>
    teamAccess(callerIn(orgRole), facts(teamRole), 'item');

  it('people in the team with the team role Member or above rate themselves; Viewers do not', () => {
    expect((['OWNER', 'ADMIN', 'MEMBER', 'VIEWER'] as const).map((role) => mayRateSelf(access('MEMBER', role)))).toEqual([true, true, true, false]);
  });

  it('Implementers never rate themselves, organization Owners and Admins only in teams they are members of', () => {
    expect(mayRateSelf(access('IMPLEMENTER', 'MEMBER'))).toBe(false);
    expect(mayRateSelf(access('IMPLEMENTER', null))).toBe(false);
    expect([mayRateSelf(access('OWNER', null)), mayRateSelf(access('ADMIN', null))]).toEqual([false, false]);
    expect([mayRateSelf(access('OWNER', 'MEMBER')), mayRateSelf(access('ADMIN', 'VIEWER'))]).toEqual([true, true]);
  });

  it('team Admins and Owners, organization Owners and Admins included, rate outside the window; team Members do not', () => {
    expect(ratesAnyTime(access('MEMBER', 'ADMIN'))).toBe(true);
    expect(ratesAnyTime(access('MEMBER', 'OWNER'))).toBe(true);
    expect(ratesAnyTime(access('ADMIN', 'MEMBER'))).toBe(true);
    expect(ratesAnyTime(access('MEMBER', 'MEMBER'))).toBe(false);
  });

  it('setting others\' ratings is for team Admins, and organization Owners, Admins and Implementers', () => {
    expect(teamAllows(access('IMPLEMENTER', null), 'rateOthers')).toBe(true);
    expect(teamAllows(access('MEMBER', 'MEMBER'), 'rateOthers')).toBe(false);
  });

  it('cascading messages are acknowledged by any member of their organization; one foreign message refuses all', () => {
    expect(messagesAccess(callerIn('MEMBER'), ['org'])).toEqual({ suspended: false });
    expect(messagesAccess(callerIn('MEMBER'), [])).toEqual({ suspended: false });
    expect(messagesAccess(callerIn('MEMBER', 'SUSPENDED'), ['org'])).toEqual({ suspended: true });
    expect(code(() => messagesAccess(callerIn('MEMBER'), ['org', 'elsewhere']))).toBe('forbidden');
  });
});

describe('the grants of a change made in one statement agree with the decision', () => {
  const organizationRoles: (OrganizationRole | undefined)[] = [undefined, 'OWNER', 'ADMIN', 'IMPLEMENTER', 'MEMBER'];
  const statuses: OrganizationStatus[] = ['ACTIVE', 'SUSPENDED'];
  const teamRoles: (TeamRole | null)[] = [null, 'VIEWER', 'MEMBER', 'ADMIN', 'OWNER'];

  it('for every organization role, status, team role and action, a grant matches exactly when the change is allowed', () => {
    const disagreements: string[] = [];
    for (const orgRole of organizationRoles) {
      for (const status of statuses) {
        const caller = callerIn(orgRole, status);
        for (const action of teamActions) {
          const grants = teamChangeGrants(caller, action);
          for (const teamRole of teamRoles) {
            const decided = code(() => {
              const access = teamAccess(caller, facts(teamRole), 'item');
              requireChange(access, teamAllows(access, action));
            });
            const granted = grants.some((grant) => grant.orgId === 'org' && grant.teamRole === teamRole);
            if (granted !== (decided === 'allowed')) disagreements.push(`${orgRole} ${status} ${teamRole} ${action}: ${decided}, granted ${granted}`);
          }
        }
      }
    }
    expect(disagreements).toEqual([]);
  });

  it('no organization the caller is not a member of is granted', () => {
    const grants = teamChangeGrants(callerIn('OWNER'), 'delete');
    expect(new Set(grants.map((grant) => grant.orgId))).toEqual(new Set(['org']));
  });
});

describe('a live stream learns of a team created after its access was decided', () => {
  const created = { type: 'team.created', orgId: 'org', teamId: 'new' };
  const access = (role: OrganizationRole, teamIds?: string[]) => {
    const caller = callerIn(role);
    return { caller, reader: eventReader(caller, readableTeams(caller, [facts(null)])), teams: teamIds && new Set(teamIds) };
  };

  it('for an Implementer following every team, when the team is new to the access', () => {
    expect(learnsOfNewTeam(access('IMPLEMENTER'), created)).toBe(true);
    expect(learnsOfNewTeam(access('IMPLEMENTER'), { ...created, teamId: 'team' })).toBe(false);
  });

  it('not for a stream that named its teams, another event, another organization, or those who read every event or only their own teams', () => {
    expect(learnsOfNewTeam(access('IMPLEMENTER', ['team']), created)).toBe(false);
    expect(learnsOfNewTeam(access('IMPLEMENTER'), { ...created, type: 'team.updated' })).toBe(false);
    expect(learnsOfNewTeam(access('IMPLEMENTER'), { ...created, orgId: 'other' })).toBe(false);
    for (const role of ['OWNER', 'ADMIN', 'MEMBER'] as const) expect(learnsOfNewTeam(access(role), created)).toBe(false);
  });
});

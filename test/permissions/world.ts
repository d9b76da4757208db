/**
 * The world the permission matrix runs in: one organization with one team, and one caller for every
 * kind of role the reference distinguishes. Rows of the matrix (test/permissions/*.rows.ts) prepare the
 * items they act on in this world and name the status every caller must get.
 */
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { OperationId, OperationOf, Tag } from '../../src/api/operations.js';
import type { Scope } from '../../src/auth/scopes.js';
import type { Database, OrganizationRole, OrganizationRow, TeamRole, TeamRow, UserRow } from '../../src/db/database.js';
import { createDocument, createSeat } from '../support/areaFactories.js';
import { databaseOf, type LogReaders } from '../support/eventFactories.js';
import { createGoal, createIssue, createTask } from '../support/executionFactories.js';
import { addOrganizationMember, addTeamMember, createKey, createOrganization, createTeam, createUser } from '../support/factories.js';
import { createMeetingIn } from '../support/meetingFactories.js';
import { createMetric } from '../support/scorecardFactories.js';

/** The callers, in the order of the matrix's columns. */
export const callerNames = [
  'noKey',
  'readOnly',
  'orgOwner',
  'orgAdmin',
  'implementer',
  'teamOwner',
  'teamAdmin',
  'teamMember',
  'teamViewer',
  'orgMember',
  'outsider',
  'superadmin',
  'superadminMember',
  'formerSuperadmin',
] as const;
export type CallerName = (typeof callerNames)[number];

/**
 * Who each caller is:
 * - readOnly: organization OWNER with a `read` key;
 * - orgOwner, orgAdmin, implementer: that organization role, in no team;
 * - teamOwner … teamViewer: organization MEMBER with that role in the world's team;
 * - orgMember: organization MEMBER in no team;
 * - outsider: OWNER of another organization;
 * - superadmin: SUPERADMIN in no organization; superadminMember: SUPERADMIN who is organization MEMBER and
 *   team MEMBER (both with `write` + `platform` keys);
 * - formerSuperadmin: a USER again, still holding a `platform` key.
 */
const people: Record<Exclude<CallerName, 'noKey'>, { orgRole?: OrganizationRole; teamRole?: TeamRole; scopes: Scope[]; superadmin?: boolean }> = {
  readOnly: { orgRole: 'OWNER', scopes: ['read'] },
  orgOwner: { orgRole: 'OWNER', scopes: ['write'] },
  orgAdmin: { orgRole: 'ADMIN', scopes: ['write'] },
  implementer: { orgRole: 'IMPLEMENTER', scopes: ['write'] },
  teamOwner: { orgRole: 'MEMBER', teamRole: 'OWNER', scopes: ['write'] },
  teamAdmin: { orgRole: 'MEMBER', teamRole: 'ADMIN', scopes: ['write'] },
  teamMember: { orgRole: 'MEMBER', teamRole: 'MEMBER', scopes: ['write'] },
  teamViewer: { orgRole: 'MEMBER', teamRole: 'VIEWER', scopes: ['write'] },
  orgMember: { orgRole: 'MEMBER', scopes: ['write'] },
  outsider: { scopes: ['write'] },
  superadmin: { scopes: ['write', 'platform'], superadmin: true },
  superadminMember: { orgRole: 'MEMBER', teamRole: 'MEMBER', scopes: ['write', 'platform'], superadmin: true },
  formerSuperadmin: { scopes: ['platform'] },
};

export interface World {
  db: Kysely<Database>;
  /** Where the world's events are read: its app, when it was given one, so that they are written once its feeds show them. */
  log: LogReaders;
  org: OrganizationRow;
  /** The team every team-role caller belongs to. */
  team: TeamRow;
  users: Record<Exclude<CallerName, 'noKey'>, UserRow>;
  keys: Record<CallerName, string | undefined>;
  /** A new team of the organization with the same team members as `team`. */
  newTeam(options?: { isLeadership?: boolean }): Promise<TeamRow>;
  /** A new person in the organization (and in `team`, when a team role is given). */
  newMember(orgRole?: OrganizationRole, teamRole?: TeamRole): Promise<UserRow>;
}

export const unique = () => randomBytes(4).toString('hex');

export async function createWorld(log: LogReaders, options: { suspended?: boolean } = {}): Promise<World> {
  const db = databaseOf(log);
  const org = await createOrganization(db, { status: options.suspended ? 'SUSPENDED' : 'ACTIVE' });
  const elsewhere = await createOrganization(db);
  const team = await createTeam(db, org.id);
  const users = {} as World['users'];
  const keys = { noKey: undefined } as World['keys'];
  for (const [name, person] of Object.entries(people) as [Exclude<CallerName, 'noKey'>, (typeof people)[keyof typeof people]][]) {
    const user = await createUser(db, { name, systemRole: person.superadmin ? 'SUPERADMIN' : 'USER' });
    users[name] = user;
    keys[name] = (await createKey(db, user.id, { scopes: person.scopes })).key;
    if (person.orgRole) await addOrganizationMember(db, org.id, user.id, person.orgRole);
    if (person.teamRole) await addTeamMember(db, team.id, user.id, person.teamRole);
  }
  await addOrganizationMember(db, elsewhere.id, users.outsider.id, 'OWNER');
  // Something in every list of the team, so that a list's rows are never the reason for its answer.
  const owner = users.teamMember.id;
  await createTask(db, team.id, owner);
  await createIssue(db, team.id, owner);
  await createGoal(db, team, owner);
  await createMetric(db, team.id, owner);
  await createMeetingIn(db, team.id, owner);
  await createDocument(db, team.id, owner);
  await createSeat(db, team.id);

  const teamRoles = Object.entries(people).filter(([, person]) => person.teamRole) as [Exclude<CallerName, 'noKey'>, { teamRole: TeamRole }][];
  return {
    db,
    log,
    org,
    team,
    users,
    keys,
    async newTeam(teamOptions = {}) {
      const created = await createTeam(db, org.id, teamOptions);
      for (const [name, person] of teamRoles) await addTeamMember(db, created.id, users[name].id, person.teamRole);
      return created;
    },
    async newMember(orgRole = 'MEMBER', teamRole) {
      const user = await createUser(db);
      await addOrganizationMember(db, org.id, user.id, orgRole);
      if (teamRole) await addTeamMember(db, team.id, user.id, teamRole);
      return user;
    },
  };
}

/**
 * What a caller must get: a status, `scope` for 403 insufficientScope (403 alone means forbidden), or
 * `?` where `npm run stubs` left the answer to decide (every suite that meets one fails, naming the file).
 */
export type Expected = number | 'scope' | '?';

export interface MatrixRow<Target = unknown> {
  operationId: OperationId;
  /** The rows file it is written in (test/permissions/<area>.rows.ts), named by every failure about it. */
  file: string;
  /**
   * What sets this row apart from the operation's main row, for an operation with more than one row
   * (such as `target absent`: the person the path names is not a member); the main row has none.
   */
  variant?: string;
  /** Creates what the request acts on, afresh for every caller (a delete must find something to delete). */
  prepare?: (world: World) => Promise<Target>;
  request: (world: World, target: Target) => { path: string; body?: unknown };
  /** One status per caller, in the order of `callerNames`. */
  expect: Expected[];
}

/** A main row as an area writes it, under its operationId. */
export type Row = Omit<MatrixRow, 'operationId' | 'file' | 'variant'>;

/**
 * The main rows of an area: exactly one per operation of its tags, so `tsc` names an operation
 * without one in the area's rows file.
 */
export type AreaRows<T extends Tag> = { [K in OperationOf<T>]: Row };

/** A further row of an operation that already has its main row, told apart by `variant`. */
export type VariantRow = Omit<MatrixRow, 'file'> & { variant: string };

/** A row whose request needs nothing prepared. */
export function row(expect: Expected[], request: (world: World) => { path: string; body?: unknown }): Row {
  return { expect, request };
}

/** A row whose request acts on something `prepare` creates afresh for every caller. */
export function rowFor<Target>(
  expect: Expected[],
  prepare: (world: World) => Promise<Target>,
  request: (world: World, target: Target) => { path: string; body?: unknown },
): Row {
  return { expect, prepare, request } as Row;
}

export function variantRow<Target>(
  operationId: OperationId,
  variant: string,
  expect: Expected[],
  prepare: (world: World) => Promise<Target>,
  request: (world: World, target: Target) => { path: string; body?: unknown },
): VariantRow {
  return { operationId, variant, expect, prepare, request } as VariantRow;
}

/** The `prepare` the scaffold writes where a row's path names an item it cannot make: fails, naming the file, until written. */
export function prepareToWrite(operationId: OperationId, file: string) {
  return async (): Promise<Record<string, string>> => {
    throw new Error(`${operationId}: write the prepare of its row in ${file}, making what its path names`);
  };
}

/** An area's rows as the suites read them, each knowing its operation and its file. */
export function gathered(file: string, main: Partial<Record<OperationId, Row>>, variants: VariantRow[] = []): MatrixRow[] {
  const rows = [
    ...Object.entries(main).map(([operationId, mainRow]) => ({ ...mainRow!, operationId: operationId as OperationId, file })),
    ...variants.map((variant) => ({ ...variant, file })),
  ];
  for (const { operationId, expect } of rows) {
    if (expect.length !== callerNames.length) {
      throw new Error(`${operationId} in ${file}: ${expect.length} expectations for ${callerNames.length} callers`);
    }
  }
  return rows;
}

/**
 * The caller other suites call a row's operation as: the first one it lets through (a 2xx). A row
 * the scaffold left with `?` has none yet.
 */
export function allowedCaller(row: MatrixRow): CallerName {
  const index = row.expect.findIndex((expected) => typeof expected === 'number' && expected < 300);
  if (index < 0) {
    const why = row.expect.includes('?') ? 'fill in its ? cells' : 'no caller gets a 2xx';
    throw new Error(`${row.operationId}: ${why} in ${row.file}`);
  }
  return callerNames[index]!;
}

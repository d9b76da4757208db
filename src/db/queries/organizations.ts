/** Queries of organization administration: settings and members. */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, Locale, OrganizationRole, OrganizationUpdate } from '../database.js';
import type { JsonShape } from '../json.js';
import { preparedJsonPages } from '../pagination.js';
import { insertEventsOfRows, logRevision, type BulkStamp } from './events.js';

type Db = Kysely<Database> | Transaction<Database>;

/** Locks the organization's row: changes of its members and teams in one organization run one at a time. */
export function lockOrganization(trx: Transaction<Database>, orgId: string) {
  return trx.selectFrom('organizations').selectAll().where('id', '=', orgId).forUpdate().executeTakeFirstOrThrow();
}

export function updateOrganization(trx: Db, orgId: string, change: OrganizationUpdate) {
  return trx.updateTable('organizations').set(change).where('id', '=', orgId).returningAll().executeTakeFirstOrThrow();
}

const memberColumns = [
  'organization_members.user_id',
  'organization_members.revision',
  'organization_members.role',
  'organization_members.joined_at',
  'users.email',
  'users.name',
] as const;

const memberRows = (db: Db, { orgId }: { orgId: string }) =>
  db
    .selectFrom('organization_members')
    .innerJoin('users', 'users.id', 'organization_members.user_id')
    .select(memberColumns)
    .where('organization_members.org_id', '=', orgId);

type MemberRow = Awaited<ReturnType<ReturnType<typeof memberRows>['executeTakeFirstOrThrow']>>;

/** Members of an organization, oldest membership first, written as JSON by `shape` (given by the handler). */
export function memberPages<R>(shape: JsonShape<MemberRow, R>) {
  const pages = preparedJsonPages(
    memberRows,
    [
      { column: 'organization_members.joined_at', direction: 'asc', type: 'instant' },
      { column: 'organization_members.user_id', direction: 'asc', type: 'string' },
    ],
    shape,
  );
  return (db: Db, orgId: string, page: { limit: number; cursor?: string | undefined }) => pages(db, { orgId }, page);
}

export function findMember(db: Db, orgId: string, userId: string) {
  return db
    .selectFrom('organization_members')
    .innerJoin('users', 'users.id', 'organization_members.user_id')
    .select(memberColumns)
    .where('organization_members.org_id', '=', orgId)
    .where('organization_members.user_id', '=', userId)
    .executeTakeFirst();
}

/** A new account that signs in through an external identity provider; no password is ever set here. */
export function createExternalUser(db: Db, user: { email: string; name: string; locale: Locale }) {
  return db
    .insertInto('users')
    .values({ email: user.email, name: user.name, locale: user.locale, external_only: true })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function addMember(db: Db, orgId: string, userId: string, role: OrganizationRole) {
  return db
    .insertInto('organization_members')
    .values({ org_id: orgId, user_id: userId, role })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Sets the member's role; answers the membership's revision after the change. */
export async function setMemberRole(db: Db, orgId: string, userId: string, role: OrganizationRole): Promise<string> {
  const row = await db
    .updateTable('organization_members')
    .set({ role })
    .where('org_id', '=', orgId)
    .where('user_id', '=', userId)
    .returning('revision')
    .executeTakeFirstOrThrow();
  return row.revision;
}

export async function countOwners(db: Db, orgId: string): Promise<number> {
  const row = await db
    .selectFrom('organization_members')
    .select((eb) => eb.fn.countAll<string>().as('owners'))
    .where('org_id', '=', orgId)
    .where('role', '=', 'OWNER')
    .executeTakeFirstOrThrow();
  return Number(row.owners);
}

/**
 * Removes the person from the organization and from every team of it; what they created stays. The
 * statement that takes them out of the teams writes the `team_member.removed` of each team, whatever
 * their number (the organization's own `organization_member.removed` is the outbox's).
 */
export async function removeMember(trx: Transaction<Database>, orgId: string, userId: string, stamp: BulkStamp) {
  await sql`
    with left_teams as (
      delete from team_members tm using teams t
      where tm.user_id = ${userId} and t.id = tm.team_id and t.org_id = ${orgId}
      returning t.org_id, tm.team_id, '{"userId":' || to_json(tm.user_id)::text || ',"revision":' || ${logRevision} || '}' as object
    )
    ${insertEventsOfRows('left_teams', 'team_member.removed', stamp)}
  `.execute(trx);
  await trx.deleteFrom('organization_members').where('org_id', '=', orgId).where('user_id', '=', userId).execute();
}

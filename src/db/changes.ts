/**
 * Pieces of a change made in one statement with its event (`changeWithEvent`,
 * src/db/queries/events.ts): the guard that applies the caller's grants to the item's team, and
 * the deletion of a team's item. The grants come from the authorization module
 * (`teamChangeGrants`): the statement applies the rule, it does not make it.
 */
import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { Database, TeamRole } from './database.js';
import { jsonRecord, type JsonShape } from './json.js';
import { changeWithEvent, logRevision, type EventStamp } from './queries/events.js';

type Db = Kysely<Database> | Transaction<Database>;

/** Who makes a change in one statement: the caller, and the grants the authorization module gave them for it. */
export interface ChangeGuard {
  userId: string;
  /** Every (organization, role in the team) in which the change is allowed; null: not in the team. */
  grants: readonly { orgId: string; teamRole: TeamRole | null }[];
}

/**
 * A guard as the values of a statement built once (`changeWithEvent`): its grants as two
 * arrays, each one value of the statement whatever the number of grants.
 */
export type GuardValues = {
  userId: string;
  grantOrgIds: string[];
  grantRoles: (TeamRole | null)[];
};

export const guardValues = (guard: ChangeGuard): GuardValues => ({
  userId: guard.userId,
  grantOrgIds: guard.grants.map((grant) => grant.orgId),
  grantRoles: guard.grants.map((grant) => grant.teamRole),
});

/**
 * The item's team `t` with the caller's row in it `tm` (none outside the team), for a statement's
 * `from` or `using` (a Kysely `update` joins the same: see `taskChange`).
 */
export const teamOfChange = (guard: GuardValues) => sql`teams t left join team_members tm on tm.team_id = t.id and tm.user_id = ${guard.userId}`;

/**
 * Whether the change is granted: the team's organization and the caller's role in it (`t`, `tm` of
 * `teamOfChange`) match one of the guard's grants.
 */
export const changeGranted = (guard: GuardValues) =>
  sql<boolean>`exists (
    select 1 from unnest(${guard.grantOrgIds}::text[], ${guard.grantRoles}::text[]) as grant_ (org_id, team_role)
    where grant_.org_id = t.org_id and grant_.team_role is not distinct from tm.role
  )`;

/**
 * What the change of a team's item `x` returns for its event: its team, its organization (`orgId`),
 * and its record as `shape` writes it (the mapper's form, given by the handler) — the event's object
 * and the change's answer.
 */
export const changedItem = <Row, R>(shape: JsonShape<Row, R>, orgId: RawBuilder<unknown>) =>
  [sql<string>`x.team_id`.as('team_id'), orgId.as('org_id'), jsonRecord(shape, 'x').as('object')] as const;

/** The rule that a user is a member of the team, their row locked until the change commits (they cannot leave meanwhile). */
export const isMemberOfTeam = (teamId: RawBuilder<unknown>, userId: string) =>
  sql<boolean>`exists (select 1 from team_members o where o.team_id = ${teamId} and o.user_id = ${userId} for key share)`;

/** The rule that an optional meeting is one of the team's, locked until the change commits. */
export const isNoneOrMeetingOfTeam = (meetingId: string | null, teamId: RawBuilder<unknown>) =>
  sql<boolean>`(${meetingId}::text is null or exists (select 1 from meetings m where m.id = ${meetingId}::text and m.team_id = ${teamId} for key share))`;

const teamItemDeletion = (table: 'tasks' | 'issues') =>
  changeWithEvent((_db, args: GuardValues & { id: string }) =>
    sql`delete from ${sql.table(table)} x using ${teamOfChange(args)}
      where x.id = ${args.id} and t.id = x.team_id and ${changeGranted(args)}
      returning x.team_id, t.org_id, '{"id":' || to_json(x.id)::text || ',"revision":' || ${logRevision} || '}' as object`,
  );

const teamItemDeletions = { tasks: teamItemDeletion('tasks'), issues: teamItemDeletion('issues') };

/** Deletes a team's item (a task, an issue) when the guard allows it, with its event, whose object is the id and the log position of the deletion. */
export function deleteTeamItemWithEvent(db: Db, table: 'tasks' | 'issues', id: string, guard: ChangeGuard, event: EventStamp) {
  return teamItemDeletions[table](db, { ...guardValues(guard), id }, event);
}

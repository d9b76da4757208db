/**
 * Rules several areas share — the database ones checked inside the change's transaction, or, when a
 * change's one statement (which holds them in its guard) changed nothing, to say which one refused
 * it — and the caller's time zone.
 */
import type { Kysely } from 'kysely';
import { loadTeamAccess } from '../auth/access.js';
import type { Caller } from '../auth/caller.js';
import { membershipIn, type TeamAccess } from '../auth/permissions.js';
import type { Database } from '../db/database.js';
import { meetingTeamId } from '../db/queries/meetings.js';
import { isTeamMember } from '../db/queries/teams.js';
import { FormatError, RuleViolation, type ValidationIssue } from '../errors.js';
import { readCsv, type CsvColumns, type CsvSheet } from '../rules/csvFile.js';
import { callerTimeZone, canonicalTimeZone } from '../time.js';

/** The caller's time zone in an organization they belong to: the profile's, else the organization's. */
export const callerTimeZoneIn = (caller: Caller, orgId: string): string =>
  callerTimeZone(caller.timezone, membershipIn(caller, orgId)!.timezone);

/**
 * The caller's time zone for a read under a team (its "today", its current week), at the read's own
 * statement count: known without a statement when the profile has a zone or all the caller's
 * organizations share one (the team, if visible at all, is in one of them), so the read's statement
 * can bring its access along; otherwise the team is read first, for its organization's zone, and
 * `access` is the caller's access to it, which the read then need not decide again.
 */
export async function zoneInTeam(db: Kysely<Database>, caller: Caller, teamId: string): Promise<{ zone: string; access?: TeamAccess }> {
  const zones = new Set(caller.organizations.map((organization) => organization.timezone));
  const known = caller.timezone ?? (zones.size === 1 ? [...zones][0] : undefined);
  if (known !== undefined) return { zone: known };
  const { access } = await loadTeamAccess(db, caller, teamId, 'collection');
  return { zone: callerTimeZoneIn(caller, access.orgId), access };
}

/** A time zone as stored: the tz database's name in its spelling (src/time.ts); any other name is refused. */
export function storedTimeZone(name: string): string {
  const zone = canonicalTimeZone(name);
  if (zone === undefined) throw new RuleViolation(`"${name}" is not a time zone of the IANA tz database.`);
  return zone;
}

/** Any `ownerId` (task, goal, metric) and `userId` (seat, review) must be a member of the item's team. */
export async function requireTeamMember(trx: Kysely<Database>, teamId: string, userId: string, item: string, who = 'owner') {
  if (!(await isTeamMember(trx, teamId, userId))) {
    throw new RuleViolation(`The ${item}'s ${who} must be a member of its team.`);
  }
}

/** An optional `meetingId` of a new task or issue must be a meeting of the same team. */
export async function requireMeetingOfTeam(trx: Kysely<Database>, teamId: string, meetingId: string | null) {
  if (meetingId !== null && (await meetingTeamId(trx, meetingId)) !== teamId) {
    throw new RuleViolation('The meeting must be a meeting of the same team.');
  }
}

/** Where an empty text clears a field: empty after trimming, or null, is stored as null; omitted stays omitted. */
export function clearable(text: string | null): string | null;
export function clearable(text: string | null | undefined): string | null | undefined;
export function clearable(text: string | null | undefined): string | null | undefined {
  return text === undefined ? undefined : text || null;
}

/** The 422 of an import's bad rows: every cell named, nothing written. */
export const badRows = (issues: ValidationIssue[]) => new FormatError(issues, 'Some rows cannot be imported; nothing was written.');

/** A CSV file read against the columns an import takes; its structure's problems answered as one 422. */
export function sheetOf(text: string, columns: CsvColumns): CsvSheet {
  const sheet = readCsv(text, columns);
  if ('issues' in sheet) throw badRows(sheet.issues);
  return sheet;
}

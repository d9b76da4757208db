/** Factories for the meetings area: meetings in any state, ratings, segues, headlines and cascading messages. */
import type { Kysely } from 'kysely';
import type { Database, HeadlineType, MeetingStatus, OrganizationRole, TeamRole } from '../../src/db/database.js';
import { addMinutes } from '../../src/time.js';
import { addOrganizationMember, addTeamMember, createCaller, createOrganization, createTeam } from './factories.js';

export interface MeetingOptions {
  date?: string;
  status?: MeetingStatus;
  /** Defaults: none while SCHEDULED, else an hour before `createdAt` (or now). */
  startedAt?: Date | null;
  durationMin?: number | null;
  createdAt?: Date;
  ratingsRevealedAt?: Date | null;
  notes?: string | null;
}

/** A meeting in the given status, with times that fit it (a COMPLETED one lasted `durationMin`, default 88). */
export function createMeetingIn(db: Kysely<Database>, teamId: string, createdById: string, options: MeetingOptions = {}) {
  const status = options.status ?? 'SCHEDULED';
  const createdAt = options.createdAt ?? new Date();
  const startedAt = options.startedAt !== undefined ? options.startedAt : status === 'SCHEDULED' ? null : addMinutes(createdAt, -60);
  const durationMin = status === 'COMPLETED' ? (options.durationMin ?? 88) : null;
  return db
    .insertInto('meetings')
    .values({
      team_id: teamId,
      created_by_id: createdById,
      date: options.date ?? (startedAt ?? createdAt).toISOString().slice(0, 10),
      status,
      started_at: startedAt,
      ended_at: status === 'COMPLETED' && startedAt && durationMin ? addMinutes(startedAt, durationMin) : null,
      duration_min: durationMin,
      ratings_revealed_at: options.ratingsRevealedAt ?? null,
      notes: options.notes ?? null,
      created_at: createdAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function createRating(db: Kysely<Database>, meetingId: string, userId: string, rating: number, options: { absent?: boolean; createdAt?: Date } = {}) {
  return db
    .insertInto('meeting_ratings')
    .values({
      meeting_id: meetingId,
      user_id: userId,
      rating,
      absent: options.absent ?? false,
      ...(options.createdAt ? { created_at: options.createdAt } : {}),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function createSegue(db: Kysely<Database>, meetingId: string, userId: string, content = 'I ran my first half marathon in Bratislava on Sunday.') {
  return db.insertInto('segues').values({ meeting_id: meetingId, user_id: userId, content }).returningAll().executeTakeFirstOrThrow();
}

export function createHeadline(
  db: Kysely<Database>,
  meetingId: string,
  userId: string,
  options: { type?: HeadlineType; content?: string } = {},
) {
  return db
    .insertInto('headlines')
    .values({
      meeting_id: meetingId,
      user_id: userId,
      type: options.type ?? 'CUSTOMER',
      content: options.content ?? 'Baltic Trade asked for a revised freight quote including fuel surcharges.',
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A cascading message of the meeting, in the organization of its team. */
export function createMessage(
  db: Kysely<Database>,
  meeting: { id: string; orgId: string },
  userId: string,
  content = 'From 1 December, Sales answers every quote request within one working day.',
) {
  return db
    .insertInto('cascading_messages')
    .values({ meeting_id: meeting.id, org_id: meeting.orgId, user_id: userId, content })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function acknowledgementsOf(db: Kysely<Database>, userId: string) {
  return db.selectFrom('message_acknowledgements').select('message_id').where('user_id', '=', userId).execute();
}

/**
 * The people of the meeting tests: an organization (in a chosen time zone) with one team, a team Admin,
 * Member and Viewer, and `person(orgRole, teamRole?, {timezone})` for anyone else.
 */
export async function createMeetingWorld(
  db: Kysely<Database>,
  options: { timezone?: string; suspended?: boolean } = {},
) {
  const org = await createOrganization(db, { timezone: options.timezone, status: options.suspended ? 'SUSPENDED' : 'ACTIVE' });
  const team = await createTeam(db, org.id);
  /** A caller with that organization role and, when given, that team role; `timezone` is the profile's zone. */
  const person = async (orgRole: OrganizationRole, teamRole?: TeamRole, profile: { timezone?: string | null } = {}) => {
    const caller = await createCaller(db, { timezone: profile.timezone ?? null });
    await addOrganizationMember(db, org.id, caller.user.id, orgRole);
    if (teamRole) await addTeamMember(db, team.id, caller.user.id, teamRole);
    return caller;
  };
  const admin = await person('MEMBER', 'ADMIN');
  const member = await person('MEMBER', 'MEMBER');
  const viewer = await person('MEMBER', 'VIEWER');
  return { org, team, person, admin, member, viewer };
}

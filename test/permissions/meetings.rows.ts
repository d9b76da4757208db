/**
 * Matrix rows of the meeting operations. Rating oneself is for people in the team with the team role
 * Member or above (not organization Owners, Admins or Implementers outside it); everything else
 * follows the team role, organization Owners, Admins and Implementers acting as team Admins.
 */
import type { MeetingStatus } from '../../src/db/database.js';
import { createMeetingIn, createMessage } from '../support/meetingFactories.js';
import { row, rowFor, type AreaRows, type World } from './world.js';

const S = 'scope';

/** Started meetings start now, after every meeting other rows started, so that their rating window is open. */
const meetingIn = (status: MeetingStatus) => (w: World) =>
  createMeetingIn(w.db, w.team.id, w.users.teamAdmin.id, { status, ...(status === 'SCHEDULED' ? {} : { startedAt: new Date() }) });
const messageOf = async (w: World) => createMessage(w.db, { id: (await meetingIn('IN_PROGRESS')(w)).id, orgId: w.org.id }, w.users.teamMember.id);

// prettier-ignore
export const meetingRows: AreaRows<'Meetings'> = {
  //                                  noKey readOnly orgOwner orgAdmin implementer teamOwner teamAdmin teamMember teamViewer orgMember outsider superadmin superadminMember formerSuperadmin
  listTeamMeetings: row(               [401, 200,     200,     200,     200,        200,      200,      200,       200,       403,      403,     403,       200,             S],
    (w) => ({ path: `/v1/teams/${w.team.id}/meetings` })),
  createMeeting: row(                  [401, S,       201,     201,     201,        201,      201,      403,       403,       403,      403,     403,       403,             S],
    (w) => ({ path: `/v1/teams/${w.team.id}/meetings`, body: { date: '2026-11-23' } })),
  getMeeting: rowFor(                  [401, 200,     200,     200,     200,        200,      200,      200,       200,       404,      404,     404,       200,             S],
    meetingIn('IN_PROGRESS'),
    (_w, meeting) => ({ path: `/v1/meetings/${meeting.id}` })),
  updateMeeting: rowFor(               [401, S,       200,     200,     200,        200,      200,      403,       403,       404,      404,     404,       403,             S],
    meetingIn('SCHEDULED'),
    (_w, meeting) => ({ path: `/v1/meetings/${meeting.id}`, body: { status: 'IN_PROGRESS' } })),
  getMeetingRecap: rowFor(             [401, 200,     200,     200,     200,        200,      200,      200,       200,       404,      404,     404,       200,             S],
    meetingIn('COMPLETED'),
    (_w, meeting) => ({ path: `/v1/meetings/${meeting.id}/recap` })),
  rateMeetingAsMe: rowFor(             [401, S,       403,     403,     403,        200,      200,      200,       403,       404,      404,     404,       200,             S],
    meetingIn('IN_PROGRESS'),
    (_w, meeting) => ({ path: `/v1/meetings/${meeting.id}/ratings/me`, body: { rating: 9 } })),
  setMeetingRating: rowFor(            [401, S,       200,     200,     200,        200,      200,      403,       403,       404,      404,     404,       403,             S],
    meetingIn('IN_PROGRESS'),
    (w, meeting) => ({ path: `/v1/meetings/${meeting.id}/ratings/${w.users.teamMember.id}`, body: { rating: 8 } })),
  revealMeetingRatings: rowFor(        [401, S,       200,     200,     200,        200,      200,      403,       403,       404,      404,     404,       403,             S],
    meetingIn('IN_PROGRESS'),
    (_w, meeting) => ({ path: `/v1/meetings/${meeting.id}/reveal-ratings` })),
  createSegue: rowFor(                 [401, S,       201,     201,     201,        201,      201,      201,       403,       404,      404,     404,       201,             S],
    meetingIn('IN_PROGRESS'),
    (_w, meeting) => ({ path: `/v1/meetings/${meeting.id}/segues`, body: { content: 'Our new warehouse scanner saved me an hour every day.' } })),
  createHeadline: rowFor(              [401, S,       201,     201,     201,        201,      201,      201,       403,       404,      404,     404,       201,             S],
    meetingIn('IN_PROGRESS'),
    (_w, meeting) => ({ path: `/v1/meetings/${meeting.id}/headlines`, body: { type: 'EMPLOYEE', content: 'Eva passed her certification.' } })),
  createCascadingMessage: rowFor(      [401, S,       201,     201,     201,        201,      201,      201,       403,       404,      404,     404,       201,             S],
    meetingIn('IN_PROGRESS'),
    (_w, meeting) => ({ path: `/v1/meetings/${meeting.id}/messages`, body: { content: 'Quotes are answered within one working day.' } })),
  deleteCascadingMessage: rowFor(      [401, S,       204,     204,     204,        204,      204,      403,       403,       404,      404,     404,       403,             S],
    messageOf,
    (_w, message) => ({ path: `/v1/messages/${message.id}` })),
  acknowledgeCascadingMessages: rowFor(  [401, S,     204,     204,     204,        204,      204,      204,       204,       204,      403,     403,       204,             S],
    messageOf,
    (_w, message) => ({ path: '/v1/messages/acknowledge', body: { ids: [message.id] } })),
};

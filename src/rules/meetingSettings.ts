/**
 * A team's meeting settings are adjusted, not refused: the duration is kept between 10 and 300 minutes,
 * and the warning minute between 1 and one minute before the end of the meeting.
 */

export const MEETING_DURATION_MIN = 10;
export const MEETING_DURATION_MAX = 300;

export interface MeetingSettings {
  durationMin: number;
  warningMin: number;
}

const clamp = (value: number, lowest: number, highest: number) => Math.min(Math.max(value, lowest), highest);

/** The settings stored after a change: the sent values (or the stored ones) brought into range. */
export function adjustMeetingSettings(stored: MeetingSettings, change: Partial<MeetingSettings>): MeetingSettings {
  const durationMin = clamp(change.durationMin ?? stored.durationMin, MEETING_DURATION_MIN, MEETING_DURATION_MAX);
  const warningMin = clamp(change.warningMin ?? stored.warningMin, 1, durationMin - 1);
  return { durationMin, warningMin };
}

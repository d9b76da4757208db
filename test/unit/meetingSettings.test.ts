import { describe, expect, it } from 'vitest';
import { adjustMeetingSettings } from '../../src/rules/meetingSettings.js';

const stored = { durationMin: 90, warningMin: 80 };

describe('team meeting settings are adjusted, not refused', () => {
  it('keeps values in range as sent', () => {
    expect(adjustMeetingSettings(stored, { durationMin: 60, warningMin: 50 })).toEqual({ durationMin: 60, warningMin: 50 });
  });

  it('stores a duration above the maximum as 300 and one below the minimum as 10', () => {
    expect(adjustMeetingSettings(stored, { durationMin: 400 }).durationMin).toBe(300);
    expect(adjustMeetingSettings(stored, { durationMin: -5 }).durationMin).toBe(10);
  });

  it('moves a warning minute at or above the duration to just below it', () => {
    expect(adjustMeetingSettings(stored, { durationMin: 400, warningMin: 500 })).toEqual({ durationMin: 300, warningMin: 299 });
    expect(adjustMeetingSettings(stored, { warningMin: 90 })).toEqual({ durationMin: 90, warningMin: 89 });
  });

  it('moves the stored warning minute when a shorter duration leaves it after the end', () => {
    expect(adjustMeetingSettings(stored, { durationMin: 45 })).toEqual({ durationMin: 45, warningMin: 44 });
  });

  it('raises a warning minute below 1 to 1', () => {
    expect(adjustMeetingSettings(stored, { warningMin: 0 }).warningMin).toBe(1);
  });
});

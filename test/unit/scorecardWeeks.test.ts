import { describe, expect, it } from 'vitest';
import { scorecardWeeks } from '../../src/rules/scorecardWeeks.js';
import { addWeeks } from '../../src/time.js';

const currentWeek = () => '2026-11-23';
const noCurrentWeek = () => {
  throw new Error('the current week is not needed when to or from is given');
};

describe('the weeks of the Scorecard view', () => {
  it('without bounds: the 13 weeks up to the current week', () => {
    const range = scorecardWeeks({}, currentWeek)!;
    expect([range.from, range.to, range.weeks.length]).toEqual(['2026-08-31', '2026-11-23', 13]);
    expect(range.weeks[1]).toBe('2026-09-07');
  });

  it('with only from: the 13 weeks starting with its week, without asking for the current week', () => {
    expect(scorecardWeeks({ from: '2026-01-01' }, noCurrentWeek)).toMatchObject({ from: '2025-12-29', to: '2026-03-23' });
  });

  it('with only to: the 13 weeks ending with its week', () => {
    expect(scorecardWeeks({ to: '2026-11-29' }, noCurrentWeek)).toMatchObject({ from: '2026-08-31', to: '2026-11-23' });
  });

  it('with both: every Monday from the week of from to the week of to, across a year end', () => {
    expect(scorecardWeeks({ from: '2026-12-31', to: '2027-01-11' }, noCurrentWeek)).toEqual({
      from: '2026-12-28',
      to: '2027-01-11',
      weeks: ['2026-12-28', '2027-01-04', '2027-01-11'],
    });
  });

  it('two days of the same week give that one week', () => {
    expect(scorecardWeeks({ from: '2026-11-26', to: '2026-11-24' }, noCurrentWeek)?.weeks).toEqual(['2026-11-23']);
  });

  it('refuses from after to, more than 104 weeks, and weeks outside the years 2000-2100', () => {
    expect(scorecardWeeks({ from: '2026-11-30', to: '2026-11-23' }, noCurrentWeek)).toBeNull();
    expect(scorecardWeeks({ from: '2024-12-02', to: '2026-11-23' }, noCurrentWeek)?.weeks).toHaveLength(104);
    expect(scorecardWeeks({ from: '2024-11-25', to: '2026-11-23' }, noCurrentWeek)).toBeNull();
    expect(scorecardWeeks({ from: '2000-01-01' }, noCurrentWeek)).toBeNull();
    expect(scorecardWeeks({ from: '2100-12-20' }, noCurrentWeek)).toBeNull();
  });
});

describe('addWeeks', () => {
  it('moves a day by whole weeks, forwards and backwards, across leap days and DST changes', () => {
    expect(addWeeks('2026-11-23', 1)).toBe('2026-11-30');
    expect(addWeeks('2026-11-23', -12)).toBe('2026-08-31');
    expect(addWeeks('2028-02-28', 1)).toBe('2028-03-06');
    expect(addWeeks('2026-03-23', 1)).toBe('2026-03-30');
    expect(addWeeks('2026-11-23', 0)).toBe('2026-11-23');
  });

  it('refuses a day that does not exist', () => {
    expect(() => addWeeks('2026-02-30', 1)).toThrow(RangeError);
  });
});

import { describe, expect, it } from 'vitest';
import { judgeWeek } from '../../src/rules/scorecardWeek.js';

const goals = new Map([
  ['leads', '>=25'],
  ['notes', 'Keep it tidy'],
]);

describe('a Scorecard week is judged as a whole', () => {
  it('judges each value against its metric goal, as the single PUT does', () => {
    expect(judgeWeek([{ metricId: 'leads', value: '27' }, { metricId: 'notes', value: 'fine', onTrack: true }], goals)).toEqual({
      values: [
        { metricId: 'leads', value: '27', onTrack: true },
        { metricId: 'notes', value: 'fine', onTrack: true },
      ],
    });
  });

  it('keeps a sent onTrack even when the goal would judge otherwise', () => {
    expect(judgeWeek([{ metricId: 'leads', value: '3', onTrack: true }], goals)).toEqual({ values: [{ metricId: 'leads', value: '3', onTrack: true }] });
  });

  it('names every bad item by its index and field at once', () => {
    const judged = judgeWeek(
      [
        { metricId: 'leads', value: '27' },
        { metricId: 'elsewhere', value: '1' },
        { metricId: 'leads', value: '30' },
        { metricId: 'notes', value: 'No data' },
      ],
      goals,
    );
    expect(judged).toEqual({
      issues: [
        expect.objectContaining({ origin: 'body', code: 'invalid_value', path: ['values', '1', 'metricId'] }),
        expect.objectContaining({ origin: 'body', code: 'invalid_value', path: ['values', '2', 'metricId'], message: expect.stringContaining('item 0') }),
        expect.objectContaining({ origin: 'body', code: 'invalid_type', path: ['values', '3', 'onTrack'] }),
      ],
    });
  });
});

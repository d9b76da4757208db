import { describe, expect, it } from 'vitest';
import { fitsStoredLimit, readVisionField, storedVisionValue, VISION_STORED_MAX, visionFieldKinds } from '../../src/rules/vision.js';

describe('vision fields', () => {
  it('have the reference\'s kinds: three lists, two objects, three texts', () => {
    expect(visionFieldKinds).toEqual({
      coreValues: 'list',
      quarterlyRocks: 'list',
      issuesList: 'list',
      coreFocus: 'object',
      marketingStrategy: 'object',
      tenYearTarget: 'text',
      threeYearPicture: 'text',
      oneYearPlan: 'text',
    });
  });

  it('store a text as sent and a list or object as compact JSON text', () => {
    expect(storedVisionValue('  €50M by 2036\n')).toBe('  €50M by 2036\n');
    expect(storedVisionValue(['Help first', 'Grow or die'])).toBe('["Help first","Grow or die"]');
    expect(storedVisionValue({ niche: 'Freight', uniques: ['Same day', 'Tracking'] })).toBe('{"niche":"Freight","uniques":["Same day","Tracking"]}');
  });

  it('allow at most 20,000 characters in stored form, counted as characters, not UTF-16 units', () => {
    expect(fitsStoredLimit('x'.repeat(VISION_STORED_MAX))).toBe(true);
    expect(fitsStoredLimit('x'.repeat(VISION_STORED_MAX + 1))).toBe(false);
    expect(fitsStoredLimit('😀'.repeat(VISION_STORED_MAX))).toBe(true);
    expect(fitsStoredLimit('😀'.repeat(VISION_STORED_MAX + 1))).toBe(false);
  });

  it('read list and object fields parsed when the stored text is JSON of their shape', () => {
    expect(readVisionField('coreValues', '["Help first"]')).toEqual(['Help first']);
    expect(readVisionField('issuesList', '[]')).toEqual([]);
    expect(readVisionField('coreFocus', '{"niche":"Freight","uniques":["Same day"]}')).toEqual({ niche: 'Freight', uniques: ['Same day'] });
    expect(readVisionField('marketingStrategy', '{}')).toEqual({});
  });

  it('read text fields always as text, even when the text looks like JSON', () => {
    for (const text of ['["a","b"]', '{"a":"b"}', '42', 'null', '"quoted"', '']) {
      expect(readVisionField('tenYearTarget', text)).toBe(text);
    }
  });

  it('read older free text, or JSON of another shape, in a list or object field as the text itself', () => {
    const cases: [Parameters<typeof readVisionField>[0], string][] = [
      ['coreValues', 'Deliver on our promises; help first'],
      ['coreValues', '{"a":"b"}'],
      ['coreValues', '[1,2]'],
      ['coreValues', '"quoted"'],
      ['quarterlyRocks', '42'],
      ['issuesList', 'null'],
      ['coreFocus', '["a"]'],
      ['coreFocus', '{"a":1}'],
      ['coreFocus', '{"a":["b",2]}'],
      ['marketingStrategy', 'Target market: manufacturers'],
      ['marketingStrategy', '{not json'],
    ];
    for (const [field, text] of cases) expect(readVisionField(field, text), `${field} ${text}`).toBe(text);
  });

  it('read an unset field as null', () => {
    expect(readVisionField('coreValues', null)).toBeNull();
    expect(readVisionField('oneYearPlan', null)).toBeNull();
  });
});

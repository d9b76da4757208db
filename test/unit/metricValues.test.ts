import { describe, expect, it } from 'vitest';
import { compareDecimals, judgeValue, parseGoal, parseNumber, type Decimal } from '../../src/rules/metricValues.js';

/** A Decimal as the plain text a person would read it as, for readable expectations. */
const asText = (number: Decimal | null) =>
  number && `${number.negative ? '-' : ''}${number.integer || '0'}${number.fraction ? `.${number.fraction}` : ''}`;

describe('reading a weekly value as a number', () => {
  it.each([
    // plain numbers and signs
    ['27', '27'],
    ['0', '0'],
    ['007', '7'],
    ['-5', '-5'],
    ['+5', '5'],
    ['\u221212', '-12'],
    ['-0', '0'],
    ['-0,0', '0'],
    // decimal comma or dot
    ['99,5', '99.5'],
    ['99.5', '99.5'],
    ['0.25', '0.25'],
    ['.5', '0.5'],
    [',75', '0.75'],
    ['12.50', '12.5'],
    ['1234,567', '1234.567'],
    ['0,500', '0.5'],
    ['12.5000', '12.5'],
    ['1.5', '1.5'],
    ['1,50', '1.5'],
    ['1,5000', '1.5'],
    // thousands grouped with spaces, then an optional decimal mark
    ['1 500', '1500'],
    ['12 345 678', '12345678'],
    ['1 500,25', '1500.25'],
    ['1 500.25', '1500.25'],
    ['1\u00A0500', '1500'],
    ['1\u202F500', '1500'],
    ['1\u2009500,5', '1500.5'],
    ['-1 500', '-1500'],
    // thousands grouped with a repeated comma or dot
    ['1,500,000', '1500000'],
    ['1.500.000', '1500000'],
    ['12,345,678', '12345678'],
    ['-1.000.000', '-1000000'],
    // surrounding spaces and a trailing percent sign
    ['  27  ', '27'],
    ['96,5 %', '96.5'],
    ['96,5%', '96.5'],
    ['100 %', '100'],
    ['-3,5%', '-3.5'],
    ['1 500 %', '1500'],
  ])('%j reads as %s', (text, expected) => {
    expect(asText(parseNumber(text))).toBe(expected);
  });

  it.each([
    // both separators: the decimal mark would be a guess
    ['1,234.5'],
    ['1.234,5'],
    ['1 234,567.5'],
    // one separator followed by exactly three digits: a thousand or a fraction
    ['1,500'],
    ['1.500'],
    ['250,000'],
    ['-2,000'],
    ['100.000 %'],
    // broken groups
    ['1,50,000'],
    ['1.500.00'],
    ['1 50'],
    ['1 5000'],
    ['1234 567'],
    ['1  500'],
    // a separator without digits after it, or nothing but separators
    ['5.'],
    ['5,'],
    ['.'],
    [','],
    ['1,000,'],
    // signs and percent in the wrong place
    ['5-'],
    ['- 5'],
    ['+-5'],
    ['%5'],
    ['5%%'],
    // not numbers
    [''],
    ['   '],
    ['n/a'],
    ['No data, CRM outage'],
    ['1e3'],
    ['Infinity'],
    ['NaN'],
    ['0x10'],
    ['€1500'],
    ['1500 EUR'],
    ['25 leads'],
    ['½'],
    ['٣'],
  ])('%j is not judgeable', (text) => {
    expect(parseNumber(text)).toBeNull();
  });
});

describe('reading a goal', () => {
  it.each([
    ['>=25', '>=', '25'],
    ['>25', '>', '25'],
    ['<=3', '<=', '3'],
    ['<3', '<', '3'],
    ['=0', '=', '0'],
    ['25', '>=', '25'],
    ['>= 95 %', '>=', '95'],
    ['< 1 500,5', '<', '1500.5'],
    ['95%', '>=', '95'],
    ['>-2', '>', '-2'],
    ['<=1.000.000', '<=', '1000000'],
  ])('%j is the operator %s with the target %s', (goal, operator, target) => {
    const parsed = parseGoal(goal);
    expect(parsed && [parsed.operator, asText(parsed.target)]).toEqual([operator, target]);
  });

  it.each([['Most weeks'], ['=>5'], ['>'], ['>=1,500'], ['between 5 and 10'], ['>>5'], ['≥5']])('%j cannot judge values', (goal) => {
    expect(parseGoal(goal)).toBeNull();
  });
});

describe('judging a value against its goal', () => {
  it.each([
    ['99,5', '>=100', false],
    ['100', '>=100', true],
    ['100,0', '>=100', true],
    ['100.01', '>100', true],
    ['100', '>100', false],
    ['3', '<3', false],
    ['2,99', '<3', true],
    ['3', '<=3', true],
    ['3.000,5', '<=3', null],
    ['5', '=5', true],
    ['5,00', '=5', true],
    ['5.01', '=5', false],
    ['5.001', '=5', null],
    ['27', '25', true],
    ['24', '25', false],
    ['96,5 %', '>=95%', true],
    ['-1', '>=0', false],
    ['-0', '>=0', true],
    ['-5', '>-6', true],
    ['-7', '>-6', false],
    ['1 500 000', '>=1,500,000', true],
    ['1 499 999,99', '>=1.500.000', false],
    ['12345678901234567891', '>12345678901234567890', true],
    ['0.30000000000000001', '>0.3', true],
    ['No data', '>=25', null],
    ['1,500', '>=1000', null],
    ['30', 'Keep it high', null],
  ])('%j against %j is %s', (value, goal, onTrack) => {
    expect(judgeValue(value, goal)).toBe(onTrack);
  });
});

describe('comparing decimals exactly', () => {
  const number = (text: string) => parseNumber(text)!;

  it('orders by sign, then by magnitude, and treats trailing fraction zeros as equal', () => {
    const ascending = ['-100', '-99,5', '-1', '0', '0,001', '1', '1,5', '9', '10', '100'].map(number);
    for (let i = 1; i < ascending.length; i++) {
      expect(compareDecimals(ascending[i - 1]!, ascending[i]!)).toBeLessThan(0);
      expect(compareDecimals(ascending[i]!, ascending[i - 1]!)).toBeGreaterThan(0);
    }
    expect(compareDecimals(number('1,50'), number('1.5'))).toBe(0);
    expect(compareDecimals(number('-0'), number('0'))).toBe(0);
  });
});

import { describe, expect, it } from 'vitest';
import { readConfig } from '../../src/config.js';

describe('the settings of the worker and the event log', () => {
  it('leave WEBHOOKS_LEASE_MS and EVENTS_RETENTION_DAYS to the worker’s defaults when unset', () => {
    expect(readConfig({})).toMatchObject({ webhooksLeaseMs: undefined, eventsRetentionDays: undefined });
  });

  it('take a lease of at least a second and a retention of at least a day', () => {
    expect(readConfig({ WEBHOOKS_LEASE_MS: '1000', EVENTS_RETENTION_DAYS: '1' })).toMatchObject({ webhooksLeaseMs: 1000, eventsRetentionDays: 1 });
  });

  it.each([
    ['WEBHOOKS_LEASE_MS', '0'],
    ['WEBHOOKS_LEASE_MS', '999'],
    ['WEBHOOKS_LEASE_MS', '2.5'],
    ['EVENTS_RETENTION_DAYS', '0'],
    ['EVENTS_RETENTION_DAYS', 'thirty'],
  ])('refuse %s=%s with a message naming the setting', (name, value) => {
    expect(() => readConfig({ [name]: value })).toThrow(new RegExp(`^${name} must be a whole number of at least`));
  });
});

describe('AUTH_CACHE', () => {
  it('is on unless set, on with `on`, off with `off`', () => {
    expect([readConfig({}), readConfig({ AUTH_CACHE: 'on' }), readConfig({ AUTH_CACHE: 'off' })].map((config) => config.authCache)).toEqual([true, true, false]);
  });

  it('refuses anything else with a message naming the setting', () => {
    expect(() => readConfig({ AUTH_CACHE: 'false' })).toThrow(/^AUTH_CACHE must be on or off/);
  });
});

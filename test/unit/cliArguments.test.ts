import { describe, expect, it } from 'vitest';
import {
  DEFAULT_KEY_NAME,
  UnknownCommand,
  UsageError,
  isEmail,
  keyExpiry,
  nameFromEmail,
  parseCommandLine,
  parseInstant,
  parseScopes,
} from '../../src/cli/arguments.js';

const now = new Date('2026-11-16T10:00:00.000Z');
const DAY_MS = 24 * 60 * 60 * 1000;
const daysFromNow = (days: number) => new Date(now.getTime() + days * DAY_MS);
const parse = (...argv: string[]) => parseCommandLine(argv, now);
/** The one-line message `parseCommandLine` refuses `argv` with. */
const refusal = (...argv: string[]): string => {
  try {
    parse(...argv);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    const message = (error as Error).message;
    expect(message).not.toContain('\n');
    return message;
  }
  throw new Error(`parseCommandLine accepted ${argv.join(' ')}`);
};

describe('parseScopes', () => {
  it('reads a comma list of known scopes in the given order', () => {
    expect(parseScopes('read')).toEqual(['read']);
    expect(parseScopes('write,read')).toEqual(['write', 'read']);
    expect(parseScopes(' read , platform ')).toEqual(['read', 'platform']);
    expect(parseScopes('read,write,platform')).toEqual(['read', 'write', 'platform']);
  });

  it.each([
    ['admin', /Unknown scope "admin"/],
    ['READ', /Unknown scope "READ"/],
    ['read,read', /"read" is given twice/],
    ['read,,write', /without empty items/],
    ['read,', /without empty items/],
    ['', /without empty items/],
  ])('refuses %j', (raw, message) => {
    expect(() => parseScopes(raw)).toThrow(UsageError);
    expect(() => parseScopes(raw)).toThrow(message);
  });
});

describe('parseInstant', () => {
  it.each([
    ['2027-01-31T17:00:00+01:00', '2027-01-31T16:00:00.000Z'],
    ['2027-01-31T16:00:00Z', '2027-01-31T16:00:00.000Z'],
    ['2027-01-31T16:00Z', '2027-01-31T16:00:00.000Z'],
    ['2027-01-31t16:00:00z', '2027-01-31T16:00:00.000Z'],
    ['2027-01-31T16:00:00.5Z', '2027-01-31T16:00:00.500Z'],
    ['2027-01-31T16:00:00.123456789Z', '2027-01-31T16:00:00.123Z'],
    ['2027-01-31T11:30:00-0430', '2027-01-31T16:00:00.000Z'],
    ['2027-01-31T18:00:00+02', '2027-01-31T16:00:00.000Z'],
    ['2028-02-29T00:00:00Z', '2028-02-29T00:00:00.000Z'],
    ['2020-01-01T00:00:00Z', '2020-01-01T00:00:00.000Z'],
  ])('reads %s as %s', (raw, iso) => {
    expect(parseInstant(raw).toISOString()).toBe(iso);
  });

  it.each([
    '2027-01-31',
    '2027-01-31T16:00:00',
    '2027-01-31 16:00:00Z',
    'tomorrow',
    '1800000000000',
    '2027-02-30T00:00:00Z',
    '2027-02-29T00:00:00Z',
    '2027-13-01T00:00:00Z',
    '2027-01-31T24:00:00Z',
    '2027-01-31T16:60:00Z',
    '2027-01-31T16:00:60Z',
    '2027-01-31T16:00:00+24:00',
    '1999-12-31T23:59:59Z',
    '2101-01-01T00:00:00Z',
  ])('refuses %s', (raw) => {
    expect(() => parseInstant(raw)).toThrow(UsageError);
  });
});

describe('keyExpiry', () => {
  it('gives a key without platform 365 days and a platform key 90 days by default', () => {
    expect(keyExpiry(['read'], undefined, now)).toEqual(daysFromNow(365));
    expect(keyExpiry(['read', 'write'], undefined, now)).toEqual(daysFromNow(365));
    expect(keyExpiry(['platform'], undefined, now)).toEqual(daysFromNow(90));
    expect(keyExpiry(['read', 'platform'], undefined, now)).toEqual(daysFromNow(90));
  });

  it('keeps a given expiry, also one in the past', () => {
    const past = new Date('2020-01-01T00:00:00Z');
    expect(keyExpiry(['write'], past, now)).toEqual(past);
    expect(keyExpiry(['platform'], past, now)).toEqual(past);
    expect(keyExpiry(['write'], daysFromNow(3000), now)).toEqual(daysFromNow(3000));
  });

  it('allows a platform key exactly 90 days and refuses one millisecond more', () => {
    expect(keyExpiry(['platform'], daysFromNow(90), now)).toEqual(daysFromNow(90));
    const tooLate = new Date(daysFromNow(90).getTime() + 1);
    expect(() => keyExpiry(['platform'], tooLate, now)).toThrow(UsageError);
    expect(() => keyExpiry(['read', 'platform'], daysFromNow(91), now)).toThrow(/at most 90 days/);
  });
});

describe('e-mail addresses', () => {
  it.each(['ana@example.com', 'Ana.Novak+ops@sub.example.co.uk', 'x@y.io'])('accepts %s', (email) => {
    expect(isEmail(email)).toBe(true);
  });

  it.each(['ana', 'ana@', '@example.com', 'ana@example', 'ana@@example.com', 'a na@example.com', 'ana@example..com', 'ana@.example.com', `${'a'.repeat(250)}@x.io`])(
    'refuses %s',
    (email) => {
      expect(isEmail(email)).toBe(false);
    },
  );

  it('takes the part before @ as the default name', () => {
    expect(nameFromEmail('ana.novak@example.com')).toBe('ana.novak');
  });
});

describe('parseCommandLine', () => {
  it('shows the usage for no words, help, --help and -h', () => {
    expect(parse()).toEqual({ command: 'help' });
    expect(parse('help')).toEqual({ command: 'help' });
    expect(parse('--help')).toEqual({ command: 'help' });
    expect(parse('-h')).toEqual({ command: 'help' });
    expect(parse('create-key', '--help')).toEqual({ command: 'help' });
  });

  it('refuses an unknown command with its own error', () => {
    expect(() => parse('delete-user')).toThrow(UnknownCommand);
    expect(() => parse('--email')).toThrow(UnknownCommand);
  });

  it('reads create-user with defaults', () => {
    expect(parse('create-user', '--email', ' ana.novak@example.com ')).toEqual({
      command: 'create-user',
      email: 'ana.novak@example.com',
      name: 'ana.novak',
      timezone: null,
      superadmin: false,
    });
  });

  it('reads create-user with every option', () => {
    expect(
      parse('create-user', '--email=Ana@Example.com', '--name', 'Ana Nováková', '--timezone', 'Europe/Bratislava', '--superadmin'),
    ).toEqual({ command: 'create-user', email: 'Ana@Example.com', name: 'Ana Nováková', timezone: 'Europe/Bratislava', superadmin: true });
  });

  it('gives back a time zone sent in any letter case in the tz database\'s spelling', () => {
    expect(parse('create-user', '--email', 'a@b.io', '--timezone', 'EUROPE/PRAGUE')).toMatchObject({ timezone: 'Europe/Prague' });
    expect(parse('update-user', '--email', 'a@b.io', '--timezone', 'etc/utc')).toMatchObject({ changes: { timezone: 'UTC' } });
  });

  it('refuses a bad create-user with a message naming the problem', () => {
    expect(refusal('create-user')).toMatch(/needs --email/);
    expect(refusal('create-user', '--email', 'not-an-email')).toMatch(/does not look like an e-mail/);
    expect(refusal('create-user', '--email', 'a@b.io', '--timezone', 'Mars/Olympus')).toMatch(/not an IANA time zone/);
    expect(refusal('create-user', '--email', 'a@b.io', '--timezone', '+02:00')).toMatch(/not an IANA time zone/);
    expect(refusal('create-user', '--email', 'a@b.io', '--timezone', 'PST')).toMatch(/not an IANA time zone/);
    expect(refusal('create-user', '--email', 'a@b.io', '--name', '  ')).toMatch(/--name must not be empty/);
    expect(refusal('create-user', '--email', 'a@b.io', '--name', 'x'.repeat(201))).toMatch(/at most 200/);
    expect(refusal('create-user', '--email', 'a@b.io', '--superadmin=true')).toMatch(/superadmin/);
    expect(refusal('create-user', '--email', 'a@b.io', '--admin')).toMatch(/Unknown option '--admin'/);
    expect(refusal('create-user', '--email', 'a@b.io', 'extra')).toMatch(/extra/);
    expect(refusal('create-user', '--email')).toMatch(/--email/);
  });

  it('reads only the changes update-user asks for', () => {
    expect(parse('update-user', '--email', 'a@b.io', '--name', 'Ana')).toEqual({
      command: 'update-user',
      email: 'a@b.io',
      changes: { name: 'Ana' },
    });
    expect(parse('update-user', '--email', 'a@b.io', '--no-timezone', '--superadmin', 'false')).toEqual({
      command: 'update-user',
      email: 'a@b.io',
      changes: { timezone: null, superadmin: false },
    });
    expect(parse('update-user', '--email', 'a@b.io', '--timezone', 'America/New_York', '--superadmin=true')).toEqual({
      command: 'update-user',
      email: 'a@b.io',
      changes: { timezone: 'America/New_York', superadmin: true },
    });
  });

  it('refuses an update-user without a change, with both zone options or with a bad flag value', () => {
    expect(refusal('update-user', '--email', 'a@b.io')).toMatch(/needs something to change/);
    expect(refusal('update-user', '--email', 'a@b.io', '--timezone', 'UTC', '--no-timezone')).toMatch(/not both/);
    expect(refusal('update-user', '--email', 'a@b.io', '--superadmin', 'yes')).toMatch(/true or false/);
    expect(refusal('update-user', '--email', 'a@b.io', '--superadmin')).toMatch(/--superadmin/);
    expect(refusal('update-user', '--name', 'Ana')).toMatch(/needs --email/);
  });

  it('reads create-key with its default name and expiry', () => {
    expect(parse('create-key', '--email', 'a@b.io', '--scopes', 'read,write')).toEqual({
      command: 'create-key',
      email: 'a@b.io',
      scopes: ['read', 'write'],
      name: DEFAULT_KEY_NAME,
      expiresAt: daysFromNow(365),
    });
    expect(
      parse('create-key', '--email', 'a@b.io', '--scopes', 'platform', '--name', 'Billing export', '--expires-at', '2026-12-01T00:00:00Z'),
    ).toEqual({
      command: 'create-key',
      email: 'a@b.io',
      scopes: ['platform'],
      name: 'Billing export',
      expiresAt: new Date('2026-12-01T00:00:00Z'),
    });
  });

  it('refuses a create-key with missing or bad scopes, a bad instant or a platform key over 90 days', () => {
    expect(refusal('create-key', '--email', 'a@b.io')).toMatch(/needs --scopes/);
    expect(refusal('create-key', '--email', 'a@b.io', '--scopes', 'read,admin')).toMatch(/Unknown scope "admin"/);
    expect(refusal('create-key', '--email', 'a@b.io', '--scopes', 'read', '--expires-at', '2027-02-30T00:00Z')).toMatch(
      /--expires-at/,
    );
    expect(refusal('create-key', '--email', 'a@b.io', '--scopes', 'read', '--expires-at', '2027-01-01')).toMatch(/with a zone/);
    expect(
      refusal('create-key', '--email', 'a@b.io', '--scopes', 'platform', '--expires-at', '2027-03-01T00:00:00Z'),
    ).toMatch(/at most 90 days/);
  });

  it('reads revoke-key with a UUID and refuses anything else', () => {
    expect(parse('revoke-key', '--id', '0F8FAD5B-D9CB-469F-A165-70867728950E')).toEqual({
      command: 'revoke-key',
      id: '0f8fad5b-d9cb-469f-a165-70867728950e',
    });
    expect(refusal('revoke-key')).toMatch(/needs --id/);
    expect(refusal('revoke-key', '--id', 'ak_123')).toMatch(/not an API key id/);
  });

  it('reads create-org, naming a new owner after the e-mail unless --owner-name is given', () => {
    const required = ['--name', ' Danube Freight ', '--owner-email', ' Ivana.Mraz@Danube.example ', '--timezone', 'europe/vienna', '--locale', 'sk'];
    expect(parse('create-org', ...required)).toEqual({
      command: 'create-org',
      name: 'Danube Freight',
      timezone: 'Europe/Vienna',
      locale: 'sk',
      owner: { email: 'Ivana.Mraz@Danube.example', name: 'Ivana.Mraz' },
    });
    expect(parse('create-org', ...required, '--owner-name', ' Ivana Mráz ')).toMatchObject({ owner: { name: 'Ivana Mráz' } });
    expect(parse('create-org', '--locale=en', '--timezone=UTC', '--owner-email=a@b.io', '--name=A')).toMatchObject({ locale: 'en', timezone: 'UTC' });
  });

  it('refuses a create-org without a required option or with a bad value, naming the problem', () => {
    const valid = { '--name': 'Danube Freight', '--owner-email': 'a@b.io', '--timezone': 'UTC', '--locale': 'en' };
    const withValues = (changes: Record<string, string | undefined>) =>
      Object.entries({ ...valid, ...changes }).flatMap(([option, value]) => (value === undefined ? [] : [option, value]));
    for (const option of Object.keys(valid)) {
      expect(refusal('create-org', ...withValues({ [option]: undefined }))).toBe(`create-org needs ${option}.`);
    }
    expect(refusal('create-org', ...withValues({ '--name': '  ' }))).toBe('--name must not be empty.');
    expect(refusal('create-org', ...withValues({ '--name': 'x'.repeat(201) }))).toBe('--name must be at most 200 characters.');
    expect(refusal('create-org', ...withValues({ '--owner-name': ' ' }))).toBe('--owner-name must not be empty.');
    expect(refusal('create-org', ...withValues({ '--owner-name': 'x'.repeat(201) }))).toBe('--owner-name must be at most 200 characters.');
    expect(refusal('create-org', ...withValues({ '--owner-email': 'ivana' }))).toMatch(/does not look like an e-mail/);
    expect(refusal('create-org', ...withValues({ '--timezone': 'Mars/Olympus' }))).toMatch(/not an IANA time zone/);
    expect(refusal('create-org', ...withValues({ '--locale': 'EN' }))).toBe('--locale takes en or sk, not "EN".');
    expect(refusal('create-org', ...withValues({ '--locale': 'de' }))).toBe('--locale takes en or sk, not "de".');
    expect(refusal('create-org', ...withValues({}), '--email', 'a@b.io')).toMatch(/Unknown option '--email'/);
    expect(refusal('create-org', ...withValues({}), 'extra')).toMatch(/extra/);
  });

  it('reads seed-demo and refuses options for it', () => {
    expect(parse('seed-demo')).toEqual({ command: 'seed-demo' });
    expect(refusal('seed-demo', '--force')).toMatch(/Unknown option '--force'/);
  });
});

import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSecretBox, loadSecretsKey, parseSecretsKey, SecretsKeyError } from '../../src/auth/secrets.js';
import { readConfig } from '../../src/config.js';

const secret = 'sk-example-4c1d8e0b7a2f6e93d5b19f3a — with ünïcode';

/** The sealed text with one character of part `index` (0 version, 1 iv, 2 tag, 3 ciphertext) changed. */
function tamper(sealed: string, index: number): string {
  const parts = sealed.split(':');
  const part = parts[index]!;
  parts[index] = (part[0] === 'A' ? 'B' : 'A') + part.slice(1);
  return parts.join(':');
}

describe('the tokens of one purpose (the feed cursors)', () => {
  const key = randomBytes(32);
  const cursors = createSecretBox(key).tokens('feed cursor');
  const place = Buffer.from('00000000000003e700000000000000a4', 'hex');

  it('opens what it sealed, on every box of the same key (every instance)', () => {
    expect(cursors.open(cursors.seal(place))).toEqual(place);
    expect(createSecretBox(Buffer.from(key)).tokens('feed cursor').open(cursors.seal(place))).toEqual(place);
  });

  it('seals each value anew, base64url of one length for every value of one length', () => {
    const tokens = [cursors.seal(place), cursors.seal(place), cursors.seal(Buffer.alloc(16))];
    expect(new Set(tokens).size).toBe(3);
    expect(tokens.map((token) => /^[\w-]+$/.test(token) && token.length)).toEqual([59, 59, 59]);
  });

  it('opens nothing sealed for another purpose, with another key, changed, or not a token', () => {
    const token = cursors.seal(place);
    const changed = (token[10] === 'A' ? 'B' : 'A');
    expect([
      createSecretBox(key).tokens('other purpose').open(token),
      createSecretBox(randomBytes(32)).tokens('feed cursor').open(token),
      cursors.open(token.slice(0, 10) + changed + token.slice(11)),
      cursors.open(token.slice(0, 20)),
      cursors.open(`${token}!`),
      cursors.open(Buffer.from(JSON.stringify(['an-event-id'])).toString('base64url')),
    ]).toEqual([undefined, undefined, undefined, undefined, undefined, undefined]);
  });
});

describe('the secret box (AES-256-GCM)', () => {
  const box = createSecretBox(randomBytes(32));

  it('opens what it sealed', () => {
    expect(box.open(box.seal(secret))).toBe(secret);
    expect(box.open(box.seal(''))).toBe('');
  });

  it('seals as version:iv:tag:ciphertext in base64url, with a fresh 12-byte IV each time', () => {
    const first = box.seal(secret);
    const second = box.seal(secret);
    expect(first).toMatch(/^v1:[\w-]+:[\w-]+:[\w-]+$/);
    expect(first).not.toBe(second);
    const [, iv, tag] = first.split(':');
    expect(Buffer.from(iv!, 'base64url')).toHaveLength(12);
    expect(Buffer.from(tag!, 'base64url')).toHaveLength(16);
    expect(first).not.toContain(secret.slice(0, 8));
  });

  it.each([
    ['the IV', 1],
    ['the tag', 2],
    ['the ciphertext', 3],
  ])('refuses to open a value whose %s was changed', (_part, index) => {
    expect(() => box.open(tamper(box.seal(secret), index))).toThrow();
  });

  it('refuses to open a value of an unknown version or shape', () => {
    const sealed = box.seal(secret);
    expect(() => box.open(sealed.replace(/^v1:/, 'v2:'))).toThrow('known version');
    expect(() => box.open(`${sealed}:extra`)).toThrow('known version');
    expect(() => box.open('v1:only-two')).toThrow('known version');
  });

  it('refuses to open a value sealed with another key', () => {
    const other = createSecretBox(randomBytes(32));
    expect(() => other.open(box.seal(secret))).toThrow();
  });

  it('needs a key of exactly 32 bytes', () => {
    expect(() => createSecretBox(randomBytes(16))).toThrow(SecretsKeyError);
  });
});

describe('parseSecretsKey', () => {
  const key = randomBytes(32);

  it.each([
    ['hex', key.toString('hex')],
    ['upper-case hex', key.toString('hex').toUpperCase()],
    ['base64', key.toString('base64')],
    ['base64url', key.toString('base64url')],
    ['base64 with surrounding whitespace', ` ${key.toString('base64')}\n`],
  ])('reads 32 bytes given as %s', (_form, text) => {
    expect(parseSecretsKey(text, 'SECRETS_KEY').equals(key)).toBe(true);
  });

  it.each([
    ['an empty text', ''],
    ['a pass phrase', 'correct horse battery staple'],
    ['16 bytes in hex', randomBytes(16).toString('hex')],
    ['48 bytes in base64', randomBytes(48).toString('base64')],
    ['31 bytes in base64', randomBytes(31).toString('base64')],
    ['hex with a non-hex digit', `${key.toString('hex').slice(0, 63)}g`],
  ])('refuses %s with a message naming the source', (_form, text) => {
    expect(() => parseSecretsKey(text, 'SECRETS_KEY')).toThrow(SecretsKeyError);
    expect(() => parseSecretsKey(text, 'SECRETS_KEY')).toThrow(/^SECRETS_KEY must hold 32 random bytes/);
  });

  it('is how the configuration reads SECRETS_KEY, and never repeats the value in its error', () => {
    expect(readConfig({ SECRETS_KEY: key.toString('hex') }).secretsKey?.equals(key)).toBe(true);
    expect(readConfig({}).secretsKey).toBeUndefined();
    expect(() => readConfig({ SECRETS_KEY: 'not-a-key-but-secret' })).toThrow(SecretsKeyError);
    expect(() => readConfig({ SECRETS_KEY: 'not-a-key-but-secret' })).not.toThrow(/not-a-key-but-secret/);
  });
});

describe('loadSecretsKey', () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'teamos-secrets-'));
  });
  afterEach(() => rm(dataDir, { recursive: true, force: true }));

  it('uses SECRETS_KEY when it is set, and writes no key file', async () => {
    const key = randomBytes(32);
    expect(await loadSecretsKey({ secretsKey: key, databaseUrl: 'postgres://db', dataDir })).toBe(key);
    expect(await loadSecretsKey({ secretsKey: key, databaseUrl: undefined, dataDir })).toBe(key);
    await expect(stat(join(dataDir, 'secrets.key'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses to start with DATABASE_URL but without SECRETS_KEY', async () => {
    await expect(loadSecretsKey({ secretsKey: undefined, databaseUrl: 'postgres://db', dataDir })).rejects.toThrow(
      /SECRETS_KEY is required with DATABASE_URL/,
    );
  });

  it('creates the key file of the embedded database readable only by its owner, and reuses it', async () => {
    const first = await loadSecretsKey({ secretsKey: undefined, databaseUrl: undefined, dataDir });

    const file = join(dataDir, 'secrets.key');
    expect(first).toHaveLength(32);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(parseSecretsKey(await readFile(file, 'utf8'), file).equals(first)).toBe(true);
    expect((await loadSecretsKey({ secretsKey: undefined, databaseUrl: undefined, dataDir })).equals(first)).toBe(true);
  });

  it('refuses a key file that does not hold a key, naming the file, and leaves it as it is', async () => {
    const file = join(dataDir, 'secrets.key');
    await writeFile(file, 'damaged\n', { mode: 0o600 });

    await expect(loadSecretsKey({ secretsKey: undefined, databaseUrl: undefined, dataDir })).rejects.toThrow(`${file} must hold 32 random bytes`);
    expect(await readFile(file, 'utf8')).toBe('damaged\n');
  });
});

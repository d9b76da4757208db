/**
 * Encryption at rest of the secrets the platform stores (AI provider keys): AES-256-GCM with a fresh
 * random 12-byte IV per value, sealed as one text `v1:iv:tag:ciphertext` (base64url parts). GCM's tag
 * makes any change to a stored value, or opening it with another key, fail loudly instead of
 * returning garbage.
 *
 * The 32-byte key comes from SECRETS_KEY. Without it, the embedded database gets a key file
 * DATA_DIR/secrets.key (mode 0600) on first start, kept next to the data it protects; with
 * DATABASE_URL the server refuses to start, because a key generated on one machine would be missing
 * on the next one (or differ between instances) and the stored secrets could no longer be opened.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { randomDraw } from '../random.js';

const VERSION = 'v1';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface SecretBox {
  seal(plaintext: string): string;
  /** Throws when the value was changed or sealed with another key. */
  open(sealed: string): string;
  /** The box of short tokens for one purpose (such as the feed's cursors), with a key of its own derived from this one. */
  tokens(purpose: string): TokenBox;
}

/**
 * Short opaque tokens the API hands out and takes back (a feed's cursor): AES-256-GCM under a key
 * derived for the purpose (HKDF-SHA-256), so a token of one purpose never opens as another's, nor as
 * a stored secret. A token is base64url of IV, tag and ciphertext: as long for every value of one
 * length, and different every time, so it tells nothing of what it holds. Every instance with the
 * same secrets key opens every other's tokens.
 */
export interface TokenBox {
  seal(value: Buffer): string;
  /** The value; undefined when the token was not sealed by this box (changed, another key or purpose, not a token). */
  open(token: string): Buffer | undefined;
}

const TOKEN_PATTERN = /^[A-Za-z0-9_-]+$/;

function createTokenBox(key: Buffer, purpose: string): TokenBox {
  const derived = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), `team-os ${purpose}`, KEY_BYTES));
  return {
    seal(value) {
      const iv = randomDraw(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', derived, iv);
      const ciphertext = Buffer.concat([cipher.update(value), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url');
    },
    open(token) {
      // Buffer's decoder skips characters outside the alphabet, so the alphabet is checked first.
      if (!TOKEN_PATTERN.test(token)) return undefined;
      const bytes = Buffer.from(token, 'base64url');
      if (bytes.length <= IV_BYTES + TAG_BYTES) return undefined;
      try {
        const decipher = createDecipheriv('aes-256-gcm', derived, bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
        decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
        return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
      } catch {
        return undefined;
      }
    },
  };
}

export class SecretsKeyError extends Error {}

const HEX_KEY = /^[0-9a-fA-F]{64}$/;
// 32 bytes are 43 base64 characters plus one padding `=`; both alphabets (standard and url) are accepted.
const BASE64_KEY = /^[A-Za-z0-9+/_-]{43}=?$/;

/** The key from its text form: 64 hex digits or the base64 (or base64url) of 32 bytes. */
export function parseSecretsKey(text: string, source: string): Buffer {
  const value = text.trim();
  const key = HEX_KEY.test(value)
    ? Buffer.from(value, 'hex')
    : BASE64_KEY.test(value)
      ? Buffer.from(value, 'base64')
      : undefined;
  if (key?.length !== KEY_BYTES) {
    throw new SecretsKeyError(
      `${source} must hold 32 random bytes as 64 hex digits or 44 base64 characters ` +
        '(e.g. the output of `openssl rand -base64 32`).',
    );
  }
  return key;
}

export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== KEY_BYTES) throw new SecretsKeyError(`The secrets key must be ${KEY_BYTES} bytes, not ${key.length}.`);
  const tokenBoxes = new Map<string, TokenBox>();
  return {
    tokens(purpose) {
      let box = tokenBoxes.get(purpose);
      if (!box) tokenBoxes.set(purpose, (box = createTokenBox(key, purpose)));
      return box;
    },
    seal(plaintext) {
      const iv = randomDraw(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [VERSION, iv, cipher.getAuthTag(), ciphertext]
        .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
        .join(':');
    },
    open(sealed) {
      const [version, iv, tag, ciphertext, ...rest] = sealed.split(':');
      if (version !== VERSION || iv === undefined || tag === undefined || ciphertext === undefined || rest.length > 0) {
        throw new Error('Not a sealed secret of a known version.');
      }
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES });
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}

/**
 * The server's key: SECRETS_KEY when set; else, on the embedded database, the key file in the data
 * directory, created on first start (call it while holding the data directory's lock, so that two
 * processes never write different keys).
 */
export async function loadSecretsKey(options: {
  secretsKey: Buffer | undefined;
  databaseUrl: string | undefined;
  dataDir: string;
}): Promise<Buffer> {
  if (options.secretsKey) return options.secretsKey;
  if (options.databaseUrl) {
    throw new SecretsKeyError(
      'SECRETS_KEY is required with DATABASE_URL: set it to 32 random bytes in base64 or hex ' +
        '(e.g. `openssl rand -base64 32`), the same on every instance, and keep it safe — ' +
        'stored AI provider keys cannot be read without it.',
    );
  }
  const path = join(resolve(options.dataDir), 'secrets.key');
  try {
    return parseSecretsKey(await readFile(path, 'utf8'), path);
  } catch (error) {
    if ((error as { code?: string }).code !== 'ENOENT') throw error;
  }
  const key = randomBytes(KEY_BYTES);
  // `wx`: never overwrite a key file, whose loss would make every stored secret unreadable.
  await writeFile(path, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  return key;
}

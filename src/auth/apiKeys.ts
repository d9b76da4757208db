/**
 * Personal API keys: `ak_` followed by 256 random bits. Only the SHA-256 hash and a short visible
 * prefix are stored; the full key exists only in the one answer that creates it.
 */
import { hash, randomBytes } from 'node:crypto';

export const keyPattern = /^ak_[A-Za-z0-9_-]{20,200}$/;

export function hashKey(key: string): string {
  return hash('sha256', key, 'hex');
}

export function generateKey(): { key: string; prefix: string; hash: string } {
  const key = `ak_${randomBytes(32).toString('base64url')}`;
  return { key, prefix: key.slice(0, 8), hash: hashKey(key) };
}

export type KeyStatus = 'active' | 'expired' | 'revoked';

export function keyStatus(key: { revoked_at: Date | null; expires_at: Date }, now: Date): KeyStatus {
  if (key.revoked_at) return 'revoked';
  return key.expires_at.getTime() <= now.getTime() ? 'expired' : 'active';
}

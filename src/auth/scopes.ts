/** Which key scopes allow which operations; the operation's scope comes from its contract security requirement. */
import type { ApiKeyScope, SystemRole } from '../db/database.js';

export type Scope = ApiKeyScope;
export type { SystemRole };

/**
 * `write` includes `read`; `platform` allows only platform operations, and only while the key's
 * owner is a platform operator (SUPERADMIN) — checked with the role read on this request.
 */
export function scopeAllows(keyScopes: readonly Scope[], needed: Scope, ownerRole: SystemRole): boolean {
  switch (needed) {
    case 'read':
      return keyScopes.includes('read') || keyScopes.includes('write');
    case 'write':
      return keyScopes.includes('write');
    case 'platform':
      return keyScopes.includes('platform') && ownerRole === 'SUPERADMIN';
  }
}

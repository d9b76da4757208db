/**
 * Who is calling: the key's owner with their roles, as authentication read them for this request
 * (src/auth/authenticate.ts) and the caller cache keeps them (src/auth/callerCache.ts). Its own module
 * so that both import it and neither imports the other.
 */
import type { Schemas } from '../api/operations.js';
import type { Scope, SystemRole } from './scopes.js';

/** An organization the caller belongs to, with the caller's role in it, as read on this request. */
export type Membership = Schemas['Organization'];

export interface Caller {
  keyId: string;
  keyName: string;
  keyExpiresAt: Date;
  scopes: Scope[];
  userId: string;
  email: string;
  name: string;
  timezone: string | null;
  systemRole: SystemRole;
  /** The caller's organizations, by name. */
  organizations: Membership[];
}

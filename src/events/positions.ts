/**
 * Log positions as the API hands them out: the `Log-Position` header of a read, a snapshot's
 * `position`, and what a feed or a stream accepts as `after`. A position is an organization and a
 * place in its log, sealed (src/auth/secrets.ts `TokenBox`, purpose `log position`), so it names no
 * event and tells nothing of what its reader may not read; every instance opens every other's.
 * Every change whose event is at or before a position is reflected in the answer that stated it; a
 * reader that starts the log there may see again an event the answer already reflected, never miss one.
 */
import type { SecretBox } from '../auth/secrets.js';
import type { LogPosition } from '../db/queries/events.js';
import { Forbidden, FormatError } from '../errors.js';

/** Every position starts so: a client tells a position from an event's id at a glance. */
export const POSITION_PREFIX = 'lp_';

const PLACE_BYTES = 16;

export interface LogPositions {
  /** The organization's place `at`, sealed. */
  seal(orgId: string, at: LogPosition): string;
  /** Whether the text is a position by its form (not whether it opens). */
  isPosition(text: string): boolean;
  /**
   * The place a position of `orgId` holds. A text that is no position of this server (changed, cut,
   * another key) answers 422 naming where it came from; another organization's position answers 403.
   */
  open(text: string, orgId: string, from: PositionSource): LogPosition;
  /** The organization and place a position holds, whichever organization it is of (422 as `open`). */
  read(text: string, from: PositionSource): { orgId: string; at: LogPosition };
}

/** Where a position came from, named by a 422. */
export interface PositionSource {
  origin: 'query' | 'header';
  name: string;
}

export function logPositions(secrets: SecretBox): LogPositions {
  const box = secrets.tokens('log position');
  const read = (text: string, from: PositionSource): { orgId: string; at: LogPosition } => {
    const value = text.startsWith(POSITION_PREFIX) ? box.open(text.slice(POSITION_PREFIX.length)) : undefined;
    if (!value || value.length <= PLACE_BYTES) {
      throw new FormatError(
        [{ origin: from.origin, code: 'invalid_format', path: [from.name], message: 'Not a log position this API gave.', format: 'log-position' }],
        'The log position is not valid.',
      );
    }
    return { orgId: value.toString('utf8', PLACE_BYTES), at: { txid: value.readBigUInt64BE(0).toString(), position: value.readBigUInt64BE(8).toString() } };
  };
  return {
    seal(orgId, at) {
      const value = Buffer.alloc(PLACE_BYTES + Buffer.byteLength(orgId));
      value.writeBigUInt64BE(BigInt(at.txid), 0);
      value.writeBigUInt64BE(BigInt(at.position), 8);
      value.write(orgId, PLACE_BYTES, 'utf8');
      return POSITION_PREFIX + box.seal(value);
    },
    isPosition: (text) => text.startsWith(POSITION_PREFIX),
    open(text, orgId, from) {
      const { orgId: of, at } = read(text, from);
      if (of !== orgId) throw new Forbidden('The log position belongs to another organization.');
      return at;
    },
    read,
  };
}

/** The order of places in the log, as the live streams and the known log end compare them: as numbers, without parsing them. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareLogPositions, type LogPosition } from '../../src/db/queries/events.js';

/** A non-negative 64-bit integer as PostgreSQL writes it, small ones often (they share digits and lengths). */
const digits = fc.oneof(fc.bigInt({ min: 0n, max: 999n }), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n })).map(String);
const place = fc.record({ txid: digits, position: digits });

const byNumbers = (a: LogPosition, b: LogPosition) => {
  const byTxid = BigInt(a.txid) - BigInt(b.txid);
  const difference = byTxid !== 0n ? byTxid : BigInt(a.position) - BigInt(b.position);
  return difference === 0n ? 0 : difference < 0n ? -1 : 1;
};

describe('log positions', () => {
  it('order by transaction id, then by position, as numbers and not as text', () => {
    expect(compareLogPositions({ txid: '9', position: '5' }, { txid: '10', position: '1' })).toBeLessThan(0);
    expect(compareLogPositions({ txid: '10', position: '20' }, { txid: '10', position: '3' })).toBeGreaterThan(0);
    expect(compareLogPositions({ txid: '10', position: '3' }, { txid: '10', position: '3' })).toBe(0);
  });

  it('compare as their numbers do, for any two', () => {
    fc.assert(fc.property(place, place, (a, b) => Math.sign(compareLogPositions(a, b)) === byNumbers(a, b)), { numRuns: 2_000 });
  });
});

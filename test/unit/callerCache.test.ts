/** The caller cache's own rules (src/auth/callerCache.ts), with the database's notifications and the clock played by the test. */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { Caller } from '../../src/auth/caller.js';
import { callersChannel, startCallerCache } from '../../src/auth/callerCache.js';
import type { ListenEvents } from '../../src/db/listen.js';

function caller(userId: string, orgIds: string[] = []): Caller {
  return {
    keyId: `key-${userId}`,
    keyName: 'Key',
    keyExpiresAt: new Date('2030-01-01T00:00:00.000Z'),
    scopes: ['write'],
    userId,
    email: `${userId}@example.com`,
    name: userId,
    timezone: null,
    systemRole: 'USER',
    organizations: orgIds.map((id) => ({ id, revision: 1, name: id, status: 'ACTIVE', role: 'MEMBER', timezone: 'UTC', defaultLocale: 'en' })),
  };
}

async function cache(options: { ttlMs?: number; maxEntries?: number; listening?: boolean; heartbeats?: boolean } = {}) {
  let now = 0;
  let notify: (payload: string) => void = () => undefined;
  let events: ListenEvents = {};
  let channel = '';
  const callers = await startCallerCache({
    subscribe: async (name, onNotify, given = {}) => {
      channel = name;
      notify = onNotify;
      events = given;
      if (options.listening ?? true) given.listening?.(options.heartbeats ?? false);
      return async () => undefined;
    },
    logger: pino({ level: 'silent' }),
    ttlMs: options.ttlMs,
    maxEntries: options.maxEntries,
    clock: () => now,
  });
  const keep = (hash: string, kept: Caller) => callers.keep(hash, { caller: kept, usedAt: undefined }, callers.mark());
  return { callers, keep, notify: (payload: string) => notify(payload), events: () => events, channel: () => channel, advance: (ms: number) => (now += ms) };
}

describe('the caller cache', () => {
  it('listens on the channel of migration 0007 and asks for its own changes at commit', async () => {
    const { channel, events } = await cache();
    expect(channel()).toBe(callersChannel);
    expect(events().ownChanges).toBe(true);
  });

  it('keeps a caller until its lifetime is over', async () => {
    const { callers, keep, advance } = await cache({ ttlMs: 1_000 });
    keep('a', caller('u1'));
    advance(999);
    expect(callers.get('a')?.caller.userId).toBe('u1');
    advance(1);
    expect(callers.get('a')).toBeUndefined();
  });

  it('keeps nothing before it first listens', async () => {
    const { callers, keep } = await cache({ listening: false });
    keep('a', caller('u1'));
    expect(callers.get('a')).toBeUndefined();
  });

  it('a notification for a user forgets every key of that user and no other', async () => {
    const { callers, keep, notify } = await cache();
    keep('a', caller('u1'));
    keep('b', caller('u1'));
    keep('c', caller('u2'));
    notify('user:u1');
    expect([callers.get('a'), callers.get('b')]).toEqual([undefined, undefined]);
    expect(callers.get('c')).toBeDefined();
  });

  it('a notification for an organization forgets every caller who belongs to it', async () => {
    const { callers, keep, notify } = await cache();
    keep('a', caller('u1', ['o1', 'o2']));
    keep('b', caller('u2', ['o2']));
    keep('c', caller('u3', ['o3']));
    notify('org:o2');
    expect([callers.get('a'), callers.get('b')]).toEqual([undefined, undefined]);
    expect(callers.get('c')).toBeDefined();
  });

  it('a flush, or a payload it does not know, forgets everything', async () => {
    for (const payload of ['flush', 'something new']) {
      const { callers, keep, notify } = await cache();
      keep('a', caller('u1'));
      notify(payload);
      expect(callers.size).toBe(0);
    }
  });

  it('a caller read while a notification came is not kept: it may have been read before the change committed', async () => {
    const { callers, notify } = await cache();
    const mark = callers.mark();
    notify('user:someone-else');
    callers.keep('a', { caller: caller('u1'), usedAt: undefined }, mark);
    expect(callers.get('a')).toBeUndefined();
  });

  it('a lost listening connection forgets everything and keeps nothing until it listens again', async () => {
    const { callers, keep, events } = await cache();
    keep('a', caller('u1'));
    const mark = callers.mark();
    events().lost!();
    expect(callers.size).toBe(0);
    keep('b', caller('u2'));
    expect(callers.get('b')).toBeUndefined();
    events().listening!(false);
    // Read before it listened again: a change may have been missed meanwhile.
    callers.keep('c', { caller: caller('u3'), usedAt: undefined }, mark);
    expect(callers.get('c')).toBeUndefined();
    keep('d', caller('u4'));
    expect(callers.get('d')).toBeDefined();
  });

  it('a listener with heartbeats unheard for 2 s: everything kept is forgotten and nothing is kept', async () => {
    const { callers, keep, events, advance } = await cache({ heartbeats: true });
    keep('a', caller('u1'));
    advance(1_000);
    events().alive!();
    advance(2_000);
    expect(callers.get('a')?.caller.userId).toBe('u1');
    advance(1);
    expect(callers.get('a')).toBeUndefined();
    keep('b', caller('u2'));
    expect(callers.get('b')).toBeUndefined();
    expect(callers.size).toBe(0);
  });

  it('a listener with heartbeats heard again after a silence: callers are kept again', async () => {
    const { callers, keep, events, advance } = await cache({ heartbeats: true });
    advance(2_001);
    keep('a', caller('u1'));
    expect(callers.get('a')).toBeUndefined();
    events().alive!();
    keep('b', caller('u2'));
    expect(callers.get('b')?.caller.userId).toBe('u2');
  });

  it('a listener that cannot be cut off (PGlite: no heartbeats) is never taken for silent', async () => {
    const { callers, keep, advance } = await cache({ heartbeats: false, ttlMs: 60_000 });
    keep('a', caller('u1'));
    advance(30_000);
    expect(callers.get('a')?.caller.userId).toBe('u1');
  });

  it('holds at most maxEntries callers, dropping the one kept first', async () => {
    const { callers, keep, notify } = await cache({ maxEntries: 2 });
    keep('a', caller('u1', ['o1']));
    keep('b', caller('u2'));
    keep('c', caller('u3'));
    expect(callers.size).toBe(2);
    expect(callers.get('a')).toBeUndefined();
    // The dropped caller left no trace in the indexes.
    notify('org:o1');
    expect(callers.size).toBe(2);
  });
});

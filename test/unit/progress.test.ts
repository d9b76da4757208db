import { describe, expect, it } from 'vitest';
import { skipReason, timeLeft } from '../support/progress.js';

describe('the time left that make test prints', () => {
  it('is a range that widens with the load: 2 min of quiet work at load 12 on 2 cores is 6-12 min', () => {
    expect(timeLeft(120, 12, 2)).toBe('about 6-12 min left at load 12.0');
  });

  it('never promises less than the quiet time, nor a single figure, on a machine with nothing else running', () => {
    expect(timeLeft(240, 0.5, 2)).toBe('about 4-6 min left at load 0.5');
  });

  it('says under a minute at the end, and gives no lower bound below one', () => {
    expect(timeLeft(20, 3, 2)).toBe('under 1 min left at load 3.0');
    expect(timeLeft(15, 12, 2)).toBe('under 2 min left at load 12.0');
  });
});

describe('why a test skipped', () => {
  const skipped = (fullName: string, note?: string) => ({ fullName, result: () => ({ state: 'skipped', note }) });

  it('is the note it skipped with', () => {
    expect(skipReason(skipped('a test', '127.0.0.1:4318 is taken'))).toBe('127.0.0.1:4318 is taken');
  });

  it('is the kind of reason its name gives in parentheses, without the explanation', () => {
    expect(skipReason(skipped('authentication on two processes (PostgreSQL only: PGlite allows one process) > works'))).toBe('PostgreSQL only');
    expect(skipReason(skipped('Redis stopped and started (needs redis-server) > resumes'))).toBe('needs redis-server');
  });

  it('is the database a name gives as its reason, not the database a name merely carries', () => {
    expect(skipReason(skipped('the purge (PGlite) > pauses on a timer (PGlite: a statement waits for the one before it)'))).toBe('PGlite only');
    expect(skipReason(skipped('the code samples on the demo data (PGlite) > getMe'))).toBeUndefined();
  });

  it('is unknown when neither says', () => {
    expect(skipReason(skipped('the event feed while changes overlap (PostgreSQL) > keeps its order'))).toBeUndefined();
  });
});

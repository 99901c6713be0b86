import { describe, expect, it } from 'vitest';
import { FOREIGN_LOCK_STALE_MS, judgeLock, type LockFacts } from '../../src/state/lock.ts';

const here = { hostname: 'runner-1', pid: 100 };
const facts = (overrides: Partial<LockFacts>): LockFacts => ({
  holder: { pid: 200, hostname: 'runner-1', startedAt: '2026-01-01T00:00:00.000Z' },
  here,
  alive: () => true,
  ageMs: 0,
  ...overrides,
});
const elsewhere = { pid: 1, hostname: 'runner-2', startedAt: 'x' };

describe('judgeLock: when the state file lock may be reclaimed', () => {
  it.each([
    ['this host, holder alive', facts({}), undefined],
    [
      'this host, holder alive, however old',
      facts({ ageMs: 10 * FOREIGN_LOCK_STALE_MS }),
      undefined,
    ],
    ['this host, holder gone', facts({ alive: () => false }), 'pid 200 is not running'],
    [
      'this host, our own pid (a process before a container restart)',
      facts({ holder: { pid: 100, hostname: 'runner-1', startedAt: 'x' } }),
      'pid 100 is this process, which does not hold it',
    ],
    ['another host, fresh', facts({ holder: elsewhere, alive: () => false }), undefined],
    [
      'another host, at the bound',
      facts({ holder: elsewhere, ageMs: FOREIGN_LOCK_STALE_MS }),
      undefined,
    ],
    [
      'another host, past the bound',
      facts({ holder: elsewhere, ageMs: FOREIGN_LOCK_STALE_MS + 1000 }),
      'host runner-2, last written 61s ago (more than 60s)',
    ],
    ['unreadable, fresh', facts({ holder: undefined }), undefined],
    [
      'unreadable, past the bound',
      facts({ holder: undefined, ageMs: FOREIGN_LOCK_STALE_MS + 1 }),
      'an unreadable lock, last written 60s ago (more than 60s)',
    ],
  ])('%s', (_title, input, stale) => {
    expect(judgeLock(input)).toBe(stale);
  });

  it('never asks about a pid on another host', () => {
    const asked: number[] = [];
    judgeLock(facts({ holder: elsewhere, alive: (pid) => (asked.push(pid), false) }));
    expect(asked).toEqual([]);
  });
});

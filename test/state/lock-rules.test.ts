import { describe, expect, it } from 'vitest';
import {
  describeHolder,
  FOREIGN_LOCK_STALE_MS,
  judgeLock,
  parseLockHolder,
  type LockFacts,
} from '../../src/state/lock-rules.ts';

const here = { hostname: 'runner-1', pid: 100 };
const facts = (overrides: Partial<LockFacts>): LockFacts => ({
  holder: { pid: 200, hostname: 'runner-1', startedAt: '2026-01-01T00:00:00.000Z' },
  here,
  alive: () => true,
  ageMs: 0,
  ...overrides,
});

describe('judgeLock: when the state file lock may be reclaimed', () => {
  it.each([
    ['this host, holder alive', facts({}), 'held'],
    ['this host, holder alive, however old', facts({ ageMs: 10 * FOREIGN_LOCK_STALE_MS }), 'held'],
    ['this host, holder gone', facts({ alive: () => false }), 'stale'],
    [
      'this host, our own pid (a process before a container restart)',
      facts({ holder: { pid: 100, hostname: 'runner-1', startedAt: 'x' } }),
      'stale',
    ],
    [
      'another host, fresh',
      facts({ holder: { pid: 100, hostname: 'runner-2', startedAt: 'x' }, alive: () => false }),
      'held',
    ],
    [
      'another host, at the bound',
      facts({
        holder: { pid: 1, hostname: 'runner-2', startedAt: 'x' },
        ageMs: FOREIGN_LOCK_STALE_MS,
      }),
      'held',
    ],
    [
      'another host, past the bound',
      facts({
        holder: { pid: 1, hostname: 'runner-2', startedAt: 'x' },
        ageMs: FOREIGN_LOCK_STALE_MS + 1,
      }),
      'stale',
    ],
    ['unreadable, fresh', facts({ holder: undefined }), 'held'],
    [
      'unreadable, past the bound',
      facts({ holder: undefined, ageMs: FOREIGN_LOCK_STALE_MS + 1 }),
      'stale',
    ],
  ])('%s: %s', (_title, input, kind) => {
    expect(judgeLock(input).kind).toBe(kind);
  });

  it('never asks about a pid on another host', () => {
    const asked: number[] = [];
    judgeLock(
      facts({
        holder: { pid: 7, hostname: 'runner-2', startedAt: 'x' },
        alive: (pid) => (asked.push(pid), false),
      }),
    );
    expect(asked).toEqual([]);
  });
});

describe('parseLockHolder', () => {
  it.each([
    '',
    '{',
    'null',
    '[]',
    '{"pid":0,"hostname":"h","startedAt":"t"}',
    '{"pid":1.5,"hostname":"h","startedAt":"t"}',
    '{"pid":1,"startedAt":"t"}',
  ])('is undefined for %j', (text) => {
    expect(parseLockHolder(text)).toBeUndefined();
  });

  it('reads a holder, and errors name it', () => {
    const holder = parseLockHolder(
      '{"pid":42,"hostname":"h","startedAt":"2026-01-01T00:00:00Z"}\n',
    );
    expect(holder).toEqual({ pid: 42, hostname: 'h', startedAt: '2026-01-01T00:00:00Z' });
    expect(describeHolder(holder)).toBe('pid 42 on host h, since 2026-01-01T00:00:00Z');
    expect(describeHolder(undefined)).toBe('a holder that cannot be read');
  });
});

import { describe, expect, it } from 'vitest';
import {
  stopBudget,
  health,
  intervalDelay,
  isDue,
  isTargetedPass,
  nextBackoff,
  orgsToLook,
  ownsOrg,
  readiness,
} from '../../src/daemon/daemon-policy.ts';
import { shardOf } from '../../src/core/shard.ts';

describe('which orgs a pass looks at', () => {
  const orgs = [
    { org: 'a', files: ['m/a.yaml'] },
    { org: 'b', files: ['m/b.yaml', 'm/shared.yaml'] },
    { org: 'c', files: ['m/c.yaml'] },
  ];
  const seen = new Map([
    ['a', new Set(['m/a.yaml'])],
    ['b', new Set(['m/b.yaml'])],
    ['c', new Set(['m/old-c.yaml'])],
  ]);
  it.each([
    [
      'a file event looks at the orgs its file serves',
      ['file change m/b.yaml'],
      ['m/shared.yaml'],
      ['b'],
    ],
    [
      'a file that served an org before touches it',
      ['file unlink m/old-c.yaml'],
      ['m/old-c.yaml'],
      ['c'],
    ],
    ['a new revision looks at what changed', ['revision abc'], ['m/a.yaml'], ['a']],
    ['the interval looks at every org', ['interval'], ['m/a.yaml'], ['a', 'b', 'c']],
    [
      'a webhook among file events looks at every org',
      ['file add x', 'webhook'],
      [],
      ['a', 'b', 'c'],
    ],
  ])('%s', (_title, reasons, changed, expected) => {
    expect(orgsToLook(orgs, reasons, new Set(changed), seen).map((o) => o.org)).toEqual(expected);
  });

  it('looks at every org when nobody knows what changed, and at orgs never seen', () => {
    expect(orgsToLook(orgs, ['file x'], undefined, seen)).toHaveLength(3);
    expect(orgsToLook(orgs, ['file x'], new Set(), new Map()).map((o) => o.org)).toEqual([
      'a',
      'b',
      'c',
    ]);
  });

  it('tells targeted passes from full ones', () => {
    expect(isTargetedPass(['file add a', 'revision x'])).toBe(true);
    expect(isTargetedPass(['start'])).toBe(false);
    expect(isTargetedPass(['SIGHUP'])).toBe(false);
  });

  it('owns the orgs of its shard, among --org when given', () => {
    const shard = { index: shardOf('acme', 3), count: 3 };
    expect(ownsOrg('acme', shard, undefined)).toBe(true);
    expect(ownsOrg('acme', { ...shard, index: (shard.index + 1) % 3 }, undefined)).toBe(false);
    expect(ownsOrg('acme', undefined, ['beta'])).toBe(false);
    expect(ownsOrg('acme', undefined, undefined)).toBe(true);
  });
});

describe('backoff', () => {
  it.each([
    [1, 300_000, 5_000],
    [2, 300_000, 10_000],
    [4, 300_000, 40_000],
    [10, 300_000, 300_000],
    [10, 60_000, 60_000],
    [10, 0, 300_000],
  ])('failure %i with interval %i waits %i ms', (failures, intervalMs, delay) => {
    let backoff;
    for (let i = 0; i < failures; i++) backoff = nextBackoff(backoff, 1_000, intervalMs, 'f');
    expect(backoff).toEqual({ failures, nextAttemptAt: 1_000 + delay, fingerprint: 'f' });
  });

  it.each([
    ['not backing off', undefined, 0, 'f', true],
    ['before its time', { failures: 1, nextAttemptAt: 10, fingerprint: 'f' }, 9, 'f', false],
    ['at its time', { failures: 1, nextAttemptAt: 10, fingerprint: 'f' }, 10, 'f', true],
    [
      'its manifests or token changed',
      { failures: 1, nextAttemptAt: 10, fingerprint: 'f' },
      0,
      'g',
      true,
    ],
  ])('an org %s is due: %s', (_title, backoff, now, fingerprint, expected) => {
    expect(isDue(backoff, now, fingerprint)).toBe(expected);
  });

  it('jitters the interval by ±10%', () => {
    expect(intervalDelay(100_000, 0)).toBe(90_000);
    expect(intervalDelay(100_000, 0.5)).toBe(100_000);
    expect(intervalDelay(100_000, 0.9999)).toBe(109_998);
  });
});

describe('readiness and health', () => {
  const minute = 60_000;
  it.each([
    ['before the first pass', false, undefined, 5 * minute, 0, false],
    ['right after a pass', true, 0, 5 * minute, minute, true],
    ['when passes stopped for over three intervals', true, 0, 5 * minute, 18 * minute, false],
    ['with the interval off, however long ago', true, 0, 0, 1000 * minute, true],
  ])('%s: ready %s', (_title, first, lastEnd, interval, now, expected) => {
    expect(readiness(first, lastEnd, interval, now).ready).toBe(expected);
  });

  it.each([
    ['no pass running', undefined, 0, 99 * minute, true],
    ['a pass running for 10 minutes', 0, 0, 10 * minute, true],
    ['a pass running for 16 minutes', 0, 0, 16 * minute, false],
    ['a pass shorter than three long intervals', 0, 10 * minute, 29 * minute, true],
  ])('%s: healthy %s', (_title, started, interval, now, expected) => {
    expect(health(started, interval, now).healthy).toBe(expected);
  });
});

describe('how a stop spends --shutdown-timeout', () => {
  it.each([
    // shutdown timeout, the pass's share, the whole stop
    [30_000, 25_000, 30_000],
    [10_000, 5_000, 10_000],
    [6_000, 3_000, 6_000],
    [3_000, 1_500, 3_000],
    [2_000, 1_000, 2_000],
    [1_000, 1_000, 2_000],
    [0, 0, 2_000],
    [600_000, 595_000, 600_000],
  ])(
    '--shutdown-timeout %i ms: the pass %i ms, the whole stop %i ms',
    (timeout, passMs, hardMs) => {
      expect(stopBudget(timeout)).toEqual({ passMs, hardMs });
    },
  );
});

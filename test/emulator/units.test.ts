/** Small pure parts of the emulator: flag parsing and the PRNG. */
import { describe, expect, it } from 'vitest';
import { parseLatency, parsePlaceholder, parseTokenFlag } from '../../src/commands/emulator.ts';
import { ConfigError } from '../../src/runtime/errors.ts';
import { mulberry32 } from '../../src/emulator/faults.ts';

describe('--token parsing', () => {
  it.each([
    ['plain', { token: 'plain', orgs: null }],
    ['tok=acme', { token: 'tok', orgs: ['acme'] }],
    ['tok=acme,beta', { token: 'tok', orgs: ['acme', 'beta'] }],
    ['abc==', { token: 'abc==', orgs: null }],
    ['abc==acme', { token: 'abc=', orgs: ['acme'] }],
    ['a=b=acme', { token: 'a=b', orgs: ['acme'] }],
    ['tok=', { token: 'tok=', orgs: null }],
  ])('reads %s', (raw, expected) => {
    expect(parseTokenFlag(raw)).toEqual(expected);
  });

  it('rejects an empty token', () => {
    expect(() => parseTokenFlag('')).toThrow(ConfigError);
    expect(() => parseTokenFlag('=acme')).toThrow(ConfigError);
    expect(() => parseTokenFlag('tok=bad org')).toThrow(ConfigError);
  });
});

describe('--latency parsing', () => {
  it('reads MS and MIN-MAX', () => {
    expect(parseLatency('25')).toEqual({ min: 25, max: 25 });
    expect(parseLatency('10-200')).toEqual({ min: 10, max: 200 });
    expect(parseLatency('0')).toEqual({ min: 0, max: 0 });
  });

  it.each([['-5'], ['10-5'], ['abc'], ['1.5'], ['1-2-3'], ['999999999']])('rejects %s', (raw) => {
    expect(() => parseLatency(raw)).toThrow(/--latency/);
  });
});

describe('--fault-placeholder parsing', () => {
  it('reads NAME (every org) and ORG/NAME, and refuses anything else naming the flag', () => {
    expect([parsePlaceholder('web'), parsePlaceholder('acme/web')]).toEqual([
      ['*', 'web'],
      ['acme', 'web'],
    ]);
    for (const raw of ['', 'a/b/c', 'acme/', '/web', 'a~b', 'acme/-web']) {
      expect(() => parsePlaceholder(raw)).toThrow(/^--fault-placeholder: /);
    }
  });
});

describe('mulberry32', () => {
  it('is deterministic per seed and stays in [0, 1)', () => {
    const a = mulberry32(1);
    const b = mulberry32(1);
    const c = mulberry32(2);
    const first = Array.from({ length: 1000 }, () => a());
    expect(Array.from({ length: 1000 }, () => b())).toEqual(first);
    expect(Array.from({ length: 1000 }, () => c())).not.toEqual(first);
    expect(first.every((x) => x >= 0 && x < 1)).toBe(true);
    const mean = first.reduce((sum, x) => sum + x, 0) / first.length;
    expect(mean).toBeGreaterThan(0.4);
    expect(mean).toBeLessThan(0.6);
  });
});

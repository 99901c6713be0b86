/** Small pure parts of the emulator: flag parsing, the PRNG, the mask of tokens in a target. */
import { describe, expect, it } from 'vitest';
import { parseLatency, parsePlaceholder, parseTokenFlag } from '../../src/commands/emulator.ts';
import { shownTarget, tokenMasker } from '../../src/emulator/access.ts';
import { mulberry32 } from '../../src/emulator/faults.ts';
import { ConfigError } from '../../src/runtime/errors.ts';

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

  it.each(['', '=acme', 'tok=bad org'])('rejects %j', (raw) => {
    expect(() => parseTokenFlag(raw)).toThrow(ConfigError);
  });
});

describe('--latency parsing', () => {
  it('reads MS and MIN-MAX', () => {
    const read = ['25', '10-200', '0'].map(parseLatency);
    expect(read).toEqual([
      { min: 25, max: 25 },
      { min: 10, max: 200 },
      { min: 0, max: 0 },
    ]);
  });

  it.each(['-5', '10-5', 'abc', '1.5', '1-2-3', '999999999'])('rejects %s', (raw) => {
    expect(() => parseLatency(raw)).toThrow(/--latency/);
  });
});

describe('--fault-placeholder parsing', () => {
  it('reads NAME (every org) and ORG/NAME, and refuses anything else naming the flag', () => {
    expect(['web', 'acme/web'].map(parsePlaceholder)).toEqual([
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
    const draws = (seed: number) => Array.from({ length: 1000 }, mulberry32(seed));
    const first = draws(1);
    expect(draws(1)).toEqual(first);
    expect(draws(2)).not.toEqual(first);
    expect(first.every((x) => x >= 0 && x < 1)).toBe(true);
    const mean = first.reduce((sum, x) => sum + x, 0) / first.length;
    expect(mean).toBeGreaterThan(0.4);
    expect(mean).toBeLessThan(0.6);
  });
});

describe('the tokens hidden in a request target', () => {
  // A token per org, as a team with a thousand orgs has them; and one shorter than 8 characters.
  const tokens = Array.from(
    { length: 1000 },
    (_, i) => `org-${i}.Token+${String(i).padStart(4, '0')}`,
  );
  const last = tokens[999] ?? '';
  const mask = tokenMasker([...tokens, 'Short7x']);
  const percent = (text: string) => encodeURIComponent(text).replace('-', '%2d');

  it.each([
    ['a path segment', `/api/v2/environments/${last}`, '/api/v2/environments/[REDACTED]'],
    [
      'inside a segment, partly percent-encoded',
      `/a/key-${percent(last)}.json`,
      '/a/key-[REDACTED].json',
    ],
    [
      'a query value among others',
      `/a?page=1&q=${last}&per_page=2`,
      '/a?page=1&q=[REDACTED]&per_page=2',
    ],
    ['a query name', `/a?${percent(last)}`, '/a?[REDACTED]'],
    [
      'the value of a token parameter',
      '/a?Access_Token=anything&x=1',
      '/a?Access_Token=[REDACTED]&x=1',
    ],
    ['a short token as a whole segment', '/a/Short7x/b?v=Short7x', '/a/[REDACTED]/b?v=[REDACTED]'],
    ['a short token inside a name', '/a/theShort7x/Short7x2', '/a/theShort7x/Short7x2'],
    ['the start of a token', `/a/${last.slice(0, 12)}`, `/a/${last.slice(0, 12)}`],
    ['no token', '/api/v2/environments/acme?page=2', '/api/v2/environments/acme?page=2'],
  ])('shows %s as it should', (_label, target, shown) => {
    expect(shownTarget(target, mask)).toBe(shown);
  });

  it("hides the request's own token too, inside text when it is long, as a whole name when short", () => {
    const own = tokenMasker([]);
    expect(shownTarget('/a/x-own-token-1234/b', own, 'Bearer own-token-1234')).toBe(
      '/a/x-[REDACTED]/b',
    );
    expect(shownTarget('/a/abc/xabc?abc', own, 'Bearer abc')).toBe('/a/[REDACTED]/xabc?[REDACTED]');
  });
});

/**
 * The escaped spellings of a secret are found by a regex where the text holds an escape, and by a
 * string search where it does not (scrub-match.ts). Both must find the same ranges: the regex is
 * the reference here, run on every text.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { escapedRanges, secretMatcher, type Range } from '../../src/core/scrub-match.ts';
import { secretForms } from '../../src/core/secret-forms.ts';

/** What the regex alone finds: every match, leftmost first, each after the one before. */
function byRegex(text: string, regex: RegExp): Range[] {
  const ranges: Range[] = [];
  for (const match of text.matchAll(regex))
    ranges.push([match.index, match.index + match[0].length]);
  return ranges;
}

/** Secrets from a small alphabet, so that they overlap and repeat in the texts. */
const secret = fc.string({
  unit: fc.constantFrom('a', 'b', '+', '/', '=', '-', '_', '.', '~'),
  minLength: 4,
  maxLength: 8,
});

describe('the escaped spellings of a secret', () => {
  it('are found in text without escapes exactly where the regex finds them', () => {
    fc.assert(
      fc.property(
        secret,
        fc.array(fc.constantFrom('a', 'b', '+', '/', '=', '-', ' ', '"', '\n'), { maxLength: 60 }),
        fc.array(fc.nat(60), { maxLength: 4 }),
        (token, chars, at) => {
          // The secret placed whole at a few places, and near copies of it around them.
          let text = chars.join('');
          for (const index of at) text = `${text.slice(0, index)}${token}${text.slice(index)}`;
          const matcher = secretMatcher(secretForms(token));
          const found: Range[] = [];
          escapedRanges(text, matcher, found);
          expect(found).toEqual(byRegex(text, matcher.escaped()));
        },
      ),
      { numRuns: 300, seed: 7 },
    );
  });

  it('are found written with escapes, mixed, by the regex', () => {
    const matcher = secretMatcher(secretForms('ab+/cd'));
    const found: Range[] = [];
    const text = 'x a%62\\+\\u002f&#99;d y ab+/cd';
    escapedRanges(text, matcher, found);
    expect(found).toEqual([
      [2, 20],
      [23, 29],
    ]);
  });

  it('take the leftmost match, then go on after it, as the regex does', () => {
    const matcher = secretMatcher(secretForms('aaaa'));
    const found: Range[] = [];
    escapedRanges('aaaaaaaaa', matcher, found);
    expect(found).toEqual([
      [0, 4],
      [4, 8],
    ]);
    expect(found).toEqual(byRegex('aaaaaaaaa', matcher.escaped()));
  });
});

/**
 * The spellings derived from a secret, and the one-pass search for their runs: each checked
 * against what Node's own encoders write, and against a naive search, on random secrets.
 */
import { decodeHTML } from 'entities/decode';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileScrub, MIN_FRAGMENT, REDACTED } from '../../src/core/redact.ts';
import { RunFinder } from '../../src/core/run-finder.ts';
import { secretForms } from '../../src/core/secret-forms.ts';

const TOKEN = 'Ab3+x/y~z.w-v_u9Qk7LmN2pR8sT4hJ6==';
const scrub = compileScrub([TOKEN], { decodeHtml: decodeHTML });

/** The windows of `length` characters of `text`. */
function windows(text: string, length: number): string[] {
  return Array.from({ length: Math.max(0, text.length - length + 1) }, (_, i) =>
    text.slice(i, i + length),
  );
}

/** The characters of base64(prefix + secret + suffix) made of the secret's bits alone. */
function stableSpan(encoded: string, prefix: number, secret: number): string {
  return encoded.slice(Math.ceil((prefix * 8) / 6), Math.floor(((prefix + secret) * 8) / 6));
}

const bytes = fc.uint8Array({ maxLength: 7 }).map((array) => Buffer.from(array));
const tokenChars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/';
const token = fc.string({
  unit: fc.constantFrom(...tokenChars.split('')),
  minLength: 16,
  maxLength: 60,
});

describe('the spellings of a secret', () => {
  it('are derived once each: the secret, JSON, URL and form encoding, base64 and base64url at three alignments, hex', () => {
    const names = secretForms(TOKEN).map((form) => form.name);
    for (const name of [
      'as it is',
      'JSON string, \\/',
      'encodeURIComponent',
      'form encoding',
      'base64 at offset 0',
      'base64 at offset 1',
      'base64url at offset 1',
      'base64 at offset 2',
      'hex',
      'HEX',
    ])
      expect(names).toContain(name);
    const texts = secretForms(TOKEN).map((form) => form.text);
    expect(new Set(texts).size).toBe(texts.length);
  });

  it('find the secret base64- and base64url-encoded after any bytes, before any, padded or not', () => {
    fc.assert(
      fc.property(token, bytes, bytes, fc.boolean(), (secret, before, after, url) => {
        const data = Buffer.concat([before, Buffer.from(secret), after]);
        const encoded = data.toString(url ? 'base64url' : 'base64');
        const span = stableSpan(encoded, before.length, secret.length);
        const out = compileScrub([secret])(`echo: ${encoded} end`);
        expect(out).toContain(REDACTED);
        expect(windows(span, 8).filter((w) => out.includes(w))).toEqual([]);
      }),
    );
  });

  it('find it in hex of either case, JSON-escaped base64, percent-encoded base64 and form encoding', () => {
    const basic = Buffer.from(`user:${TOKEN}`).toString('base64');
    for (const text of [
      Buffer.from(TOKEN).toString('hex'),
      Buffer.from(TOKEN).toString('hex').toUpperCase(),
      JSON.stringify({ auth: basic }).replace(/\//g, '\\/'),
      encodeURIComponent(basic),
      new URLSearchParams({ token: TOKEN }).toString(),
      `cut short: ${Buffer.from(`Bearer ${TOKEN}`).toString('base64').slice(0, 24)}`,
    ]) {
      const out = scrub(text);
      expect(out, text.length.toString()).toContain(REDACTED);
      expect(windows(TOKEN, MIN_FRAGMENT).filter((w) => out.includes(w))).toEqual([]);
    }
  });

  it('find it spelled with named HTML references, and leave every other reference as written', () => {
    const named: Record<string, string> = {
      '+': '&plus;',
      '/': '&sol;',
      '.': '&period;',
      _: '&lowbar;',
      '-': '&hyphen;',
      '~': '&tilde;',
      '=': '&equals;',
    };
    const page = `<p>Bearer ${Array.from(TOKEN, (c) => named[c] ?? c).join('')} &amp; &lt;b&gt; &nbsp;</p>`;
    expect(scrub(page)).toBe(`<p>Bearer ${REDACTED} &amp; &lt;b&gt; &nbsp;</p>`);
    const twice = Array.from(TOKEN, (c) => (named[c] ?? c).replace('&', '&amp;')).join('');
    expect(scrub(`x ${twice} y`)).toBe(`x ${REDACTED} y`);
    expect(scrub('R&amp;D &copy; 2025, a&plus;b')).toBe('R&amp;D &copy; 2025, a&plus;b');
  });

  it('find it markdown-escaped', () => {
    expect(scrub(`token: ${TOKEN.replace(/[+~_]/g, '\\$&')}.`)).toBe(`token: ${REDACTED}.`);
  });
});

describe('the one-pass search for runs', () => {
  /** Every run of `minRun` or more characters of `literal` in `text`, the slow way. */
  function naive(text: string, literal: string, minRun: number): [number, number][] {
    const found: [number, number][] = [];
    for (let t = 0; t < text.length; t++)
      for (let at = 0; at < literal.length; at++) {
        let n = 0;
        while (t + n < text.length && at + n < literal.length && text[t + n] === literal[at + n])
          n++;
        if (n >= minRun) found.push([t, t + n]);
      }
    return found;
  }

  const covered = (ranges: [number, number][], [start, end]: [number, number]) =>
    Array.from({ length: end - start }, (_, k) => start + k).every((i) =>
      ranges.some(([from, to]) => from <= i && i < to),
    );

  it('finds every run a naive search finds, and nothing else', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(...'abcAB+/='.split('')), minLength: 6, maxLength: 30 }),
        fc.integer({ min: 6, max: 12 }),
        fc.array(fc.string({ unit: fc.constantFrom(...'abcAB+/= x'.split('')), maxLength: 20 }), {
          maxLength: 6,
        }),
        fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 4 }),
        (literal, minRun, noise, cuts) => {
          const pieces = cuts.map(([a, b]) =>
            literal.slice(a % literal.length, (a % literal.length) + (b % (literal.length + 1))),
          );
          const text = [...noise, ...pieces, ...noise.toReversed()].join('');
          const ranges: [number, number][] = [];
          new RunFinder([{ text: literal, minRun }]).find(text, ranges);
          const expected = naive(text, literal, minRun);
          for (const run of expected) expect(covered(ranges, run)).toBe(true);
          for (const [from, to] of ranges) {
            expect(to - from).toBeGreaterThanOrEqual(minRun);
            expect(literal).toContain(text.slice(from, to));
          }
        },
      ),
    );
  });
});

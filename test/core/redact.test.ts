import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compileScrub,
  isBearerToken,
  MIN_FRAGMENT,
  REDACTED,
  Redactor,
  scrubSecrets,
} from '../../src/core/redact.ts';

const TOKEN = 'Ab3+x/y~z.w-v_u9Qk7LmN2pR8sT4hJ6==';

/** Every substring of `secret` of MIN_FRAGMENT characters found in `text`. */
function fragmentsIn(text: string, secret: string): string[] {
  const found: string[] = [];
  for (let i = 0; i + MIN_FRAGMENT <= secret.length; i++) {
    const part = secret.slice(i, i + MIN_FRAGMENT);
    if (text.includes(part)) found.push(part);
  }
  return found;
}

const unicodeEscaped = (text: string) =>
  Array.from(text)
    .map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .join('');

describe('scrubbing a secret', () => {
  const scrub = compileScrub([TOKEN]);
  const forms: [string, string][] = [
    ['as it is', `Authorization: Bearer ${TOKEN}.`],
    ['JSON-escaped', JSON.stringify({ message: `header ${TOKEN}` })],
    ['JSON-escaped twice', JSON.stringify(JSON.stringify({ message: `header ${TOKEN}` }))],
    ['with escaped slashes', JSON.stringify({ m: TOKEN }).replace(/\//g, '\\/')],
    ['as \\u escapes', `{"m":"${unicodeEscaped(TOKEN)}"}`],
    [
      'as upper-case \\u escapes',
      `{"m":"${unicodeEscaped(TOKEN).toUpperCase().replace(/\\U/g, '\\u')}"}`,
    ],
    ['percent-encoded', `?t=${encodeURIComponent(TOKEN)}`],
    ['percent-encoded twice', `?t=${encodeURIComponent(encodeURIComponent(TOKEN))}`],
    [
      'as HTML references',
      Array.from(TOKEN)
        .map((c) => `&#${c.charCodeAt(0)};`)
        .join(''),
    ],
    ['cut short', `...Bearer ${TOKEN.slice(0, 12)}`],
    ['a slice of it', `x${TOKEN.slice(9, 9 + MIN_FRAGMENT)}x`],
  ];
  for (const [name, text] of forms) {
    it(`finds it ${name}`, () => {
      const out = scrub(text);
      expect(out).toContain(REDACTED);
      expect(fragmentsIn(out, TOKEN)).toEqual([]);
      expect(fragmentsIn(out, encodeURIComponent(TOKEN))).toEqual([]);
    });
  }

  it('keeps JSON parseable and the rest of the text as it was', () => {
    const body = JSON.stringify({ message: `rejected Bearer ${TOKEN} for acme`, n: 1 });
    expect(JSON.parse(scrub(body))).toEqual({
      message: `rejected Bearer ${REDACTED} for acme`,
      n: 1,
    });
    expect(scrub('nothing secret here: a+b/c')).toBe('nothing secret here: a+b/c');
  });

  it(`leaves fragments shorter than ${MIN_FRAGMENT} characters and secrets shorter than 4 alone`, () => {
    expect(scrub(`x${TOKEN.slice(0, MIN_FRAGMENT - 1)}x`)).toBe(
      `x${TOKEN.slice(0, MIN_FRAGMENT - 1)}x`,
    );
    expect(scrubSecrets('abc abc', ['abc'])).toBe('abc abc');
  });

  it('never leaves a fragment of MIN_FRAGMENT or more characters of any secret in any text', () => {
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.constantFrom(...'Ab3+/=~._-xyz'.split('')),
          minLength: 8,
          maxLength: 40,
        }),
        fc.array(fc.string({ maxLength: 12 }), { maxLength: 4 }),
        fc.nat(),
        fc.nat(),
        (secret, noise, start, length) => {
          const from = start % secret.length;
          const part = secret.slice(from, from + MIN_FRAGMENT + (length % secret.length));
          const text = [...noise, part, secret, ...noise].join(' ');
          const out = scrubSecrets(text, [secret]);
          const leftover = fragmentsIn(out, secret).filter(
            (f) => !fragmentsIn(noise.join(' '), secret).includes(f),
          );
          expect(leftover).toEqual([]);
        },
      ),
    );
  });
});

describe('the redactor', () => {
  it('scrubs every secret learnt so far, the old ones too', () => {
    const redactor = new Redactor();
    expect(redactor.scrub(`a ${TOKEN}`)).toBe(`a ${TOKEN}`);
    redactor.add(TOKEN);
    redactor.add('rotated-token-123456');
    expect(redactor.scrub(`a ${TOKEN} b rotated-token-123456`)).toBe(`a ${REDACTED} b ${REDACTED}`);
  });
});

describe('Bearer token characters (RFC 6750 b64token)', () => {
  it('accepts letters, digits, - . _ ~ + / and trailing = padding', () => {
    expect(isBearerToken(TOKEN)).toBe(true);
    expect(isBearerToken('abc==')).toBe(true);
  });
  it('refuses anything else', () => {
    for (const bad of ['a"b', 'a\\b', 'a b', 'a=b', '=abc', 'tök', 'a,b', 'a;b', ''])
      expect(isBearerToken(bad), bad).toBe(false);
  });
});

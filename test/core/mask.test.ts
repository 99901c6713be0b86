/**
 * Every spelling of a secret, and every run of 12 characters of one, is masked wherever it stands;
 * anything shorter, and every other text, is left as it is. The spellings are made here with
 * Node's own encoders, never with envsync's code.
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MASKED, maskDeep, Masker, MIN_RUN } from '../../src/core/mask.ts';

const TOKEN = 'Ab3+x/y~z.w-v_u9Qk7LmN2pR8sT4hJ6==';

function masker(...secrets: string[]): Masker {
  const m = new Masker();
  for (const secret of secrets) m.add(secret);
  return m;
}

/** The base64 of `text` after `offset` other bytes: only the characters of its bits alone. */
function base64At(text: string, offset: number, url = false): string {
  const encoded = Buffer.concat([Buffer.alloc(offset), Buffer.from(text)]).toString(
    url ? 'base64url' : 'base64',
  );
  const end = Math.floor(((offset + Buffer.byteLength(text)) * 8) / 6);
  return encoded.slice(Math.ceil((offset * 8) / 6), end);
}

/** Every spelling envsync promises to mask, by name. */
function spellings(secret: string): Record<string, string> {
  const hex = Buffer.from(secret).toString('hex');
  return {
    'as it is': secret,
    'JSON string': JSON.stringify(secret).slice(1, -1),
    'percent-encoded': encodeURIComponent(secret),
    ...Object.fromEntries(
      [0, 1, 2].flatMap((offset) => [
        [`base64 at offset ${offset}`, base64At(secret, offset)],
        [`base64url at offset ${offset}`, base64At(secret, offset, true)],
      ]),
    ),
    hex,
    HEX: hex.toUpperCase(),
  };
}

/** Whether `text` holds a run of MIN_RUN characters of any spelling of `secret`. */
function holdsRun(text: string, secret: string): boolean {
  return Object.values(spellings(secret)).some((spelling) => {
    for (let at = 0; at + MIN_RUN <= spelling.length; at++)
      if (text.includes(spelling.slice(at, at + MIN_RUN))) return true;
    return false;
  });
}

describe('Masker', () => {
  it('masks the token inside what a proxy encodes: an Authorization header, Basic credentials', () => {
    const m = masker(TOKEN);
    for (const carried of [`Bearer ${TOKEN}`, `envsync:${TOKEN}`, `x${TOKEN}y`]) {
      const out = m.mask(`[${Buffer.from(carried).toString('base64')}]`);
      expect(holdsRun(out, TOKEN), carried).toBe(false);
    }
  });

  it('masks any run of 12 characters of a spelling, and leaves a run of 11 as it is', () => {
    const m = masker(TOKEN);
    for (const [name, spelling] of Object.entries(spellings(TOKEN))) {
      for (let at = 0; at + MIN_RUN <= spelling.length; at++) {
        const run = spelling.slice(at, at + MIN_RUN);
        expect(m.mask(`<${run}>`), `${name} at ${at}`).toBe(`<${MASKED}>`);
        const shorter = run.slice(1);
        // Unless the 11 characters are a whole spelling of their own.
        expect(m.mask(`<${shorter}>`), `${name} at ${at}`).toBe(`<${shorter}>`);
      }
    }
  });

  it('leaves no run of 12 of any spelling, whatever surrounds it and wherever it is cut', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 12, maxLength: 48 }),
        fc.string({ maxLength: 40 }),
        fc.string({ maxLength: 40 }),
        fc.nat(),
        fc.nat(),
        (bytes, before, after, from, length) => {
          const secret = Buffer.from(bytes).toString('base64url');
          const all = Object.values(spellings(secret));
          const spelling = all[from % all.length] as string;
          const start = length % Math.max(1, spelling.length - MIN_RUN);
          const piece = spelling.slice(start, start + MIN_RUN + (length % 20));
          const out = masker(secret).mask(`${before}${piece}${after}`);
          expect(out.includes(MASKED) && !holdsRun(out, secret)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('leaves text that holds no secret as it is, the same string', () => {
    const m = masker(TOKEN, randomBytes(32).toString('hex'));
    for (const text of [
      '',
      'Production cluster, deployed on every merge to main',
      // Fewer than 12 characters of the token in a row, many times over.
      `${TOKEN.slice(0, 11)} ${TOKEN.slice(11, 22)} ${TOKEN.slice(22, 33)}`,
      'sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
    ])
      expect(m.mask(text)).toBe(text);
  });

  it('masks each of 1,000 secrets, learnt one by one, and nothing else', () => {
    const m = new Masker();
    const secrets = Array.from({ length: 1000 }, () => randomBytes(32).toString('base64url'));
    for (const secret of secrets) m.add(secret);
    for (const secret of [secrets[0], secrets[499], secrets[999]] as string[]) {
      expect(m.mask(`a ${secret} b`)).toBe(`a ${MASKED} b`);
      expect(m.mask(`hex ${Buffer.from(secret).toString('hex')}.`)).toBe(`hex ${MASKED}.`);
    }
    const plain = 'an org named acme-production, in eu-west-1';
    expect(m.mask(plain)).toBe(plain);
  });

  it('masks a secret shorter than 12 whole, never one shorter than 4; joins what overlaps or touches', () => {
    const m = masker('dev-token', 'abc', TOKEN);
    expect(m.mask('Bearer dev-token!')).toBe(`Bearer ${MASKED}!`);
    expect(m.mask('dev-toke abc abcabc')).toBe('dev-toke abc abcabc');
    expect([m.holds('x dev-token'), m.holds('x dev-toke')]).toEqual([true, false]);
    expect(m.mask(`${TOKEN}${TOKEN} ${TOKEN}dev-token`)).toBe(`${MASKED} ${MASKED}`);
  });
});

describe('maskDeep', () => {
  it('masks every string of a value, keys included, and keeps its shape', () => {
    const m = masker(TOKEN);
    const value = JSON.parse(
      `{"__proto__": "x", "list": ["${TOKEN}", 3, null, true], "${TOKEN}": {"deep": "a ${TOKEN}"}}`,
    ) as unknown;
    expect(JSON.stringify(maskDeep(value, m.mask))).toBe(
      `{"__proto__":"x","list":["${MASKED}",3,null,true],"${MASKED}":{"deep":"a ${MASKED}"}}`,
    );
  });
});

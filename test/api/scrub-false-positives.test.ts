/**
 * What the scrubber takes that is not the token: every line of a corpus of realistic environment
 * descriptions and error messages (test/fixtures/scrub-corpus/descriptions.txt: names, regions,
 * ARNs, commit hashes, UUIDs, digests, URLs, HTML error pages, JSON bodies, text in a dozen
 * languages) is scrubbed with tokens of the shapes services hand out, drawn at random from a
 * fixed seed, the way the client scrubs every answer (HTML references decoded, every spelling,
 * runs of 6 characters). A line that comes out changed is a false positive.
 *
 * The bound: a random token of length L over an alphabet of A characters has at most L - 5
 * distinct runs of 6, so a window of 6 characters of text matches one by chance with probability
 * at most (L - 5) / A^6. The worst shape is hex (A = 16, L = 40): 2.1e-6 a window, about 1.3e-4
 * for a line holding 60 windows of hex digits (a digest and a request id), and far less for
 * prose, whose windows are rarely all token characters. A rate under 1 in 1,000 lines leaves that
 * worst line a margin of 8 and fails as soon as the scrubber takes ordinary text (a shorter run,
 * a case-blind match, a word-sized spelling). The figures are in docs/security.md.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { tokenScrub } from '../../src/api/token-scrub.ts';

const CORPUS = new URL('../fixtures/scrub-corpus/descriptions.txt', import.meta.url);
const TOKENS_PER_SHAPE = 40;
const BOUND = 1 / 1000;

/** mulberry32: a small seeded generator, so that the measurement is the same at every run. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** The shapes of tokens services hand out, each made from random bytes. */
const SHAPES: Record<string, (bytes: (n: number) => Buffer, pick: () => number) => string> = {
  'base64url, 32 bytes (43 characters)': (bytes) => bytes(32).toString('base64url'),
  'base64 with padding, 31 bytes (44 characters)': (bytes) => bytes(31).toString('base64'),
  'hex, 20 bytes (40 characters)': (bytes) => bytes(20).toString('hex'),
  'UUID (36 characters)': (bytes) =>
    bytes(16)
      .toString('hex')
      .replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5'),
  'a 4-character prefix and 40 base62 characters': (_bytes, pick) =>
    `esk_${Array.from({ length: 40 }, () => BASE62[Math.floor(pick() * 62)]).join('')}`,
};

describe('false positives of the scrubber on realistic text', () => {
  it(`change fewer than ${BOUND * 1000} in 1,000 lines, for every shape of token`, async () => {
    const lines = (await readFile(CORPUS, 'utf8')).split('\n').filter((line) => line !== '');
    expect(lines.length).toBeGreaterThanOrEqual(400);
    const pick = generator(0x5eed);
    const bytes = (n: number) =>
      Buffer.from(Array.from({ length: n }, () => Math.floor(pick() * 256)));
    const rates: Record<string, number> = {};
    for (const [shape, make] of Object.entries(SHAPES)) {
      let changed = 0;
      for (let i = 0; i < TOKENS_PER_SHAPE; i++) {
        const token = make(bytes, pick);
        const scrub = tokenScrub(() => [token]);
        for (const line of lines) if (scrub(line) !== line) changed++;
      }
      rates[shape] = changed / (lines.length * TOKENS_PER_SHAPE);
    }
    // Only rates are shown, never a token nor the line it matched.
    console.info(`scrubber false positives per line: ${JSON.stringify(rates)}`);
    for (const [shape, rate] of Object.entries(rates)) expect(rate, shape).toBeLessThan(BOUND);
  });

  it('does take a line that holds 6 characters of the token: the measurement can see a hit', () => {
    const token = 'Qx7vK2mZp9Lw4Rt8Yb3N';
    const scrub = tokenScrub(() => [token]);
    expect(scrub(`request id ${token.slice(5, 11)} failed`)).toBe('request id [REDACTED] failed');
  });
});

/**
 * Masking: each sink masks the secrets envsync holds (tokens, webhook and notify secrets) in the
 * text it writes, once, where it leaves; the data envsync compares and records is never rewritten
 * (docs/security.md). Each secret's spellings (as it is, as a JSON string, percent-encoded, base64
 * and base64url at the three byte alignments, hex of either case) are masked whole, and any run of
 * MIN_RUN of their characters.
 *
 * What a text costs does not grow with the secrets (a token per org, a thousand orgs): every
 * window of MIN_RUN characters of every spelling is in one Set. A run holds a whole GRAM (half a
 * run) at a position that is a multiple of GRAM, so only those positions are looked at, through a
 * bit table of the grams' hashes, and the windows around a position whose gram may be a secret's
 * are looked up in the Set.
 */

/** What a secret is replaced by. */
export const MASKED = '[REDACTED]';

/** A run of this many characters of a spelling of a secret, or more, is masked. */
export const MIN_RUN = 12;

/** Secrets shorter than this are never masked (they would mask ordinary words). */
const MIN_SECRET = 4;

/** Half a run: every run holds a whole gram at a position that is a multiple of it. */
const GRAM = MIN_RUN / 2;

/** Masks the secrets in a text. */
export type Mask = (text: string) => string;

/**
 * The base64 of `bytes` when `offset` other bytes precede them, from the first character made of
 * their bits alone, without padding.
 */
function base64At(bytes: Uint8Array, offset: number): string {
  let binary = '\0'.repeat(offset);
  for (const byte of bytes) binary += String.fromCharCode(byte);
  const encoded = btoa(binary);
  return encoded.slice(Math.ceil((offset * 8) / 6)).replace(/=+$/, '');
}

/** Every spelling of `secret` that is masked (see above). */
function spellingsOf(secret: string): string[] {
  const bytes = new TextEncoder().encode(secret);
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
  const base64 = [0, 1, 2].map((offset) => base64At(bytes, offset));
  const forms = [
    secret,
    JSON.stringify(secret).slice(1, -1),
    encodeURIComponent(secret),
    ...base64,
    ...base64.map((text) => text.replace(/\+/g, '-').replace(/\//g, '_')),
    hex,
    hex.toUpperCase(),
  ];
  return [...new Set(forms)].filter((form) => form.length >= MIN_SECRET);
}

/** The hash of the GRAM characters of `text` from `at`. */
function gramHash(text: string, at: number): number {
  let hash = 0;
  for (let i = at; i < at + GRAM; i++) hash = (Math.imul(hash, 31) + text.charCodeAt(i)) | 0;
  return hash;
}

/** A bit per gram hash (a few in a hundred set), for the grams of the `long` spellings. */
function gramFilter(long: readonly string[]): Uint32Array {
  const grams = long.reduce((n, text) => n + text.length - GRAM + 1, 0);
  const bits = new Uint32Array(2 ** Math.max(5, Math.ceil(Math.log2(grams * 32)) - 5));
  for (const text of long) {
    for (let at = 0; at + GRAM <= text.length; at++) {
      const bit = gramHash(text, at) & (bits.length * 32 - 1);
      bits[bit >>> 5] = (bits[bit >>> 5] as number) | (1 << (bit & 31));
    }
  }
  return bits;
}

/** The secrets a command has learnt, and `mask`, which every sink applies to what it writes. */
export class Masker {
  readonly #secrets = new Set<string>();
  /** Every window of MIN_RUN characters of every spelling of MIN_RUN or more. */
  readonly #windows = new Set<string>();
  /** Those spellings, which the gram filter is made of. */
  readonly #long: string[] = [];
  /** The spellings shorter than MIN_RUN, masked whole. */
  readonly #short = new Set<string>();
  /** Made again, at the next text, after a secret is added. */
  #filter: Uint32Array | undefined;

  /** From now on, `secret` is masked in every text. */
  add(secret: string): void {
    if (secret.length < MIN_SECRET || this.#secrets.has(secret)) return;
    this.#secrets.add(secret);
    for (const spelling of spellingsOf(secret)) {
      if (spelling.length < MIN_RUN) {
        this.#short.add(spelling);
        continue;
      }
      this.#long.push(spelling);
      for (let at = 0; at + MIN_RUN <= spelling.length; at++)
        this.#windows.add(spelling.slice(at, at + MIN_RUN));
    }
    this.#filter = undefined;
  }

  /** `text` with every spelling of every secret, and every run of MIN_RUN of one, masked. */
  readonly mask: Mask = (text) => {
    if (this.#secrets.size === 0) return text;
    const ranges: [number, number][] = [];
    for (const spelling of this.#short) {
      for (let at = text.indexOf(spelling); at !== -1; at = text.indexOf(spelling, at + 1))
        ranges.push([at, at + spelling.length]);
    }
    if (this.#long.length > 0) {
      const bits = (this.#filter ??= gramFilter(this.#long));
      const last = bits.length * 32 - 1;
      for (let at = 0; at + GRAM <= text.length; at += GRAM) {
        const bit = gramHash(text, at) & last;
        if (((bits[bit >>> 5] as number) & (1 << (bit & 31))) === 0) continue;
        // Every window that holds this gram starts within GRAM - 1 characters before it.
        for (let start = Math.max(0, at - GRAM + 1); start <= at; start++) {
          if (this.#windows.has(text.slice(start, start + MIN_RUN)))
            ranges.push([start, start + MIN_RUN]);
        }
      }
    }
    return ranges.length === 0 ? text : masked(text, ranges);
  };

  /** Whether `text` holds a secret: it would not leave envsync as it is. */
  holds(text: string): boolean {
    return this.mask(text) !== text;
  }
}

/** `text` with the given ranges (overlapping, touching or not, in any order) as one MASKED each. */
function masked(text: string, ranges: readonly [number, number][]): string {
  const hidden = new Uint8Array(text.length);
  for (const [from, to] of ranges) hidden.fill(1, from, to);
  let out = '';
  let at = 0;
  for (let start = hidden.indexOf(1); start !== -1; start = hidden.indexOf(1, at)) {
    const end = hidden.indexOf(0, start);
    out += `${text.slice(at, start)}${MASKED}`;
    at = end === -1 ? text.length : end;
  }
  return out + text.slice(at);
}

/** A JSON-like value with every string masked, keys included (for a sink that escapes text). */
export function maskDeep<T>(value: T, mask: Mask): T {
  const walk = (item: unknown): unknown => {
    if (typeof item === 'string') return mask(item);
    if (Array.isArray(item)) return item.map(walk);
    if (item === null || typeof item !== 'object') return item;
    // fromEntries: a key such as `__proto__` stays a key.
    return Object.fromEntries(Object.entries(item).map(([key, inner]) => [mask(key), walk(inner)]));
  };
  return walk(value) as T;
}

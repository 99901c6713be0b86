/**
 * Each sink masks the secrets envsync holds in the text it writes, once, where it leaves; the data
 * envsync compares and records is never rewritten (docs/security.md). Every spelling of a secret
 * is masked whole, and any run of MIN_RUN of its characters.
 *
 * The cost of a text does not grow with the number of secrets: every window of MIN_RUN characters
 * of every spelling is in one Set. A run holds a whole GRAM (half a run) at a position that is a
 * multiple of GRAM, so only those positions are looked at, through a bit table of the grams'
 * hashes, and the windows around a gram that may be a secret's are looked up in the Set.
 */

export const MASKED = '[REDACTED]';
export const MIN_RUN = 12;

/** Secrets shorter than this are never masked (they would mask ordinary words). */
const MIN_SECRET = 4;
const GRAM = MIN_RUN / 2;

export type Mask = (text: string) => string;

/** The base64 of `bytes` after `offset` other bytes: the characters of their bits alone. */
function base64At(bytes: Uint8Array, offset: number): string {
  let binary = '\0'.repeat(offset);
  for (const byte of bytes) binary += String.fromCharCode(byte);
  const encoded = btoa(binary);
  return encoded.slice(Math.ceil((offset * 8) / 6)).replace(/=+$/, '');
}

/** As it is, as a JSON string, percent-encoded, base64 and base64url at 3 alignments, hex. */
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

function gramHash(text: string, at: number): number {
  let hash = 0;
  for (let i = at; i < at + GRAM; i++) hash = (Math.imul(hash, 31) + text.charCodeAt(i)) | 0;
  return hash;
}

/** A bit per gram hash (a few in a hundred set) of the `long` spellings. */
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

/** The secrets a command has learnt, and `mask`, which every sink applies. */
export class Masker {
  readonly #secrets = new Set<string>();
  readonly #windows = new Set<string>();
  /** The spellings of MIN_RUN or more, which the gram filter is made of. */
  readonly #long: string[] = [];
  /** The shorter ones, masked whole. */
  readonly #short = new Set<string>();
  /** Made again at the next text after a secret is added. */
  #filter: Uint32Array | undefined;

  /** How many secrets it masks: a text masked before one more was learnt may hold it. */
  get size(): number {
    return this.#secrets.size;
  }

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

  /** Whether `text` would not leave envsync as it is. */
  holds(text: string): boolean {
    return this.mask(text) !== text;
  }
}

/** Ranges that overlap or touch become one MASKED. */
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

/** A JSON-like value with every string masked, keys included. */
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

/**
 * Scrubbing secrets out of text: the one redaction rule every sink shares. Pure: the caller
 * says which secrets; nothing here reads the environment.
 *
 * A secret is found in every form a server, a serializer or a logger may have put it in:
 * as it is, JSON-escaped (`\/`, `\"`, `\\`, `\u002b`, at any nesting depth), percent-encoded
 * (once or twice) and as HTML character references, and any mix of these. A raw fragment of
 * 8 or more characters of a secret (what is left when someone cut it) is scrubbed too.
 */

/** What a secret is replaced by. */
export const REDACTED = '[REDACTED]';

/** Fragments of a secret this long or longer are scrubbed; shorter ones are not secret. */
export const MIN_FRAGMENT = 8;

/** Secrets shorter than this are never scrubbed (they would scrub ordinary words). */
const MIN_SECRET = 4;

/** A regex matching one hex digit in either case. */
function hexDigit(digit: string): string {
  const lower = digit.toLowerCase();
  const upper = digit.toUpperCase();
  return lower === upper ? lower : `[${lower}${upper}]`;
}

function hexPattern(value: number, width: number): string {
  return Array.from(value.toString(16).padStart(width, '0')).map(hexDigit).join('');
}

function escapeRegex(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
}

/** The UTF-8 bytes of one code point. */
function utf8(codePoint: number): number[] {
  if (codePoint < 0x80) return [codePoint];
  if (codePoint < 0x800) return [0xc0 | (codePoint >> 6), 0x80 | (codePoint & 0x3f)];
  if (codePoint < 0x10000)
    return [0xe0 | (codePoint >> 12), 0x80 | ((codePoint >> 6) & 0x3f), 0x80 | (codePoint & 0x3f)];
  return [
    0xf0 | (codePoint >> 18),
    0x80 | ((codePoint >> 12) & 0x3f),
    0x80 | ((codePoint >> 6) & 0x3f),
    0x80 | (codePoint & 0x3f),
  ];
}

/** Every way one character of a secret may be written, as a regex group. */
function characterForms(char: string): string {
  const codePoint = char.codePointAt(0) as number;
  const forms: string[] = [];
  // As it is; JSON and JavaScript escape `"`, `\` and `/` with backslashes (one per nesting).
  forms.push(`${/["\\/]/.test(char) ? '\\\\*' : ''}${escapeRegex(char)}`);
  // \uXXXX (a surrogate pair beyond the BMP), with any number of backslashes.
  const units = codePoint > 0xffff ? [char.charCodeAt(0), char.charCodeAt(1)] : [codePoint];
  forms.push(units.map((unit) => `\\\\+u${hexPattern(unit, 4)}`).join(''));
  // Percent-encoded once or more (%2B, %252B).
  forms.push(
    utf8(codePoint)
      .map((byte) => `%(?:25)*${hexPattern(byte, 2)}`)
      .join(''),
  );
  // HTML character references.
  forms.push(`&#0*${codePoint};`, `&#[xX]0*${hexPattern(codePoint, 1)};`);
  return `(?:${forms.join('|')})`;
}

/** One secret, compiled for scrubbing. */
interface CompiledSecret {
  /** The secret in every encoded form, in full. */
  readonly encoded: RegExp;
  /** Literal texts whose fragments of MIN_FRAGMENT or more are scrubbed. */
  readonly literals: readonly string[];
}

function compileSecret(secret: string): CompiledSecret {
  const pattern = Array.from(secret, characterForms).join('');
  const json = JSON.stringify(secret).slice(1, -1);
  const literals = new Set([secret, json, json.replace(/\//g, '\\/'), encodeURIComponent(secret)]);
  return {
    encoded: new RegExp(pattern, 'g'),
    literals: [...literals].filter((literal) => literal.length >= MIN_FRAGMENT),
  };
}

/**
 * The ranges of `text` that are a run of MIN_FRAGMENT or more characters of `literal`. Any such
 * run holds one of the literal's 4-character blocks at multiples of 4, so only those are
 * searched for (native indexOf), then each hit is stretched as far as text and literal agree.
 */
function fragmentRanges(text: string, literal: string, ranges: Array<[number, number]>): void {
  const block = 4;
  const starts = new Set<number>();
  for (let p = 0; p + block <= literal.length; p += block) starts.add(p);
  starts.add(literal.length - block);
  for (const p of starts) {
    const needle = literal.slice(p, p + block);
    for (let t = text.indexOf(needle); t !== -1; t = text.indexOf(needle, t + 1)) {
      let left = 0;
      while (t - left > 0 && p - left > 0 && text[t - left - 1] === literal[p - left - 1]) left++;
      let right = block;
      while (t + right < text.length && p + right < literal.length) {
        if (text[t + right] !== literal[p + right]) break;
        right++;
      }
      if (left + right >= MIN_FRAGMENT) ranges.push([t - left, t + right]);
    }
  }
}

/** Replaces the given ranges (in any order, overlapping or not) with REDACTED. */
function replaceRanges(text: string, ranges: Array<[number, number]>): string {
  if (ranges.length === 0) return text;
  ranges.sort((a, b) => a[0] - b[0]);
  let out = '';
  let at = 0;
  let open: [number, number] | undefined;
  for (const range of ranges) {
    if (open !== undefined && range[0] <= open[1]) {
      open[1] = Math.max(open[1], range[1]);
      continue;
    }
    if (open !== undefined) {
      out += `${text.slice(at, open[0])}${REDACTED}`;
      at = open[1];
    }
    open = [range[0], range[1]];
  }
  if (open !== undefined) {
    out += `${text.slice(at, open[0])}${REDACTED}`;
    at = open[1];
  }
  return out + text.slice(at);
}

/** Scrubs text of a set of secrets. */
export type Scrub = (text: string) => string;

/** Compiles `secrets` once into a scrubber (compile again when the set changes). */
export function compileScrub(secrets: readonly string[]): Scrub {
  const compiled = [...new Set(secrets)]
    .filter((secret) => secret.length >= MIN_SECRET)
    // Longest first: a secret that contains another is scrubbed whole.
    .sort((a, b) => b.length - a.length)
    .map(compileSecret);
  if (compiled.length === 0) return (text) => text;
  return (text) => {
    let out = text;
    for (const { encoded } of compiled) {
      encoded.lastIndex = 0;
      out = out.replace(encoded, REDACTED);
    }
    const ranges: Array<[number, number]> = [];
    for (const { literals } of compiled)
      for (const literal of literals) fragmentRanges(out, literal, ranges);
    return replaceRanges(out, ranges);
  };
}

/** Scrubs `text` of `secrets` (compiling them each time: for one-off use). */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  return compileScrub(secrets)(text);
}

/**
 * The secrets a command has learnt (the token, a rotated token, ...) and the scrubber for them:
 * the single redaction point every sink calls before it writes.
 */
export class Redactor {
  readonly #secrets: string[] = [];
  #scrub: Scrub = (text) => text;

  /** From now on, `secret` is scrubbed from everything `scrub` sees. */
  add(secret: string): void {
    if (this.#secrets.includes(secret)) return;
    this.#secrets.push(secret);
    this.#scrub = compileScrub(this.#secrets);
  }

  /** The secrets learnt so far. */
  get secrets(): readonly string[] {
    return this.#secrets;
  }

  /** `text` without any secret learnt so far, in any form. */
  readonly scrub: Scrub = (text) => this.#scrub(text);
}

/** RFC 6750's b64token: the characters a Bearer token may be made of. */
export const BEARER_TOKEN_PATTERN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** True when `token` may be sent as `Authorization: Bearer <token>` (RFC 6750, section 2.1). */
export function isBearerToken(token: string): boolean {
  return BEARER_TOKEN_PATTERN.test(token);
}

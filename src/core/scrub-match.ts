/**
 * Finding a secret's spellings in text (redact.ts decides what is replaced): the secret written
 * with any mix of escapes, and any long enough run of any spelling (run-finder.ts).
 */
import { RunFinder } from './run-finder.ts';
import type { SecretForm } from './secret-forms.ts';

/** A stretch of text to replace: [start, end). */
export type Range = [number, number];

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

/** The characters markdown lets a backslash escape. */
const ASCII_PUNCTUATION = /^[!-/:-@[-`{-~]$/;

/** Every way one character may be written, as a regex group. */
function characterForms(char: string): string {
  const codePoint = char.codePointAt(0) as number;
  const forms: string[] = [];
  // As it is, or after backslashes: JSON and JavaScript escape `"`, `\` and `/` (one per
  // nesting), markdown any ASCII punctuation (`\+`, `\_`, `\~`).
  forms.push(`${ASCII_PUNCTUATION.test(char) ? '\\\\*' : ''}${escapeRegex(char)}`);
  // \uXXXX (a surrogate pair beyond the BMP), with any number of backslashes.
  const units = codePoint > 0xffff ? [char.charCodeAt(0), char.charCodeAt(1)] : [codePoint];
  forms.push(units.map((unit) => `\\\\+u${hexPattern(unit, 4)}`).join(''));
  // Percent-encoded once or more (%2B, %252B).
  forms.push(
    utf8(codePoint)
      .map((byte) => `%(?:25)*${hexPattern(byte, 2)}`)
      .join(''),
  );
  // Numeric HTML character references (named ones are decoded first, where a decoder is given).
  forms.push(`&#0*${codePoint};`, `&#[xX]0*${hexPattern(codePoint, 1)};`);
  return `(?:${forms.join('|')})`;
}

function spelled(text: string): string {
  return Array.from(text, characterForms).join('');
}

/** One secret, compiled for finding. */
export interface SecretMatcher {
  /** The spellings also looked for written with escapes, as they are (the secret itself). */
  readonly plain: readonly string[];
  /**
   * The same spellings written with any mix of escapes, in full, as one regex. Built on first
   * use: it is about 2 KB of source for a 40-character secret, and only text holding an escape
   * needs it (escapedRanges).
   */
  escaped(): RegExp;
  /** Every spelling's runs of its minimum length or more. */
  readonly runs: RunFinder;
}

export function secretMatcher(forms: readonly SecretForm[]): SecretMatcher {
  const plain = forms.filter((form) => form.escaped && form.text !== '').map((form) => form.text);
  let escaped: RegExp | undefined;
  return {
    plain,
    escaped: () =>
      (escaped ??= new RegExp(plain.map((text) => `(?:${spelled(text)})`).join('|'), 'g')),
    runs: new RunFinder(forms),
  };
}

/**
 * Every escape the escaped spellings allow starts with one of these: a backslash (JSON,
 * JavaScript, markdown), `%` (percent-encoding) or `&` (an HTML reference).
 */
const ESCAPE_START = /[\\%&]/;

/** Whether `text` may hold an escape (asked once per text, whatever the number of secrets). */
export function mayHoldEscape(text: string): boolean {
  return ESCAPE_START.test(text);
}

/**
 * The ranges of `text` that hold one of `matcher`'s plain spellings, written with any mix of
 * escapes. In text without an escape the regex could only match the spellings as they are, so
 * they are looked up as strings, with the regex's own choice: the leftmost match, the first
 * spelling where two start at the same place, then on after it.
 */
export function escapedRanges(
  text: string,
  matcher: SecretMatcher,
  ranges: Range[],
  hasEscape = mayHoldEscape(text),
): void {
  if (hasEscape) {
    regexRanges(text, matcher.escaped(), ranges);
    return;
  }
  for (let from = 0; ;) {
    let start = -1;
    let length = 0;
    for (const spelling of matcher.plain) {
      const at = text.indexOf(spelling, from);
      if (at !== -1 && (start === -1 || at < start)) [start, length] = [at, spelling.length];
    }
    if (start === -1) return;
    ranges.push([start, start + length]);
    from = start + length;
  }
}

/** The ranges of `text` that `regex` matches. */
function regexRanges(text: string, regex: RegExp, ranges: Range[]): void {
  regex.lastIndex = 0;
  for (let match = regex.exec(text); match !== null; match = regex.exec(text)) {
    if (match[0] === '') {
      regex.lastIndex++;
      continue;
    }
    ranges.push([match.index, match.index + match[0].length]);
  }
}

/** Replaces the given ranges (in any order, overlapping or not) with `by`. */
export function replaceRanges(text: string, ranges: Range[], by: string): string {
  if (ranges.length === 0) return text;
  ranges.sort((a, b) => a[0] - b[0]);
  let out = '';
  let at = 0;
  let open: Range | undefined;
  for (const range of ranges) {
    if (open !== undefined && range[0] <= open[1]) {
      open[1] = Math.max(open[1], range[1]);
      continue;
    }
    if (open !== undefined) {
      out += `${text.slice(at, open[0])}${by}`;
      at = open[1];
    }
    open = [range[0], range[1]];
  }
  if (open !== undefined) {
    out += `${text.slice(at, open[0])}${by}`;
    at = open[1];
  }
  return out + text.slice(at);
}

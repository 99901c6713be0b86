/**
 * Text with its HTML character references decoded, and the way back to where each decoded piece
 * stood: the scrubber looks for a secret in the decoded text and replaces what it finds in the
 * text as it was, so a page spelling the token `&plus;`, `&sol;` or `&period;` is scrubbed and
 * any other `&amp;` stays as the service wrote it. The decoder is given by the caller (a
 * maintained table of every named reference, not one kept here).
 */
import type { Range } from './scrub-match.ts';

/** Decodes HTML character references, named and numeric, in a piece of text. */
export type DecodeHtml = (text: string) => string;

/**
 * Characters some named references decode to that a reader takes for a token's character: the
 * WHATWG table decodes `&tilde;` to U+02DC and `&hyphen;` to U+2010, not to `~` and `-`, yet a
 * page spelling the token with them shows it. Read as the character they stand for, only where
 * they came from a reference (a look-alike written as it is stays a different character).
 */
const READ_AS: Readonly<Record<string, string>> = {
  '\u02dc': '~', // &tilde; &DiacriticalTilde;
  '\u223c': '~', // &sim; &Tilde;
  '\u2010': '-', // &hyphen; &dash;
  '\u2212': '-', // &minus;
  '\u2044': '/', // &frasl;
};

const LOOK_ALIKE = new RegExp(`[${Object.keys(READ_AS).join('')}]`, 'g');

/** A named or numeric reference, with or without its `;` (browsers accept some without). */
const REFERENCE = /&(?:#[xX][0-9a-fA-F]{1,8};?|#[0-9]{1,10};?|[A-Za-z][A-Za-z0-9]{0,31};?)/g;

/** Where one decoded reference stands in each text. */
interface Piece {
  readonly decodedStart: number;
  readonly decodedEnd: number;
  readonly start: number;
  readonly end: number;
}

/** One round of decoding: the decoded text, and where its positions were. */
export interface DecodedView {
  readonly text: string;
  /** The range of the text before this round that holds `range` of the decoded one. */
  readonly toSource: (range: Range) => Range;
}

/** The last piece that starts at or before `at` in the decoded text, by binary search. */
function pieceBefore(pieces: readonly Piece[], at: number): Piece | undefined {
  let low = 0;
  let high = pieces.length - 1;
  let found: Piece | undefined;
  while (low <= high) {
    const mid = (low + high) >> 1;
    const piece = pieces[mid] as Piece;
    if (piece.decodedStart <= at) {
      found = piece;
      low = mid + 1;
    } else high = mid - 1;
  }
  return found;
}

/**
 * `text` with every reference decoded, or undefined when none decodes to anything else. A
 * position inside a decoded reference maps back to the whole reference.
 */
export function decodeReferences(text: string, decode: DecodeHtml): DecodedView | undefined {
  if (!text.includes('&')) return undefined;
  const pieces: Piece[] = [];
  let out = '';
  let at = 0;
  REFERENCE.lastIndex = 0;
  for (let match = REFERENCE.exec(text); match !== null; match = REFERENCE.exec(text)) {
    const decoded = decode(match[0]).replace(LOOK_ALIKE, (char) => READ_AS[char] ?? char);
    if (decoded === match[0]) continue;
    out += text.slice(at, match.index);
    pieces.push({
      decodedStart: out.length,
      decodedEnd: out.length + decoded.length,
      start: match.index,
      end: match.index + match[0].length,
    });
    out += decoded;
    at = match.index + match[0].length;
  }
  if (pieces.length === 0) return undefined;
  out += text.slice(at);
  const position = (index: number, side: 'start' | 'end'): number => {
    // The end of a range is the position after its last character.
    const piece = pieceBefore(pieces, side === 'start' ? index : index - 1);
    if (piece === undefined) return index;
    if (side === 'start' ? index < piece.decodedEnd : index <= piece.decodedEnd)
      return side === 'start' ? piece.start : piece.end;
    return piece.end + (index - piece.decodedEnd);
  };
  return {
    text: out,
    toSource: ([start, end]) => [position(start, 'start'), position(end, 'end')],
  };
}

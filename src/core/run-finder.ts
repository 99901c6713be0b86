/**
 * Finding, in one pass over a text, every run of a secret's spellings long enough to be scrubbed
 * (a spelling the service cut short, or the whole of it). A run of `minRun` characters or more
 * holds the spelling's `GRAM` characters at its start, so every place where some gram of some
 * spelling stands is found, then stretched as far as text and spelling agree.
 *
 * Finding the grams is multi-pattern search (Wu and Manber's shift table): the window of GRAM
 * characters that ends at `i` can only be a gram if its last BLOCK characters end a gram
 * somewhere; where they do not, the window moves on by as much as the table allows. A text
 * without the secret is mostly skipped GRAM - BLOCK + 1 characters at a time, whatever the
 * number of spellings: one pass, not one per spelling.
 */
import type { Range } from './scrub-match.ts';
import { MIN_FRAGMENT } from './secret-forms.ts';

/** The gram: every spelling's minimum run is at least this long. */
const GRAM = MIN_FRAGMENT;
/** The characters the shift table is indexed by. */
const BLOCK = 3;
const TABLE_BITS = 15;
const TABLE_MASK = (1 << TABLE_BITS) - 1;

/** A spelling, and the shortest run of it that is scrubbed. */
export interface RunSpelling {
  readonly text: string;
  readonly minRun: number;
}

/** Where a gram stands: in which spelling, at which offset. */
interface Spot {
  readonly spelling: number;
  readonly at: number;
}

/** The table index of the BLOCK characters that end at `end` (exclusive) of `text`. */
function blockHash(text: string, end: number): number {
  let hash = 0;
  for (let k = end - BLOCK; k < end; k++) hash = Math.imul(hash, 31) + text.charCodeAt(k);
  return (hash ^ (hash >>> TABLE_BITS)) & TABLE_MASK;
}

/** The spellings of one secret, compiled for finding their runs. */
export class RunFinder {
  readonly #spellings: readonly RunSpelling[];
  /** How far the window may move when its last block ends at the table index. */
  readonly #shift = new Uint8Array(1 << TABLE_BITS);
  readonly #grams = new Map<string, Spot[]>();

  constructor(spellings: readonly RunSpelling[]) {
    this.#spellings = spellings.filter(
      ({ text, minRun }) => minRun >= GRAM && text.length >= minRun,
    );
    this.#shift.fill(GRAM - BLOCK + 1);
    this.#spellings.forEach(({ text }, spelling) => {
      for (let at = 0; at + GRAM <= text.length; at++) {
        const gram = text.slice(at, at + GRAM);
        const spots = this.#grams.get(gram) ?? [];
        spots.push({ spelling, at });
        this.#grams.set(gram, spots);
        // The gram's blocks, each ending `GRAM - end` characters before the gram's end.
        for (let end = BLOCK; end <= GRAM; end++) {
          const index = blockHash(gram, end);
          this.#shift[index] = Math.min(this.#shift[index] as number, GRAM - end);
        }
      }
    });
  }

  /** Adds to `ranges` every run of a spelling in `text` of its minimum length or more. */
  find(text: string, ranges: Range[]): void {
    if (this.#spellings.length === 0) return;
    // The run last found in each spelling, so one run is stretched once, not once a gram.
    const last = this.#spellings.map(() => ({ diagonal: Number.NaN, end: -1 }));
    for (let end = GRAM; end <= text.length;) {
      const shift = this.#shift[blockHash(text, end)] as number;
      if (shift > 0) {
        end += shift;
        continue;
      }
      const start = end - GRAM;
      for (const { spelling, at } of this.#grams.get(text.slice(start, end)) ?? []) {
        const seen = last[spelling] as { diagonal: number; end: number };
        if (seen.diagonal === at - start && start < seen.end) continue;
        const { text: literal, minRun } = this.#spellings[spelling] as RunSpelling;
        let from = start;
        while (
          from > 0 &&
          from - start + at > 0 &&
          text[from - 1] === literal[from - 1 - start + at]
        )
          from--;
        let to = end;
        while (to < text.length && to - start + at < literal.length) {
          if (text[to] !== literal[to - start + at]) break;
          to++;
        }
        seen.diagonal = at - start;
        seen.end = to;
        if (to - from >= minRun) ranges.push([from, to]);
      }
      end++;
    }
  }
}

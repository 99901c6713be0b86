import { LineCounter, parseAllDocuments, type Document } from 'yaml';
import {
  isEmptyDocument,
  itemIndex,
  normalizeLineBreaks,
  offsetOf,
  parseOptions,
} from './yaml-document.ts';

/**
 * A place below a path: a value in the list there (`item`), or a key of the mapping there, where
 * the key itself is written (`key`).
 */
export type Place = { readonly item: string } | { readonly key: string };

/** The 1-based line and column of a place in a file, and the path it was found at. */
export type Locator = (
  document: number,
  path: readonly (string | number)[],
  place?: Place,
) => { line: number; column: number; path: readonly (string | number)[] };

/**
 * Returns a function that finds the 1-based line and column of `path` in document `document` of
 * `text` (for messages found after loading, about a place below an environment); with a `place`, of that value
 * in the list at `path`, or of that key of the mapping at `path`. The text is parsed once, on the first call, however many places are asked
 * for: a file that repeats a name thousands of times costs one parse, not one per repeat.
 */
export function textLocator(text: string): Locator {
  let parsed: { docs: Document[]; lineCounter: LineCounter } | null | undefined;
  return (document, path, place) => {
    if (parsed === undefined) {
      const lineCounter = new LineCounter();
      try {
        const all = parseAllDocuments(normalizeLineBreaks(text), parseOptions(lineCounter));
        parsed = { docs: (all as Document[]).filter((d) => !isEmptyDocument(d)), lineCounter };
      } catch {
        parsed = null;
      }
    }
    const doc = parsed?.docs[document];
    if (parsed === null || doc === undefined) return { line: 1, column: 1, path };
    try {
      if (place !== undefined && 'key' in place) {
        const { line, col } = parsed.lineCounter.linePos(offsetOf(doc, path, place.key));
        return { line, column: col, path: [...path, place.key] };
      }
      const index = place === undefined ? undefined : itemIndex(doc, path, place.item);
      const at = index === undefined ? path : [...path, index];
      const { line, col } = parsed.lineCounter.linePos(offsetOf(doc, at));
      return { line, column: col, path: at };
    } catch {
      return { line: 1, column: 1, path };
    }
  };
}

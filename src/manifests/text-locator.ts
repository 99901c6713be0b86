import { LineCounter, parseAllDocuments, type Document } from 'yaml';
import { normalizeLineBreaks } from './line-breaks.ts';
import { isEmptyDocument, itemIndex, offsetOf, parseOptions } from './yaml-document.ts';

/** The 1-based line and column of a place in a file, and the path it was found at. */
export type Locator = (
  document: number,
  path: readonly (string | number)[],
  item?: string,
) => { line: number; column: number; path: readonly (string | number)[] };

/**
 * Returns a function that finds the 1-based line and column of `path` in document `document` of
 * `text` (for messages about environments read by the fast path); with `item`, of that value in
 * the list at `path`. The text is parsed once, on the first call, however many places are asked
 * for: a file that repeats a name thousands of times costs one parse, not one per repeat.
 */
export function textLocator(text: string): Locator {
  let parsed: { docs: Document[]; lineCounter: LineCounter } | null | undefined;
  return (document, path, item) => {
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
      const index = item === undefined ? undefined : itemIndex(doc, path, item);
      const at = index === undefined ? path : [...path, index];
      const { line, col } = parsed.lineCounter.linePos(offsetOf(doc, at));
      return { line, column: col, path: at };
    } catch {
      return { line: 1, column: 1, path };
    }
  };
}

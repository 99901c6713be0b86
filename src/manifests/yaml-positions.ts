import type * as Yaml from 'yaml';
import type { Document } from 'yaml';
import { normalizeLineBreaks } from './line-breaks.ts';
import { isEmptyDocument, parseOptions, yaml, type PathSegment } from './located-yaml.ts';

/** Where a path of a manifest document is in its text: the line and column messages name. */

/** Finds the source offset of the deepest node along `path`; `key` points at a map key instead. */
export function offsetOf(doc: Document, path: readonly PathSegment[], key?: string): number {
  let node: unknown = doc.contents;
  let offset = (doc.contents as { range?: [number, number, number] } | null)?.range?.[0] ?? 0;
  const segments: PathSegment[] = key === undefined ? [...path] : [...path, key];
  for (const [index, segment] of segments.entries()) {
    const isLast = index === segments.length - 1;
    if (yaml().isMap(node)) {
      const pair = node.items.find(
        (item) =>
          yaml().isPair(item) &&
          (yaml().isScalar(item.key) ? item.key.value === segment : item.key === segment),
      );
      if (pair === undefined) break;
      const keyRange = (pair.key as { range?: [number, number, number] } | null)?.range;
      const valueRange = (pair.value as { range?: [number, number, number] } | null)?.range;
      if (key !== undefined && isLast && keyRange) return keyRange[0];
      offset = valueRange?.[0] ?? keyRange?.[0] ?? offset;
      node = pair.value;
    } else if (yaml().isSeq(node) && typeof segment === 'number') {
      const item = node.items[segment] as { range?: [number, number, number] } | undefined;
      if (item === undefined) break;
      offset = item.range?.[0] ?? offset;
      node = item;
    } else break;
  }
  return offset;
}

/** Whether the mapping at `path` has the key `key` written as a string (not a list, say). */
export function hasStringKey(doc: Document, path: readonly PathSegment[], key: string): boolean {
  const node = doc.getIn(path, true);
  return (
    yaml().isMap(node) &&
    node.items.some((item) => yaml().isScalar(item.key) && item.key.value === key)
  );
}

/** The index of the first item of the list at `path` whose value is `item`, if there is one. */
function itemIndex(doc: Document, path: readonly PathSegment[], item: string): number | undefined {
  const node = doc.getIn(path, true);
  if (!yaml().isSeq(node)) return undefined;
  const index = node.items.findIndex((entry) => yaml().isScalar(entry) && entry.value === item);
  return index < 0 ? undefined : index;
}

/**
 * Returns a function that finds the 1-based line and column of `path` in document `document` of
 * `text` (for messages about environments read by the fast path); with `item`, of that value in
 * the list at `path`. The text is parsed once, on the first call, however many places are asked
 * for: a file that repeats a name thousands of times costs one parse, not one per repeat.
 */
export function textLocator(
  text: string,
): (
  document: number,
  path: readonly (string | number)[],
  item?: string,
) => { line: number; column: number; path: readonly (string | number)[] } {
  let parsed: { docs: Document[]; lineCounter: Yaml.LineCounter } | null | undefined;
  return (document, path, item) => {
    if (parsed === undefined) {
      const lineCounter = new (yaml().LineCounter)();
      try {
        const all = yaml().parseAllDocuments(normalizeLineBreaks(text), parseOptions(lineCounter));
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

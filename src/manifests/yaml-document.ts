/** Reading a manifest with the `yaml` package, which keeps every node's place in the text. */
import {
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  parseAllDocuments,
  type Document,
} from 'yaml';
import { parseOptions } from '../runtime/yaml-options.ts';

export type PathSegment = string | number;

type Ranged = { range?: [number, number, number] } | null | undefined;

/** Each lone CR (a YAML line break, read by `yaml` as content) as LF: every offset stays. */
export function normalizeLineBreaks(text: string): string {
  return text.includes('\r') ? text.replace(/\r(?!\n)/g, '\n') : text;
}

/** Empty, comment-only or a bare `---`: declares nothing. */
export function isEmptyDocument(doc: Document): boolean {
  return doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null);
}

/** Finds the source offset of the deepest node along `path`; `key` points at a map key instead. */
export function offsetOf(doc: Document, path: readonly PathSegment[], key?: string): number {
  let node: unknown = doc.contents;
  let offset = (doc.contents as Ranged)?.range?.[0] ?? 0;
  const segments = key === undefined ? path : [...path, key];
  for (const [index, segment] of segments.entries()) {
    if (isMap(node)) {
      const pair = node.items.find(
        (item) =>
          isPair(item) && (isScalar(item.key) ? item.key.value === segment : item.key === segment),
      );
      if (pair === undefined) break;
      const keyRange = (pair.key as Ranged)?.range;
      if (key !== undefined && index === segments.length - 1 && keyRange) return keyRange[0];
      offset = (pair.value as Ranged)?.range?.[0] ?? keyRange?.[0] ?? offset;
      node = pair.value;
    } else if (isSeq(node) && typeof segment === 'number') {
      const item = node.items[segment] as Ranged;
      if (item === undefined) break;
      offset = item?.range?.[0] ?? offset;
      node = item;
    } else break;
  }
  return offset;
}

/** Whether `node` is a mapping with the key `key` written as a string (not a list, say). */
const hasKey = (node: unknown, key: string) =>
  isMap(node) && node.items.some((item) => isScalar(item.key) && item.key.value === key);

export const hasStringKey = (doc: Document, path: readonly PathSegment[], key: string) =>
  hasKey(doc.getIn(path, true), key);

/** A mapping with `org` or `environments`: a manifest's marks. */
const hasMarker = (node: unknown) => hasKey(node, 'org') || hasKey(node, 'environments');

/**
 * Whether a file is some other YAML, skipped: no syntax error, and no document with `org` or
 * `environments` at its root or in a mapping of a list there (a manifest written as a list).
 */
export function isOtherYaml(docs: readonly Document[], strayMarks: readonly number[]): boolean {
  if (strayMarks.length > 0 || docs.some((doc) => doc.errors.length > 0)) return false;
  const written = docs.filter((doc) => !isEmptyDocument(doc));
  return (
    written.length > 0 &&
    !written.some(
      ({ contents }) => hasMarker(contents) || (isSeq(contents) && contents.items.some(hasMarker)),
    )
  );
}

/** A value in the list at a path (`item`), or a key of the mapping there (`key`). */
export type Place = { readonly item: string } | { readonly key: string };

/**
 * Finds places in `text`, parsed once (when a message first names a place in it): the 1-based line
 * and column of `path` in a document, or of `place` below it, and the path found.
 */
export function textLocator(text: string) {
  const lineCounter = new LineCounter();
  let docs: Document[] = [];
  try {
    const all = parseAllDocuments(normalizeLineBreaks(text), parseOptions(lineCounter));
    docs = (all as Document[]).filter((doc) => !isEmptyDocument(doc));
  } catch {
    // Not YAML any more: every place is the file's start.
  }
  type Found = { line: number; column: number; path: readonly PathSegment[] };
  return (document: number, path: readonly PathSegment[], place?: Place): Found => {
    const doc = docs[document];
    if (doc === undefined) return { line: 1, column: 1, path };
    const linePos = (at: readonly PathSegment[], key?: string) => {
      const { line, col } = lineCounter.linePos(offsetOf(doc, at, key));
      return { line, column: col };
    };
    try {
      if (place !== undefined && 'key' in place) {
        return { ...linePos(path, place.key), path: [...path, place.key] };
      }
      const list = place === undefined ? undefined : doc.getIn(path, true);
      const index = isSeq(list)
        ? list.items.findIndex((entry) => isScalar(entry) && entry.value === place?.item)
        : -1;
      const at = index < 0 ? path : [...path, index];
      return { ...linePos(at), path: at };
    } catch {
      return { line: 1, column: 1, path };
    }
  };
}

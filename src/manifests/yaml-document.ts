import {
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  parseAllDocuments,
  type Document,
  type DocumentOptions,
  type ParseOptions,
  type ScalarTag,
  type SchemaOptions,
} from 'yaml';

/**
 * Reading a manifest with the `yaml` package, which keeps every node's place in the text: how a
 * file is parsed, whether it is other YAML, and how a path of a parsed document is found in it.
 */

export type PathSegment = string | number;

const LONE_CR = /\r(?!\n)/g;

/**
 * The text with each lone CR (not followed by LF) replaced by LF. YAML 1.2 has three line breaks:
 * LF, CRLF and a lone CR (spec 5.4); the `yaml` package reads a lone CR as content, so a file of
 * CR line breaks would be one long line. One character for one: every offset, and so every
 * position in a message, stays the same.
 */
export function normalizeLineBreaks(text: string): string {
  return text.includes('\r') ? text.replace(LONE_CR, '\n') : text;
}

const BOOL_TAG = 'tag:yaml.org,2002:bool';

/**
 * How a file is read (for its problems, and again for a place in it): the YAML 1.2 core schema
 * whatever a `%YAML` directive says, with booleans `true` and `false` only (`True` and `TRUE` are
 * strings, as `yes` and `on` are).
 */
export function parseOptions(
  lineCounter: LineCounter,
): ParseOptions & DocumentOptions & SchemaOptions {
  return {
    lineCounter,
    prettyErrors: false,
    schema: 'core',
    customTags: (tags) =>
      tags.map((tag) =>
        typeof tag === 'object' && tag.tag === BOOL_TAG
          ? ({
              ...tag,
              test: /^(?:true|false)$/,
              resolve: (text: string) => text === 'true',
            } as ScalarTag)
          : tag,
      ),
  };
}

/** Empty, comment-only or a bare `---`: declares nothing. */
export function isEmptyDocument(doc: Document): boolean {
  return doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null);
}

/** Finds the source offset of the deepest node along `path`; `key` points at a map key instead. */
export function offsetOf(doc: Document, path: readonly PathSegment[], key?: string): number {
  let node: unknown = doc.contents;
  let offset = (doc.contents as { range?: [number, number, number] } | null)?.range?.[0] ?? 0;
  const segments: PathSegment[] = key === undefined ? [...path] : [...path, key];
  for (const [index, segment] of segments.entries()) {
    const isLast = index === segments.length - 1;
    if (isMap(node)) {
      const pair = node.items.find(
        (item) =>
          isPair(item) && (isScalar(item.key) ? item.key.value === segment : item.key === segment),
      );
      if (pair === undefined) break;
      const keyRange = (pair.key as { range?: [number, number, number] } | null)?.range;
      const valueRange = (pair.value as { range?: [number, number, number] } | null)?.range;
      if (key !== undefined && isLast && keyRange) return keyRange[0];
      offset = valueRange?.[0] ?? keyRange?.[0] ?? offset;
      node = pair.value;
    } else if (isSeq(node) && typeof segment === 'number') {
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
  return isMap(node) && node.items.some((item) => isScalar(item.key) && item.key.value === key);
}

/** The index of the first item of the list at `path` whose value is `item`, if there is one. */
export function itemIndex(
  doc: Document,
  path: readonly PathSegment[],
  item: string,
): number | undefined {
  const node = doc.getIn(path, true);
  if (!isSeq(node)) return undefined;
  const index = node.items.findIndex((entry) => isScalar(entry) && entry.value === item);
  return index < 0 ? undefined : index;
}

/**
 * A document with neither of these keys is not a manifest but some other YAML (a Kubernetes
 * object, a CI file): a file of only such documents is skipped unless --strict. The keys count at
 * the root, and in a mapping of a list at the root: a manifest written as a list by mistake is
 * reported, not skipped.
 */
const MANIFEST_MARKERS: readonly string[] = ['org', 'environments'];

/** Whether a node is a mapping with `org` or `environments`. */
function hasMarker(node: unknown): boolean {
  return (
    isMap(node) &&
    node.items.some(
      (pair) => isScalar(pair.key) && MANIFEST_MARKERS.includes(pair.key.value as string),
    )
  );
}

/**
 * Whether a file is some other YAML, skipped (parse.ts, ParseOptions): every document is read
 * without a syntax error, and none that is not empty has `org` or `environments` at its root or
 * in a mapping of a list there. The schema's other rules (tags, keys) are a manifest's, not asked
 * of other YAML.
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

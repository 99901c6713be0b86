import { isMap, isScalar, isSeq, type Document } from 'yaml';
import { MANIFEST_MARKERS } from './accept.ts';
import { isEmptyDocument } from './yaml-document.ts';

/** Whether a node is a mapping with `org` or `environments` (accept.ts, MANIFEST_MARKERS). */
function hasMarker(node: unknown): boolean {
  return (
    isMap(node) &&
    node.items.some(
      (pair) => isScalar(pair.key) && MANIFEST_MARKERS.includes(pair.key.value as string),
    )
  );
}

/**
 * Whether a file is some other YAML, skipped (parsed.ts, ParseOptions): every document is read
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

import { isMap, isScalar, isSeq, type Document } from 'yaml';
import { isEmptyDocument } from './yaml-document.ts';

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

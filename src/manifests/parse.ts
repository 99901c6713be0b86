import { parseManifestFast, sharedValues, type SharedValues } from './parse-fast.ts';
import type { ParsedManifest, ParseOptions } from './parsed.ts';
import type { Locator } from './text-locator.ts';

/**
 * Parsing one manifest file: two parsers, one authority.
 *
 * The `yaml` package tracks every node's position, which located errors need, but reads about
 * 2 MB/s; js-yaml reads over 20 MB/s and tracks none. Valid files are the common case, so they go
 * through js-yaml (YAML 1.2 core schema, no merge keys, no aliases) and a check that accepts only
 * what the schema accepts (parse-fast.ts); a file js-yaml refuses, or that check does not accept,
 * is read again by `yaml` and the schema (parse-located.ts), whose verdict and positions are the
 * ones reported. Files with aliases always take the `yaml` path, where alias expansion is bounded.
 * So do tags, anchors, directives and the few texts the two readers are known to read differently
 * (parse-fast.ts): on every text the fast path accepts, both give the same result, which
 * test/manifests/differential.test.ts checks on generated texts (docs/manifests.md).
 *
 * The located path and the locator are imported when first needed: a run over valid manifests
 * never loads `yaml` or zod.
 */

/**
 * Parses and validates the text of one manifest file (several YAML documents allowed). Never
 * rejects: every problem comes back located. A file of other YAML comes back marked
 * `notManifest`, unless `options.strict` (parsed.ts, ParseOptions).
 */
export async function parseManifest(
  text: string,
  file: string,
  shared: SharedValues = sharedValues(),
  options: ParseOptions = {},
): Promise<ParsedManifest> {
  return (
    parseManifestFast(text, shared, options) ??
    (await import('./parse-located.ts')).parseManifestLocated(text, file, options)
  );
}

/** Finds positions in a file read by the fast path (see text-locator.ts). */
export async function textLocator(text: string): Promise<Locator> {
  return (await import('./text-locator.ts')).textLocator(text);
}

export { formatProblem } from '../core/validation.ts';
export { parseManifestFast, sharedValues, type SharedValues } from './parse-fast.ts';
export { NOT_A_MANIFEST, skippedLine } from './parsed.ts';
export type {
  ManifestDocument,
  ManifestProblem,
  ParsedManifest,
  ParseOptions,
  SkippedFile,
} from './parsed.ts';

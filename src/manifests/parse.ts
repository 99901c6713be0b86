import { parseManifestFast, sharedValues, type SharedValues } from './parse-fast.ts';
import { createRequire } from 'node:module';
import type * as Located from './parse-located.ts';
import type { ParsedManifest } from './parsed.ts';
import { ownModule } from '../runtime/own-module.ts';

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
 */

/**
 * Parses and validates the text of one manifest file (several YAML documents allowed). Never
 * throws: every problem comes back located.
 */
export function parseManifest(
  text: string,
  file: string,
  shared: SharedValues = sharedValues(),
): ParsedManifest {
  return parseManifestFast(text, shared) ?? located().parseManifestLocated(text, file);
}

/** The located path, loaded on first use: a run over valid manifests never needs it. */
let locatedModule: typeof Located | undefined;
function located(): typeof Located {
  locatedModule ??= createRequire(import.meta.url)(
    ownModule('./parse-located.ts'),
  ) as typeof Located;
  return locatedModule;
}

/** Finds positions in a file read by the fast path (see parse-located.ts); loads that path. */
export function textLocator(text: string): ReturnType<typeof Located.textLocator> {
  return located().textLocator(text);
}

export { formatProblem } from '../core/validation.ts';
export { parseManifestFast, sharedValues, type SharedValues } from './parse-fast.ts';
export type { ManifestDocument, ManifestProblem, ParsedManifest } from './parsed.ts';

import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import type { Document } from 'yaml';

/**
 * The position-tracking reader, the `yaml` package, as the located path uses it: loaded on first
 * use (a run over valid manifests never needs it), and set to read every file the same way.
 */

let yamlPackage: typeof Yaml | undefined;
export function yaml(): typeof Yaml {
  yamlPackage ??= createRequire(import.meta.url)('yaml') as typeof Yaml;
  return yamlPackage;
}

export type PathSegment = string | number;

/**
 * How both parses of a file read it: the YAML 1.2 core schema whatever a `%YAML` directive says,
 * with booleans `true` and `false` only (`True` and `TRUE` are strings, as `yes` and `on` are;
 * the fast path reads them the same way: parse-fast.ts).
 */
export function parseOptions(
  lineCounter: Yaml.LineCounter,
): Yaml.ParseOptions & Yaml.DocumentOptions & Yaml.SchemaOptions {
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
            } as Yaml.ScalarTag)
          : tag,
      ),
  };
}

const BOOL_TAG = 'tag:yaml.org,2002:bool';

/** Empty, comment-only or a bare `---`: declares nothing. */
export function isEmptyDocument(doc: Document): boolean {
  return doc.contents === null || (yaml().isScalar(doc.contents) && doc.contents.value === null);
}

import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import type { Document } from 'yaml';
import { normalizeValue, type FieldSpec, type FieldValue } from '../core/fields.ts';
import { environmentOf } from '../core/compiled.ts';
import type { DesiredEnvironment } from '../core/model.ts';
import { isName } from '../core/names.ts';
import { MANIFEST_KEYS, manifestValue } from './accept.ts';
import { formatPath, issueMessage, unknownKeyMessage } from './messages.ts';
import type { ManifestDocument, ManifestProblem, ParsedManifest } from './parsed.ts';
import type * as Schema from './schema.ts';

/**
 * The slow, position-tracking path: the `yaml` package and the zod schema, the authority on what
 * is valid and where it is not. Both are loaded on first use: a run over valid manifests (the fast
 * path) never needs them (zod alone takes ~45 ms and ~12 MB).
 */

let yamlPackage: typeof Yaml | undefined;
function yaml(): typeof Yaml {
  yamlPackage ??= createRequire(import.meta.url)('yaml') as typeof Yaml;
  return yamlPackage;
}

let schemaModule: typeof Schema | undefined;
function schema(): typeof Schema {
  schemaModule ??= createRequire(import.meta.url)('./schema.ts') as typeof Schema;
  return schemaModule;
}

type PathSegment = string | number;

/** Aliases may expand to at most this many nodes; more is an alias bomb, not a manifest. */
const MAX_ALIAS_COUNT = 100;

/** Syntax errors reported per document before the rest are summed up. */
const MAX_SYNTAX_ERRORS = 5;

/** Finds the source offset of the deepest node along `path`; `key` points at a map key instead. */
function offsetOf(doc: Document, path: readonly PathSegment[], key?: string): number {
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

/** Reads `org` from a document even when other parts of it are broken, to know what to hold. */
function readOrg(doc: Document): string | undefined {
  if (!yaml().isMap(doc.contents)) return undefined;
  const org = doc.get('org');
  return isName(org) ? org : undefined;
}

/** Empty, comment-only or a bare `---`: declares nothing. */
function isEmptyDocument(doc: Document): boolean {
  return doc.contents === null || (yaml().isScalar(doc.contents) && doc.contents.value === null);
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
        const all = yaml().parseAllDocuments(text, { lineCounter, prettyErrors: false });
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

/** A schema output's environment as envsync's model, its sets normalized. */
function readSchemaValue(raw: Record<string, unknown>, spec: FieldSpec): FieldValue | undefined {
  const value = manifestValue(raw, spec);
  return value === undefined ? undefined : normalizeValue(spec, value);
}

/** Parses and validates one file with positions; never throws. */
export function parseManifestLocated(text: string, file: string): ParsedManifest {
  const lineCounter = new (yaml().LineCounter)();
  const problems: ManifestProblem[] = [];
  const documents: ManifestDocument[] = [];
  const at = (offset: number, path: string, message: string, org: string | undefined) => {
    const { line, col } = lineCounter.linePos(offset);
    problems.push({ file, line, column: col, path, message, org });
  };

  let docs: Document[];
  try {
    docs = yaml().parseAllDocuments(text, { lineCounter, prettyErrors: false }) as Document[];
  } catch (error) {
    // The parser is recursive; absurd nesting can exhaust the stack.
    const message = error instanceof Error ? error.message : String(error);
    const what = /call stack/i.test(message)
      ? 'YAML nested too deeply to be a manifest'
      : `cannot be parsed as YAML: ${message}`;
    at(0, '', what, undefined);
    return { documents, problems };
  }

  let document = -1;
  for (const doc of docs) {
    if (!isEmptyDocument(doc)) document++;
    const org = readOrg(doc);
    if (doc.errors.length > 0) {
      const tooDeep = doc.errors.find((error) => /call stack/i.test(error.message));
      if (tooDeep !== undefined) {
        at(tooDeep.pos[0], '', 'YAML nested too deeply to be a manifest', org);
        continue;
      }
      // One broken bracket can cascade: the first few errors say enough.
      for (const error of doc.errors.slice(0, MAX_SYNTAX_ERRORS)) {
        at(error.pos[0], '', `YAML syntax: ${error.message.split('\n')[0]}`, org);
      }
      const more = doc.errors.length - MAX_SYNTAX_ERRORS;
      if (more > 0)
        at(
          doc.errors[MAX_SYNTAX_ERRORS]?.pos[0] ?? 0,
          '',
          `... and ${more} more YAML syntax errors`,
          org,
        );
      continue;
    }
    if (isEmptyDocument(doc)) continue;
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (error) {
      const offset = (doc.contents as { range?: [number, number, number] }).range?.[0] ?? 0;
      if (error instanceof RangeError && /call stack/i.test(error.message)) {
        at(offset, '', 'YAML nested too deeply to be a manifest', org);
        continue;
      }
      at(
        offset,
        '',
        `cannot be read: ${error instanceof Error ? error.message : String(error)}`,
        org,
      );
      continue;
    }
    const result = schema().manifestSchema.safeParse(value);
    if (!result.success) {
      for (const issue of result.error.issues) {
        const path = issue.path as PathSegment[];
        if (issue.code === 'unrecognized_keys') {
          const known = path.length === 0 ? MANIFEST_KEYS.root : MANIFEST_KEYS.environment;
          for (const key of issue.keys) {
            at(
              offsetOf(doc, path, key),
              formatPath([...path, key]),
              unknownKeyMessage(key, known),
              org,
            );
          }
          continue;
        }
        at(offsetOf(doc, path), formatPath(path), issueMessage(issue, value), org);
      }
      continue;
    }
    const manifest = result.data as Schema.Manifest;
    documents.push({
      org: manifest.org,
      environments: manifest.environments.map((env, index): DesiredEnvironment => {
        const { line, col } = lineCounter.linePos(offsetOf(doc, ['environments', index]));
        return {
          ...(environmentOf(env.name, env, readSchemaValue) as DesiredEnvironment),
          source: { file, document, index, line, column: col },
        };
      }),
    });
  }
  problems.sort((a, b) => a.line - b.line || a.column - b.column);
  return { documents, problems };
}

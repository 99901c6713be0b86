import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import type { Document } from 'yaml';
import { normalizeValue, type FieldSpec, type FieldValue } from '../core/fields.ts';
import { environmentOf } from '../core/compiled.ts';
import type { DesiredEnvironment } from '../core/model.ts';
import { isName } from '../core/names.ts';
import { ownModule } from '../runtime/own-module.ts';
import { MANIFEST_KEYS, manifestValue } from './accept.ts';
import { normalizeLineBreaks } from './line-breaks.ts';
import { formatPath, issueMessage, unknownKeyMessage } from './messages.ts';
import type { DeclaredName, ManifestDocument, ManifestProblem, ParsedManifest } from './parsed.ts';
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
  schemaModule ??= createRequire(import.meta.url)(ownModule('./schema.ts')) as typeof Schema;
  return schemaModule;
}

type PathSegment = string | number;

/**
 * How both parses of a file read it: the YAML 1.2 core schema whatever a `%YAML` directive says,
 * with booleans `true` and `false` only (`True` and `TRUE` are strings, as `yes` and `on` are;
 * the fast path reads them the same way: parse-fast.ts).
 */
function parseOptions(
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

/**
 * The tags a manifest may write: the YAML 1.2 core schema's. Any other (`!custom`,
 * `!!js/function`, `!!binary`, `!!timestamp`, `!!set`, a bare `!`) is an error where it stands:
 * `yaml` would read its value as a plain string, and silently dropping a tag hides a mistake.
 */
const CORE_TAGS = new Set(
  ['str', 'seq', 'map', 'bool', 'int', 'float', 'null'].map((name) => `tag:yaml.org,2002:${name}`),
);

/** A tag as it is usually written: `!!str` for the core ones. */
function showTag(tag: string): string {
  return tag.startsWith('tag:yaml.org,2002:') ? `!!${tag.slice(18)}` : tag;
}

/** A number or boolean as YAML wrote it, anything else as JSON. */
function showScalar(value: unknown): string {
  return typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint'
    ? String(value)
    : (JSON.stringify(value) ?? typeof value);
}

/** A problem in one document, found before its value is read. */
interface Finding {
  readonly offset: number;
  /** The source range it covers: the schema's complaints about what lies there say less. */
  readonly covers: readonly [number, number];
  readonly message: string;
}

/** The offset of the end of the line `offset` is on. */
function lineEnd(text: string, offset: number): number {
  const end = text.indexOf('\n', offset);
  return end < 0 ? text.length : end;
}

/**
 * What the schema cannot say well about one document: tags it does not allow, keys that are not
 * strings, merge keys, and values that do not fit their tag (`yaml`'s warnings).
 */
function structuralProblems(doc: Document, text: string): Finding[] {
  const found: Finding[] = [];
  const start = (node: unknown): number =>
    (node as { range?: [number, number, number] } | null)?.range?.[0] ?? 0;
  const range = (node: unknown): [number, number] => {
    const [from = 0, to = from] =
      (node as { range?: [number, number, number] } | null)?.range ?? [];
    return [from, to];
  };
  yaml().visit(doc, {
    Node(_key, node) {
      const tag = (node as { tag?: string }).tag;
      if (tag !== undefined && !CORE_TAGS.has(tag)) {
        const offset = start(node);
        let bang = text.lastIndexOf('!', offset);
        while (bang > 0 && text[bang - 1] === '!') bang--;
        const at = bang >= 0 && !text.slice(bang, offset).includes('\n') ? bang : offset;
        found.push({
          offset: at,
          covers: [at, range(node)[1]],
          message:
            `unknown YAML tag "${showTag(tag)}": a manifest holds plain values (strings, true or ` +
            'false, lists and mappings); remove the tag (quote the value to keep it as text)',
        });
      }
    },
    Pair(_key, pair) {
      const key = pair.key;
      if (yaml().isScalar(key) && key.value === '<<' && key.type === 'PLAIN') {
        found.push({
          offset: start(key),
          covers: range(key),
          message:
            'merge keys (<<) are not supported: write the fields out in each environment (an ' +
            'anchor and alias can share a whole value, such as a list of policies)',
        });
      } else if (key !== null && !yaml().isScalar(key)) {
        found.push({
          offset: start(key),
          covers: range(key),
          message: `a key must be a string, not ${yaml().isSeq(key) ? 'a list' : yaml().isMap(key) ? 'a mapping' : 'an alias'}`,
        });
      } else if (yaml().isScalar(key) && key.value !== null && typeof key.value !== 'string') {
        found.push({
          offset: start(key),
          covers: range(key),
          message: `a key must be a string, not ${typeof key.value} ${showScalar(key.value)} (quote it)`,
        });
      }
    },
  });
  for (const warning of doc.warnings) {
    // A tag reported above is also one `yaml` could not resolve: say it once.
    if (found.some((f) => Math.abs(f.offset - warning.pos[0]) <= 2)) continue;
    const what = warning.message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '') ?? '';
    const tag = /^Unresolved tag: (\S+)/.exec(what)?.[1];
    found.push({
      offset: warning.pos[0],
      // The warning points at the tag; the value it tags follows on the same line.
      covers: [warning.pos[0], lineEnd(text, warning.pos[1])],
      message:
        tag === undefined
          ? `YAML: ${what}`
          : `the value does not fit its tag ${showTag(tag)}: remove the tag or fix the value (!!bool takes true or false only)`,
    });
  }
  return found;
}

/**
 * The offsets of byte order marks past the first character. YAML allows one at the start of each
 * document, but `yaml` reads one there as part of the next key (`"\ufefforg"`), and js-yaml as
 * nothing; one is almost always left by joining files, so it is an error that says so.
 */
function strayByteOrderMarks(text: string): number[] {
  const offsets: number[] = [];
  if (typeof text !== 'string') return offsets; // no text: the parser has said so
  for (let at = text.indexOf('\ufeff', 1); at >= 0; at = text.indexOf('\ufeff', at + 1)) {
    offsets.push(at);
  }
  return offsets;
}

const STRAY_BOM =
  'a byte order mark (U+FEFF) inside the file: only the first character of a file may be one ' +
  '(it is usually left by joining files); remove it';

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

/** Whether the mapping at `path` has the key `key` written as a string (not a list, say). */
function hasStringKey(doc: Document, path: readonly PathSegment[], key: string): boolean {
  const node = doc.getIn(path, true);
  return (
    yaml().isMap(node) &&
    node.items.some((item) => yaml().isScalar(item.key) && item.key.value === key)
  );
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
  const declared: DeclaredName[] = [];
  const at = (offset: number, path: string, message: string, org: string | undefined) => {
    const { line, col } = lineCounter.linePos(offset);
    problems.push({ file, line, column: col, path, message, org });
  };

  const source = normalizeLineBreaks(text);
  let docs: Document[];
  try {
    docs = yaml().parseAllDocuments(source, parseOptions(lineCounter)) as Document[];
  } catch (error) {
    // The parser is recursive; absurd nesting can exhaust the stack.
    const message = error instanceof Error ? error.message : String(error);
    const what = /call stack/i.test(message)
      ? 'YAML nested too deeply to be a manifest'
      : `cannot be parsed as YAML: ${message}`;
    at(0, '', what, undefined);
    return { documents, problems };
  }

  const boms = strayByteOrderMarks(source);
  const inDocument = new Set<number>();
  let document = -1;
  for (const doc of docs) {
    if (!isEmptyDocument(doc)) document++;
    const org = readOrg(doc);
    // A stray byte order mark first: the syntax errors or unknown keys it causes say less.
    const [from, , to] = doc.range ?? [0, 0, source.length];
    const stray = boms.filter((offset) => offset >= from && offset < to);
    if (stray.length > 0) {
      for (const offset of stray) {
        inDocument.add(offset);
        at(offset, '', STRAY_BOM, org);
      }
      continue;
    }
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
    // Structural problems do not stop the schema's check: every problem is reported in one run,
    // except the schema's own complaints about a place a structural problem already covers.
    const findings = structuralProblems(doc, source);
    for (const finding of findings) at(finding.offset, '', finding.message, org);
    const covered = (offset: number) =>
      findings.some(({ covers: [start, end] }) => offset >= start && offset <= end);
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
    if (!result.success || findings.length > 0) {
      for (const issue of result.error?.issues ?? []) {
        const path = issue.path as PathSegment[];
        if (issue.code === 'unrecognized_keys') {
          const known = path.length === 0 ? MANIFEST_KEYS.root : MANIFEST_KEYS.environment;
          for (const key of issue.keys) {
            const offset = offsetOf(doc, path, key);
            // A key that is not a string was named above; toJS made it a string no one wrote.
            if (covered(offset) || !hasStringKey(doc, path, key)) continue;
            at(offset, formatPath([...path, key]), unknownKeyMessage(key, known), org);
          }
          continue;
        }
        const offset = offsetOf(doc, path);
        if (covered(offset)) continue;
        at(offset, formatPath(path), issueMessage(issue, value), org);
      }
      if (org !== undefined)
        declared.push(...declaredNames(doc, value, org, document, lineCounter));
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
  for (const offset of boms) if (!inDocument.has(offset)) at(offset, '', STRAY_BOM, undefined);
  problems.sort((a, b) => a.line - b.line || a.column - b.column);
  return declared.length === 0 ? { documents, problems } : { documents, problems, declared };
}

/**
 * The environment names an invalid document declares, and where: a name declared twice is then
 * reported with the document's other problems, not only once they are fixed.
 */
function declaredNames(
  doc: Document,
  value: unknown,
  org: string,
  document: number,
  lineCounter: Yaml.LineCounter,
): DeclaredName[] {
  const environments = (value as { environments?: unknown } | null)?.environments;
  if (!Array.isArray(environments)) return [];
  return environments.flatMap((env: unknown, index): DeclaredName[] => {
    const name = (env as { name?: unknown } | null)?.name;
    if (!isName(name)) return [];
    const { line, col } = lineCounter.linePos(offsetOf(doc, ['environments', index]));
    return [{ org, name, document, index, line, column: col }];
  });
}

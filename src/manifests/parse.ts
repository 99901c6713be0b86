import { CORE_SCHEMA, loadAll } from 'js-yaml';
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import type { Document } from 'yaml';
import type * as z from 'zod';
import type { DesiredEnvironment } from '../core/model.ts';
import { normalizePolicies } from '../core/plan.ts';
import { ENVIRONMENT_TYPES, NAME_PATTERN } from './names.ts';
import type * as Schema from './schema.ts';
import { suggest } from '../core/suggest.ts';
import { acceptDocument } from './accept.ts';

export { formatProblem } from '../core/validation.ts';

/**
 * The `yaml` package, loaded on first use: only files the fast path refuses (and the rare message
 * that needs a position) read it, and a run over valid manifests saves loading it.
 */
let yamlPackage: typeof Yaml | undefined;
function yaml(): typeof Yaml {
  yamlPackage ??= createRequire(import.meta.url)('yaml') as typeof Yaml;
  return yamlPackage;
}

/** The zod schema, loaded on first use for the same reason (zod takes ~45 ms and ~12 MB). */
let schemaModule: typeof Schema | undefined;
function schema(): typeof Schema {
  schemaModule ??= createRequire(import.meta.url)('./schema.ts') as typeof Schema;
  return schemaModule;
}

/** A problem in a manifest, located to file, line and column (1-based) and YAML path. */
export interface ManifestProblem {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  /** The YAML path, e.g. `environments[0].type`; empty for the document as a whole. */
  readonly path: string;
  readonly message: string;
  /** The organization the problem holds back, when the document names one. */
  readonly org: string | undefined;
}

/** One valid document: an org and its environments. */
export interface ManifestDocument {
  readonly org: string;
  readonly environments: readonly DesiredEnvironment[];
}

export interface ParsedManifest {
  readonly documents: readonly ManifestDocument[];
  readonly problems: readonly ManifestProblem[];
}

type PathSegment = string | number;

/** Aliases may expand to at most this many nodes; more is an alias bomb, not a manifest. */
const MAX_ALIAS_COUNT = 100;

/** Syntax errors reported per document before the rest are summed up. */
const MAX_SYNTAX_ERRORS = 5;

/** Renders a YAML path as `environments[0].type`. */
export function formatPath(path: readonly PathSegment[]): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(segment))
      text += text === '' ? segment : `.${segment}`;
    else text += `[${JSON.stringify(segment)}]`;
  }
  return text;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  const text = JSON.stringify(value) ?? typeof value;
  const shown = text.length > 60 ? `${text.slice(0, 57)}...` : text;
  return typeof value === 'string' ? `the string ${shown}` : `${typeof value} ${shown}`;
}

const EXPECTED: Record<string, string> = {
  string: 'a string',
  boolean: 'true or false',
  array: 'a list',
  object: 'a mapping',
  number: 'a number',
};

function valueAt(root: unknown, path: readonly PathSegment[]): { found: boolean; value: unknown } {
  let current: unknown = root;
  for (const segment of path) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, segment)) {
      return { found: false, value: undefined };
    }
    current = (current as Record<PathSegment, unknown>)[segment];
  }
  return { found: true, value: current };
}

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

function issueMessage(issue: z.core.$ZodIssue, value: unknown): string {
  const here = valueAt(value, issue.path as PathSegment[]);
  switch (issue.code) {
    case 'invalid_type': {
      if (!here.found) return 'is required but missing';
      const expected = EXPECTED[issue.expected] ?? issue.expected;
      if (issue.expected === 'boolean' && typeof here.value === 'string') {
        return `expected true or false, got ${describeValue(here.value)} (YAML 1.2: yes/no/on/off are strings)`;
      }
      if (issue.path.length === 0) {
        return `expected a mapping with "org" and "environments", got ${describeValue(here.value)}`;
      }
      return `expected ${expected}, got ${describeValue(here.value)}`;
    }
    case 'invalid_value': {
      const allowed = issue.values.map(String);
      const hint = typeof here.value === 'string' ? suggest(here.value, allowed) : undefined;
      return (
        `${describeValue(here.value).replace(/^the string /, '')} is not one of ${allowed.join(', ')}` +
        (hint === undefined ? '' : ` (did you mean "${hint}"?)`)
      );
    }
    case 'invalid_format':
      return (
        `${describeValue(here.value).replace(/^the string /, '')} is not a valid name: it must start ` +
        `with a letter or digit and contain only letters, digits, ".", "_" and "-"`
      );
    default:
      return issue.message;
  }
}

const KNOWN_KEYS: Record<'root' | 'environment', readonly string[]> = {
  root: ['org', 'environments'],
  environment: ['name', 'type', 'description', 'include_scaling', 'policies'],
};

/** Reads `org` from a document even when other parts of it are broken, to know what to hold. */
function readOrg(doc: Document): string | undefined {
  if (!yaml().isMap(doc.contents)) return undefined;
  const org = doc.get('org');
  return typeof org === 'string' && NAME_PATTERN.test(org) ? org : undefined;
}

/**
 * Parses and validates the text of one manifest file (several YAML documents allowed). Never
 * throws: every problem comes back located.
 *
 * Two parsers, one authority. The `yaml` package tracks every node's position, which located
 * errors need, but reads about 2 MB/s; js-yaml reads over 20 MB/s and tracks none. Valid files
 * are the common case, so they go through js-yaml (YAML 1.2 core schema, no merge keys, no
 * aliases, the same rules as below) and a check that accepts only what the schema accepts
 * (accept.ts); a file js-yaml refuses, or that check does not accept, is read again by `yaml`
 * and the schema, whose verdict and positions are the ones reported. Files with aliases always
 * take the `yaml` path, where alias expansion is bounded.
 */
export function parseManifest(
  text: string,
  file: string,
  shared: SharedValues = sharedValues(),
): ParsedManifest {
  return parseManifestFast(text, shared) ?? parseManifestLocated(text, file);
}

/**
 * Values the files of one load share instead of each holding a copy: environment names (the
 * same "production" or "staging" in every org) and policy lists.
 */
export interface SharedValues {
  readonly names: Map<string, string>;
  readonly policyLists: Map<string, readonly string[]>;
}

export function sharedValues(): SharedValues {
  return { names: new Map(), policyLists: new Map() };
}

/**
 * A copy of a string that shares no memory with the file text: js-yaml returns slices of its
 * input, which would keep every file's whole text alive for as long as one description lives.
 * V8 copies slices shorter than 13 characters anyway. A JSON round trip is an exact copy (lone
 * surrogates included) and a flat one: about 80 bytes for a 46-character description, where
 * `(" " + text).slice(1)` keeps a 32-byte slice of a new 64-byte string.
 */
function own(text: string): string {
  return text.length < 13 ? text : (JSON.parse(JSON.stringify(text)) as string);
}

/** The one copy of each environment type, whatever text it was read from. */
const CANONICAL_TYPES = new Map<string, string>(ENVIRONMENT_TYPES.map((type) => [type, type]));

/** Shared by every environment without policies (most of them). */
const NO_POLICIES: readonly string[] = Object.freeze([]);

/**
 * The fast path: a result only when every document is valid; undefined means "ask `yaml`".
 *
 * Its environments carry no `source`: an environment's place is its position (document `d` of
 * `documents`, entry `i` of its `environments`), which is all a message needs (see
 * assembleOrgs). Names, policy strings and identical policy lists are shared by the files of a
 * load (`shared`). At 100,000 environments these halve the memory the manifests take.
 */
export function parseManifestFast(
  text: string,
  { names, policyLists }: SharedValues = sharedValues(),
): ParsedManifest | undefined {
  let values: unknown[];
  try {
    values = loadAll(text, { schema: CORE_SCHEMA, maxAliases: 0, maxDepth: 100, json: false });
  } catch {
    return undefined;
  }
  const documents: ManifestDocument[] = [];
  const name = (value: string): string => {
    const known = names.get(value);
    if (known !== undefined) return known;
    const copy = own(value);
    names.set(copy, copy);
    return copy;
  };
  const shared = (policies: readonly string[]): readonly string[] => {
    if (policies.length === 0) return NO_POLICIES;
    const normalized = normalizePolicies(policies);
    // JSON, not a join: a policy may hold any character, and ["a,b"] is not ["a", "b"].
    const key = normalized.length === 1 ? `1${normalized[0]}` : JSON.stringify(normalized);
    const known = policyLists.get(key);
    if (known !== undefined) return known;
    const list = Object.freeze(normalized.map(name));
    policyLists.set(key, list);
    return list;
  };
  const build = (
    envName: string,
    type: string,
    description: string,
    includeScaling: boolean,
    policies: readonly string[],
  ): DesiredEnvironment => ({
    name: name(envName),
    type: CANONICAL_TYPES.get(type) ?? type,
    description: own(description),
    includeScaling,
    policies: shared(policies),
  });
  for (const value of values) {
    if (value === null || value === undefined) continue; // empty or comment-only
    // Checked in place (see accept.ts); anything unusual goes to the schema, via `yaml`.
    const accepted = acceptDocument(value, build);
    if (accepted === undefined) return undefined;
    documents.push({ org: name(accepted.org), environments: accepted.environments });
  }
  return { documents, problems: [] };
}

/**
 * Returns a function that finds the 1-based line and column of `path` in document `document` of
 * `text` (for messages about environments read by the fast path). The text is parsed once, on
 * the first call, however many places are asked for: a file that repeats a name thousands of
 * times costs one parse, not one per repeat.
 */
export function textLocator(
  text: string,
): (document: number, path: readonly (string | number)[]) => { line: number; column: number } {
  let parsed: { docs: Document[]; lineCounter: Yaml.LineCounter } | null | undefined;
  return (document, path) => {
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
    if (parsed === null || doc === undefined) return { line: 1, column: 1 };
    try {
      const { line, col } = parsed.lineCounter.linePos(offsetOf(doc, path));
      return { line, column: col };
    } catch {
      return { line: 1, column: 1 };
    }
  };
}

/** Empty, comment-only or a bare `---`: declares nothing. */
function isEmptyDocument(doc: Document): boolean {
  return doc.contents === null || (yaml().isScalar(doc.contents) && doc.contents.value === null);
}

/** The slow, position-tracking path: the authority on what is valid, and where it is not. */
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
          const known = path.length === 0 ? KNOWN_KEYS.root : KNOWN_KEYS.environment;
          for (const key of issue.keys) {
            const hint = suggest(key, known);
            at(
              offsetOf(doc, path, key),
              formatPath([...path, key]),
              `unknown key "${key}"` +
                (hint === undefined
                  ? ` (allowed: ${known.join(', ')})`
                  : ` (did you mean "${hint}"?)`),
              org,
            );
          }
          continue;
        }
        at(offsetOf(doc, path), formatPath(path), issueMessage(issue, value), org);
      }
      continue;
    }
    documents.push({
      org: result.data.org,
      environments: result.data.environments.map((env, index) => {
        const { line, col } = lineCounter.linePos(offsetOf(doc, ['environments', index]));
        return {
          name: env.name,
          type: env.type,
          description: env.description,
          includeScaling: env.include_scaling,
          policies: normalizePolicies(env.policies),
          source: { file, document, index, line, column: col },
        };
      }),
    });
  }
  problems.sort((a, b) => a.line - b.line || a.column - b.column);
  return { documents, problems };
}

import {
  constructFromEvents,
  CORE_SCHEMA,
  defineScalarTag,
  EVENT_ID,
  NOT_RESOLVED,
  parseEvents,
  type Event,
} from 'js-yaml';
import { desiredOf } from '../core/compiled.generated.ts';
import { FIELD_LIST } from '../core/fields.ts';
import { normalizeSet } from '../core/string-sets.ts';
import { sortedKeys } from '../core/string-maps.ts';
import type { ManifestValueConverters } from '../core/value-kinds.ts';
import type { DesiredEnvironment } from '../core/model.ts';
import { acceptDocument, isOtherYaml } from './accept.ts';
import { normalizeLineBreaks } from './line-breaks.ts';
import type { ManifestDocument, ParsedManifest, ParseOptions } from './parsed.ts';

/**
 * Values the files of one load share instead of each holding a copy: environment names (the
 * same "production" or "staging" in every org) and lists (of policies, say).
 */
export interface SharedValues {
  readonly names: Map<string, string>;
  readonly lists: Map<string, readonly string[]>;
}

export function sharedValues(): SharedValues {
  return { names: new Map(), lists: new Map() };
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

/** The one copy of each allowed value of every 'enum' field, whatever text it was read from. */
const CANONICAL = new Map<string, string>(
  FIELD_LIST.flatMap((spec) => (spec.values ?? []).map((value) => [value, value] as const)),
);

/** Shared by every environment with an empty list (most of them). */
const EMPTY: readonly string[] = Object.freeze([]);

/**
 * The YAML 1.2 core schema with booleans `true` and `false` only: `True` and `TRUE` are strings,
 * as `yes` and `on` are (the located path reads them the same way: parse-located.ts).
 */
const SCHEMA = CORE_SCHEMA.withTags(
  defineScalarTag('tag:yaml.org,2002:bool', {
    implicit: true,
    implicitFirstChars: ['t', 'f'],
    resolve: (text) => (text === 'true' ? true : text === 'false' ? false : NOT_RESOLVED),
    identify: (value) => typeof value === 'boolean',
  }),
);

/**
 * True when a parsed text uses what the fast path leaves to the located path: a tag (the located
 * path allows only the core schema's, and reports the rest where they stand), an anchor or alias
 * (aliases are bounded there), or a directive (`%YAML`, `%TAG`).
 */
function usesLocatedFeatures(events: readonly Event[]): boolean {
  for (const event of events) {
    switch (event.type) {
      case EVENT_ID.ALIAS:
        return true;
      case EVENT_ID.DOCUMENT:
        if (event.directives.length > 0) return true;
        break;
      case EVENT_ID.POP:
        break;
      default:
        if (event.tagStart !== -1 || event.anchorStart !== -1) return true;
    }
  }
  return false;
}

/**
 * Texts the two parsers are known to read differently, which the fast path leaves to the located
 * path (the authority), so that both paths always give the same result. Each was found by the
 * differential test (test/manifests/differential.test.ts):
 * - a tab in the leading whitespace of a line: js-yaml takes `\t# comment` after a block scalar
 *   as a comment line, `yaml` as an error;
 * - a line of only blanks where a block scalar (`|` or `>`) may be: a line with more spaces than
 *   the scalar's indentation is content (one space, say) to js-yaml and nothing to `yaml`;
 * - a line that starts with `%`, the first one after the byte order mark that may start the file
 *   too: js-yaml skips an unknown directive (`%YAM 1.2`, `\ufeff%YAML! 1.2`), `yaml` warns;
 * - an indented `---` or `...`: js-yaml takes ` --- # c` for a document marker, `yaml` for a
 *   scalar (then a syntax error);
 * - a closing `]` or `}` followed at once by more text (`- {a: b}org: x`): js-yaml reads on,
 *   `yaml` reports a syntax error;
 * - a byte order mark past the first character: js-yaml skips one that starts a later document,
 *   the located path reports it (see parse-located.ts);
 * - a byte order mark right before the `- ` of a list that starts the file: js-yaml reads the
 *   list, `yaml` a syntax error (no manifest is a list, but other YAML skipped may be).
 */
function readsDifferently(text: string): boolean {
  // A multiline pattern tries every line; a search for the character it needs is ten times
  // cheaper, and most texts have none (about 60 ms at 100,000 environments).
  return (
    text.includes('\ufeff', 1) ||
    LIST_AFTER_BOM.test(text) ||
    (text.includes('\t') && LEADING_TAB.test(text)) ||
    (text.includes('%') && DIRECTIVE.test(text)) ||
    ((text.includes('---') || text.includes('...')) && INDENTED_MARKER.test(text)) ||
    TEXT_AFTER_FLOW.test(text) ||
    (BLOCK_INDICATOR.test(text) && BLANK_LINE.test(text))
  );
}
const LEADING_TAB = /^[ ]*\t/m;
const LIST_AFTER_BOM = /^\ufeff-[ \t]/;
const DIRECTIVE = /^\ufeff?%/m;
const INDENTED_MARKER = /^[ \t]+(?:---|\.\.\.)(?:[ \t]|$)/m;
const TEXT_AFTER_FLOW = /[\]}][^\s,\]}]/;
const BLOCK_INDICATOR = /[|>]/;
const BLANK_LINE = /^[ \t]+$/m;

/** How the files of one load share names and lists (see SharedValues), and copy text out. */
interface ValueSharer {
  /** The one copy of an environment or org name. */
  readonly name: (value: string) => string;
  /** Each kind of field value shared, or copied out of the file text, its own way. */
  readonly convert: ManifestValueConverters;
}

/** The sharing functions over one load's tables. */
function valueSharer({ names, lists }: SharedValues): ValueSharer {
  const name = (value: string): string => {
    const known = names.get(value);
    if (known !== undefined) return known;
    const copy = own(value);
    names.set(copy, copy);
    return copy;
  };
  const shared = (list: readonly string[]): readonly string[] => {
    if (list.length === 0) return EMPTY;
    const normalized = normalizeSet(list);
    // JSON, not a join: an item may hold any character, and ["a,b"] is not ["a", "b"].
    const key = normalized.length === 1 ? `1${normalized[0]}` : JSON.stringify(normalized);
    const known = lists.get(key);
    if (known !== undefined) return known;
    const frozen = Object.freeze(normalized.map(name));
    lists.set(key, frozen);
    return frozen;
  };
  // Each kind's values shared, or copied out of the file text, their own way.
  const convert: ManifestValueConverters = {
    enum: (value) => CANONICAL.get(value) ?? value,
    text: own,
    flag: (value) => value,
    set: shared,
    // Keys shared like names (a fleet repeats a few), values copied out; keys sorted.
    map: (value) =>
      Object.freeze(
        Object.fromEntries(sortedKeys(value).map((key) => [name(key), own(value[key] as string)])),
      ),
  };
  return { name, convert };
}

/**
 * The fast path: a result only when every document is valid; undefined means "ask the located
 * path".
 *
 * Its environments carry no `source`: an environment's place is its position (document `d` of
 * `documents`, entry `i` of its `environments`), which is all a message needs (see
 * load.ts, assembleOrgs). Names, list items and identical lists are shared by the files of a
 * load (`shared`). At 100,000 environments these halve the memory the manifests take.
 */
export function parseManifestFast(
  text: string,
  shared: SharedValues = sharedValues(),
  options: ParseOptions = {},
): ParsedManifest | undefined {
  let values: unknown[];
  try {
    const source = normalizeLineBreaks(text);
    if (readsDifferently(source)) return undefined;
    const events = parseEvents(source, { maxDepth: 100 });
    if (usesLocatedFeatures(events)) return undefined;
    values = constructFromEvents(events, { source, schema: SCHEMA, maxAliases: 0, json: false });
  } catch {
    return undefined;
  }
  const { name, convert } = valueSharer(shared);
  const build = (
    envName: string,
    raw: Record<string, unknown>,
    renamedFrom: string | undefined,
  ): DesiredEnvironment => {
    const env = desiredOf(name(envName), raw, convert) as DesiredEnvironment;
    // The old name is a name like the others (shared); the few renamed environments get the key.
    return renamedFrom === undefined ? env : { ...env, renamedFrom: name(renamedFrom) };
  };
  const documents: ManifestDocument[] = [];
  for (const value of values) {
    if (value === null || value === undefined) continue; // empty or comment-only
    // Checked in place (see accept.ts); anything unusual goes to the schema, via `yaml`.
    const accepted = acceptDocument(value, build);
    if (accepted === undefined) return options.strict === true ? undefined : otherYaml(values);
    documents.push({ org: name(accepted.org), environments: accepted.environments });
  }
  return { documents, problems: [] };
}

/**
 * A file of other YAML, skipped (parsed.ts, ParseOptions): when every document that is not empty
 * has neither `org` nor `environments`. Else undefined: the located path reports the problems.
 */
function otherYaml(values: readonly unknown[]): ParsedManifest | undefined {
  for (const value of values) {
    if (value !== null && value !== undefined && !isOtherYaml(value)) return undefined;
  }
  return { documents: [], problems: [], notManifest: true };
}

import { CORE_SCHEMA, loadAll } from 'js-yaml';
import { desiredOf, type ManifestValueConverters } from '../core/compiled.ts';
import { FIELD_LIST, normalizeSet } from '../core/fields.ts';
import type { DesiredEnvironment } from '../core/model.ts';
import { acceptDocument } from './accept.ts';
import type { ManifestDocument, ParsedManifest } from './parsed.ts';

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
  { names, lists }: SharedValues = sharedValues(),
): ParsedManifest | undefined {
  let values: unknown[];
  try {
    values = loadAll(text, { schema: CORE_SCHEMA, maxAliases: 0, maxDepth: 100, json: false });
  } catch {
    return undefined;
  }
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
  };
  const build = (envName: string, raw: Record<string, unknown>) =>
    desiredOf(name(envName), raw, convert) as DesiredEnvironment;
  const documents: ManifestDocument[] = [];
  for (const value of values) {
    if (value === null || value === undefined) continue; // empty or comment-only
    // Checked in place (see accept.ts); anything unusual goes to the schema, via `yaml`.
    const accepted = acceptDocument(value, build);
    if (accepted === undefined) return undefined;
    documents.push({ org: name(accepted.org), environments: accepted.environments });
  }
  return { documents, problems: [] };
}

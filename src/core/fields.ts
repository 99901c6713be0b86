import type { ApiDialect } from './dialect.ts';
import { compareNames } from './names.ts';

/**
 * The one registry of an environment's fields. Everything that reads, writes, compares or shows a
 * field is derived from it: the manifest schema and its JSON Schema, the listing's schema, the PUT
 * body, the diff and the verify after apply, the state file and saved plans, export, and the field
 * reference in docs/manifests.md. Adding a field means adding it to `FieldValues` and to `FIELDS`
 * below, then running `npm run generate` (the docs). Sets are kept sorted by code unit and without
 * duplicates, maps with their keys sorted: each is compared, sent and recorded in that form.
 */

/** The types a manifest may declare (docs/api-behaviour.md#environment-types), case-sensitive. */
export const ENVIRONMENT_TYPES: readonly string[] =
  'K8S ECS S3 lambda server docker azure-apps cloud-run logical'.split(' ');

/**
 * Each field's value, read and normalized. An optional key is a field managed only when declared:
 * left out of a manifest, it is never sent, compared, verified or recorded.
 */
export interface FieldValues {
  readonly type: string;
  readonly description: string;
  readonly include_scaling?: boolean;
  readonly policies?: readonly string[];
  readonly require_provenance?: boolean;
  /** The members of a logical environment: names of environments of the same org. */
  readonly included_environments?: readonly string[];
  readonly tags?: StringMap;
}

export type FieldName = keyof FieldValues;
export type FieldValue = NonNullable<FieldValues[FieldName]>;

/**
 * How a field's values are checked, compared and read: `enum` (a string from `values` in a
 * manifest, any string in a listing), `text`, `flag`, `set` (distinct strings, order carries no
 * meaning), `map` (strings to strings, key order carries no meaning).
 */
export type ValueKind = 'enum' | 'text' | 'flag' | 'set' | 'map';

/**
 * How a field's value reaches the service: in the environment PUT's body, or through an operation
 * of its own once the environment exists (docs/api-behaviour.md, "Operations outside the
 * contract"): POST and DELETE of the policies missing and extra, one PATCH of the tags.
 */
export type SentBy = 'put' | 'policies-endpoint' | 'tags-endpoint';

/**
 * What a listing entry that lacks a field, or holds null for it, means: the entry is malformed,
 * the listing does not carry it (compare with the last applied value), or the kind's empty value.
 */
export type ListedAs = 'error' | 'omitted' | 'empty';

/** One field of an environment. */
export interface FieldSpec<K extends FieldName = FieldName> {
  /** Its key in envsync's model, reports, the state file and saved plans. */
  readonly name: K;
  readonly manifestKey: string;
  /** Its key in the PUT body and in listing entries. */
  readonly wireName: string;
  readonly kind: ValueKind;
  /** The values a manifest may give, for kind 'enum'. */
  readonly values?: readonly string[];
  /** What one item is called in messages ("policy"). */
  readonly item?: string;
  /** The items name environments of the same org: declared or listed, and sent first. */
  readonly items?: 'environments';
  /** The field is allowed only on environments of these types. */
  readonly onlyForTypes?: readonly string[];
  /** 'always': every environment gives it; 'when-declared': the service keeps its value else. */
  readonly managed: 'always' | 'when-declared';
  /**
   * The field holds a place of its own in fingerprints (null without a value), else it appears as
   * `[name, value]` only with a value. State files keep fingerprints: a field keeps its form.
   */
  readonly fingerprintSlot?: true;
  readonly listing: { readonly absent: ListedAs; readonly null: ListedAs };
  /** How it is sent in each dialect (the PUT when left out); a dialect missing here cannot. */
  readonly sentBy?: Readonly<Partial<Record<ApiDialect, SentBy>>>;
  /**
   * The service retired the field (the `kosli` dialect): it is never sent, compared or verified
   * there, a manifest that declares it gets a warning (an error with --strict), and
   * `envsync migrate` removes it. `since`: the date, `keeps`: what the service does instead.
   */
  readonly retired?: { readonly since: string; readonly keeps: string };
  /** The field is deprecated by the service: still managed, with a warning naming `instead`. */
  readonly deprecated?: { readonly instead: string };
  /** One line for the JSON Schema (an editor shows it on hover). */
  readonly doc: string;
  /** What the field means in docs/manifests.md, beyond what the generator says from the rest. */
  readonly details: string;
}

type Registry = { readonly [K in FieldName]: FieldSpec<K> };
type Declared = {
  readonly [K in FieldName]: Omit<FieldSpec<K>, 'name' | 'manifestKey' | 'wireName'>;
};

/** The registry, each field's name also its key in manifests, PUT bodies and listings. */
function registry<const R extends Declared>(
  fields: R,
): { readonly [K in FieldName]: R[K] & FieldSpec<K> } {
  const named = Object.entries(fields).map(([name, spec]) => [
    name,
    { name, manifestKey: name, wireName: name, ...spec },
  ]);
  return Object.fromEntries(named) as { readonly [K in FieldName]: R[K] & FieldSpec<K> };
}

/** The fields, by name. The order of `FIELD_LIST` is the order of every output. */
export const FIELDS = registry({
  type: {
    fingerprintSlot: true,
    kind: 'enum',
    values: ENVIRONMENT_TYPES,
    managed: 'always',
    listing: { absent: 'error', null: 'error' },
    doc: 'Type of the environment (case-sensitive).',
    details:
      "What the environment runs on, or `logical` for a group of other environments. `K8S`, `S3` and `logical` are the contract's; the other six are the production service's, and a service that follows the contract refuses them with a 400, which fails that environment alone. A wrong case gets a did-you-mean (`k8s` → `K8S`, `Docker` → `docker`).",
  },
  description: {
    fingerprintSlot: true,
    kind: 'text',
    managed: 'always',
    listing: { absent: 'empty', null: 'empty' },
    doc: 'Description of the environment; may be empty.',
    details: 'What the environment is for, in words; it may be empty.',
  },
  include_scaling: {
    fingerprintSlot: true,
    kind: 'flag',
    managed: 'when-declared',
    // The spec's listing does not carry it; the production service's does, never as null.
    listing: { absent: 'omitted', null: 'omitted' },
    retired: { since: '2026-08-19', keeps: 'it always reports false' },
    doc: 'Whether scaling information is included in snapshots. Managed only when declared: left out, envsync never changes it.',
    details:
      "Whether scaling information is included in the snapshots of the environment. The contract's listing does not show it; the production service's does (and keeps `false` when sent `true` for an existing environment).",
  },
  policies: {
    fingerprintSlot: true,
    kind: 'set',
    item: 'policy',
    managed: 'when-declared',
    // A listing may show each policy as an object with a `name`; null means none attached.
    listing: { absent: 'omitted', null: 'empty' },
    // Production's own clients never send them in the PUT body.
    sentBy: { contract: 'put', kosli: 'policies-endpoint' },
    doc: 'Names of policies attached to the environment; order does not matter; no duplicates. Managed only when declared: left out, envsync never changes them; [] means none.',
    details:
      "The names of the policies attached to the environment; `policies: []` means none. The contract's listing does not show them; the production service's does.",
  },
  require_provenance: {
    kind: 'flag',
    managed: 'when-declared',
    // The production listing does not show it: what envsync sent is kept in the state file.
    listing: { absent: 'omitted', null: 'omitted' },
    deprecated: { instead: 'policies' },
    doc: 'Whether artifacts must have provenance. Managed only when declared: left out, envsync never changes it.',
    details:
      "Whether the artifacts running in the environment must have provenance. The production service's listing never shows it.",
  },
  included_environments: {
    kind: 'set',
    item: 'environment',
    items: 'environments',
    onlyForTypes: ['logical'],
    managed: 'when-declared',
    // null in a listing means no members.
    listing: { absent: 'omitted', null: 'empty' },
    doc: 'The members of a logical environment: names of environments of the same organization; order does not matter; no duplicates. Only on type logical; managed only when declared.',
    details: 'The members of a logical environment.',
  },
  tags: {
    kind: 'map',
    item: 'tag',
    managed: 'when-declared',
    // Production's listing always shows them, as an object; the contract's never does.
    listing: { absent: 'omitted', null: 'empty' },
    sentBy: { kosli: 'tags-endpoint' },
    doc: 'Tags of the environment: a mapping of keys to string values. Declared, the mapping is authoritative: tags not in it are removed; {} removes all. Managed only when declared. Needs the kosli API dialect.',
    details:
      'The tags of the environment, as the production service keeps them. Declared, the mapping is authoritative: a key it does not list is removed from the environment, and `tags: {}` removes every tag.',
  },
});

/** The fields every listing entry carries (a listing may leave out the others). */
export type ListedField = {
  [K in FieldName]: (typeof FIELDS)[K]['listing']['absent'] extends 'omitted' ? never : K;
}[FieldName];

export const FIELD_LIST: readonly FieldSpec[] = Object.values(FIELDS as Registry);

/** The manifest keys of the fields the service retired (`envsync migrate` removes them). */
export const RETIRED_KEYS: readonly string[] = FIELD_LIST.filter((spec) => spec.retired).map(
  (spec) => spec.manifestKey,
);

/** Fields a listing may leave out: what envsync last sent for them is kept in the state file. */
export const RECORDED_FIELDS: readonly FieldSpec[] = FIELD_LIST.filter(
  (spec) => spec.listing.absent === 'omitted',
);

/** Every field's value, or undefined where a field is not declared (or not listed). */
export type FieldSlots = { readonly [K in FieldName]-?: FieldValues[K] | undefined };

/** How a field is sent in a dialect (`FieldSpec.sentBy`): undefined when the dialect cannot. */
export function sendRoute(spec: FieldSpec, dialect: ApiDialect): SentBy | undefined {
  return spec.sentBy === undefined ? 'put' : spec.sentBy[dialect];
}

/** An environment object: its name and every field of the registry, each as `read` gives it. */
export function environmentOf<S>(
  name: string,
  source: S,
  read: (source: S, spec: FieldSpec) => FieldValue | undefined,
): { readonly name: string } & FieldSlots {
  const env: Record<string, unknown> = { name };
  for (const spec of FIELD_LIST) env[spec.name] = read(source, spec);
  return env as { readonly name: string } & FieldSlots;
}

const EMPTY: Readonly<Record<ValueKind, FieldValue>> = {
  enum: '',
  text: '',
  flag: false,
  set: Object.freeze([]),
  map: Object.freeze({}),
};

/** The kind's empty value: what "empty" in a listing rule reads as. */
export function emptyValue<K extends FieldName>(spec: FieldSpec<K>): NonNullable<FieldValues[K]> {
  return EMPTY[spec.kind] as NonNullable<FieldValues[K]>;
}

/** The value in the form envsync compares, sends and records. */
export function normalizeValue(spec: FieldSpec, value: FieldValue): FieldValue {
  if (spec.kind === 'set') return normalizeSet(value as readonly string[]);
  return spec.kind === 'map' ? normalizeMap(value as StringMap) : value;
}

/** Whether two values of a field mean the same (normalized, their JSON is the same). */
export function sameValue(spec: FieldSpec, a: FieldValue, b: FieldValue): boolean {
  return a === b || showValue(normalizeValue(spec, a)) === showValue(normalizeValue(spec, b));
}

/** A value as people read it in plans and messages. */
export function showValue(value: FieldValue | null): string {
  return JSON.stringify(value);
}

/** The indexes of list entries that repeat an earlier entry. */
export function repeatedIndexes(list: readonly unknown[]): number[] {
  return list.flatMap((item, index) => (list.indexOf(item) < index ? [index] : []));
}

/** A listed set as envsync compares it: the names (of a string or a `{name}`), normalized. */
export function normalizeListedSet(value: readonly unknown[]): string[] {
  return normalizeSet(
    value.map((item) => (typeof item === 'string' ? item : (item as { name: string }).name)),
  );
}

/** A set's list sorted and without duplicates: the form envsync compares, sends and records. */
export function normalizeSet(list: readonly string[]): string[] {
  return [...new Set(list)].sort(compareNames);
}

/** A string map's keys and values, read: keys sorted by code unit. */
export type StringMap = Readonly<Record<string, string>>;

/**
 * The longest key and value a manifest may give, in UTF-16 code units: envsync's own limit (the
 * production service publishes none), so a typo of pasted text fails where it is written.
 */
export const MAP_KEY_MAX = 256;
export const MAP_VALUE_MAX = 256;

/** A mapping whose every value is a string (what a listing and envsync's own files hold). */
export function isStringMap(value: unknown): value is StringMap {
  return isPlainObject(value) && Object.values(value).every((item) => typeof item === 'string');
}

/** A copy of a map, keys sorted (fromEntries: a key such as `__proto__` stays a key). */
export function normalizeMap(map: StringMap): StringMap {
  return Object.fromEntries(Object.entries(map).sort(([a], [b]) => compareNames(a, b)));
}

/** What turns map `from` into map `to`: the keys to set (new or changed) and those to remove. */
export function mapChanges(
  from: StringMap,
  to: StringMap,
): { readonly set: StringMap; readonly remove: readonly string[] } {
  const changed = Object.entries(normalizeMap(to)).filter(
    ([key, value]) => !Object.hasOwn(from, key) || from[key] !== value,
  );
  return {
    set: Object.fromEntries(changed),
    remove: Object.keys(normalizeMap(from)).filter((key) => !Object.hasOwn(to, key)),
  };
}

/** A plain mapping, as JSON and YAML parsers build them (not an array, a date, a class's). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** A map with no prototype: a key named like an Object method (an environment's name) is just a key. */
export function emptyMap<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

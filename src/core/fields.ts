import type { ApiDialect } from './dialect.ts';
import { compareNames } from './names.ts';

/**
 * The one registry of an environment's fields, from which everything that reads, writes, compares
 * or shows a field is derived (docs/architecture.md). Adding a field: `FieldValues`, `FIELDS`, then
 * `npm run generate`. Sets are compared, sent and recorded sorted by code unit without duplicates,
 * maps with their keys sorted.
 */

/** The types a manifest may declare (docs/api-behaviour.md#environment-types), case-sensitive. */
export const ENVIRONMENT_TYPES: readonly string[] =
  'K8S ECS S3 lambda server docker azure-apps cloud-run logical'.split(' ');

/** Each field's value; an optional key is managed only when declared (else never sent). */
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

/** `enum`: one of `values` in a manifest, any string in a listing; `set` and `map`: order aside. */
export type ValueKind = 'enum' | 'text' | 'flag' | 'set' | 'map';

/** In the PUT's body; `patch`: a create's PUT, else the PATCH; or an operation of its own. */
export type SentBy = 'put' | 'patch' | 'policies-endpoint' | 'tags-endpoint';

/** A listed field absent or null: malformed, not carried, or the kind's empty value. */
type ListedAs = 'error' | 'omitted' | 'empty';

export interface FieldSpec<K extends FieldName = FieldName> {
  /** Its key in envsync's model, reports, the state file and saved plans. */
  readonly name: K;
  readonly manifestKey: string;
  /** Its key in the PUT body and in listing entries. */
  readonly wireName: string;
  readonly kind: ValueKind;
  readonly values?: readonly string[];
  /** What one item is called in messages ("policy"). */
  readonly item?: string;
  /** The items name environments of the same org: declared or listed, and sent first. */
  readonly items?: 'environments';
  /** The field is allowed only on environments of these types. */
  readonly onlyForTypes?: readonly string[];
  /** 'when-declared': left out of a manifest, the service keeps its value. */
  readonly managed: 'always' | 'when-declared';
  /** Its own place in fingerprints (else `[name, value]`, with a value); state files hold them. */
  readonly fingerprintSlot?: true;
  readonly listing: { readonly absent: ListedAs; readonly null: ListedAs };
  /** How it is sent in each dialect (the PUT when left out); a dialect missing here cannot. */
  readonly sentBy?: Readonly<Partial<Record<ApiDialect, SentBy>>>;
  /**
   * Retired by the service of each dialect `sentBy` leaves out: never sent, compared or recorded
   * there; declared, a warning (an error with --strict), and `envsync migrate` removes it.
   */
  readonly retired?: { readonly since: string; readonly keeps: string };
  /** Deprecated by the `kosli` service: still managed, with a warning naming `instead`. */
  readonly deprecated?: { readonly instead: string };
  /** One line for the JSON Schema. */
  readonly doc: string;
  /** What the field means in docs/manifests.md. */
  readonly details: string;
}

type Declared = {
  readonly [K in FieldName]: Omit<FieldSpec<K>, 'name' | 'manifestKey' | 'wireName'>;
};

/** Each field's name is also its key in manifests, PUT bodies and listings. */
function registry<const R extends Declared>(
  fields: R,
): { readonly [K in FieldName]: R[K] & FieldSpec<K> } {
  const named = Object.entries(fields).map(([name, spec]) => [
    name,
    { name, manifestKey: name, wireName: name, ...spec },
  ]);
  return Object.fromEntries(named) as { readonly [K in FieldName]: R[K] & FieldSpec<K> };
}

/** The order of `FIELD_LIST` is the order of every output. */
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
    // The kosli PUT ignores "" on an existing environment; its PATCH clears it.
    sentBy: { contract: 'put', kosli: 'patch' },
    doc: 'Description of the environment; may be empty.',
    details: 'What the environment is for, in words; it may be empty.',
  },
  include_scaling: {
    fingerprintSlot: true,
    kind: 'flag',
    managed: 'when-declared',
    listing: { absent: 'omitted', null: 'omitted' },
    sentBy: { contract: 'put' },
    retired: { since: '2026-08-19', keeps: 'it always reports false' },
    doc: 'Retired by the production service on 2026-08-19 (kosli dialect: never sent, a warning; envsync migrate removes it). Whether scaling information is included in snapshots; managed only when declared.',
    details:
      "Whether scaling information is included in the snapshots of the environment. The contract's listing does not show it; the production service's does (and keeps `false` when sent `true` for an existing environment).",
  },
  policies: {
    fingerprintSlot: true,
    kind: 'set',
    item: 'policy',
    managed: 'when-declared',
    // A listing may show each policy as an object with a `name`.
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
    listing: { absent: 'omitted', null: 'empty' },
    sentBy: { contract: 'put', kosli: 'patch' },
    doc: 'The members of a logical environment: names of environments of the same organization; order does not matter; no duplicates. Only on type logical; managed only when declared.',
    details: 'The members of a logical environment.',
  },
  tags: {
    kind: 'map',
    item: 'tag',
    managed: 'when-declared',
    listing: { absent: 'omitted', null: 'empty' },
    sentBy: { kosli: 'tags-endpoint' },
    doc: 'Tags of the environment: a mapping of keys to string values. Declared, the mapping is authoritative: tags not in it are removed; {} removes all. Managed only when declared. Needs the kosli API dialect.',
    details:
      'The tags of the environment, as the production service keeps them. Declared, the mapping is authoritative: a key it does not list is removed from the environment, and `tags: {}` removes every tag.',
  },
});

/** The fields every listing entry carries. */
export type ListedField = {
  [K in FieldName]: (typeof FIELDS)[K]['listing']['absent'] extends 'omitted' ? never : K;
}[FieldName];

export const FIELD_LIST: readonly FieldSpec[] = Object.values(FIELDS);

export const RETIRED_KEYS: readonly string[] = FIELD_LIST.filter((spec) => spec.retired).map(
  (spec) => spec.manifestKey,
);

/** Fields a listing may leave out: what envsync last sent for them is kept in the state file. */
export const RECORDED_FIELDS: readonly FieldSpec[] = FIELD_LIST.filter(
  (spec) => spec.listing.absent === 'omitted',
);

/** Every field's value, or undefined where a field is not declared (or not listed). */
export type FieldSlots = { readonly [K in FieldName]-?: FieldValues[K] | undefined };

/** Undefined when the dialect cannot send the field. */
export function sendRoute(spec: FieldSpec, dialect: ApiDialect): SentBy | undefined {
  return spec.sentBy === undefined ? 'put' : spec.sentBy[dialect];
}

/** What a manifest that declares the field is told in `dialect`: retired or deprecated. */
export function fieldWarning(spec: FieldSpec, dialect: ApiDialect): string | undefined {
  const { retired, deprecated } = spec;
  if (retired !== undefined && sendRoute(spec, dialect) === undefined)
    return `retired by the service on ${retired.since}; ${retired.keeps}; remove the key (envsync migrate does)`;
  if (deprecated !== undefined && dialect === 'kosli')
    return `deprecated by the service: use ${deprecated.instead} instead (envsync still manages it)`;
  return undefined;
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

/** What "empty" in a listing rule reads as. */
export function emptyValue<K extends FieldName>(spec: FieldSpec<K>): NonNullable<FieldValues[K]> {
  return EMPTY[spec.kind] as NonNullable<FieldValues[K]>;
}

export function normalizeValue(spec: FieldSpec, value: FieldValue): FieldValue {
  if (spec.kind === 'set') return normalizeSet(value as readonly string[]);
  return spec.kind === 'map' ? normalizeMap(value as StringMap) : value;
}

/** Normalized, their JSON is the same. */
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

/** A listed set's names (a string or a `{name}` each), normalized. */
export function normalizeListedSet(value: readonly unknown[]): string[] {
  return normalizeSet(
    value.map((item) => (typeof item === 'string' ? item : (item as { name: string }).name)),
  );
}

export function normalizeSet(list: readonly string[]): string[] {
  return [...new Set(list)].sort(compareNames);
}

export type StringMap = Readonly<Record<string, string>>;

/** envsync's own limits in UTF-16 units (the service has none), so a bad paste fails early. */
export const MAP_KEY_MAX = 256;
export const MAP_VALUE_MAX = 256;

export function isStringMap(value: unknown): value is StringMap {
  return isPlainObject(value) && Object.values(value).every((item) => typeof item === 'string');
}

/** Keys sorted (fromEntries: a key such as `__proto__` stays a key). */
export function normalizeMap(map: StringMap): StringMap {
  return Object.fromEntries(Object.entries(map).sort(([a], [b]) => compareNames(a, b)));
}

/** The keys to set (new or changed) and to remove that turn `from` into `to`. */
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

/** A mapping as JSON and YAML parsers build them (not an array, a date, a class's). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** No prototype: a key named like an Object method (an environment's name) is just a key. */
export function emptyMap<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

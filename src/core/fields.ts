/**
 * The one registry of an environment's fields. Everything that reads, writes, compares or shows a
 * field is derived from it: the manifest schema and its JSON Schema, the fast path's accept check,
 * the listing reader, the PUT body, the diff and the verify after apply, the state file and saved
 * plans, and export (the hot paths among them compiled from it: compiled.ts). Adding a field means
 * adding it to `FieldValues` and to `FIELDS` below.
 */
import { compareNames, isName } from './names.ts';

/**
 * The environment types a manifest may declare (case-sensitive): the contract's three and the
 * production service's six more (docs/api-behaviour.md#environment-types).
 */
export const ENVIRONMENT_TYPES = [
  'K8S',
  'ECS',
  'S3',
  'lambda',
  'server',
  'docker',
  'azure-apps',
  'cloud-run',
  'logical',
] as const;

/**
 * Each field's value, read and normalized. An optional key is a field managed only when declared:
 * left out of a manifest, it is never sent, compared, verified or recorded.
 */
export interface FieldValues {
  readonly type: string;
  readonly description: string;
  readonly include_scaling: boolean;
  /** Sorted by code unit and without duplicates: order carries no meaning. */
  readonly policies: readonly string[];
  readonly require_provenance?: boolean;
  /** The members of a logical environment: names of environments of the same org, as a set. */
  readonly included_environments?: readonly string[];
}

export type FieldName = keyof FieldValues;
export type FieldValue = NonNullable<FieldValues[FieldName]>;

/** How a field's values are checked, compared and read from a listing. */
export type ValueKind =
  | 'enum' // a string from `values` in a manifest; any string in a listing
  | 'text' // any string
  | 'flag' // true or false
  | 'set'; // a list of distinct strings whose order carries no meaning

/** What a listing entry that lacks a field, or holds null for it, means. */
export type ListedAs =
  | 'error' // the entry is malformed
  | 'omitted' // the listing does not carry the field: compare with the last applied value
  | 'empty'; // the kind's empty value: "", false or []

/** One field of an environment. */
export interface FieldSpec<K extends FieldName = FieldName> {
  /** Its key in envsync's model, reports (`fields`, `unknown`), the state file and saved plans. */
  readonly name: K;
  readonly manifestKey: string;
  /** Its key in the PUT body and in listing entries. */
  readonly wireName: string;
  readonly kind: ValueKind;
  /** The values a manifest may give, for kind 'enum'. */
  readonly values?: readonly string[];
  /** What one item of a 'set' is called in messages ("policy"). */
  readonly item?: string;
  /**
   * For a 'set' whose items are the names of other environments of the same org: each must be a
   * valid name, and an environment the manifests declare or the listing shows; and they are sent
   * before the environment that names them.
   */
  readonly items?: 'environments';
  /** The field is allowed only on environments of these types. */
  readonly onlyForTypes?: readonly string[];
  /** What a manifest that leaves the field out means; none: the field is required. */
  readonly default?: NonNullable<FieldValues[K]>;
  /**
   * 'always': every environment has a value (given or default); it is sent, compared and verified.
   * 'when-declared': only when a manifest declares it; the service keeps what it has otherwise.
   */
  readonly managed: 'always' | 'when-declared';
  readonly listing: { readonly absent: ListedAs; readonly null: ListedAs };
  /** One line for the JSON Schema and the docs. */
  readonly doc: string;
}

type Registry = { readonly [K in FieldName]: FieldSpec<K> };

/** The fields, by name. The order of `FIELD_LIST` is the order of every output. */
export const FIELDS = {
  type: {
    name: 'type',
    manifestKey: 'type',
    wireName: 'type',
    kind: 'enum',
    values: ENVIRONMENT_TYPES,
    managed: 'always',
    listing: { absent: 'error', null: 'error' },
    doc: 'Type of the environment (case-sensitive).',
  },
  description: {
    name: 'description',
    manifestKey: 'description',
    wireName: 'description',
    kind: 'text',
    managed: 'always',
    listing: { absent: 'empty', null: 'empty' },
    doc: 'Description of the environment; may be empty.',
  },
  include_scaling: {
    name: 'include_scaling',
    manifestKey: 'include_scaling',
    wireName: 'include_scaling',
    kind: 'flag',
    default: false,
    managed: 'always',
    // The spec's listing does not carry it; the production service's does.
    listing: { absent: 'omitted', null: 'omitted' },
    doc: 'Whether scaling information is included in snapshots. Default false.',
  },
  policies: {
    name: 'policies',
    manifestKey: 'policies',
    wireName: 'policies',
    kind: 'set',
    item: 'policy',
    default: [],
    managed: 'always',
    // A listing may show each policy as an object with a `name`, and null for "not shown".
    listing: { absent: 'omitted', null: 'omitted' },
    doc: 'Names of policies attached to the environment; order does not matter; no duplicates.',
  },
  require_provenance: {
    name: 'require_provenance',
    manifestKey: 'require_provenance',
    wireName: 'require_provenance',
    kind: 'flag',
    managed: 'when-declared',
    // The production listing does not show it: what envsync sent is kept in the state file.
    listing: { absent: 'omitted', null: 'omitted' },
    doc: 'Whether artifacts must have provenance. Managed only when declared: left out, envsync never sends or compares it.',
  },
  included_environments: {
    name: 'included_environments',
    manifestKey: 'included_environments',
    wireName: 'included_environments',
    kind: 'set',
    item: 'environment',
    items: 'environments',
    onlyForTypes: ['logical'],
    managed: 'when-declared',
    listing: { absent: 'omitted', null: 'omitted' },
    doc: 'The members of a logical environment: names of environments of the same organization; order does not matter; no duplicates. Only on type logical; managed only when declared.',
  },
} as const satisfies Registry;

/** The fields every listing entry carries (a listing may leave out the others). */
export type ListedField = {
  [K in FieldName]: (typeof FIELDS)[K]['listing']['absent'] extends 'omitted' ? never : K;
}[FieldName];

export const FIELD_LIST: readonly FieldSpec[] = Object.values(FIELDS as Registry);

/** Fields a listing may leave out: what envsync last sent for them is kept in the state file. */
export const RECORDED_FIELDS: readonly FieldSpec[] = FIELD_LIST.filter(
  (spec) => spec.listing.absent === 'omitted',
);

/** Every field's value, or undefined where a field is not declared (or not listed). */
export type FieldSlots = { readonly [K in FieldName]-?: FieldValues[K] | undefined };

const NONE: readonly string[] = Object.freeze([]);
const NO_INDEXES: readonly number[] = Object.freeze([]);

/** The indexes of list entries that repeat an earlier entry (a shared empty list when none). */
export function repeatedIndexes(list: readonly unknown[]): readonly number[] {
  // Short lists (the usual case) are checked in place, without a set.
  const seen = list.length > 16 ? new Set<unknown>() : undefined;
  let repeats: number[] | undefined;
  for (let index = 0; index < list.length; index++) {
    const item = list[index];
    const repeated =
      seen === undefined ? index > 0 && list.lastIndexOf(item, index - 1) >= 0 : seen.has(item);
    if (repeated) (repeats ??= []).push(index);
    seen?.add(item);
  }
  return repeats ?? NO_INDEXES;
}

/** A list of strings. */
export function isStringList(value: unknown): value is readonly string[] {
  if (!Array.isArray(value)) return false;
  for (const item of value as unknown[]) if (typeof item !== 'string') return false;
  return true;
}

/** A list of strings in which each is given once. */
export function isDistinctStringList(value: unknown): value is readonly string[] {
  return isStringList(value) && repeatedIndexes(value).length === 0;
}

/** A list of distinct environment names. */
export function isDistinctNameList(value: unknown): value is readonly string[] {
  return isDistinctStringList(value) && value.every(isName);
}

/** An item of a listed set: a string, or an object with a string `name` (as policies may be). */
function isListedItem(item: unknown): boolean {
  return (
    typeof item === 'string' ||
    (typeof item === 'object' &&
      item !== null &&
      !Array.isArray(item) &&
      typeof (item as { name?: unknown }).name === 'string')
  );
}

/** A listed set: a list of strings, or of objects with a string `name`. */
export function isListedSet(value: unknown): value is readonly unknown[] {
  return Array.isArray(value) && (value as unknown[]).every(isListedItem);
}

/** A listed set as envsync compares it: the names, sorted and without duplicates. */
export function normalizeListedSet(value: readonly unknown[]): string[] {
  return normalizeSet(
    value.map((item) => (typeof item === 'string' ? item : (item as { name: string }).name)),
  );
}

/** What each kind of value accepts in a manifest and in a listing, and its empty value. */
const KINDS: Readonly<
  Record<
    ValueKind,
    {
      /** A manifest value the schema takes unchanged. */
      manifest(spec: FieldSpec, value: unknown): boolean;
      /** A listing's non-null value (a listing may hold any type name). */
      listed(value: unknown): boolean;
      readonly empty: FieldValue;
    }
  >
> = {
  enum: {
    manifest: (spec, value) => typeof value === 'string' && (spec.values ?? []).includes(value),
    listed: (value) => typeof value === 'string',
    empty: '',
  },
  text: {
    manifest: (_spec, value) => typeof value === 'string',
    listed: (value) => typeof value === 'string',
    empty: '',
  },
  flag: {
    manifest: (_spec, value) => typeof value === 'boolean',
    listed: (value) => typeof value === 'boolean',
    empty: false,
  },
  set: {
    manifest: (spec, value) =>
      spec.items === 'environments' ? isDistinctNameList(value) : isDistinctStringList(value),
    listed: isListedSet,
    empty: NONE,
  },
};

/**
 * True when a manifest's value is one the schema takes unchanged. (The fast path runs the same
 * checks compiled field by field: core/compiled.ts.)
 */
export function acceptsManifestValue(spec: FieldSpec, value: unknown): boolean {
  return KINDS[spec.kind].manifest(spec, value);
}

/** True when a listing's (non-null) value is of the field's kind. */
export function acceptsListedValue(spec: FieldSpec, value: unknown): boolean {
  return KINDS[spec.kind].listed(value);
}

/**
 * True when a value is of the field's kind as envsync itself writes it (the state file, saved
 * plans): sets are lists of strings.
 */
export function acceptsSavedValue(spec: FieldSpec, value: unknown): boolean {
  return spec.kind === 'set' ? isStringList(value) : KINDS[spec.kind].listed(value);
}

/** The kind's empty value: what "empty" in a listing rule reads as. */
export function emptyValue(spec: FieldSpec): FieldValue {
  return KINDS[spec.kind].empty;
}

function isNormalizedSet(list: readonly string[]): boolean {
  for (let i = 1; i < list.length; i++) {
    if (compareNames(list[i - 1] as string, list[i] as string) >= 0) return false;
  }
  return true;
}

/** A set's list sorted and without duplicates: the form envsync compares, sends and records. */
export function normalizeSet(list: readonly string[]): string[] {
  return isNormalizedSet(list) ? [...list] : [...new Set(list)].sort(compareNames);
}

/** Sets compare as sets; without allocating when both are already normalized (the usual case). */
export function sameSet(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  const x = isNormalizedSet(a) ? a : normalizeSet(a);
  const y = isNormalizedSet(b) ? b : normalizeSet(b);
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

/** The value in the form envsync compares, sends and records. */
export function normalizeValue(spec: FieldSpec, value: FieldValue): FieldValue {
  return spec.kind === 'set' ? normalizeSet(value as readonly string[]) : value;
}

/** Whether two values of a field mean the same. */
export function sameValue(spec: FieldSpec, a: FieldValue, b: FieldValue): boolean {
  return spec.kind === 'set' ? sameSet(a as readonly string[], b as readonly string[]) : a === b;
}

/** A value as people read it in plans and messages. */
export function showValue(value: FieldValue | null): string {
  return JSON.stringify(value);
}

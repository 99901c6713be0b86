/**
 * The one registry of an environment's fields. Everything that reads, writes, compares or shows a
 * field is derived from it: the manifest schema and its JSON Schema, the listing's schema, the PUT
 * body, the diff and the verify after apply, the state file and saved plans, export, and the field
 * reference in docs/manifests.md. Adding a field means adding it to `FieldValues` and to `FIELDS`
 * below, then running `npm run generate` (the docs). The rules of each kind of value are in
 * value-kinds.ts.
 */

import type { ApiDialect } from './dialect.ts';
import type { StringMap } from './string-maps.ts';

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
  readonly include_scaling?: boolean;
  /** Sorted by code unit and without duplicates: order carries no meaning. */
  readonly policies?: readonly string[];
  readonly require_provenance?: boolean;
  /** The members of a logical environment: names of environments of the same org, as a set. */
  readonly included_environments?: readonly string[];
  /** Keys sorted by code unit: order carries no meaning. */
  readonly tags?: StringMap;
}

export type FieldName = keyof FieldValues;
export type FieldValue = NonNullable<FieldValues[FieldName]>;

/** How a field's values are checked, compared and read from a listing. */
export type ValueKind =
  | 'enum' // a string from `values` in a manifest; any string in a listing
  | 'text' // any string
  | 'flag' // true or false
  | 'set' // a list of distinct strings whose order carries no meaning
  | 'map'; // a mapping of strings to strings whose key order carries no meaning

/**
 * How a field's value reaches the service: in the environment PUT's body, or through an
 * operation of its own once the environment exists (docs/api-behaviour.md, "Operations outside
 * the contract"). `policies-endpoint` attaches what is missing (POST) and detaches what is extra
 * (DELETE) of a 'set'; `tags-endpoint` sets new and changed keys and removes extra ones of a
 * 'map', in one PATCH.
 */
export type SentBy = 'put' | 'policies-endpoint' | 'tags-endpoint';

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
  /**
   * 'always': every environment must give it; it is sent, compared and verified.
   * 'when-declared': only when a manifest declares it; the service keeps what it has otherwise.
   */
  readonly managed: 'always' | 'when-declared';
  /**
   * The field holds a place of its own in fingerprints, null when it has no value (else it appears
   * as `[name, value]`, and only with a value). State files keep fingerprints, so a field keeps
   * the form it had when it was added.
   */
  readonly fingerprintSlot?: true;
  readonly listing: { readonly absent: ListedAs; readonly null: ListedAs };
  /**
   * How the field is sent in each API dialect; left out, by the PUT in every dialect. A dialect
   * the field is missing from cannot send it: a manifest that declares it fails its org there.
   * A field not sent by the PUT is never in its body, declared or not.
   */
  readonly sentBy?: Readonly<Partial<Record<ApiDialect, SentBy>>>;
  /** One line for the JSON Schema (an editor shows it on hover). */
  readonly doc: string;
  /**
   * The field's entry in docs/manifests.md (markdown), beside what the generator says from the
   * rest of the entry (required or default, kind, values, types, how it is managed): what it means
   * and whatever a reader needs that the other properties do not say.
   */
  readonly details: string;
}

type Registry = { readonly [K in FieldName]: FieldSpec<K> };

/** The fields, by name. The order of `FIELD_LIST` is the order of every output. */
export const FIELDS = {
  type: {
    name: 'type',
    fingerprintSlot: true,
    manifestKey: 'type',
    wireName: 'type',
    kind: 'enum',
    values: ENVIRONMENT_TYPES,
    managed: 'always',
    listing: { absent: 'error', null: 'error' },
    doc: 'Type of the environment (case-sensitive).',
    details:
      "What the environment runs on, or `logical` for a group of other environments. `K8S`, `S3` and `logical` are the contract's; the other six are the production service's, and a service that follows the contract refuses them with a 400, which fails that environment alone. A wrong case gets a did-you-mean (`k8s` → `K8S`, `Docker` → `docker`).",
  },
  description: {
    name: 'description',
    fingerprintSlot: true,
    manifestKey: 'description',
    wireName: 'description',
    kind: 'text',
    managed: 'always',
    listing: { absent: 'empty', null: 'empty' },
    doc: 'Description of the environment; may be empty.',
    details: 'What the environment is for, in words; it may be empty.',
  },
  include_scaling: {
    name: 'include_scaling',
    fingerprintSlot: true,
    manifestKey: 'include_scaling',
    wireName: 'include_scaling',
    kind: 'flag',
    managed: 'when-declared',
    // The spec's listing does not carry it; the production service's does, never as null.
    listing: { absent: 'omitted', null: 'omitted' },
    doc: 'Whether scaling information is included in snapshots. Managed only when declared: left out, envsync never changes it.',
    details:
      "Whether scaling information is included in the snapshots of the environment. The contract's listing does not show it; the production service's does (and keeps `false` when sent `true` for an existing environment).",
  },
  policies: {
    name: 'policies',
    fingerprintSlot: true,
    manifestKey: 'policies',
    wireName: 'policies',
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
    name: 'require_provenance',
    manifestKey: 'require_provenance',
    wireName: 'require_provenance',
    kind: 'flag',
    managed: 'when-declared',
    // The production listing does not show it: what envsync sent is kept in the state file.
    listing: { absent: 'omitted', null: 'omitted' },
    doc: 'Whether artifacts must have provenance. Managed only when declared: left out, envsync never changes it.',
    details:
      "Whether the artifacts running in the environment must have provenance. The production service's listing never shows it.",
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
    // null in a listing means no members.
    listing: { absent: 'omitted', null: 'empty' },
    doc: 'The members of a logical environment: names of environments of the same organization; order does not matter; no duplicates. Only on type logical; managed only when declared.',
    details: 'The members of a logical environment.',
  },
  tags: {
    name: 'tags',
    manifestKey: 'tags',
    wireName: 'tags',
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

/**
 * How a field is sent in a dialect (see `FieldSpec.sentBy`): undefined when the dialect cannot
 * send it.
 */
export function sendRoute(spec: FieldSpec, dialect: ApiDialect): SentBy | undefined {
  return spec.sentBy === undefined ? 'put' : spec.sentBy[dialect];
}

/**
 * An environment object: its name and every field of the registry, each as `read` gives it
 * (undefined: not declared, or not shown).
 */
export function environmentOf<S>(
  name: string,
  source: S,
  read: (source: S, spec: FieldSpec) => FieldValue | undefined,
): { readonly name: string } & FieldSlots {
  const env: Record<string, unknown> = { name };
  for (const spec of FIELD_LIST) env[spec.name] = read(source, spec);
  return env as { readonly name: string } & FieldSlots;
}

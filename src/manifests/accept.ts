import { checkManifestFields } from '../core/compiled.generated.ts';
import { FIELD_LIST, type FieldSpec, type FieldValue } from '../core/fields.ts';
import { isName } from '../core/names.ts';
import { isPlainObject } from '../core/plain-object.ts';

/**
 * The fast path's check of one parsed manifest document, without the schema.
 *
 * The zod schema in schema.ts is the authority: it decides, it words every message, and the
 * JSON Schema comes from it. But it copies every object it reads, and at 100,000 environments
 * that was a tenth of a no-op plan (cold JIT included). This check only ever says "certainly
 * valid, and here it is": it reads the values in place, and anything it does not recognise,
 * wrong or merely unusual, returns undefined and goes to the schema. Both are built from the
 * field registry (core/fields.ts), and a property test (test/manifests/accept.test.ts) checks that
 * this accepts exactly what the schema accepts, with the same result, among documents that declare
 * neither policy documents nor `prune` (those it always leaves to the schema).
 */

/** True when every own key of `value` is one of `allowed` (strictObject's rule). */
function onlyKeys(value: Record<string, unknown>, allowed: readonly string[]): boolean {
  for (const key of Object.keys(value)) if (!allowed.includes(key)) return false;
  return true;
}

/**
 * The keys a manifest document may hold at its root, and in each environment. `renamed_from` is
 * an environment's key but not a field: it says which environment the entry is, not what it holds.
 */
export const MANIFEST_KEYS = {
  root: ['org', 'prune', 'suspend', 'policies', 'environments'],
  environment: ['name', 'renamed_from', ...FIELD_LIST.map((spec) => spec.manifestKey)],
  policy: ['name', 'description', 'file'],
} as const;

/**
 * A document with neither of these keys is not a manifest but some other YAML (a Kubernetes
 * object, a CI file): a file of only such documents is skipped unless --strict (parsed.ts). The
 * keys count at the root, and in a mapping of a list at the root: a manifest written as a list
 * by mistake is reported, not skipped.
 */
export const MANIFEST_MARKERS: readonly string[] = ['org', 'environments'];

function hasMarker(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    MANIFEST_MARKERS.some((key) => Object.hasOwn(value, key))
  );
}

/** Whether a document, as js-yaml reads it, is some other YAML (see MANIFEST_MARKERS). */
export function isOtherYaml(value: unknown): boolean {
  return !(hasMarker(value) || (Array.isArray(value) && value.some(hasMarker)));
}

/**
 * The root keys the fast path reads itself: `policies` and `prune` go to the schema
 * (acceptDocument).
 */
const FAST_ROOT_KEYS: readonly string[] = ['org', 'environments'];

/**
 * Builds the caller's object from one accepted environment: its name, the mapping it was read
 * from (read each field with `manifestValue`) and its `renamed_from`, when it has one.
 */
export type BuildEnvironment<T> = (
  name: string,
  raw: Record<string, unknown>,
  renamedFrom: string | undefined,
) => T;

/**
 * A field's value in an accepted environment (or in the schema's output): the given one, else its
 * default; undefined for a field managed only when declared that is not.
 */
export function manifestValue(
  raw: Record<string, unknown>,
  spec: FieldSpec,
): FieldValue | undefined {
  return (raw[spec.manifestKey] as FieldValue | undefined) ?? spec.default;
}

/** How many own keys an object has, without building a list of them. */
function keyCount(value: Record<string, unknown>): number {
  let count = 0;
  for (const key in value) if (Object.hasOwn(value, key)) count++;
  return count;
}

function acceptEnvironment<T>(value: unknown, build: BuildEnvironment<T>): T | undefined {
  if (!isPlainObject(value)) return undefined;
  const { name } = value;
  if (!isName(name)) return undefined;
  // Each field given is of its kind and each required one is given (checkManifestFields), and no
  // other key is there (strictObject's rule): the keys it knows plus `name` are all the keys...
  const known = checkManifestFields(value);
  if (known < 0) return undefined;
  const keys = keyCount(value);
  if (keys === known + 1) return build(name, value, undefined);
  // ... or those and `renamed_from`, read only then: most environments have none. Its value is
  // another name (the schema's superRefine refuses the environment's own, with its words).
  if (keys !== known + 2 || !Object.hasOwn(value, 'renamed_from')) return undefined;
  const renamedFrom = value['renamed_from'];
  if (renamedFrom === undefined) return build(name, value, undefined);
  if (!isName(renamedFrom) || renamedFrom === name) return undefined;
  return build(name, value, renamedFrom);
}

/**
 * The document's org and its environments built by `build`, when the schema certainly accepts
 * the document; else undefined (ask the schema).
 */
export function acceptDocument<T>(
  value: unknown,
  build: BuildEnvironment<T>,
): { org: string; environments: T[] } | undefined {
  // A document that declares policy documents or `prune` is left to the schema: such documents
  // are few (one an org), the files policies name are read later, with errors at their places, and
  // the located path records where `prune` is written, for a message that refuses it.
  if (!isPlainObject(value) || !onlyKeys(value, FAST_ROOT_KEYS)) return undefined;
  const { org, environments } = value;
  if (!isName(org) || !Array.isArray(environments)) return undefined;
  const accepted: T[] = [];
  for (const entry of environments as unknown[]) {
    const environment = acceptEnvironment(entry, build);
    if (environment === undefined) return undefined;
    accepted.push(environment);
  }
  return { org, environments: accepted };
}

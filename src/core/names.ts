/**
 * Names of organizations and environments, as envsync reads them in manifests and puts them in
 * request paths and bodies. The emulator keeps its own copy of the service's rule on purpose (an
 * independent reading of the contract), so a misreading cannot hide itself on both sides.
 */

/**
 * Environment and organization names, as the production service accepts them today: a letter or
 * number first, then letters, numbers, `.`, `-` and `_` (its April 2026 schema also allowed `~`,
 * its client and service no longer do: docs/api-behaviour.md#environment-names).
 */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** What NAME_PATTERN means, for messages: the service's own words. */
export const NAME_RULE =
  'it must start with a letter or number, and only contain letters, numbers, ".", "-" and "_"';

/** True for a valid org or environment name. */
export function isName(value: unknown): value is string {
  return typeof value === 'string' && NAME_PATTERN.test(value);
}

/** Compares two strings by code unit, so the order never depends on the locale. */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `list` in name order: itself when already sorted (the usual case), else a sorted copy. */
export function sortedByName<T extends { readonly name: string }>(
  list: readonly T[],
): readonly T[] {
  for (let i = 1; i < list.length; i++) {
    if (compareNames((list[i - 1] as T).name, (list[i] as T).name) > 0) {
      return [...list].sort((a, b) => compareNames(a.name, b.name));
    }
  }
  return list;
}

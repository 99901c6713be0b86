/**
 * Names of organizations and environments. The emulator keeps its own copy of the rule on purpose,
 * so a misreading of the contract cannot hide itself on both sides.
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

/** A copy of `list` in name order. */
export function sortedByName<T extends { readonly name: string }>(list: readonly T[]): T[] {
  return [...list].sort((a, b) => compareNames(a.name, b.name));
}

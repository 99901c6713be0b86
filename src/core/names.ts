/**
 * Org and environment names as the production service accepts them (its April 2026 schema also
 * allowed `~`: docs/api-behaviour.md#environment-names). The emulator keeps its own copy of the
 * rule, so one misreading cannot hide itself on both sides.
 */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** What NAME_PATTERN means, in the service's own words. */
export const NAME_RULE =
  'it must start with a letter or number, and only contain letters, numbers, ".", "-" and "_"';

export function isName(value: unknown): value is string {
  return typeof value === 'string' && NAME_PATTERN.test(value);
}

/** Compares two strings by code unit, so the order never depends on the locale. */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function sortedByName<T extends { readonly name: string }>(list: readonly T[]): T[] {
  return [...list].sort((a, b) => compareNames(a.name, b.name));
}

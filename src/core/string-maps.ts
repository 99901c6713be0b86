/**
 * Mappings of strings to strings: what the 'map' kind of field holds (an environment's tags).
 * Key order carries no meaning, so envsync keeps each map with its keys sorted by code unit, and
 * compares, sends and records it in that form.
 */
import { compareNames } from './names.ts';
import { isPlainObject } from './plain-object.ts';

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
  if (!isPlainObject(value)) return false;
  for (const key in value) {
    if (Object.hasOwn(value, key) && typeof value[key] !== 'string') return false;
  }
  return true;
}

/** A map's own keys, sorted by code unit. */
export function sortedKeys(map: StringMap): string[] {
  return Object.keys(map).sort(compareNames);
}

/**
 * A copy of a map with its keys in sorted order: the form envsync compares, sends and records.
 * Built with `Object.fromEntries`, so a key such as `__proto__` stays an ordinary key.
 */
export function normalizeMap(map: StringMap): StringMap {
  return Object.fromEntries(sortedKeys(map).map((key) => [key, map[key] as string]));
}

/** Whether two maps hold the same keys with the same values, whatever their order. */
export function sameMap(a: StringMap, b: StringMap): boolean {
  if (a === b) return true;
  let count = 0;
  for (const key in a) {
    if (!Object.hasOwn(a, key)) continue;
    count++;
    if (!Object.hasOwn(b, key) || a[key] !== b[key]) return false;
  }
  for (const key in b) if (Object.hasOwn(b, key)) count--;
  return count === 0;
}

/** What turns map `from` into map `to`: the keys to set (new or changed) and those to remove. */
export function mapChanges(
  from: StringMap,
  to: StringMap,
): { readonly set: StringMap; readonly remove: readonly string[] } {
  const set = Object.fromEntries(
    sortedKeys(to)
      .filter((key) => !Object.hasOwn(from, key) || from[key] !== to[key])
      .map((key) => [key, to[key] as string]),
  );
  const remove = sortedKeys(from).filter((key) => !Object.hasOwn(to, key));
  return { set, remove };
}

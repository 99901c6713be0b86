/**
 * Lists of strings read as sets: what the 'set' kind of field holds (policies, the members of a
 * logical environment). Order carries no meaning, so envsync keeps each set sorted by code unit
 * and without duplicates, and compares, sends and records it in that form.
 */
import { compareNames } from './names.ts';

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

/** A listed set as envsync compares it: the names, sorted and without duplicates. */
export function normalizeListedSet(value: readonly unknown[]): string[] {
  return normalizeSet(
    value.map((item) => (typeof item === 'string' ? item : (item as { name: string }).name)),
  );
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

/**
 * The rules of each kind of field value (`ValueKind` in fields.ts): what envsync's own files may
 * hold, the kind's empty value, how two values compare and how one is shown. What a manifest and
 * a listing may hold, their schemas say (manifests/schema.ts, api/listing.ts).
 */
import type { FieldName, FieldSpec, FieldValue, FieldValues, ValueKind } from './fields.ts';
import { isStringList, normalizeSet, sameSet } from './string-sets.ts';
import { isStringMap, normalizeMap, sameMap, type StringMap } from './string-maps.ts';

/**
 * True when a value is of the field's kind as envsync itself writes it (the state file, saved
 * plans): sets are lists of strings.
 */
export function acceptsSavedValue(spec: FieldSpec, value: unknown): boolean {
  switch (spec.kind) {
    case 'flag':
      return typeof value === 'boolean';
    case 'set':
      return isStringList(value);
    case 'map':
      return isStringMap(value);
    default:
      return typeof value === 'string';
  }
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

/** Whether two values of a field mean the same. */
export function sameValue(spec: FieldSpec, a: FieldValue, b: FieldValue): boolean {
  if (spec.kind === 'set') return sameSet(a as readonly string[], b as readonly string[]);
  return spec.kind === 'map' ? sameMap(a as StringMap, b as StringMap) : a === b;
}

/** A value as people read it in plans and messages. */
export function showValue(value: FieldValue | null): string {
  return JSON.stringify(value);
}

/**
 * The rules of each kind of field value (`ValueKind` in fields.ts): what a manifest, a listing and
 * envsync's own files may hold, the kind's empty value, how two values compare and how one is
 * shown. The generated hot paths (compiled.generated.ts) call the very checks that
 * `manifestCheck` and `listedCheck` choose here, so each rule is written once.
 */
import type { FieldName, FieldSpec, FieldValue, FieldValues, ValueKind } from './fields.ts';
import {
  isDistinctNameList,
  isDistinctStringList,
  isListedSet,
  isStringList,
  normalizeSet,
  sameSet,
} from './string-sets.ts';
import {
  isLimitedStringMap,
  isStringMap,
  normalizeMap,
  sameMap,
  type StringMap,
} from './string-maps.ts';

/** An 'enum' value in a manifest: one of the field's values (see `enumValues`). */
export function isOneOf(value: unknown, values: ReadonlySet<string>): value is string {
  return typeof value === 'string' && values.has(value);
}

/** A 'text' value, or an 'enum' one in a listing (which may hold types envsync does not manage). */
export function isText(value: unknown): value is string {
  return typeof value === 'string';
}

/** A 'flag' value. */
export function isFlag(value: unknown): value is boolean {
  return typeof value === 'boolean';
}

/** The check of one value; the manifest check of an 'enum' field also takes its values. */
export type ValueCheck = (value: unknown, values: ReadonlySet<string>) => boolean;

/** The check a manifest's value of the field passes when the schema takes it unchanged. */
export function manifestCheck(spec: FieldSpec): ValueCheck {
  switch (spec.kind) {
    case 'enum':
      return isOneOf;
    case 'text':
      return isText;
    case 'flag':
      return isFlag;
    case 'map':
      return isLimitedStringMap;
    default: // 'set'
      return spec.items === 'environments' ? isDistinctNameList : isDistinctStringList;
  }
}

/** The check of a listing's non-null value of the field. */
export function listedCheck(spec: FieldSpec): (value: unknown) => boolean {
  switch (spec.kind) {
    case 'flag':
      return isFlag;
    case 'set':
      return isListedSet;
    case 'map':
      return isStringMap;
    default:
      return isText;
  }
}

const valueSets = new WeakMap<FieldSpec, ReadonlySet<string>>();

/** An 'enum' field's values, as the set its manifest check looks them up in. */
export function enumValues(spec: FieldSpec): ReadonlySet<string> {
  let values = valueSets.get(spec);
  if (values === undefined) valueSets.set(spec, (values = new Set(spec.values ?? [])));
  return values;
}

/** True when a manifest's value is one the schema takes unchanged. */
export function acceptsManifestValue(spec: FieldSpec, value: unknown): boolean {
  return manifestCheck(spec)(value, enumValues(spec));
}

/** True when a listing's (non-null) value is of the field's kind. */
export function acceptsListedValue(spec: FieldSpec, value: unknown): boolean {
  return listedCheck(spec)(value);
}

/**
 * True when a value is of the field's kind as envsync itself writes it (the state file, saved
 * plans): sets are lists of strings.
 */
export function acceptsSavedValue(spec: FieldSpec, value: unknown): boolean {
  return spec.kind === 'set' ? isStringList(value) : listedCheck(spec)(value);
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

/** How a manifest's values of each kind are turned into envsync's (shared, copied out). */
export interface ManifestValueConverters {
  enum(value: string): string;
  text(value: string): string;
  flag(value: boolean): boolean;
  set(value: readonly string[]): readonly string[];
  map(value: StringMap): StringMap;
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

/**
 * Field by field comparison of what the manifests want with what the service is known to hold,
 * for every field of the registry (fields.ts).
 */
import {
  FIELD_LIST,
  type FieldName,
  type FieldSlots,
  type FieldSpec,
  type FieldValue,
} from './fields.ts';
import { isUnchanged } from './compiled.generated.ts';
import { normalizeValue, sameValue } from './value-kinds.ts';
import type {
  AppliedRecord,
  DesiredEnvironment,
  FieldDiffs,
  ObservedEnvironment,
} from './model.ts';

/** The differences of one environment, and the fields that could not be compared. */
export interface EnvironmentDiff {
  readonly fields: FieldDiffs;
  readonly unknownFields: readonly FieldName[];
}

/**
 * What is known of a field remotely: the listing's value when it carries the field, else what
 * envsync last applied (the state file's record).
 */
function remoteValue(
  spec: FieldSpec,
  observed: ObservedEnvironment,
  applied: AppliedRecord | undefined,
): FieldValue | undefined {
  return observed[spec.name] ?? applied?.[spec.name];
}

/**
 * Compares one desired environment with what is known of it remotely. Undefined when every field
 * it manages is known and equal.
 */
export function diffEnvironment(
  desired: DesiredEnvironment,
  observed: ObservedEnvironment,
  applied: AppliedRecord | undefined,
): EnvironmentDiff | undefined {
  if (isUnchanged(desired, observed, applied)) return undefined;
  let fields: Record<string, { from: FieldValue; to: FieldValue }> | undefined;
  let unknownFields: FieldName[] | undefined;
  for (const spec of FIELD_LIST) {
    const wanted = desired[spec.name];
    if (wanted === undefined) continue; // managed only when declared, and not declared
    const known = remoteValue(spec, observed, applied);
    if (known === undefined) (unknownFields ??= []).push(spec.name);
    else if (!sameValue(spec, known, wanted)) {
      (fields ??= {})[spec.name] = {
        from: normalizeValue(spec, known),
        to: normalizeValue(spec, wanted),
      };
    }
  }
  return { fields: fields ?? {}, unknownFields: unknownFields ?? [] };
}

/** The fields a create sends, each from null. */
export function createdFields(desired: DesiredEnvironment): FieldDiffs {
  const fields: Record<string, { from: null; to: FieldValue }> = {};
  for (const spec of FIELD_LIST) {
    const value = desired[spec.name];
    if (value !== undefined) fields[spec.name] = { from: null, to: normalizeValue(spec, value) };
  }
  return fields;
}

/**
 * A stable text form of an environment's values, to recognise "the same change" (what envsync
 * sent) and "the same listing" (what the service showed) later: the fields managed always, in
 * order (null where unknown, as for fields a listing does not carry), then `[name, value]` for
 * each field managed only when declared that has a value. State files hold these strings.
 */
export function fingerprint(env: Partial<FieldSlots>): string {
  const parts: unknown[] = [];
  for (const spec of FIELD_LIST) {
    const value = env[spec.name];
    const shown = value === undefined ? null : normalizeValue(spec, value);
    if (spec.managed === 'always') parts.push(shown);
    else if (shown !== null) parts.push([spec.name, shown]);
  }
  return JSON.stringify(parts);
}

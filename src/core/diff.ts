/**
 * Field by field comparison of what the manifests want with what the service is known to hold,
 * for every field of the registry (fields.ts).
 */
import type { ApiDialect } from './dialect.ts';
import {
  FIELD_LIST,
  type FieldName,
  type FieldSlots,
  type FieldSpec,
  type FieldValue,
  normalizeValue,
  sameValue,
  sendRoute,
} from './fields.ts';
import type {
  AppliedRecord,
  DesiredEnvironment,
  FieldDiff,
  FieldDiffs,
  FieldSlotValues,
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
  let fields: Record<string, FieldDiff> | undefined;
  let unknownFields: FieldName[] | undefined;
  for (const spec of FIELD_LIST) {
    const wanted = desired[spec.name];
    if (wanted === undefined) continue; // managed only when declared, and not declared
    const known = remoteValue(spec, observed, applied);
    if (known === undefined) {
      // Not shown and never sent: the plan still shows the value a sync will set.
      (unknownFields ??= []).push(spec.name);
      (fields ??= {})[spec.name] = { from: null, to: normalizeValue(spec, wanted), notShown: true };
    } else if (!sameValue(spec, known, wanted)) {
      (fields ??= {})[spec.name] = {
        from: normalizeValue(spec, known),
        to: normalizeValue(spec, wanted),
      };
    }
  }
  if (fields === undefined) return undefined;
  return { fields, unknownFields: unknownFields ?? [] };
}

/**
 * The values the listing shows for the fields a manifest leaves out: a PUT made for another field
 * carries them, so that it changes nothing the manifest does not declare. A field the listing does
 * not show is left out of the body.
 */
export function keptValues(
  desired: DesiredEnvironment,
  observed: FieldSlotValues,
): FieldSlotValues {
  let kept: Record<string, FieldValue> | undefined;
  for (const spec of FIELD_LIST) {
    if (desired[spec.name] !== undefined) continue;
    // A field the environment's type may not hold is never sent (a listing may show it anyway).
    if (spec.onlyForTypes !== undefined && !spec.onlyForTypes.includes(desired.type)) continue;
    const shown = observed[spec.name];
    if (shown !== undefined) (kept ??= {})[spec.name] = shown;
  }
  return kept ?? {};
}

/**
 * What the PUT of a change sends in `dialect`: the declared values, and those the listing showed
 * for the rest; only fields the dialect sends by the PUT (a field sent by an operation of its
 * own, requests.ts, is never in the body, declared or kept).
 */
export function sentEnvironment(
  change: { readonly desired: DesiredEnvironment; readonly kept: FieldSlotValues },
  dialect: ApiDialect,
): DesiredEnvironment {
  const sent: Record<string, unknown> = { name: change.desired.name };
  for (const spec of FIELD_LIST) {
    if (sendRoute(spec, dialect) !== 'put') continue;
    const value = change.desired[spec.name] ?? change.kept[spec.name];
    if (value !== undefined) sent[spec.name] = value;
  }
  return sent as unknown as DesiredEnvironment;
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
 * sent) and "the same listing" (what the service showed) later: the fields that hold a slot, in
 * order (null where there is no value: not declared, or not listed), then `[name, value]` for
 * each other field that has a value. State files hold these strings, so the form never changes.
 */
export function fingerprint(env: Partial<FieldSlots>): string {
  const parts: unknown[] = [];
  for (const spec of FIELD_LIST) {
    const value = env[spec.name];
    const shown = value === undefined ? null : normalizeValue(spec, value);
    if (spec.fingerprintSlot === true) parts.push(shown);
    else if (shown !== null) parts.push([spec.name, shown]);
  }
  return JSON.stringify(parts);
}

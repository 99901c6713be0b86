import { FIELD_LIST, type FieldName, normalizeValue, sameValue, showValue } from './fields.ts';
import type { Change, ObservedEnvironment } from './model.ts';

export type Verification =
  | { readonly converged: true }
  | { readonly converged: false; readonly fields: readonly FieldName[]; readonly reason: string };

/**
 * Checks one applied change against the listing taken after the PUTs: every field that was sent
 * and that the listing carries must now equal what was sent. A field that did not take means the
 * service ignored it (docs/api-behaviour.md: it keeps the old value of some fields on update).
 */
export function verifyChange(change: Change, after: ObservedEnvironment | undefined): Verification {
  if (after === undefined) {
    return {
      converged: false,
      fields: [],
      reason:
        change.renamedFrom === undefined
          ? 'the environment is not in the listing after a successful PUT'
          : 'the environment is not listed under its new name after a successful rename',
    };
  }
  const differences: string[] = [];
  const fields: FieldName[] = [];
  for (const spec of FIELD_LIST) {
    const sent = change.desired[spec.name];
    const kept = after[spec.name];
    if (sent === undefined || kept === undefined || sameValue(spec, kept, sent)) continue;
    fields.push(spec.name);
    differences.push(
      `${spec.name} (sent ${showValue(normalizeValue(spec, sent))}, it keeps ${showValue(normalizeValue(spec, kept))})`,
    );
  }
  if (fields.length === 0) return { converged: true };
  return {
    converged: false,
    fields,
    reason:
      `the service did not take ${differences.join(', ')}; ` +
      'it ignores some values on existing environments: make the manifest say what the service keeps',
  };
}

import type { Change, FieldName, ObservedEnvironment } from './model.ts';
import { normalizePolicies } from './plan.ts';

export type Verification =
  | { readonly converged: true }
  | { readonly converged: false; readonly fields: readonly FieldName[]; readonly reason: string };

function show(value: unknown): string {
  return JSON.stringify(value);
}

/**
 * Checks one applied change against the listing taken after the PUTs: every field the listing
 * carries must now equal what was sent. A field that did not take means the service ignored it
 * (observed-behaviour.md: `description: ""` and `include_scaling: true` on existing environments).
 */
export function verifyChange(change: Change, after: ObservedEnvironment | undefined): Verification {
  const sent = change.desired;
  if (after === undefined) {
    return {
      converged: false,
      fields: [],
      reason: 'the environment is not in the listing after a successful PUT',
    };
  }
  const differences: [FieldName, unknown, unknown][] = [];
  if (after.type !== sent.type) differences.push(['type', sent.type, after.type]);
  if (after.description !== sent.description) {
    differences.push(['description', sent.description, after.description]);
  }
  if (after.includeScaling !== undefined && after.includeScaling !== sent.includeScaling) {
    differences.push(['include_scaling', sent.includeScaling, after.includeScaling]);
  }
  if (after.policies !== undefined) {
    const kept = normalizePolicies(after.policies);
    const wanted = normalizePolicies(sent.policies);
    if (kept.length !== wanted.length || kept.some((p, i) => p !== wanted[i])) {
      differences.push(['policies', wanted, kept]);
    }
  }
  if (differences.length === 0) return { converged: true };
  return {
    converged: false,
    fields: differences.map(([field]) => field),
    reason:
      `the service did not take ${differences
        .map(([field, wanted, kept]) => `${field} (sent ${show(wanted)}, it keeps ${show(kept)})`)
        .join(', ')}; ` +
      'it ignores some values on existing environments: make the manifest say what the service keeps',
  };
}

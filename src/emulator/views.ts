/** How the kosli profile shows a stored environment (docs/api-behaviour.md#listing-shapes). */
import type { StoredEnvironment } from './store.ts';

export type ListingEntry = Omit<StoredEnvironment, 'archived' | 'require_provenance'>;
export type EnvironmentDetail = Omit<StoredEnvironment, 'archived'>;

/**
 * A listing entry: production's listing does not show `require_provenance`, and shows `policies`
 * as null when none is attached.
 */
export function listingEntry(env: StoredEnvironment): ListingEntry {
  const { archived: _archived, require_provenance: _requireProvenance, ...entry } = env;
  return { ...entry, policies: attachedPolicies(env) };
}

/** The read of one environment: the listing's fields plus `require_provenance`. */
export function environmentDetail(env: StoredEnvironment): EnvironmentDetail {
  const { archived: _archived, ...detail } = env;
  return { ...detail, policies: attachedPolicies(env) };
}

/** The attached policy names, or null for none (the store may hold `[]`). */
function attachedPolicies(env: StoredEnvironment): string[] | null {
  return env.policies === null || env.policies.length === 0 ? null : env.policies;
}

/** How the kosli profile shows a stored environment (docs/api-behaviour.md#listing-shapes). */
import type { StoredEnvironment } from './store.ts';

export type ListingEntry = Omit<StoredEnvironment, 'archived' | 'require_provenance'>;
export type EnvironmentDetail = Omit<StoredEnvironment, 'archived'>;

/** A listing entry: production's listing does not show `require_provenance`. */
export function listingEntry(env: StoredEnvironment): ListingEntry {
  const { archived: _archived, require_provenance: _requireProvenance, ...entry } = env;
  return entry;
}

/** The read of one environment: the listing's fields plus `require_provenance`. */
export function environmentDetail(env: StoredEnvironment): EnvironmentDetail {
  const { archived: _archived, ...detail } = env;
  return detail;
}

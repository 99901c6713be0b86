/**
 * Which environments an org's `prune: true` may archive: only those envsync owns. Ownership is
 * the state file's inventory (an environment envsync created or updated in the org keeps its
 * record there until it is gone from the service) or, in the `kosli` dialect, the ownership tag
 * envsync sets on every environment it creates or updates while `prune` is on. Pure.
 */
import type { AppliedRecord, ObservedEnvironment } from './model.ts';

/** The tag's key: users see it on the service, and may not declare it while `prune` is on. */
export const OWNER_TAG_KEY = 'managed-by';

/** The tag's value for an org: the org is part of it, so another org's tag owns nothing here. */
export function ownerTagValue(org: string): string {
  return `envsync/${org}`;
}

/** Why envsync owns an environment: the state file's record of it, its ownership tag, or both. */
export type OwnedBy = 'state' | 'tag';

/** Why envsync owns the listed environment, empty when it does not. */
export function ownedBy(
  org: string,
  entry: ObservedEnvironment,
  record: AppliedRecord | undefined,
): OwnedBy[] {
  const why: OwnedBy[] = [];
  if (record !== undefined) why.push('state');
  if (hasOwnerTag(org, entry)) why.push('tag');
  return why;
}

/** Whether the listed environment carries this org's ownership tag. */
export function hasOwnerTag(org: string, entry: ObservedEnvironment): boolean {
  const tags = entry.tags;
  return (
    tags !== undefined &&
    tags !== null &&
    Object.hasOwn(tags, OWNER_TAG_KEY) &&
    tags[OWNER_TAG_KEY] === ownerTagValue(org)
  );
}

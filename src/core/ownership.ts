/**
 * What an org's `prune: true` may archive: only what envsync owns, by the state file's record or,
 * in the `kosli` dialect, by the ownership tag it sets on every environment it sends while `prune`
 * is on (docs/lifecycle.md).
 */
import type { StringMap } from './fields.ts';
import type { AppliedRecord, ObservedEnvironment, OwnedBy } from './model.ts';

/** Users see this key on the service, and may not declare it while `prune` is on. */
export const OWNER_TAG_KEY = 'managed-by';

/** The tag's value names the org, so another org's tag owns nothing here. */
export function ownerTagValue(org: string): string {
  return `envsync/${org}`;
}

/** Why envsync owns the listed environment, empty when it does not. */
export function ownedBy(
  org: string,
  entry: ObservedEnvironment,
  record: AppliedRecord | undefined,
): OwnedBy[] {
  const why: OwnedBy[] = record === undefined ? [] : ['state'];
  return hasOwnerTag(org, entry) ? [...why, 'tag'] : why;
}

export function hasOwnerTag(org: string, entry: ObservedEnvironment): boolean {
  return entry.tags?.[OWNER_TAG_KEY] === ownerTagValue(org);
}

/** Whether envsync owns an environment it archives, and why, in words every output uses. */
export function ownedWords(org: string, owners: readonly OwnedBy[]): string {
  if (owners.length === 0) return 'envsync does not own it';
  const why = owners.map((owner) =>
    owner === 'state'
      ? 'the state file records it'
      : `it carries the tag ${OWNER_TAG_KEY}: ${ownerTagValue(org)}`,
  );
  return `envsync owns it: ${why.join(' and ')}`;
}

/** The default of `--max-archive`. */
export const DEFAULT_MAX_ARCHIVE = 5;

/**
 * Why the mass-archive guard refuses all of an org's archives, or undefined: more than `max` in
 * one pass (no limit for a reviewed saved plan: `max` undefined), or any unreadable manifest file,
 * which may be the one that declares them.
 */
export function archiveGuard(
  org: string,
  count: number,
  max: number | undefined,
  unreadable = 0,
): string | undefined {
  if (count > 0 && unreadable > 0) {
    return (
      `${unreadable} manifest file problem(s) keep some files from saying which org they declare, ` +
      `and one of them may declare what org ${org} would archive: none is archived until every ` +
      `file reads ("envsync validate" names them; the org's other changes are sent)`
    );
  }
  if (max === undefined || count <= max) return undefined;
  return (
    `org ${org} would archive ${count} environments in one pass, more than --max-archive ` +
    `${max}: none is sent (its other changes are). Review the plan and apply it with ` +
    `"envsync plan --out FILE" then "envsync sync --plan FILE", or raise --max-archive`
  );
}

/** The entry as a manifest sees it: without the org's ownership tag, unless `declared` names it. */
export function withoutOwnerTag(
  org: string,
  entry: ObservedEnvironment,
  declared?: StringMap,
): ObservedEnvironment {
  const tags = entry.tags;
  if (tags?.[OWNER_TAG_KEY] !== ownerTagValue(org) || declared?.[OWNER_TAG_KEY] !== undefined)
    return entry;
  const rest = Object.entries(tags).filter(([key]) => key !== OWNER_TAG_KEY);
  return { ...entry, tags: Object.fromEntries(rest) };
}

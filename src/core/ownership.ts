/**
 * Which environments an org's `prune: true` may archive: only those envsync owns. Ownership is
 * the state file's inventory (an environment envsync created or updated in the org keeps its
 * record there until it is gone from the service) or, in the `kosli` dialect, the ownership tag
 * envsync sets on every environment it creates or updates while `prune` is on. Pure.
 */
import type { AppliedRecord, ObservedEnvironment, OwnedBy } from './model.ts';

/** The tag's key: users see it on the service, and may not declare it while `prune` is on. */
export const OWNER_TAG_KEY = 'managed-by';

/** The tag's value for an org: the org is part of it, so another org's tag owns nothing here. */
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

/** Whether the listed environment carries this org's ownership tag. */
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

/** The default of `--max-archive`: the most archives one org may send in one pass. */
export const DEFAULT_MAX_ARCHIVE = 5;

/**
 * Why the mass-archive guard refuses an org's archives, or undefined when it lets them go: more
 * than `max` in one pass is refused whole (none is sent), unless `max` is undefined (a reviewed
 * saved plan, which archives exactly what it shows).
 */
export function archiveGuard(
  org: string,
  count: number,
  max: number | undefined,
  unreadable = 0,
): string | undefined {
  // A file that cannot be read may be the one that declares these environments: archiving them
  // would act on a manifest nobody could see. Even a reviewed plan waits for every file.
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

/**
 * The listed entry as the diff sees it under `prune`: without this org's ownership tag, which
 * envsync sets itself and no manifest declares (a declared `tags:` map would remove it).
 */
export function withoutOwnerTag(entry: ObservedEnvironment, value: string): ObservedEnvironment {
  const tags = entry.tags;
  if (tags?.[OWNER_TAG_KEY] !== value) return entry;
  const rest = Object.entries(tags).filter(([key]) => key !== OWNER_TAG_KEY);
  return { ...entry, tags: Object.fromEntries(rest) };
}
